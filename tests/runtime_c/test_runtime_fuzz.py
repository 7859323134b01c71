"""Fuzzing the C frame decoder and dispatcher under sanitizers.

Fast: a seed corpus of valid and hostile requests replayed under gcc's
AddressSanitizer and UBSan.  Slow: libFuzzer (clang) for a bounded time,
starting from the same corpus.
"""

import os
import struct
import subprocess

import pytest
from support.firmware import fw

from aot.rpc.framing import encode_frame
from aot.rpc.protocol import Command
from aot.resources import runtime_dir

RUNTIME = runtime_dir()
SOURCES = [fw.HERE.parent / "fuzz" / "fuzz_server.c", fw.HERE / "dense_model.c",
           *(RUNTIME / "src" / n for n in ("frame.c", "model.c", "rpc_server.c"))]
SANITIZERS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g", "-O1"]
ENV = {**os.environ, "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0",
       "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}


def request(cmd: int, payload: bytes) -> bytes:
    body = bytes([cmd]) + payload
    return bytes([len(body)]) + body


def seed_corpus() -> list[bytes]:
    """Inputs in the harness's two modes (see fuzz_server.c)."""
    structured = [
        request(Command.INFO, b""),
        request(Command.TENSOR_INFO, struct.pack("<H", 0))
        + request(Command.KERNEL_INFO, b"\x02\x00"),
        request(Command.WRITE, struct.pack("<HI", 0, 0) + bytes(range(64))),
        request(Command.WRITE, struct.pack("<HI", 0, 0xFFFFFFFF) + b"x"),
        request(Command.READ, struct.pack("<HIH", 3, 1000, 24)),
        request(Command.READ, struct.pack("<HIH", 3, 0xFFFFFFF0, 0xFFFF)),
        request(Command.RUN, struct.pack("<HH", 0xFFFF, 32))
        + request(Command.RUN, b"\x02\x00\x01\x00"),
        request(Command.ECHO, b"\x7e\x7d" * 100),
        request(Command.HELLO, b"") * 3,
        request(0xFF, b"\xff" * 250),
    ]
    raw = [
        encode_frame(bytes([Command.INFO, 0, 0, 0, 0, 0, 1, 0])),
        b"\x7e" + b"\x7d" * 40 + b"\x7e" + b"\x00" * 3000 + b"\x7e",
        encode_frame(b"\x02" * 600),
        b"\x7e\x7d\x5e\x7d\x5d\x7d\x00\x7e\x7e\x7e",
    ]
    return [b"\x01" + s for s in structured] + [b"\x00" + r for r in raw]


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    for i, data in enumerate(seed_corpus()):
        (folder / f"seed{i}").write_bytes(data)
    return folder


def test_seed_corpus_runs_clean_under_asan_and_ubsan(tmp_path, corpus):
    exe = tmp_path / "replay"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-DFUZZ_MAIN", *SANITIZERS,
                    f"-I{RUNTIME / 'include'}", *map(str, SOURCES), "-o", str(exe)], check=True)
    result = subprocess.run([str(exe), *map(str, sorted(corpus.iterdir()))], env=ENV,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "runtime error" not in result.stderr


@pytest.mark.slow
@pytest.mark.skipif(not fw.have("clang"), reason="clang is not installed (apt-get install clang)")
def test_libfuzzer_finds_nothing_in_bounded_time(tmp_path, corpus):
    exe = tmp_path / "fuzz"
    subprocess.run(["clang", "-fsanitize=fuzzer", *SANITIZERS, f"-I{RUNTIME / 'include'}",
                    *map(str, SOURCES), "-o", str(exe)], check=True)
    result = subprocess.run([str(exe), "-max_total_time=30", "-max_len=2048", "-timeout=5",
                             f"-artifact_prefix={tmp_path}/", str(corpus)],
                            env=ENV, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Done" in result.stderr
