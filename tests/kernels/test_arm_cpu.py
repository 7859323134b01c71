"""The arm_cpu strategies: int8 dot products tensorized onto aot_dot_s8.

On the host the helper's portable loop runs (under ASan/UBSan); on an
emulated Cortex-M4 (slow tests) the SXTB16/SMLAD path runs over the RPC and
must give the same bits as the reference interpreter.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from graphs import conv_graph, dense_graph
from kernel_checks import all_values, check_graph, seeded_inputs

from aot.kernels import lower_group
from aot.passes import annotations, optimize

ARM = "c -keys=arm_cpu,cpu -mcpu=cortex-m4"
CASES = [
    ("conv2d", {}),
    ("conv2d", {"cin": 8, "strides": (2, 2), "activation": "relu"}),
    ("conv2d", {"cin": 13, "k": (1, 1), "padding": (0, 0, 0, 0), "residual": True}),
    ("dense", {"depth": 37, "per_channel": True}),
    ("dense", {"depth": 16, "w_zp": 3}),
]


def _graph(op, variant, seed):
    if op == "dense":
        return dense_graph(seed=seed, **variant)
    return conv_graph(op, seed=seed, **variant)


@pytest.mark.parametrize("op, variant", CASES, ids=lambda v: str(v))
def test_tensorized_kernels_match_the_reference_on_the_host(op, variant):
    g = _graph(op, variant, 21)
    kernels = check_graph(g, seeded_inputs(g, 21), target=ARM)
    dense_with_weight_offset = variant.get("w_zp")
    assert ("aot_dot_s8(" in kernels[0].source) != bool(dense_with_weight_offset)


def test_the_cortex_m4_build_uses_smlad(tmp_path):
    g = conv_graph("conv2d", seed=22, cin=8)
    ag = optimize(g)
    k = lower_group(annotations(ag).groups[0], ag, ARM, name="k")
    from aot.kernels import support_files
    for name, text in support_files(None).items():
        (tmp_path / name).write_text(text)
    (tmp_path / "k.c").write_text(k.source)
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard",
                    "-mfpu=fpv4-sp-d16", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2",
                    "-I", str(tmp_path), "-c", str(tmp_path / "k.c"),
                    "-o", str(tmp_path / "k.o")], check=True)
    dis = subprocess.run(["arm-none-eabi-objdump", "-d", str(tmp_path / "k.o")],
                         capture_output=True, text=True, check=True).stdout
    assert "smlad" in dis and "sxtb16" in dis


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="needs qemu-system-arm")
def test_dsp_kernels_are_bit_exact_on_an_emulated_cortex_m4():
    import m4_firmware

    from aot.rpc import connect
    from flash.qemu import QemuConfig, QemuRunner
    kernels, names, checks = [], [], []
    for n, (op, variant) in enumerate(CASES):
        g = _graph(op, variant, 23)
        ag = optimize(g)
        values = all_values(ag, seeded_inputs(ag, 23))
        tensors = {t.name: t for t in ag.tensors()}
        for group in annotations(ag).groups:
            k = lower_group(group, ag, ARM, name=f"case{n}_{len(kernels)}")
            kernels.append(k)
            names.append(f"case{n}_{group.name}")
            checks.append([values[id(tensors[p.tensor])] for p in k.params])
    with tempfile.TemporaryDirectory() as tmp:
        elf = m4_firmware.build(kernels, names, Path(tmp))
        with QemuRunner(QemuConfig(elf=elf, machine="mps2-an386")) as url:
            with connect(url, timeout=30) as client:
                for i, (k, name, arrays) in enumerate(zip(kernels, names, checks)):
                    for j, (p, a) in enumerate(zip(k.params, arrays)):
                        if p.role == "input":
                            raw = np.frombuffer(np.ascontiguousarray(a).tobytes(),
                                                dtype=a.dtype)
                            client.write_tensor(m4_firmware.tensor_name(i, j), raw)
                    client.run(1, name)
                    for j, (p, a) in enumerate(zip(k.params, arrays)):
                        if p.role == "output":
                            got = client.read_tensor(m4_firmware.tensor_name(i, j))
                            np.testing.assert_array_equal(
                                np.asarray(got).reshape(-1), np.asarray(a).reshape(-1),
                                err_msg=name)
