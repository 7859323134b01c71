#!/usr/bin/env bash
# The README's demo.  It grows with the project: today it shows the boards
# the compiler knows and the canonical target of the default board.
set -euo pipefail
cd "$(dirname "$0")/.."
aot=.venv/bin/aot
echo "== Boards =="
$aot boards
echo
echo "== Target of the default board, qemu/mps2-an386 =="
$aot target show qemu/mps2-an386
