"""aot.quant depends on numpy only: importing it loads nothing else of aot."""

from __future__ import annotations

import ast
import subprocess
import sys

CODE = """
import sys
import aot.quant.arith, aot.quant.fixedpoint, aot.quant.lut, aot.quant.params
import aot.quant.sigmoid_table
print(sorted(m for m in sys.modules if m.startswith("aot.") and not m.startswith("aot.quant")))
"""


def test_importing_aot_quant_loads_no_other_stage():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                         check=True).stdout.strip()
    # aot/__init__.py itself imports the target package (aot.Target) and the version
    loaded = ast.literal_eval(out)
    assert [m for m in loaded
            if not m.startswith(("aot.target", "aot.errors", "aot.version"))] == []
