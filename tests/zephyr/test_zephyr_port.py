"""The Zephyr port (runtime_c/ports/zephyr) built on the host against
stand-in Zephyr headers (tests/zephyr/standin, NOT Zephyr): the fixture model
served over the RPC through the port's UART and timer hooks, in main() and in
the RPC thread, and the port's failures.  What this cannot show is that the
port builds and runs on Zephyr itself (docs/integration.md)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from support.firmware import fw

from aot.rpc import Client, PipeTransport, Session
from aot.rpc.protocol import TimerUnit
from aot.resources import runtime_dir

ROOT = Path(__file__).resolve().parents[2]
RT = runtime_dir()
STANDIN = Path(__file__).resolve().parent / "standin"
FIXTURE = ROOT / "tests" / "runtime_c" / "fixture" / "dense_model.c"
CFLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{RT / 'include'}",
          f"-I{STANDIN}"]


def build(out: Path, *defines: str, thread: bool = False) -> Path:
    """The port's firmware for the host, like zephyr/CMakeLists.txt lists it."""
    out.mkdir(parents=True, exist_ok=True)
    config = [f"-D{d}" for d in defines]
    main_defs = ['-DAOT_BOARD_TAG="zephyr/standin"'] + (["-Dmain=aot_rpc_main"] if thread else [])
    units = [(RT / "src" / f, []) for f in ("frame.c", "model.c", "rpc_server.c", "rpc_loader.c")]
    units += [(RT / "src" / "rpc_main.c", main_defs), (RT / "ports/zephyr/port.c", []),
              (FIXTURE, []), (STANDIN / "standin.c", ["-DAOT_STANDIN_THREAD"] if thread else [])]
    if thread:
        units.append((RT / "ports/zephyr/rpc_thread.c", []))
    objects = []
    for n, (src, extra) in enumerate(units):
        obj = out / f"{n}_{src.stem}.o"
        subprocess.run(["gcc", *CFLAGS, *config, *extra, "-c", str(src), "-o", str(obj)],
                       check=True, capture_output=True, text=True)
        objects.append(str(obj))
    exe = out / "firmware"
    subprocess.run(["gcc", *objects, "-o", str(exe)], check=True)
    return exe


def serve(exe: Path, env: dict[str, str] | None = None):
    link = PipeTransport([str(exe)], env={**os.environ, **(env or {})})
    return link, Client(Session(link, timeout=2.0, retries=2))


def _runs_the_fixture(exe: Path, unit: TimerUnit, env=None) -> tuple[int, ...]:
    link, client = serve(exe, env)
    try:
        info = client.info()
        assert (info.board_tag, info.timer_unit) == ("zephyr/standin", unit)
        # The system timer's rate is the core clock only when it counts CPU cycles.
        assert info.clock_hz == (1000000 if unit == TimerUnit.CYCLES else 0)
        x = np.arange(-32, 32, dtype=np.int8).reshape(1, 64)
        client.write_tensor("input", x)
        result = client.run(3)
        np.testing.assert_array_equal(client.read_tensor("output"), fw.reference(x)[1])
        return result.timings
    finally:
        link.close()


@pytest.mark.slow
def test_the_port_serves_the_model_and_times_in_nanoseconds(tmp_path):
    exe = build(tmp_path / "fw", "CONFIG_AOT_RPC_SERVER=1")
    timings = _runs_the_fixture(exe, TimerUnit.NANOSECONDS)
    # The stand-in's microsecond cycles, in nanoseconds.
    assert len(timings) == 3
    assert all(t % 1000 == 0 and t < 10**9 for t in timings), timings


def test_system_timer_cycles_are_reported_as_cycles(tmp_path):
    exe = build(tmp_path / "fw", "CONFIG_AOT_RPC_SERVER=1", "CONFIG_AOT_TIMER_HW_CYCLES=1",
                "CONFIG_TIMER_HAS_64BIT_CYCLE_COUNTER=1")
    timings = _runs_the_fixture(exe, TimerUnit.CYCLES)
    assert all(t < 10**6 for t in timings)


@pytest.mark.slow
def test_the_rpc_thread_runs_the_same_server(tmp_path):
    exe = build(tmp_path / "fw", "CONFIG_AOT_RPC_SERVER=1", "CONFIG_AOT_RPC_THREAD=1",
                "CONFIG_AOT_RPC_THREAD_STACK_SIZE=4096", "CONFIG_AOT_RPC_THREAD_PRIORITY=14",
                thread=True)
    _runs_the_fixture(exe, TimerUnit.NANOSECONDS)


@pytest.mark.parametrize("env, status", [({"AOT_STANDIN_UART_BROKEN": "1"}, 122),
                                         ({"AOT_STANDIN_NO_POLLING": "1"}, 123)])
@pytest.mark.one_fast
def test_a_uart_that_cannot_serve_ends_the_server_with_the_ports_code(tmp_path, env, status):
    exe = build(tmp_path / "fw", "CONFIG_AOT_RPC_SERVER=1")
    done = subprocess.run([str(exe)], input=b"", env={**os.environ, **env},
                          capture_output=True, timeout=10)
    assert done.returncode == status


@pytest.mark.slow
def test_the_chosen_uart_is_the_aot_rpc_uart_node(tmp_path):
    exe = build(tmp_path / "fw", "CONFIG_AOT_RPC_UART_CHOSEN=1",
                "AOT_STANDIN_HAS_CHOSEN_aot_rpc_uart=1")
    done = subprocess.run([str(exe)], input=b"", capture_output=True, timeout=10)
    assert done.returncode == 0
    assert done.stderr.decode().startswith("standin: rpc-uart, ")


@pytest.mark.parametrize("defines, message", [
    (["CONFIG_AOT_RPC_UART_CHOSEN=1"],
     "CONFIG_AOT_RPC_UART_CHOSEN: the devicetree has no chosen node aot,rpc-uart; add one in "
     "an overlay: / { chosen { aot,rpc-uart = &uart1; }; };"),
    (["AOT_STANDIN_HAS_CHOSEN_zephyr_console=0"],
     "aot: the devicetree has no chosen zephyr,console for the RPC; choose "
     "CONFIG_AOT_RPC_UART_CHOSEN and an aot,rpc-uart chosen node"),
])
def test_a_missing_devicetree_node_stops_the_build_naming_it(tmp_path, defines, message):
    with pytest.raises(subprocess.CalledProcessError) as err:
        build(tmp_path / "fw", *defines)
    assert f'#error "{message}"' in err.value.stderr
