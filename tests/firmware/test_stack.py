"""Peak stack from GCC call graphs: exact toy graphs, and a real project."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from support.models import MODELS, MODELS_DIR, model_sequence
from support.stack_probe import run_and_read, symbol

from aot.compile import compile_model
from aot.export import runtime_config
from aot.firmware import BuildError, build_project, create_project
from aot.firmware.stack import (
    _graph,
    _merge_binary,
    deepest,
    deepest_chain,
    exception_frame,
    parse_disassembly,
    stack_usage,
)
from aot.frontend import load_model
from aot.target import load_board

CI = """graph: { title: "a.c"
node: { title: "main" label: "main\\na.c:1:5\\n16 bytes (static)" }
node: { title: "a.c:helper" label: "helper\\na.c:3:13\\n40 bytes (static)" }
node: { title: "leaf" label: "leaf\\na.c:9:6\\n8 bytes (static)" }
node: { title: "memcpy" label: "memcpy\\n<built-in>" shape : ellipse }
edge: { sourcename: "main" targetname: "a.c:helper" label: "a.c:2:3" }
edge: { sourcename: "main" targetname: "leaf" label: "a.c:2:9" }
edge: { sourcename: "a.c:helper" targetname: "leaf" label: "a.c:4:3" }
edge: { sourcename: "leaf" targetname: "memcpy" label: "a.c:10:3" }
node: { title: "rec" label: "rec\\na.c:12:6\\n24 bytes (static)" }
edge: { sourcename: "rec" targetname: "rec" label: "a.c:13:3" }
node: { title: "vla" label: "vla\\na.c:15:6\\n32 bytes (dynamic)" }
}
"""


def test_deepest_chain_sums_frames_along_the_worst_path():
    frames, calls = _graph([CI])
    assert deepest("main", frames, calls) == (16 + 40 + 8, True)  # memcpy counts 0
    assert deepest("leaf", frames, calls) == (8, True)


def test_the_deepest_chain_names_the_worst_path():
    frames, calls = _graph([CI])
    assert deepest_chain("main", frames, calls) == (16 + 40 + 8, True,
                                                    ("main", "a.c:helper", "leaf"))


def test_recursion_and_dynamic_frames_are_unbounded():
    frames, calls = _graph([CI])
    assert deepest("rec", frames, calls)[1] is False
    assert deepest("vla", frames, calls) == (32, False)


@pytest.mark.slow
def test_real_project_has_bounded_runtime_and_model_stacks(hello_artifact, tmp_path,
                                                          object_cache):
    project = create_project(hello_artifact, "qemu/mps2-an386", tmp_path / "p")
    build_project(project, cache_dir=object_cache)
    usage = stack_usage(project)
    assert usage.bounded
    assert usage.runtime > 0 and usage.model > 0
    # within the reserved stack
    assert usage.peak == usage.runtime + usage.model + usage.exception < 8192


@pytest.mark.slow
def test_port_flags_are_used_so_riscv_projects_find_their_c_library(tmp_path, object_cache):
    # The sifive_e port builds against picolibc (--specs in its port.mk): without
    # the port's flags the analysis cannot even find <stdint.h>.
    compiled = compile_model(MODELS_DIR / "tflm_hello_world_int8.tflite", "qemu/sifive-e",
                             name="hello", measure_code=False)
    project = create_project(compiled.write(tmp_path / "art"), "qemu/sifive-e", tmp_path / "p")
    build_project(project, cache_dir=object_cache)
    usage = stack_usage(project)
    assert usage.bounded and usage.runtime > 0 and usage.model > 0


# ------------------------------------------------------------- the binary's functions

DISASSEMBLY = """
00000100 <leaf>:
     100:	push	{r4, r5, lr}
     102:	sub	sp, #16	@ 0x10
     104:	bl	200 <memset>
     108:	bne.n	104 <leaf+0x4>
     10a:	add	sp, #16
     10c:	pop	{r4, r5, pc}

00000200 <memset>:
     200:	push	{r4, r5, lr}
     202:	b.w	300 <__helper>

00000300 <__helper>:
     300:	stmdb	sp!, {r4, r5, r6, r7, r8, r9, sl, lr}
     304:	vpush	{d8-d15}
     308:	str.w	r3, [sp, #-4]!
     30c:	sub.w	sp, sp, #256	@ 0x100
     310:	bx	lr

00000400 <alloca_user>:
     400:	sub	sp, r3
     402:	bx	lr

00000500 <rv_leaf>:
     500:	addi	sp,sp,-48
     504:	jal	200 <memset>
     508:	addi	sp,sp,48
     50c:	ret
"""


def test_binary_frames_are_what_the_prologues_push_and_subtract():
    fns = parse_disassembly(DISASSEMBLY)
    assert (fns["leaf"].frame, fns["leaf"].callees) == (12 + 16, {"memset"})
    assert (fns["memset"].frame, fns["memset"].callees) == (12, {"__helper"})  # a tail call
    assert fns["__helper"].frame == 32 + 64 + 4 + 256 and fns["__helper"].bounded
    assert not fns["alloca_user"].bounded
    assert (fns["rv_leaf"].frame, fns["rv_leaf"].callees) == (48, {"memset"})


def test_library_calls_only_the_binary_shows_join_the_call_graph():
    # GCC's graph (CI) has leaf call memcpy; the binary shows leaf calling memset too
    # (GCC emits such calls while expanding code, e.g. a zeroed array), and memset's
    # frame and its tail call.  The compiled functions keep GCC's frames.
    frames, calls = _graph([CI])
    _merge_binary(frames, calls, parse_disassembly(DISASSEMBLY))
    assert frames["leaf"] == (8, True)
    assert deepest("leaf", frames, calls) == (8 + 12 + 356, True)
    assert deepest("main", frames, calls) == (16 + 40 + 8 + 12 + 356, True)


@pytest.mark.parametrize("macros, frame", [
    ({"__ARM_ARCH_PROFILE": "77"}, 32 + 4),                        # Cortex-M3: 8 words
    ({"__ARM_ARCH_PROFILE": "77", "__ARM_FP": "4"}, 104 + 4),      # M4F: + S0-S15, FPSCR
    ({"__ARM_ARCH_PROFILE": "77", "__ARM_FEATURE_MVE": "3"}, 104 + 4),  # M55
    ({"__riscv": "1"}, 0),                                         # traps push nothing
])
def test_exception_frames_follow_the_core(macros, frame):
    assert exception_frame(macros) == frame


@pytest.mark.parametrize("tag, frame", [("qemu/mps2-an386", 104 + 4),   # Cortex-M4F
                                        ("qemu/mps2-an385", 32 + 4)])   # Cortex-M3
@pytest.mark.one_fast
def test_peak_leaves_room_for_an_exception_and_counts_library_calls(tag, frame, tmp_path,
                                                                    object_cache):
    compiled = compile_model(MODELS_DIR / "tflm_hello_world_int8.tflite", tag, name="hello",
                             measure_code=False)
    project = create_project(compiled.write(tmp_path / "art"), tag, tmp_path / "p")
    build_project(project, cache_dir=object_cache)
    usage = stack_usage(project)
    assert usage.bounded
    # An interrupt at the deepest point pushes its frame, and its handler runs on top.
    assert usage.peak - usage.runtime - usage.model > frame
    # The runtime copies frames with memcpy, the model clears buffers with memset.
    assert {"memcpy", "memset"} <= set(usage.library)


def test_the_bound_needs_the_built_firmware(hello_artifact, tmp_path):
    project = create_project(hello_artifact, "qemu/mps2-an386", tmp_path / "p")
    with pytest.raises(BuildError, match="build the project first"):
        stack_usage(project)


# ------------------------------------------------- the bound against the measured stack

def _painted(board_tag: str):
    """The board with the runtime's stack painting on (AOT_STACK_PAINT=1)."""
    board = load_board(board_tag)
    tc = board.toolchain
    return dataclasses.replace(board, toolchain=dataclasses.replace(
        tc, cflags=(*tc.cflags, "-DAOT_STACK_PAINT=1")))


def measured_stack(project, inputs: list[np.ndarray], dump: Path) -> int:
    """Bytes of stack the firmware used, from reset through the ``[N, ...]``
    ``inputs`` (each written, run and its outputs read over the RPC): the
    painted region (.bss end to the top of RAM) read from QEMU, up to the
    lowest word that no longer holds the pattern."""
    (low, _), (top, _) = symbol(project, "_ebss"), symbol(project, "_estack")
    words = run_and_read(project, inputs, low, top - low, dump)
    pattern = runtime_config()["AOT_STACK_PAINT_WORD"]
    assert words[0] == pattern, "the stack was not painted (or overflowed into .bss)"
    used = np.flatnonzero(words != pattern)
    return top - (low + 4 * int(used[0])) if used.size else 0


MEASURED = [pytest.param(m, id=m["name"]) for m in MODELS]


@pytest.mark.slow
@pytest.mark.parametrize("entry", MEASURED)
def test_static_bound_covers_the_stack_measured_on_qemu(entry, object_cache, tmp_path):
    tag = "qemu/mps2-an386"
    compiled = compile_model(MODELS_DIR / entry["file"], tag, name="m", measure_code=False)
    project = create_project(compiled.write(tmp_path / "art"), _painted(tag), tmp_path / "p")
    build_project(project, cache_dir=object_cache)
    usage = stack_usage(project)
    graph = load_model(MODELS_DIR / entry["file"])
    sequence = model_sequence(entry, graph)
    inputs = [np.stack([np.asarray(inv[k]) for inv in sequence]).astype(t.type.np_dtype)
              for k, t in enumerate(graph.inputs)]
    used = measured_stack(project, inputs, tmp_path / "stack.bin")
    print(f"{entry['name']}: bound {usage.peak} (runtime {usage.runtime} + model "
          f"{usage.model} + exception {usage.exception}), measured {used}")
    assert usage.bounded
    assert used > usage.model           # the measurement sees the inference's frames
    assert usage.peak >= used
