"""compile_model: target resolution, pass options, the fit check and sizes."""

from __future__ import annotations

import dataclasses
import io
import shutil

import pytest
from support.models import CMSIS_NN_DIR, MODELS_DIR

from aot.compile import CompileError, CompileOptions, compile_model, resolve_target
from aot.errors import AotError
from aot.executor import codegen
from aot.executor.memory import MemoryPlanError
from aot.kernels import KernelError
from aot.passes import PassError
from aot.target import Target, TargetError, load_board

HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"
KWS = MODELS_DIR / "mlperf_kws_dscnn.tflite"


def test_resolve_target_from_tag_target_and_board():
    t, b = resolve_target("qemu/an386")  # an alias resolves to the canonical board
    assert b.tag == "qemu/mps2-an386" and t == b.target
    t, b = resolve_target("c -mcpu=cortex-m4")
    assert b is None and t.attrs["mcpu"] == "cortex-m4"
    board = load_board("host/native")
    assert resolve_target(board) == (board.target, board)
    assert resolve_target(Target("qemu/mps2-an386"))[1].tag == "qemu/mps2-an386"


def test_unknown_board_and_target_are_user_errors():
    with pytest.raises(TargetError):
        compile_model(HELLO, "nowhere/board")
    with pytest.raises(TargetError):
        compile_model(HELLO, "c -mcpu=not-a-cpu -bogus=1")


def test_options_are_built_once_and_the_keywords_build_the_same():
    options = CompileOptions.build("qemu/mps2-an386", memory_budget="64K", patches="2x2",
                                   measure_code=False)
    assert options.board.tag == "qemu/mps2-an386" and options.target == options.board.target
    assert options.memory_budget == 64 * 1024 and options.patches == (2, 2)
    assert options.ram_budget == min(64 * 1024, options.board_ram)
    keywords = dict(name="hello", measure_code=False)
    given = compile_model(HELLO, CompileOptions.build("host/native", **keywords))
    built = compile_model(HELLO, "host/native", **keywords)
    assert given.files == built.files
    with pytest.raises(TypeError, match="compile options given twice"):
        compile_model(HELLO, options, name="x")


@pytest.mark.parametrize("options, message", [
    (dict(patches="2x2", memory_regions="ram"), "patches with memory regions or -libs"),
    pytest.param(dict(patches="stream", target="c -libs=cmsis-nn"),
                 "patches with memory regions or -libs",
                 marks=pytest.mark.skipif(not CMSIS_NN_DIR.is_dir(), reason="no CMSIS-NN")),
    (dict(patches="4x"), "a grid 'RxC'"),
    (dict(memory_budget="lots"), "lots"),
    (dict(memory_regions="ram,nowhere"), "nowhere"),
    (dict(keep_with_aot=["conv"]), "the target has no -libs"),
    (dict(name="2bad"), "2bad"),
])
def test_option_combinations_are_refused_where_the_options_are_built(options, message):
    refine = options.pop("target", None)
    target, board = resolve_target("qemu/mps2-an386", refine=refine)
    with pytest.raises(AotError, match=message):
        CompileOptions.for_target(target, board, codegen_options={
            "cmsis-nn": {"path": str(CMSIS_NN_DIR)}} if refine else None, **options)


def test_bare_target_compiles_without_a_board():
    compiled = compile_model(HELLO, "c -mcpu=cortex-m4", name="hello", measure_code=False)
    assert compiled.board is None and compiled.metadata()["board"] is None
    assert compiled.plan.alignment == 4  # the Cortex-M4 word
    assert compiled.sizes.code is None


def test_dump_after_and_disabled_pass():
    out = io.StringIO()
    compile_model(HELLO, "host/native", dump_after="fuse_ops", dump_stream=out,
                  measure_code=False)
    assert out.getvalue().startswith("// after pass fuse_ops")
    out = io.StringIO()
    compile_model(HELLO, "host/native", dump_after="fold_pad", disabled_pass=["fold_pad"],
                  dump_stream=out, measure_code=False)
    assert "did not run" in out.getvalue()
    with pytest.raises(PassError, match="fuse_ops"):
        compile_model(HELLO, "host/native", disabled_pass=["fuse_op"])


@pytest.mark.skipif(shutil.which("riscv64-unknown-elf-gcc") is None,
                    reason="needs the RISC-V cross compiler")
def test_code_is_measured_with_the_ports_flags():
    # sifive-e's port builds against picolibc (--specs in its port.mk): without
    # that flag the cross compiler finds no stdint.h and the size was unknown.
    sizes = compile_model(HELLO, "qemu/sifive-e").sizes
    assert sizes.code is not None and sizes.code > 0, sizes.code_note


@pytest.mark.slow
def test_sizes_add_up():
    compiled = compile_model(KWS, "qemu/mps2-an386", name="kws", io_in_workspace=False)
    s = compiled.sizes
    assert s.workspace >= compiled.plan.workspace_bytes >= compiled.plan.lower_bound
    assert s.constants == sum(k.constant_bytes for k in compiled.kernels)
    assert s.code > 0 and s.state == 0
    assert s.io == 49 * 10 + 12  # the int8 input and output live in the caller's buffers
    # By default they live in the workspace, which the input's bytes share
    # with the first layer's output (docs/memory.md): no byte more.
    inside = compile_model(KWS, "qemu/mps2-an386", name="kws", measure_code=False).sizes
    assert inside.io == 0 and inside.workspace == s.workspace
    header = compiled.files["include/kws.h"]
    assert f"#define KWS_WORKSPACE_BYTES {s.workspace}u" in header
    assert f"#define KWS_CONSTANT_BYTES {s.constants}u" in header


@pytest.mark.slow
def test_io_in_workspace_moves_caller_bytes_into_the_workspace():
    apart = compile_model(KWS, "host/native", measure_code=False)
    inside = compile_model(KWS, "host/native", io_in_workspace=True, measure_code=False)
    assert inside.sizes.io == 0
    assert inside.sizes.workspace >= apart.sizes.workspace  # i/o may fit in gaps
    assert "#define MODEL_INPUT_INPUT_1_OFFSET" in inside.files["include/model.h"]


def _small(board, ram=None, flash=None):
    mem = board.memory
    return dataclasses.replace(board, memory=dataclasses.replace(
        mem, ram=dataclasses.replace(mem.ram, length=ram or mem.ram.length),
        flash=dataclasses.replace(mem.flash, length=flash or mem.flash.length)))


def test_model_too_big_for_ram_names_sizes_and_tensors():
    board = _small(load_board("qemu/mps2-an386"), ram=4096)
    with pytest.raises(MemoryPlanError) as err:
        compile_model(KWS, board, measure_code=False)
    text = str(err.value)
    assert "needs" in text and "4096" in text and "largest tensors" in text


@pytest.mark.slow
def test_model_too_big_for_flash_counts_code_too():
    board = load_board("qemu/mps2-an386")
    need = compile_model(HELLO, board).sizes
    small = _small(board, flash=need.constants + need.code - 1)
    with pytest.raises(MemoryPlanError) as err:
        compile_model(HELLO, small)
    text = str(err.value)
    assert f"constants {need.constants}, code {need.code}" in text
    assert f"has {need.constants + need.code - 1}" in text
    assert "largest constants: model_k" in text and "dense" in text


@pytest.mark.parametrize("target, message", [
    ("c -libs=acme-npu", r"-libs=acme-npu: no external codegen is called 'acme-npu'.*"
                         r"registered: cmsis-nn"),
    ("composite -targets={c},{c -mcpu=cortex-m4}",
     r"the composite target's devices \('c -keys=cpu', 'c -keys=arm_cpu,cpu -mcpu=cortex-m4'\) "
     r"are cores of a board: give --board TAG"),
    ("c -mcpu=cortex-m4 -host={c -mtriple=x86_64-linux-gnu}",
     r"not supported yet: -host=\{c .*remove -host"),
    ("c -workspace-byte-alignment=24", r"-workspace-byte-alignment=24: use a power of two"),
    ("c -constants-byte-alignment=0", r"-constants-byte-alignment=0: use a power of two"),
])
def test_target_attributes_that_would_be_ignored_are_refused(target, message):
    with pytest.raises(AotError, match=message):
        compile_model(HELLO, target, measure_code=False)


def test_the_alignment_attributes_are_honoured():
    plain = compile_model(HELLO, "c", measure_code=False)
    wide = compile_model(HELLO, "c -workspace-byte-alignment=64 -constants-byte-alignment=32",
                         measure_code=False)
    assert plain.plan.alignment == 16 and wide.plan.alignment == 64
    assert all(b.offset % 64 == 0 for b in wide.plan.buffers if b.offset is not None)
    kernel = wide.files["codegen/model_kernels_0.c"]
    assert "AOT_ALIGNED(32) = {" in kernel and "AOT_ALIGNED(8) = {" not in kernel
    assert "AOT_ALIGNED(8) = {" in plain.files["codegen/model_kernels_0.c"]


# -- the llvm target: served on this machine, refused (not printed as C) elsewhere ----------
def test_llvm_target_compiles_the_kernels_with_llvm_and_no_c():
    compiled = compile_model(HELLO, "llvm", name="hello")
    assert compiled.files == {} and compiled.board is None
    assert 'define i32 @"hello_k0"' in compiled.llvm.source
    assert compiled.sizes.code > 0  # machine code of the kernels, measured from an object
    with pytest.raises(KernelError, match="lowered for 'llvm -keys=cpu', whose code is not C"):
        _ = compiled.kernels[0].source
    with pytest.raises(CompileError, match="not supported yet: an artifact for the target "
                                           "'llvm -keys=cpu'.*aot run MODEL --target llvm"):
        compiled.write("unused")


def test_the_entry_function_for_llvm_objects_calls_the_kernels_and_prints_none():
    compiled = compile_model(HELLO, "llvm", name="hello", measure_code=False)
    generated = codegen.generate("hello", compiled.graph, compiled.graph.annotations.groups,
                                 compiled.kernels, compiled.plan, target="llvm", board=None,
                                 version="0", target_hash="0")
    assert sorted(generated.files) == ["codegen/hello.c", "codegen/hello_rpc.c",
                                       "include/hello.h"]
    for k in compiled.kernels:
        assert k.prototype in generated.files["codegen/hello.c"]


def test_a_c_model_has_no_jit():
    compiled = compile_model(HELLO, "host/native", name="hello", measure_code=False)
    with pytest.raises(CompileError, match="compile it for the target 'llvm'"):
        compiled.jit()


@pytest.mark.parametrize("where, message", [
    ("llvm -mtriple=x86_64-linux-gnu -tag=host/native",
     "the llvm codegen for host/native: this machine runs LLVM's code through its JIT"),
    ("llvm -march=rv64imac", "not supported yet: llvm objects for rv64imac"),
])
def test_llvm_for_the_host_board_or_another_cpu_is_refused(where, message):
    with pytest.raises(AotError, match=message):
        compile_model(HELLO, where, name="hello", measure_code=False)


def test_a_board_whose_target_is_llvm_compiles_to_objects():
    board = load_board("qemu/mps2-an386")
    board = dataclasses.replace(board, target=Target(
        "llvm -mcpu=cortex-m4 -mfloat-abi=hard -tag=qemu/mps2-an386"))
    compiled = compile_model(HELLO, board, name="hello", measure_code=False)
    assert compiled.board is board and not compiled.is_jit
    assert compiled.metadata()["build"]["objects"] == [
        f"codegen/hello_kernels_{i}.o" for i in range(len(compiled.kernels))]
    assert not any(p.startswith("codegen/hello_kernels_") and p.endswith(".c")
                   for p in compiled.files)


@pytest.mark.slow
def test_llvm_kernels_written_in_place_drop_noalias_for_that_pair_only():
    compiled = compile_model(MODELS_DIR / "mlperf_ic_resnet8.tflite", "llvm", name="m",
                             measure_code=False)
    k = next(k for k in compiled.kernels if k.inplace)
    (i, j), = k.inplace
    define = next(line for line in compiled.llvm.source.splitlines()
                  if line.startswith(f'define i32 @"{k.name}"('))
    params = define[define.index("(") + 1:define.rindex(")")].split(", ptr")
    assert len(params) == len(k.params)
    assert [n for n, p in enumerate(params) if "noalias" not in p] == [i, j]


@pytest.mark.slow
def test_a_plan_without_overlaps_proves_no_overlap(monkeypatch):
    """The overlap proof runs only when the planner asks for it: with
    ``overlap=False`` (``--no-overlap``) none runs and the plan has no
    overlap; the default plan asks."""
    from aot.kernels import kernel as kernel_module
    calls = []
    real = kernel_module.overlap_limit
    monkeypatch.setattr(kernel_module, "overlap_limit",
                        lambda *args: calls.append(1) or real(*args))
    compiled = compile_model(KWS, "qemu/mps2-an386", name="kws", overlap=False,
                             measure_code=False)
    assert calls == []
    assert all(how != "overlap" for _, _, how in compiled.plan.aliases)
    compile_model(KWS, "qemu/mps2-an386", name="kws", measure_code=False)
    assert calls  # the default plan asks
