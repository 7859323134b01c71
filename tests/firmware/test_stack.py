"""Peak stack from GCC call graphs: exact toy graphs, and a real project."""

from __future__ import annotations

from support.models import MODELS_DIR

from aot.compile import compile_model
from aot.firmware import create_project
from aot.firmware.stack import _graph, deepest, stack_usage

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


def test_recursion_and_dynamic_frames_are_unbounded():
    frames, calls = _graph([CI])
    assert deepest("rec", frames, calls)[1] is False
    assert deepest("vla", frames, calls) == (32, False)


def test_real_project_has_bounded_runtime_and_model_stacks(hello_artifact, tmp_path):
    usage = stack_usage(create_project(hello_artifact, "qemu/mps2-an386", tmp_path / "p"))
    assert usage.bounded
    assert usage.runtime > 0 and usage.model > 0
    assert usage.peak == usage.runtime + usage.model < 8192  # well inside the reserved stack


def test_port_flags_are_used_so_riscv_projects_find_their_c_library(tmp_path):
    # The sifive_e port builds against picolibc (--specs in its port.mk): without
    # the port's flags the analysis cannot even find <stdint.h>.
    compiled = compile_model(MODELS_DIR / "tflm_hello_world_int8.tflite", "qemu/sifive-e",
                             name="hello", measure_code=False)
    project = create_project(compiled.write(tmp_path / "art"), "qemu/sifive-e", tmp_path / "p")
    usage = stack_usage(project)
    assert usage.bounded and usage.runtime > 0 and usage.model > 0
