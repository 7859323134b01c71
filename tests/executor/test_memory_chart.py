"""The memory plan drawn as SVG (aot.executor.memory_chart) and its peak."""

from __future__ import annotations

import math
import re
import string
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support.models import MODELS_DIR

from aot.cli import main
from aot.compile import compile_model
from aot.executor.memory import peak_step
from aot.executor.memory_chart import memory_svg, text_width, wrap

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
    heading = " ".join(t.text for t in next(root.iter(f"{SVG}text")))
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


def test_the_heading_and_the_step_names_fit_the_canvas():
    """The KWS chart's heading (119 characters) was one line and lost its end past
    the 740-pixel canvas; the step names slanted off its right edge."""
    compiled = compile_model(MODELS_DIR / "mlperf_kws_dscnn.tflite", "qemu/mps2-an386",
                             measure_code=False)
    title = "mlperf_kws_dscnn on qemu/mps2-an386: 9,280-byte workspace"
    root = ET.fromstring(memory_svg(compiled.plan, title))
    width, height = float(root.get("width")), float(root.get("height"))
    heading = next(t for t in root.iter(f"{SVG}text") if t.get("class") == "heading")
    lines = list(heading)
    assert len(lines) >= 2 and " ".join(t.text for t in lines).startswith(title)
    for line in lines:
        assert float(line.get("x")) + text_width(line.text, 13) <= width, line.text
    steps = [t for t in root.iter(f"{SVG}text") if t.get("class") == "step"]
    assert len(steps) == len(compiled.plan.steps)
    for t in steps:
        angle = math.radians(float(re.match(r"rotate\((\S+) ", t.get("transform")).group(1)))
        reach = text_width(t.text, float(t.get("font-size")))
        assert float(t.get("x")) + reach * math.cos(angle) <= width, t.text
        assert float(t.get("y")) + reach * math.sin(angle) <= height, t.text


def test_wrap_breaks_at_spaces_and_cuts_a_word_too_long():
    assert wrap("aa bb cc", 10, text_width("aa bb", 10)) == ["aa bb", "cc"]
    assert wrap("abcdef", 10, text_width("abc", 10)) == ["abc", "def"]


DEJAVU_BOLD = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")


@pytest.mark.skipif(not DEJAVU_BOLD.is_file(), reason="DejaVu Sans Bold is not installed")
def test_text_width_bounds_the_widest_default_sans_serif_font():
    font = pytest.importorskip("PIL.ImageFont", reason="Pillow measures the font's glyphs")
    dejavu = font.truetype(str(DEJAVU_BOLD), 100)
    for c in string.printable[:95]:
        assert text_width(c, 100) >= dejavu.getlength(c), repr(c)
