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


def test_a_split_plan_draws_one_panel_per_region_and_totals_each():
    from aot.executor import format_memory_report
    compiled = compile_model(MODELS_DIR / "mlperf_kws_dscnn.tflite", "qemu/mps2-an386",
                             memory_regions="ram:9K,psram", measure_code=False)
    plan = compiled.plan
    root = ET.fromstring(memory_svg(plan, "kws"))
    panels = {g.get("id"): g for g in root.iter(f"{SVG}g") if g.get("class") == "region"}
    assert list(panels) == ["region-ram", "region-psram"]
    for region, g in panels.items():
        mine = [b for b in plan.buffers
                if not b.external and "region-" + (b.region or "ram") == region]
        drawn = [r for r in g.iter(f"{SVG}rect") if r.get("class") == "buffer"]
        assert len(drawn) == len(mine) > 0
        assert len([r for r in g.iter(f"{SVG}rect") if r.get("class") == "peak"]) == 1
    step, held = peak_step(plan)
    heading = next(t for t in root.iter(f"{SVG}text")).text
    assert f"peak: step {step} {plan.steps[step]}, {held:,} bytes alive" in heading
    assert any(f"psram: {plan.regions['psram']:,} bytes, speed 2" == t.text
               for t in root.iter(f"{SVG}text"))
    text = format_memory_report(plan)
    assert f"ram (the workspace): offset 0 .. {plan.workspace_bytes} bytes" in text
    assert f"psram: offset 0 .. {plan.regions['psram']} bytes" in text
    assert (f"regions: ram {plan.workspace_bytes} bytes (speed 1), psram "
            f"{plan.regions['psram']} bytes (speed 2)") in text
    # A chart row is a step: the psram chart marks bytes only while its buffer lives.
    rows = text.split("psram: offset")[1].split("\n\n")[0].splitlines()[1:]
    first = min(b.start for b in plan.buffers if b.region == "psram")
    assert first > 0 and set(rows[0].split("|")[1]) == {"."}
    assert set(rows[first].split("|")[1]) != {"."}
