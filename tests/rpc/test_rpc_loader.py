"""The RAM loader of tuning images (LOAD_CODE, COMMIT_CODE, the loaded kernel).

On the host port the loader is built with AOT_RPC_LOADER_DRY_RUN (host data
memory is not executable): every check runs, and the committed "code" is a
stub returning 0.  Calling real loaded code is tested on QEMU in
tests/tune/test_ram_loader.py.
"""

import struct
import subprocess
import zlib

import pytest
from support.firmware import fw

from aot.rpc import PipeTransport, RemoteError, RpcError, connect
from aot.rpc.protocol import Capability, Command, Status
from aot.resources import runtime_dir

REGION = 4096
LOADER_FLAGS = f"-DAOT_RPC_LOADER_BYTES={REGION} -DAOT_RPC_LOADER_DRY_RUN=1"


@pytest.fixture(scope="module")
def loader_firmware(tmp_path_factory):
    return fw.build(tmp_path_factory.mktemp("loader-fw"), extra_cflags=LOADER_FLAGS)


@pytest.fixture
def dev(loader_firmware):
    client = connect(PipeTransport([str(loader_firmware)]), timeout=2.0, retries=1)
    yield client
    client.close()


def status_of(dev, cmd, payload) -> Status:
    try:
        dev.session.call(cmd, payload)
    except RemoteError as err:
        return err.status
    return Status.OK


def commit(length, crc, entry=1) -> bytes:
    return struct.pack("<III", length, crc, entry)


def test_ordinary_firmware_has_no_loader(device):
    info = device.info()
    assert not info.capabilities & Capability.RAM_LOADER and info.code_size == 0
    assert status_of(device, Command.LOAD_CODE, struct.pack("<I", 0) + b"ab") \
        is Status.UNKNOWN_COMMAND
    assert status_of(device, Command.COMMIT_CODE, commit(2, 0)) is Status.UNKNOWN_COMMAND
    with pytest.raises(RemoteError) as err:
        device.run_loaded()
    assert err.value.status is Status.BAD_KERNEL
    with pytest.raises(RpcError, match="does not offer the RAM loader"):
        device.load_code(b"\x00" * 8, 1)


@pytest.mark.slow
def test_capability_and_region_are_advertised(dev):
    info = dev.info()
    assert info.capabilities & Capability.RAM_LOADER
    assert info.code_size == REGION and info.code_origin % 32 == 0


def test_committed_code_runs_and_any_write_revokes_it(dev):
    with pytest.raises(RemoteError) as err:
        dev.run_loaded()
    assert err.value.status is Status.BAD_KERNEL  # nothing committed yet
    image = bytes(range(256)) * 3
    assert dev.load_code(image, 1) == len(image)
    assert len(dev.run_loaded(3).timings) == 3
    assert status_of(dev, Command.LOAD_CODE, struct.pack("<I", 0) + b"\x00") is Status.OK
    assert status_of(dev, Command.RUN, struct.pack("<HH", 0xFFFE, 1)) is Status.BAD_KERNEL


def test_out_of_region_writes_are_refused(dev):
    cases = [(REGION, b"x"), (REGION - 1, b"xy"), (0xFFFFFFFF, b"x"), (0xFFFFFFFF, b""),
             (0, b""), (REGION + 1, b"")]
    expected = [Status.OUT_OF_RANGE, Status.OUT_OF_RANGE, Status.OUT_OF_RANGE,
                Status.OUT_OF_RANGE, Status.OK, Status.OUT_OF_RANGE]
    got = [status_of(dev, Command.LOAD_CODE, struct.pack("<I", off) + data)
           for off, data in cases]
    assert got == expected
    # an empty write at the very end is inside the region
    assert status_of(dev, Command.LOAD_CODE, struct.pack("<I", REGION)) is Status.OK
    assert status_of(dev, Command.LOAD_CODE, b"\x00\x00\x00") is Status.BAD_LENGTH


def test_commit_checks_length_entry_and_checksum(dev):
    image = b"\x10\x20\x30\x40" * 16
    dev.session.call(Command.LOAD_CODE, struct.pack("<I", 0) + image)
    crc = zlib.crc32(image)
    assert status_of(dev, Command.COMMIT_CODE, commit(len(image), crc ^ 1)) \
        is Status.BAD_CHECKSUM
    assert status_of(dev, Command.COMMIT_CODE, commit(0, zlib.crc32(b""))) is Status.OUT_OF_RANGE
    assert status_of(dev, Command.COMMIT_CODE, commit(REGION + 1, crc)) is Status.OUT_OF_RANGE
    assert status_of(dev, Command.COMMIT_CODE, commit(0xFFFFFFFF, crc)) is Status.OUT_OF_RANGE
    assert status_of(dev, Command.COMMIT_CODE, commit(len(image), crc, len(image))) \
        is Status.OUT_OF_RANGE
    assert status_of(dev, Command.COMMIT_CODE, commit(len(image), crc, 0xFFFFFFFF)) \
        is Status.OUT_OF_RANGE
    assert status_of(dev, Command.COMMIT_CODE, commit(len(image), crc)[:11]) is Status.BAD_LENGTH
    assert status_of(dev, Command.COMMIT_CODE, commit(len(image), crc) + b"\x00") \
        is Status.BAD_LENGTH
    # a failed commit leaves nothing callable
    assert status_of(dev, Command.RUN, struct.pack("<HH", 0xFFFE, 1)) is Status.BAD_KERNEL
    assert status_of(dev, Command.COMMIT_CODE, commit(len(image), crc)) is Status.OK
    assert status_of(dev, Command.RUN, struct.pack("<HH", 0xFFFE, 1)) is Status.OK


def test_only_changed_bytes_are_sent_and_a_stale_mirror_is_repaired(dev):
    image = bytearray(range(256)) * 8
    assert dev.load_code(bytes(image), 1) == len(image)
    image[1000] ^= 0xFF
    image[1010] ^= 0xFF
    assert dev.load_code(bytes(image), 1) == 11      # one merged range
    assert dev.load_code(bytes(image[:512]), 1) == 0  # a prefix of what is there
    # the region changes behind the client's back: the commit's CRC notices
    dev.session.call(Command.LOAD_CODE, struct.pack("<I", 5) + b"\xEE")
    assert dev.load_code(bytes(image), 1) == len(image)
    assert len(dev.run_loaded().timings) == 1


def test_images_larger_than_the_region_are_refused_by_the_host(dev):
    with pytest.raises(RpcError, match="does not fit"):
        dev.load_code(b"\x00" * (REGION + 1), 1)


RUNTIME = runtime_dir()
FUZZ_SOURCES = [fw.HERE.parent / "fuzz" / "fuzz_server.c", fw.HERE / "dense_model.c",
                *(RUNTIME / "src" / n for n in ("frame.c", "model.c", "rpc_server.c",
                                                "rpc_loader.c"))]
SANITIZERS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g", "-O1"]


def loader_seeds() -> list[bytes]:
    """Structured inputs of the fuzz harness (tests/runtime_c/fuzz/fuzz_server.c)."""
    def request(cmd, payload):
        body = bytes([cmd]) + payload
        return bytes([len(body)]) + body

    image = bytes(range(200))
    seeds = [
        request(Command.LOAD_CODE, struct.pack("<I", 0) + image)
        + request(Command.COMMIT_CODE, commit(len(image), zlib.crc32(image)))
        + request(Command.RUN, struct.pack("<HH", 0xFFFE, 3)),
        request(Command.LOAD_CODE, struct.pack("<I", REGION - 2) + b"\xff" * 200),
        request(Command.LOAD_CODE, struct.pack("<I", 0xFFFFFF00) + b"\xff" * 200),
        request(Command.LOAD_CODE, b"\x01"),
        request(Command.COMMIT_CODE, commit(0xFFFFFFFF, 0, 0xFFFFFFFF)),
        request(Command.COMMIT_CODE, commit(REGION, 0, REGION - 1))
        + request(Command.RUN, struct.pack("<HH", 0xFFFE, 1)),
        request(Command.COMMIT_CODE, b"\x00" * 40),
    ]
    return [b"\x01" + s for s in seeds]


@pytest.fixture
def loader_corpus(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    for i, data in enumerate(loader_seeds()):
        (folder / f"seed{i}").write_bytes(data)
    return folder


ENV = {"ASAN_OPTIONS": "detect_leaks=1", "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}


@pytest.mark.slow
def test_loader_requests_run_clean_under_asan_and_ubsan(tmp_path, loader_corpus):
    exe = tmp_path / "replay"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-DFUZZ_MAIN",
                    *LOADER_FLAGS.split(), *SANITIZERS, f"-I{RUNTIME / 'include'}",
                    *map(str, FUZZ_SOURCES), "-o", str(exe)], check=True)
    result = subprocess.run([str(exe), *map(str, sorted(loader_corpus.iterdir()))],
                            capture_output=True, text=True, env=ENV)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "runtime error" not in result.stderr


@pytest.mark.slow
@pytest.mark.skipif(not fw.have("clang"), reason="clang is not installed (apt-get install clang)")
def test_libfuzzer_finds_nothing_in_the_loader_in_bounded_time(tmp_path, loader_corpus):
    exe = tmp_path / "fuzz"
    subprocess.run(["clang", "-fsanitize=fuzzer", *LOADER_FLAGS.split(), *SANITIZERS,
                    f"-I{RUNTIME / 'include'}", *map(str, FUZZ_SOURCES), "-o", str(exe)],
                   check=True)
    result = subprocess.run([str(exe), "-max_total_time=20", "-max_len=2048", "-timeout=5",
                             f"-artifact_prefix={tmp_path}/", str(loader_corpus)],
                            env=ENV, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Done" in result.stderr
