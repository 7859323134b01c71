"""Mutated copies of the shared models: the reader raises ModelError or succeeds, nothing else."""

from __future__ import annotations

import random
import struct

import pytest
from support.models import MODELS

from aot.frontend import ModelError
from aot.frontend.tflite import parse_tflite

SMALL = [m["file"] for m in MODELS if m["file"].endswith(".tflite") and m["bytes"] < 60000]


def _mutate(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    kind = rng.randrange(4)
    if kind == 0:  # truncate
        return bytes(buf[:rng.randrange(len(buf))])
    if kind == 1:  # flip a few bytes; the tables sit mostly near the start or the end
        for _ in range(rng.randint(1, 8)):
            region = rng.choice([range(0, 2048), range(len(buf) - 4096, len(buf))])
            pos = min(max(rng.choice(region), 0), len(buf) - 1)
            buf[pos] = rng.randrange(256)
    elif kind == 2:  # an aligned word becomes a random or extreme value
        pos = rng.randrange(0, len(buf) - 4) & ~3
        value = rng.choice([0, 1, 0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, rng.getrandbits(32)])
        struct.pack_into("<I", buf, pos, value)
    else:  # a 16-bit vtable-sized field changes
        pos = rng.randrange(0, len(buf) - 2) & ~1
        struct.pack_into("<H", buf, pos, rng.getrandbits(16))
    return bytes(buf)


def _fuzz(models_dir, files, count, seed):
    rng = random.Random(seed)
    originals = [(models_dir / f).read_bytes() for f in files]
    outcomes = {"ok": 0, "error": 0}
    for _ in range(count):
        mutated = _mutate(rng, rng.choice(originals))
        try:
            parse_tflite(mutated)
            outcomes["ok"] += 1
        except ModelError:
            outcomes["error"] += 1
    return outcomes


def test_fuzz_small_models(models_dir):
    outcomes = _fuzz(models_dir, SMALL, 300, seed=1234)
    assert outcomes["error"] > 50  # the mutations do reach the checks


@pytest.mark.slow
def test_fuzz_all_models_longer(models_dir):
    files = [m["file"] for m in MODELS if m["file"].endswith(".tflite")]
    outcomes = _fuzz(models_dir, files, 3000, seed=99)
    assert outcomes["error"] > 500


def _structured_mutation(rng: random.Random, model) -> bytes:
    """Change one field of a well-formed model: the bytes stay valid, the meaning does not."""
    import flatbuffers

    sg = model.subgraphs[0]
    for op in sg.operators:
        op.inputs, op.outputs = list(op.inputs), list(op.outputs)
    for t in sg.tensors:
        t.shape = list(t.shape) if t.shape is not None else None
    kind = rng.randrange(6)
    if kind == 0:
        t = rng.choice(sg.tensors)
        if t.shape:
            t.shape[rng.randrange(len(t.shape))] = rng.choice([0, 1, 2, 3, 7, 64, -1, 2**31 - 1])
    elif kind == 1:
        rng.choice(sg.operators).opcodeIndex = rng.randrange(len(model.operatorCodes) + 1)
    elif kind == 2:
        op = rng.choice(sg.operators)
        op.inputs[rng.randrange(len(op.inputs))] = rng.randrange(-1, len(sg.tensors) + 1)
    elif kind == 3:
        rng.choice(sg.tensors).type = rng.randrange(0, 20)
    elif kind == 4:
        op = rng.choice(sg.operators)
        op.outputs[rng.randrange(len(op.outputs))] = rng.randrange(len(sg.tensors))
    else:
        code = rng.choice(model.operatorCodes)
        code.builtinCode = rng.randrange(0, 130)
        code.deprecatedBuiltinCode = min(code.builtinCode, 127)
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


@pytest.mark.parametrize("count", [pytest.param(15, id="fast"),
                                   pytest.param(150, id="long", marks=pytest.mark.slow)])
@pytest.mark.slow
def test_structured_mutations(models_dir, count):
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as fb

    rng = random.Random(count)
    errors = 0
    for entry in [m for m in MODELS if m["file"].endswith(".tflite")]:
        data = (models_dir / entry["file"]).read_bytes()
        for _ in range(count):
            mutated = _structured_mutation(rng, fb.ModelT.InitFromPackedBuf(data, 0))
            try:
                parse_tflite(mutated)
            except ModelError:
                errors += 1
    assert errors > 0


@pytest.mark.parametrize("count", [pytest.param(10, id="fast"),
                                   pytest.param(250, id="long", marks=pytest.mark.slow)])
def test_mutated_models_interpret_or_fail_cleanly(models_dir, count):
    """Whatever the importer accepts, the interpreter runs or rejects with an AotError."""
    import numpy as np
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as fb

    from aot.errors import AotError
    from aot.reference import Session

    rng = random.Random(count + 1)
    ran = 0
    for file in SMALL:
        data = (models_dir / file).read_bytes()
        for _ in range(count):
            mutated = _structured_mutation(rng, fb.ModelT.InitFromPackedBuf(data, 0))
            try:
                graph = parse_tflite(mutated)
                Session(graph).invoke([np.zeros(t.shape, t.type.np_dtype) for t in graph.inputs])
                ran += 1
            except AotError:
                pass
    assert ran > 0
