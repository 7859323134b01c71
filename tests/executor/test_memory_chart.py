"""The memory plan drawn as SVG (aot.executor.memory_chart) and its peak."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from support.models import MODELS_DIR

from aot.cli import main
from aot.compile import compile_model
from aot.executor.memory import peak_step
from aot.executor.memory_chart import memory_svg

SVG = "{http://www.w3.org/2000/svg}"


def test_each_workspace_buffer_is_one_rectangle_and_the_peak_is_marked():
    compiled = compile_model(MODELS_DIR / "mlperf_kws_dscnn.tflite", "qemu/mps2-an386",
                             measure_code=False)
    plan = compiled.plan
    root = ET.fromstring(memory_svg(plan, "kws"))
    rects = root.iter(f"{SVG}rect")
    buffers = [r for r in rects if r.get("class") == "buffer"]
    assert len(buffers) == sum(1 for b in plan.buffers if not b.external)
    # Rectangles stay inside the plot, whose height is the workspace.
    assert all(float(r.get("height")) > 0 for r in buffers)
    step, held = peak_step(plan)
    peak = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "peak"]
    assert len(peak) == 1
    assert f"step {step} {plan.steps[step]}, {held:,} bytes" in peak[0].find(f"{SVG}title").text
    # The keyword model's layers overlap: a step holds more buffer bytes than
    # the workspace has, on shared bytes.
    assert held > plan.workspace_bytes


def test_compile_memory_report_names_the_peak_and_writes_the_chart(tmp_path, capsys):
    out = tmp_path / "kws"
    assert main(["compile", str(MODELS_DIR / "mlperf_kws_dscnn.tflite"), "--board",
                 "qemu/mps2-an386", "-o", str(out), "--memory-report"]) == 0
    text = capsys.readouterr().out
    assert "peak: step " in text and f"memory chart: {out / 'memory.svg'}" in text
    ET.parse(out / "memory.svg")  # well-formed
