"""Objects for Cortex-M from the LLVM backend, checked from outside: the
machine LLVM is told about, the objects' symbols, attributes and
disassembly, and that the board's toolchain links them.  Running whole models
on QEMU is tests/firmware/test_models_qemu_llvm.py (slow)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from support.models import MODELS_DIR

import aot
from aot import te
from aot.codegen import llvm_object
from aot.codegen.llvm_object import cross_machine, mark_hard_float
from aot.compile import CompileError, compile_model, resolve_target
from aot.errors import BuildError
from aot.target import Target

HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"
M4 = "llvm -mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16"
M4_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
RV32 = "llvm -keys=riscv,cpu -march=rv32imac -mabi=ilp32"
RV32_FLAGS = ["-march=rv32imac", "-mabi=ilp32", "--specs=picolibc.specs"]
arm_tools = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                               reason="needs the arm-none-eabi toolchain")
riscv_tools = pytest.mark.skipif(shutil.which("riscv64-unknown-elf-gcc") is None,
                                 reason="needs the riscv64-unknown-elf toolchain")


def tool(name: str, *args, prefix: str = "arm-none-eabi-") -> str:
    proc = subprocess.run([f"{prefix}{name}", *map(str, args)], capture_output=True,
                          text=True, check=True)
    return proc.stdout


@pytest.mark.parametrize("target, triple, cpu, features, hard", [
    (M4, "thumbv7em-none-eabihf", "cortex-m4", {"+dsp", "+vfp4d16sp"}, True),
    ("llvm -mcpu=cortex-m55 -mfloat-abi=hard", "thumbv8.1m.main-none-eabihf", "cortex-m55",
     {"+dsp", "+mve.fp", "+fp-armv8d16", "+fullfp16"}, True),
    ("llvm -mcpu=cortex-m55+nomve -mfloat-abi=hard", "thumbv8.1m.main-none-eabihf",
     "cortex-m55", {"-mve", "-mve.fp"}, True),
    ("llvm -mcpu=cortex-m3", "thumbv7m-none-eabi", "cortex-m3", {"-dsp", "-fpregs"}, False),
    ("llvm -mcpu=cortex-m4 -mfloat-abi=softfp", "thumbv7em-none-eabi", "cortex-m4",
     {"+dsp", "+vfp4d16sp"}, False),
    ("llvm -mcpu=cortex-m0 -mfloat-abi=soft", "thumbv6m-none-eabi", "cortex-m0",
     {"-dsp", "-fpregs"}, False),
    ("llvm -mcpu=cortex-m0plus", "thumbv6m-none-eabi", "cortex-m0plus", {"-dsp", "-fpregs"},
     False),
    ("llvm -mcpu=cortex-m7 -mfloat-abi=hard -mfpu=fpv5-d16", "thumbv7em-none-eabihf",
     "cortex-m7", {"+dsp", "+fp-armv8d16"}, True),
    ("llvm -mcpu=cortex-m33 -mfloat-abi=hard -mfpu=fpv5-sp-d16", "thumbv8m.main-none-eabihf",
     "cortex-m33", {"+dsp", "+fp-armv8d16sp"}, True),
    (RV32, "riscv32-unknown-elf", "generic-rv32", {"+m", "+a", "+c", "+relax"}, False),
    ("llvm -march=rv32imc", "riscv32-unknown-elf", "generic-rv32", {"+m", "-a", "+c"}, False),
])
def test_the_machine_comes_from_the_targets_facts(target, triple, cpu, features, hard):
    m = cross_machine(Target(target))
    assert (m.triple, m.cpu, m.hard_float) == (triple, cpu, hard)
    assert features <= set(m.features)
    assert m.calling_convention == ("arm_aapcs_vfpcc" if hard else "")


@pytest.mark.parametrize("target, message", [
    ("llvm -march=rv32imafc -mabi=ilp32f",
     r"not supported yet: llvm objects for rv32imafc .*the soft-float ABI"),
    ("llvm -march=rv32imac -mabi=ilp32f",
     r"not supported yet by the llvm codegen: -mabi=ilp32f for rv32imac \(it makes ilp32"),
    ("llvm -march=rv32imacb", r"not supported yet: llvm objects for rv32imacb"),
    ("llvm -march=rv64imac -mabi=lp64",
     r"not supported yet: llvm objects for rv64imac .*32-bit RISC-V cores without FPU"),
    ("llvm -mcpu=cortex-m4 -mabi=ilp32",
     r"-mabi=ilp32 is a RISC-V option; the Arm float ABI is -mfloat-abi"),
])
def test_machines_the_objects_cannot_serve_are_refused(target, message):
    with pytest.raises(BuildError, match=message):
        cross_machine(Target(target))


def test_codegen_llvm_keeps_everything_the_board_says_but_the_kind():
    target, board = resolve_target("qemu/mps2-an386", "llvm")
    assert board.tag == "qemu/mps2-an386"
    assert str(target) == ("llvm -keys=arm_cpu,cpu -mcpu=cortex-m4 -mfloat-abi=hard "
                           "-mfpu=fpv4-sp-d16 -opt-level=2 -tag=qemu/mps2-an386")
    assert resolve_target(str(target)) == (target, board)
    assert resolve_target("qemu/mps2-an386", "c")[0] == board.target
    with pytest.raises(CompileError, match="--codegen rust: a c target takes c or llvm"):
        resolve_target("qemu/mps2-an386", "rust")


def vexp():
    a = te.placeholder((16,), "float32", "A")
    b = te.compute((16,), lambda i: te.exp(a[i]) + a[i], name="B")
    return te.create_schedule(b.op), [a, b]


def test_a_module_for_a_microcontroller_is_not_run_here():
    s, args = vexp()
    mod = aot.build(s, args, target=M4, name="vexp")
    with pytest.raises(BuildError, match="compiled for thumbv7em-none-eabihf .* link its "
                                         "objects"):
        mod.compile()
    with pytest.raises(BuildError, match="objects are made for microcontroller targets"):
        aot.build(s, args, target="llvm", name="vexp").objects()


@arm_tools
def test_floats_cross_a_hard_float_object_in_vfp_registers(tmp_path):
    s, args = vexp()
    obj = tmp_path / "vexp.o"
    obj.write_bytes(aot.build(s, args, target=M4, name="vexp").objects()["vexp"])
    assert "Tag_ABI_VFP_args: VFP registers" in tool("readelf", "-A", obj)
    # expf's argument goes in s0: the call is preceded by a load into s0, no vmov to r0
    text = tool("objdump", "-d", obj)
    assert "bl\t0 <expf>" in text and "vmov\tr0, s0" not in text
    main = tmp_path / "main.c"
    main.write_text("#include <stdint.h>\nint32_t vexp(float *a, float *b);\n"
                    "float a[16], b[16];\nint main(void) { return vexp(a, b); }\n")
    tool("gcc", *M4_FLAGS, "--specs=nosys.specs", main, obj, "-lm", "-o", tmp_path / "fw.elf")


def test_marking_hard_float_adds_the_tag_once():
    s, args = vexp()
    m3 = aot.build(s, args, target="llvm -mcpu=cortex-m3", name="vexp").objects()["vexp"]
    marked = mark_hard_float(m3)
    section = marked[len(m3):]  # the new attributes, appended
    assert section.endswith(b"\x1c\x01") and len(section) > 2
    assert mark_hard_float(marked)[len(marked):] == section  # marked once, whatever happens


@arm_tools
def test_m0_kernel_objects_hold_their_helpers(tmp_path):
    """On a core without DSP every helper of the support headers (hello_world's
    dense rows, the packed one with its fused epilogue, the requantization) is
    linked into the objects from the bitcode and inlined: no C helper file,
    no helper left to define."""
    compiled = compile_model(HELLO, "qemu/microbit", codegen="llvm", name="hello",
                             measure_code=False)
    art = compiled.write(tmp_path / "art")
    assert not (art / "codegen" / "hello_llvm_helpers.c").exists()
    for i, k in enumerate(compiled.kernels):
        symbols = tool("nm", art / "codegen" / f"hello_kernels_{i}.o")
        assert f" T {k.name}" in symbols
        assert not [s for s in symbols.splitlines() if " U aot_" in s or " U hello_c_" in s]
    meta = compiled.metadata()
    assert meta["build"]["sources"] == ["codegen/hello.c"]
    assert [k["file"] for k in meta["kernels"]] == meta["build"]["objects"]


@arm_tools
def test_m4_kernel_objects_call_gcc_rows_and_inline_the_rest(tmp_path):
    """On a DSP core the row helpers stay gcc's (specialised wrappers of the
    artifact's helper file: their inline assembly); the fixed-point helpers
    come from the bitcode and are inlined."""
    compiled = compile_model(HELLO, "qemu/mps2-an386", codegen="llvm", name="hello",
                             measure_code=False)
    art = compiled.write(tmp_path / "art")
    helpers = art / "codegen" / "hello_llvm_helpers.c"
    tool("gcc", *M4_FLAGS, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-c", helpers,
         "-o", tmp_path / "helpers.o")
    defined = tool("nm", tmp_path / "helpers.o")
    assert " T hello_c_aot_dense_s8__" in defined
    assert " T hello_c_aot_dense_packed_requant_s8__" in defined
    for i in range(len(compiled.kernels)):
        symbols = tool("nm", art / "codegen" / f"hello_kernels_{i}.o")
        helper = "aot_dense_packed_requant_s8" if i == 1 else "aot_dense_s8"
        assert f" U hello_c_{helper}__" in symbols
        assert "aot_requant" not in symbols and "aot_clamp_s8" not in symbols
    meta = compiled.metadata()
    assert meta["build"]["sources"] == ["codegen/hello.c", "codegen/hello_llvm_helpers.c"]


@arm_tools
def test_the_artifacts_makefile_puts_the_objects_in_the_library(tmp_path):
    compiled = compile_model(HELLO, "qemu/mps2-an386", codegen="llvm", name="hello",
                             measure_code=False)
    art = compiled.write(tmp_path / "art")
    mk = (art / "hello.mk").read_text()
    assert "HELLO_PREBUILT_OBJS := $(HELLO_DIR)/codegen/hello_kernels_0.o" in mk
    cmake = (art / "CMakeLists.txt").read_text()
    assert "${CMAKE_CURRENT_LIST_DIR}/codegen/hello_kernels_0.o" in cmake
    (tmp_path / "Makefile").write_text(
        f"HELLO_DIR := {art}/\ninclude {art}/hello.mk\nall: $(HELLO_LIB)\n")
    subprocess.run(["make", "-s", "-C", tmp_path, "CC=arm-none-eabi-gcc",
                    "AR=arm-none-eabi-ar"], check=True, capture_output=True)
    members = tool("ar", "t", tmp_path / "build" / "hello" / "libhello.a").split()
    assert {f"hello_kernels_{i}.o" for i in range(len(compiled.kernels))} <= set(members)
    assert "hello_llvm_helpers.o" in members


def test_llvm_failing_on_an_object_names_the_kernel_and_keeps_the_ir(monkeypatch):
    compiled = compile_model(HELLO, "qemu/mps2-an386", codegen="llvm", name="hello",
                             measure_code=False)

    def fail(*args, **kwargs):
        raise RuntimeError("LLVM ERROR: something broke\nmore")

    monkeypatch.setattr(llvm_object.llvm.TargetMachine, "emit_object", fail, raising=False)
    module = type(compiled.llvm)(list(compiled.llvm.units.values()), compiled.target)
    with pytest.raises(BuildError, match=r"kernel hello_k0 \(dense\): compiling the "
                                         r"object for thumbv7em-none-eabihf failed in LLVM "
                                         r"\(LLVM ERROR: something broke\); the IR is in (\S+); "
                                         r"please report it") as info:
        module.objects()
    path = Path(str(info.value).split("the IR is in ")[1].split(";")[0])
    assert path.read_text().startswith("; ModuleID")
    path.unlink()
    path.parent.rmdir()


@pytest.mark.parametrize("model, op", [("tflm_keyword_scrambled_int16", "svdf"),
                                       ("tflm_mnist_lstm_int8", "lstm")])
@pytest.mark.one_fast
def test_stateful_kernels_are_objects_too(model, op):
    """SVDF and LSTM kernels are loop IR (one call of their header's helper),
    so they become objects like the others; no kernel stays C."""
    compiled = compile_model(MODELS_DIR / f"{model}.tflite", "qemu/mps2-an386",
                             codegen="llvm", measure_code=False)
    files = {k["file"]: k["ops"] for k in compiled.metadata()["kernels"]}
    assert not [f for f in files if f.endswith(".c")]
    assert any(op in ops for f, ops in files.items() if f.endswith(".o"))
    assert all(isinstance(compiled.files[f], bytes) for f in files)
    assert set(compiled.metadata()["build"]["objects"]) == set(files)


@arm_tools
def test_rounding_calls_libm_with_the_vfp_convention_on_a_hard_float_core(tmp_path):
    a = te.placeholder((8,), "float32", "A")
    b = te.compute((8,), lambda i: te.floor(a[i]), name="B")
    s = te.create_schedule(b.op)
    s[b].vectorize(b.op.axis[0])
    obj = tmp_path / "floor.o"
    obj.write_bytes(aot.build(s, [a, b], target=M4, name="vfloor").objects()["vfloor"])
    text = tool("objdump", "-d", obj)
    assert text.count("bl\t0 <floorf>") == 8  # lane by lane, arguments in s0
    assert "vmov\tr0, s" not in text


def vmix():
    """Float arithmetic and conversions: soft-float helper calls on a core without FPU."""
    a = te.placeholder((16,), "float32", "A")
    n = te.placeholder((16,), "int32", "N")
    b = te.compute((16,), lambda i: (a[i] * a[i] + n[i].astype("float32")).astype("int32")
                   // (n[i] | 1), name="B")
    return te.create_schedule(b.op), [a, n, b]


@arm_tools
def test_armv6m_objects_call_the_helpers_its_libgcc_defines(tmp_path):
    s, args = vmix()
    obj = tmp_path / "vmix.o"
    obj.write_bytes(aot.build(s, args, target="llvm -mcpu=cortex-m0", name="vmix")
                    .objects()["vmix"])
    undefined = {line.split()[-1] for line in tool("nm", "-u", obj).splitlines()}
    # the Arm run-time ABI's names, as gcc calls them; Armv6-M's libgcc has no __mulsf3
    assert {"__aeabi_fmul", "__aeabi_fadd", "__aeabi_i2f", "__aeabi_f2iz"} <= undefined
    assert not undefined & set(llvm_object.RTABI_NAMES)
    mnemonics = {line.split("\t")[2].split()[0] for line in tool("objdump", "-d", obj)
                 .splitlines() if line.count("\t") >= 2}
    assert not mnemonics & {"sdiv", "udiv", "smlad", "sxtb16", "ssat"}
    main = tmp_path / "main.c"
    main.write_text("#include <stdint.h>\nint32_t vmix(float *a, int32_t *n, int32_t *b);\n"
                    "float a[16]; int32_t n[16], b[16];\n"
                    "int main(void) { return vmix(a, n, b); }\n")
    tool("gcc", "-mcpu=cortex-m0", "-mthumb", "-mfloat-abi=soft", "--specs=nosys.specs", main,
         obj, "-o", tmp_path / "fw.elf")


@arm_tools
def test_renaming_undefined_symbols_leaves_defined_ones(tmp_path):
    s, args = vmix()
    obj = aot.build(s, args, target="llvm -mcpu=cortex-m3", name="vmix").objects()["vmix"]
    assert llvm_object.rename_undefined(obj, {"vmix": "other"}) == obj
    path = tmp_path / "renamed.o"
    path.write_bytes(llvm_object.rename_undefined(obj, {"__aeabi_fmul": "my_fmul"}))
    symbols = tool("nm", path)
    assert " U my_fmul" in symbols and "__aeabi_fmul" not in symbols
    assert " T vmix" in symbols and " U __aeabi_fadd" in symbols
    relocations = [line.split() for line in tool("objdump", "-r", path).splitlines()]
    assert ["R_ARM_THM_CALL", "my_fmul"] in [r[1:] for r in relocations if len(r) == 3]


@riscv_tools
def test_riscv_objects_have_the_abi_of_gccs_and_link_with_them(tmp_path):
    s, args = vmix()
    obj = tmp_path / "vmix.o"
    obj.write_bytes(aot.build(s, args, target=RV32, name="vmix").objects()["vmix"])
    main = tmp_path / "main.c"
    main.write_text("#include <stdint.h>\nint32_t vmix(float *a, int32_t *n, int32_t *b);\n"
                    "float a[16]; int32_t n[16], b[16];\n"
                    "int main(void) { return vmix(a, n, b); }\n")
    tool("gcc", *RV32_FLAGS, "-c", main, "-o", tmp_path / "main.o", prefix="riscv64-unknown-elf-")

    def flags(path):
        header = tool("readelf", "-h", path, prefix="riscv64-unknown-elf-")
        return next(line.split(":", 1)[1].strip() for line in header.splitlines()
                    if line.strip().startswith("Flags:"))

    assert flags(obj) == flags(tmp_path / "main.o") == "0x1, RVC, soft-float ABI"
    assert "Tag_RISCV_arch: \"rv32i2p1_m2p0_a2p1_c2p0" in tool(
        "readelf", "-A", obj, prefix="riscv64-unknown-elf-")
    tool("gcc", *RV32_FLAGS, "-nostartfiles", "-Wl,--entry=main", tmp_path / "main.o", obj,
         "-o", tmp_path / "fw.elf", prefix="riscv64-unknown-elf-")


@riscv_tools
def test_a_model_compiles_to_riscv_objects_for_the_sifive_board(tmp_path):
    compiled = compile_model(HELLO, "qemu/sifive-e", codegen="llvm", name="hello",
                             measure_code=False)
    assert str(compiled.target).startswith("llvm -keys=riscv,cpu -mabi=ilp32 -march=rv32imac")
    art = compiled.write(tmp_path / "art")
    symbols = tool("nm", art / "codegen" / "hello_kernels_0.o", prefix="riscv64-unknown-elf-")
    assert " T hello_k0" in symbols


@riscv_tools
@pytest.mark.parametrize("march, mabi, flags", [
    ("rv32imac", "ilp32", "0x1, RVC, soft-float ABI"),
    ("rv32emc", "ilp32e", "0x9, RVC, RVE, soft-float ABI"),
    ("rv32im", "ilp32", "0x0"),
])
def test_riscv_objects_have_the_e_flags_of_gccs_for_the_same_march(march, mabi, flags, tmp_path):
    s, args = vmix()
    obj = tmp_path / "vmix.o"
    obj.write_bytes(aot.build(s, args, target=f"llvm -march={march} -mabi={mabi}", name="vmix")
                    .objects()["vmix"])
    c = tmp_path / "f.c"
    c.write_text("int f(int a, int b) { return a / b; }\n")
    tool("gcc", f"-march={march}", f"-mabi={mabi}", "-c", c, "-o", tmp_path / "f.o",
         prefix="riscv64-unknown-elf-")
    for path in (obj, tmp_path / "f.o"):
        header = tool("readelf", "-h", path, prefix="riscv64-unknown-elf-")
        assert f"Flags:                             {flags}\n" in header
