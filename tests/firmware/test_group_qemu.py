"""A model group in firmware of its own: KWS, micro_speech and ResNet-8 compiled
into one artifact for qemu/mps2-an386, linked with a main that runs them one
after another on their one shared workspace (each input written into it
before its model's run), run on QEMU and compared with the reference
interpreter (bit-exact with TFLM); with the C kernels and with LLVM's objects
(whose helpers are per model too)."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
import serial
from support.group import group_main, split_outputs
from support.models import MODELS_DIR, random_inputs

from aot.compile import compile_group
from aot.frontend import load_model
from aot.reference import interpreter
from aot.target import load_board
from flash import runner_for_board

BOARD = "qemu/mps2-an386"
MAKEFILE = """\
CC := arm-none-eabi-gcc
AR := arm-none-eabi-ar
TRIO_DIR := {artifact}
include $(TRIO_DIR)/trio.mk
-include $(AOT_RUNTIME_DIR)/board.mk
CFLAGS := -O2 -Wall $(TRIO_BOARD_CFLAGS) $(AOT_PORT_CFLAGS) $(AOT_PORT_INCLUDES) $(TRIO_CFLAGS)
PORT_OBJS := $(patsubst %.c,build/port/%.o,$(notdir $(AOT_PORT_SRCS)))

build/main.o: main.c
\t@mkdir -p $(dir $@)
\t$(CC) $(TRIO_CPU_FLAGS) $(CFLAGS) -c $< -o $@

define port_object
build/port/$(notdir $(1:.c=.o)): $(1)
\t@mkdir -p $$(dir $$@)
\t$$(CC) $$(TRIO_CPU_FLAGS) $$(CFLAGS) -c $$< -o $$@
endef
$(foreach s,$(AOT_PORT_SRCS),$(eval $(call port_object,$(s))))

build/firmware.elf: build/main.o $(PORT_OBJS) $(TRIO_LIB) $(AOT_LDSCRIPT)
\t$(CC) $(TRIO_CPU_FLAGS) $(AOT_PORT_CFLAGS) build/main.o $(PORT_OBJS) $(TRIO_LIB) \\
\t  $(AOT_LDSCRIPT_FLAGS) $(AOT_PORT_LDFLAGS) $(TRIO_BOARD_LDFLAGS) -lm -o $@
"""


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.parametrize("codegen, regions", [
    ("c", None), ("llvm", None),
    # The shared workspace split over SSRAM and PSRAM, the hottest constants copied
    # to PSRAM at start-up and the stack there: one group script for all models.
    ("c", "ram:12K,psram:300K+const+stack"),
])
def test_group_runs_models_in_turn_on_one_workspace_on_cortex_m4(codegen, regions, tmp_path):
    paths = {"kws": MODELS_DIR / "mlperf_kws_dscnn.tflite",
             "speech": MODELS_DIR / "tflm_micro_speech.tflite",
             "resnet": MODELS_DIR / "mlperf_ic_resnet8.tflite"}
    group = compile_group(list(paths.values()), BOARD, names=list(paths), name="trio",
                          codegen=codegen, memory_regions=regions)
    assert group.sizes.workspace < sum(m.sizes.workspace for m in group.models)
    if regions:
        assert any(m.plan.regions for m in group.models)
        assert all(m.plan.region_constants for m in group.models)
        assert [p for p in group.files if p.endswith(".ld")] == ["codegen/trio_regions.ld"]
    artifact = group.write(tmp_path / "trio")
    models = json.loads((artifact / "metadata.json").read_text())["models"]
    meta = {m["name"]: m for m in models}
    graphs = {n: load_model(p) for n, p in paths.items()}
    order = ["kws", "speech", "kws", "resnet", "speech"]
    sequence = [(meta[n], random_inputs(graphs[n], 10 + k, 1)[0]) for k, n in enumerate(order)]
    project = tmp_path / "project"
    project.mkdir()
    (project / "main.c").write_text(group_main("trio", sequence, firmware=True))
    (project / "Makefile").write_text(MAKEFILE.format(artifact=artifact))
    done = subprocess.run(["make", "build/firmware.elf"], cwd=project, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    expected = sum(p["bytes"] for m, _ in sequence for p in m["outputs"])
    with runner_for_board("qemu", load_board(BOARD), project / "build" / "firmware.elf") as url:
        with serial.serial_for_url(url, timeout=60) as port:
            raw = port.read(expected)
    got = split_outputs(raw, sequence)
    for n, (_, xs), outs in zip(order, sequence, got, strict=True):
        for a, b in zip(outs, interpreter.run(graphs[n], xs), strict=True):
            np.testing.assert_array_equal(a, b.reshape(a.shape), err_msg=n)
