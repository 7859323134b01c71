"""bench/report.py: docs/numbers.md is what it writes from bench/results/, it refuses
missing and mixed inputs, no other page quotes a current KWS instruction count, and every
other figure of a million or more says when it was measured."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys

import pytest
from support.models import ROOT

_spec = importlib.util.spec_from_file_location("bench_report", ROOT / "bench" / "report.py")
report = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = report
_spec.loader.exec_module(report)

#: A count of a million or more as the docs write it (4,161,794).
MILLIONS = re.compile(r"\b\d{1,3}(?:,\d{3}){2,}\b|\b\d{7,9}\b")
KWS = re.compile(r"\bKWS\b|kws_dscnn|\bkws\b")
HEADING = re.compile(r"^(#{1,6}) (.*)$")


def test_numbers_md_is_what_the_report_writes(tmp_path):
    out = tmp_path / "numbers.md"
    assert report.main(["--output", str(out), "--no-pages"]) == 0
    assert out.read_text() == (ROOT / "docs" / "numbers.md").read_text(), (
        "docs/numbers.md was edited by hand or bench/results/ changed: run "
        ".venv/bin/python bench/report.py")
    assert report.main(["--check"]) == 0


def test_pages_carry_the_generated_blocks(tmp_path):
    """docs/tuning.md shows the farm's table as report.py writes it, never a hand copy."""
    for path, text in report.pages().items():
        assert path.read_text() == text, f"{path}: run .venv/bin/python bench/report.py"
    assert "| local | 8 |" in (ROOT / "docs" / "tuning.md").read_text()
    page = tmp_path / "docs" / "tuning.md"
    page.parent.mkdir()
    page.write_text("no block here\n")
    with pytest.raises(report.ReportError, match="docs/tuning.md has no block 'farm'"):
        report.pages(root=tmp_path)


def _flat(text: str) -> str:
    """The text with its line breaks as spaces: the report wraps its prose."""
    return " ".join(text.split())


def test_every_table_names_its_bench_and_commit():
    text = _flat((ROOT / "docs" / "numbers.md").read_text())
    commit = json.loads((report.RESULTS / "bench_models_qemu.json").read_text())["stamp"]
    for inp in report.INPUTS:
        own = json.loads((report.RESULTS / inp.file).read_text())["stamp"]
        made = (own if inp.own_commit else commit)["commit"][:8]
        assert f"*From `{inp.command}`, commit `{made}`" in text
    assert "Mixed inputs" not in text


def _results(tmp_path):
    results = tmp_path / "results"
    shutil.copytree(report.RESULTS, results)
    return results


def test_refuses_a_missing_input(tmp_path, capsys):
    results = _results(tmp_path)
    (results / "bench_cycles_mlperf.json").unlink()
    assert report.main(["--results", str(results), "--output", str(tmp_path / "n.md")]) == 2
    err = capsys.readouterr().err
    assert "bench_cycles_mlperf.json is missing: run `.venv/bin/python " \
           "bench/bench_cycles_mlperf.py`" in err
    assert not (tmp_path / "n.md").exists()


def test_refuses_an_unstamped_input(tmp_path):
    results = _results(tmp_path)
    path = results / "bench_compile_timing.json"
    doc = json.loads(path.read_text())
    del doc["stamp"]
    path.write_text(json.dumps(doc))
    with pytest.raises(report.ReportError, match="carries no commit stamp"):
        report.render(results)


def test_mixed_commits_only_with_allow_mixed(tmp_path, capsys):
    results = _results(tmp_path)
    path = results / "bench_cycles_mlperf.json"
    doc = json.loads(path.read_text())
    doc["stamp"]["commit"] = "0123456789abcdef0123456789abcdef01234567"
    path.write_text(json.dumps(doc))
    out = tmp_path / "n.md"
    assert report.main(["--results", str(results), "--output", str(out)]) == 2
    assert "different commits" in capsys.readouterr().err and not out.exists()
    assert report.main(["--results", str(results), "--output", str(out), "--allow-mixed"]) == 0
    text = _flat(out.read_text())
    assert "**Mixed inputs (--allow-mixed): the inputs come from different commits" in text
    assert "bench_cycles_mlperf.json 01234567" in text


def test_an_input_of_its_own_commit_must_still_be_committed(tmp_path):
    """The farm's figures (simulated boards) may come from another commit than
    the compiler's, and the page says whose; never from uncommitted changes."""
    results = _results(tmp_path)
    path = results / "bench_farm.json"
    doc = json.loads(path.read_text())
    doc["stamp"]["commit"] = "0123456789abcdef0123456789abcdef01234567"
    path.write_text(json.dumps(doc))
    text = _flat(report.render(results))
    assert "Mixed inputs" not in text
    assert "except `bench_farm.json`'s, whose commit its table names" in text
    assert "commit `01234567`" in text
    doc["stamp"]["dirty"] = True
    path.write_text(json.dumps(doc))
    with pytest.raises(report.ReportError, match="bench_farm.json ran on a tree with uncommitted"):
        report.render(results)


def test_uncommitted_changes_count_as_mixed(tmp_path):
    results = _results(tmp_path)
    path = results / "bench_models_qemu.json"
    doc = json.loads(path.read_text())
    doc["stamp"]["dirty"] = True
    path.write_text(json.dumps(doc))
    with pytest.raises(report.ReportError, match="uncommitted changes"):
        report.render(results)
    assert "with uncommitted changes" in _flat(report.render(results, allow_mixed=True))


def test_collect_copies_what_the_benches_wrote(tmp_path):
    out, results = tmp_path / "out", tmp_path / "results"
    shutil.copytree(report.RESULTS, out)
    assert report.main(["--collect", str(out), "--results", str(results),
                        "--output", str(tmp_path / "n.md")]) == 0
    assert sorted(p.name for p in results.iterdir()) == sorted(i.file for i in report.INPUTS)
    (out / "bench_models_qemu.json").unlink()
    with pytest.raises(report.ReportError, match="bench_models_qemu.json is missing"):
        report.collect(out, results)


def _sections(text: str):
    """(line number, line, whether a heading above it says "History", the line number of
    the heading it is under: 0 above the first) per line outside headings."""
    stack: list[tuple[int, str]] = []
    fenced = False
    heading = 0
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
        m = None if fenced else HEADING.match(line)
        if m:
            level = len(m.group(1))
            stack = [(lv, title) for lv, title in stack if lv < level] + [(level, m.group(2))]
            heading = number
            continue
        yield number, line, any("history" in title.lower() for _, title in stack), heading


def test_readme_quotes_no_count_outside_the_demo_block():
    """README's figures come from docs/numbers.md: no count of a million or more outside
    the demo's output (tests/test_readme_demo.py checks that one)."""
    text = (ROOT / "README.md").read_text()
    blocks = text.split("```")
    demo = [i for i, block in enumerate(blocks) if "instructions per inference:" in block]
    assert len(demo) == 1 and demo[0] % 2 == 1
    outside = "".join(b for i, b in enumerate(blocks) if i != demo[0])
    assert MILLIONS.findall(outside) == []
    stands = text.split("## Where it stands")[1].split("\n## ")[0]
    assert "docs/numbers.md" in stands
    assert re.findall(r"\d\.\d+x|\d{1,3},\d{3}", stands) == []


def test_docs_quote_no_current_kws_count_but_numbers_md():
    """A KWS instruction count in docs/ is docs/numbers.md's or history: under a heading
    with "History" in it, which says the commit it was measured at."""
    stale = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name == "numbers.md":
            continue
        for number, line, history, _ in _sections(page.read_text()):
            if not history and KWS.search(line) and MILLIONS.search(line):
                stale.append(f"docs/{page.name}:{number}: {line[:100]}")
    assert stale == [], "link to docs/numbers.md instead:\n" + "\n".join(stale)


#: A measured figure as the docs write one (4,161,794; 12,505,738), and what dates it.
FIGURE = re.compile(r"\b\d{1,3}(?:,\d{3}){2,}\b")
DATED = re.compile(r"\bcommit `?[0-9a-f]{7,40}\b|\b20\d\d-\d\d-\d\d\b")


def test_every_figure_outside_numbers_md_says_when_it_was_measured():
    """A figure of a million or more on another page is a snapshot (an analysis, an example's
    output): its section names the commit or the date it was measured at, or sits under a
    History heading, so no page passes one off as today's (today's are docs/numbers.md's)."""
    undated = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name == "numbers.md":
            continue
        sections: dict[int, list] = {}
        for number, line, history, heading in _sections(page.read_text()):
            if not history:
                sections.setdefault(heading, []).append((number, line))
        for lines in sections.values():
            body = "\n".join(line for _, line in lines)
            if not DATED.search(body):
                undated += [f"docs/{page.name}:{n}: {line[:90]}" for n, line in lines
                            if FIGURE.search(line)]
    assert undated == [], ("name the commit or date it was measured at, or link to "
                           "docs/numbers.md instead:\n" + "\n".join(undated))


def test_readme_claims_hold_for_the_committed_results():
    """README's "Where it stands" says, without figures, that on the Cortex-M4 every MLPerf
    Tiny model is bit-exact and needs fewer instructions and estimated cycles, less
    activation RAM and less flash than TFLM+CMSIS-NN: the results must say so too."""
    models = json.loads((report.RESULTS / "bench_models_qemu.json").read_text())
    run = next(r for r in models["runs"] if r["board"] == report.BOARD)
    rows = {r["model"]: r for r in run["models"]}
    cycles = {r["model"]: r for r in
              json.loads((report.RESULTS / "bench_cycles_mlperf.json").read_text())["rows"]}
    for model in report.SHORT:
        r = rows[model]
        assert r["bit_exact"] and cycles[model]["aot"]["exact"], model
        assert r["vs_tflm_cmsis_nn"] < 1 and cycles[model]["ours_over_tflm_cmsis_nn"] < 1, model
        assert r["activation_ram"]["vs_tflm_arena"] < 1, model
        assert r["flash"]["vs_tflm_cmsis_nn"] < 1, model
