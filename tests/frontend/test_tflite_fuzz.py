"""Mutated copies of the shared models: the reader raises ModelError or succeeds, nothing else."""

from __future__ import annotations

import random
import struct

import pytest
from conftest import MODELS

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
