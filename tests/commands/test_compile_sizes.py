"""One compile reports one constants size: its summary, memory report, metadata and header agree."""

from __future__ import annotations

import json
import re

from support.models import MODELS_DIR

from aot.cli import main

HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"


def test_summary_memory_report_metadata_and_header_print_one_constants_size(tmp_path, capsys):
    assert main(["compile", str(HELLO), "--board", "qemu/mps2-an386", "-o", str(tmp_path / "a"),
                 "--name", "hello", "--memory-report"]) == 0
    out = capsys.readouterr().out
    printed = [int(n) for n in re.findall(r"constants (\d+) bytes", out)]
    assert len(printed) == 2, out  # the memory report's totals and the compile's summary
    meta = json.loads((tmp_path / "a" / "metadata.json").read_text())
    header = (tmp_path / "a" / "include" / "hello.h").read_text()
    defined = int(re.search(r"#define HELLO_CONSTANT_BYTES (\d+)u", header).group(1))
    assert printed[0] == printed[1] == meta["sizes"]["constants"] == defined
    # The kernels' arrays, not the model file's tensors (which are fewer bytes).
    assert defined == sum(k["constant_bytes"] for k in meta["kernels"])
    assert "constant_bytes" not in meta["memory_plan"]
