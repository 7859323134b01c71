"""What the model-group tests share: two small models of different shapes, and
a ``main`` that runs a sequence of the group's models on their one shared
workspace and writes every output (host: stdout; firmware: the console)."""

from __future__ import annotations

import numpy as np

from support.net_firmware import net_model
from support.tflite_builder import ModelBuilder

def dense_model(seed: int) -> bytes:
    """x int8[1,32] -> fully connected (ReLU) -> fully connected -> y int8[1,6]."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    x = mb.input("x", [1, 32], "int8", scale=0.03, zero_point=2)
    w1 = mb.const("w1", rng.integers(-127, 128, (48, 32)), "int8", scale=0.006, zero_point=0)
    b1 = mb.const("b1", rng.integers(-900, 900, 48), "int32", scale=0.03 * 0.006,
                  zero_point=0)
    h = mb.tensor("h", [1, 48], "int8", scale=0.05, zero_point=-128)
    mb.op("FULLY_CONNECTED", [x, w1, b1], [h], fused_activation_function="RELU")
    w2 = mb.const("w2", rng.integers(-127, 128, (6, 48)), "int8", scale=0.005, zero_point=0)
    b2 = mb.const("b2", rng.integers(-900, 900, 6), "int32", scale=0.05 * 0.005,
                  zero_point=0)
    y = mb.output("y", [1, 6], "int8", scale=0.15, zero_point=-4)
    mb.op("FULLY_CONNECTED", [h, w2, b2], [y])
    return mb.finish()


def two_models(tmp_path):
    """Paths of a convolutional and a dense model (their stems: ``conv``, ``dense``)."""
    conv, dense = tmp_path / "conv.tflite", tmp_path / "dense.tflite"
    conv.write_bytes(net_model(seed=3))
    dense.write_bytes(dense_model(seed=4))
    return conv, dense


def group_main(group: str, sequence, *, firmware: bool) -> str:
    """C of a ``main`` that runs ``sequence`` (``(model metadata, [input
    arrays])`` from the group's metadata.json ``models``) in order, each
    model's inputs written into the shared workspace at
    ``<model>_input_<x>()`` before its run, and writes each run's outputs.
    Exits with the OR of the runs' statuses."""
    lines = ["#include <stdint.h>", "#include <string.h>", f'#include "{group}.h"']
    if firmware:
        lines += ['#include "aot/platform.h"',
                  "static void emit(const void *p, uint32_t n)",
                  "{ aot_port_write((const uint8_t *)p, n); }"]
    else:
        lines += ["#include <stdio.h>",
                  "static void emit(const void *p, uint32_t n) { fwrite(p, 1, n, stdout); }"]
    body = []
    for k, (meta, inputs) in enumerate(sequence):
        m = meta["name"]
        ins = [(p, x) for p, x in zip(meta["inputs"], inputs, strict=True)]
        for j, (p, x) in enumerate(ins):
            data = ", ".join(str(b) for b in np.ascontiguousarray(x).tobytes())
            lines.append(f"static const uint8_t in_{k}_{j}[{p['bytes']}] = {{{data}}};")
        body.append("    {")
        for j, (p, _) in enumerate(ins):
            body.append(f"        memcpy({m}_input_{p['c_name']}(), in_{k}_{j}, "
                        f"sizeof in_{k}_{j});")
        body.append(f"        struct {m}_inputs in = {{"
                    + ", ".join(f"{m}_input_{p['c_name']}()" for p, _ in ins) + "};")
        body.append(f"        struct {m}_outputs out = {{"
                    + ", ".join(f"{m}_output_{p['c_name']}()" for p in meta["outputs"]) + "};")
        body.append(f"        status |= {m}_run(&in, &out);")
        for p in meta["outputs"]:
            body.append(f"        emit({m}_output_{p['c_name']}(), {p['bytes']}u);")
        body.append("    }")
    lines += ["int main(void)", "{", "    int32_t status = 0;"]
    if firmware:
        lines.append("    aot_port_init();")
    lines += body + ["    return (int)status;", "}", ""]
    return "\n".join(lines)


def split_outputs(raw: bytes, sequence) -> list[list[np.ndarray]]:
    """The outputs ``group_main`` wrote, per run of ``sequence``, as arrays."""
    runs, pos = [], 0
    for meta, _ in sequence:
        outs = []
        for p in meta["outputs"]:
            dtype = np.dtype("float32" if p["dtype"] == "float32" else p["dtype"])
            outs.append(np.frombuffer(raw[pos:pos + p["bytes"]], dtype).reshape(p["shape"]))
            pos += p["bytes"]
        runs.append(outs)
    assert pos == len(raw), f"{len(raw)} bytes written, {pos} expected"
    return runs
