#!/usr/bin/env bash
# The README's demo: compile the MLPerf Tiny keyword-spotting model for the
# emulated Cortex-M4 (qemu/mps2-an386), run it there on its sample input, and
# print the answer, the instruction count and the memory use.  The model and
# its sample are read from ../shared/models (beside the project), not copied.
# DEMO_AOT, DEMO_PYTHON and DEMO_OUT replace the aot command, the Python and the
# output folder (tests/test_readme_demo.py runs the demo from a work tree).
set -euo pipefail
cd "$(dirname "$0")/.."
aot=${DEMO_AOT:-.venv/bin/aot}
python=${DEMO_PYTHON:-.venv/bin/python}
models=../shared/models
model=$models/mlperf_kws_dscnn.tflite
sample=$models/samples/mlperf_kws_dscnn.npy
out=${DEMO_OUT:-out/demo}
board=qemu/mps2-an386

if [ ! -f "$model" ]; then
  echo "demo: $model is missing: the shared models must sit beside the project" >&2
  exit 1
fi
mkdir -p "$out"

echo "== 1. Compile $(basename "$model") for $board =="
echo "\$ aot compile $model --board $board -o $out/kws --name kws"
$aot compile "$model" --board "$board" -o "$out/kws" --name kws
echo

echo "== 2. Run it on the emulated Cortex-M4 (QEMU, exact instruction counts) =="
echo "\$ aot run $model --board $board --input $sample --output $out/scores.npy --json"
$aot run "$model" --board "$board" --input "$sample" --output "$out/scores.npy" \
  --json > "$out/run.json"
$python - "$out/run.json" "$out/scores.npy" <<'PY'
import json, sys
import numpy as np

# The 12 classes of the MLPerf Tiny keyword-spotting benchmark, in output order.
LABELS = ["down", "go", "left", "no", "off", "on", "right", "stop", "up", "yes",
          "silence", "unknown"]
report = json.load(open(sys.argv[1]))
scores = np.load(sys.argv[2]).reshape(-1)
best = int(scores.argmax())
sizes = report["sizes"]
print(f"answer: class {best} ({LABELS[best]!r}), score {int(scores[best])} of int8 [-128, 127]")
print(f"instructions per inference: {report['instructions_per_inference']:,}")
print(f"RAM:   {sizes['ram']['total']:,} bytes (workspace {sizes['ram']['workspace']:,}, "
      f"stack {sizes['ram']['stack']:,}, runtime {sizes['ram']['runtime']:,})")
print(f"flash: {sizes['flash']['total']:,} bytes (constants {sizes['flash']['constants']:,}, "
      f"model code {sizes['flash']['model_code']:,}, runtime {sizes['flash']['runtime']:,})")
PY
echo
echo "== 3. Check it against the reference (bit-exact with TFLite Micro) =="
echo "\$ aot verify $model --board $board --report $out/verify.json"
$aot verify "$model" --board "$board" --report "$out/verify.json"
