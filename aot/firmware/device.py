"""Put a built project on its board and run the model there over the RPC.

:func:`open_device` starts the board's runner (QEMU for emulated boards, a
local process for the host, a flashing tool plus a serial port for real
boards) and yields a connected :class:`aot.rpc.Client`.
:func:`run_on_board` is the whole ``aot run`` recipe for one board::

    compile -> artifact -> project -> build -> flash -> for each invocation:
    write inputs, RUN 1, read outputs -> outputs, timings, sizes

All invocations run on one boot, in order, so a stateful model (SVDF,
LSTM) keeps its state from one to the next, as under ``aot interpret``.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from aot.firmware.build import BuildResult, build_project
from aot.firmware.errors import DeviceError
from aot.firmware.images import built_images
from aot.firmware.project import Project, create_project, load_project
from aot.inputs import check_inputs
from aot.executor.codegen import RUN_STATUSES
from aot.rpc import Client, DeviceReport, RpcError, connect
from aot.rpc.errors import RemoteError
from aot.rpc.protocol import Status
from aot.rpc.protocol import TimerUnit
from aot.target import Board
from flash import Runner, RunnerError, get_runner, runner_for_board
from flash.serial_port import check_serial_port, pick_serial_port

#: Seconds one RUN attempt may take: the largest shared model needs well
#: under a second of QEMU time; slow shared machines need the margin.
RUN_TIMEOUT = 120.0


def device_runner(project: Project, name: str | None = None,
                  serial_port: str | None = None, probe: str | None = None) -> Runner:
    """The runner that puts ``project``'s image on its board: ``name``, or the
    board record's first; set up from the record alone (flash.runner_for_board)
    to write the one of the build's images it takes, through the debug probe
    with serial number ``probe`` when given."""
    board = project.board
    name = name or board.runner.name
    try:
        return runner_for_board(name, board, built_images(project), serial_port, probe)
    except RunnerError as err:
        raise DeviceError(str(err)) from None


@contextlib.contextmanager
def open_device(project, *, runner: str | None = None, serial_port: str | None = None,
                timeout: float | None = None, probe: str | None = None,
                qemu_args: tuple[str, ...] = ()) -> Iterator[Client]:
    """Flash or start ``project``'s firmware and yield a connected client.

    ``runner`` defaults to the board's first runner; ``"none"`` skips
    flashing and only opens ``serial_port`` (a board flashed already; without
    one, the one attached port with the board's USB id).
    ``probe`` picks the debug probe (its serial number) of one of several
    attached boards.  ``qemu_args`` go to QEMU after the record's (a plugin);
    with any other runner they are refused.  The runner's process is always
    stopped on exit.  ``timeout`` is one RPC attempt's wait for a reply: by
    default the runner's (``Runner.reply_timeout``; 1 s on a serial port).
    """
    project = project if isinstance(project, Project) else load_project(project)
    board = project.board
    if not project.elf.is_file():
        raise DeviceError(f"{project.elf} does not exist: build the project first "
                          f"(aot build {project.path})")
    name = runner or board.runner.name
    with contextlib.ExitStack() as stack:
        started = None
        if name == "none":
            if probe is not None:
                raise DeviceError(f"runner none flashes nothing, so probe {probe} has no use: "
                                  "leave it out, or give a runner that flashes")
            if serial_port is None:
                serial_port = pick_serial_port(board.console.usb, "runner none")
            check_serial_port(serial_port)
            url = serial_port
        else:
            started = device_runner(project, name, serial_port, probe)
            if qemu_args:
                config = getattr(started, "config", None)
                if name != "qemu" or config is None:
                    raise DeviceError(f"QEMU options {' '.join(qemu_args)} need the qemu "
                                      f"runner, not {name}")
                started.config = replace(config, extra_args=config.extra_args + qemu_args)
            url = stack.enter_context(started)
        try:
            if timeout is None:
                timeout = started.reply_timeout if started is not None else Runner.reply_timeout
            client = stack.enter_context(connect(url, timeout=timeout))
            _check_identity(client, project)
        except RpcError as err:
            raise _stopped(board, started, err, "did not answer the RPC handshake") from None
        try:
            yield client
        except RemoteError as err:
            raise _refused(board, err) from None
        except RpcError as err:
            raise _stopped(board, started, err, "stopped answering") from None


#: Exit statuses of RPC firmware (runtime_c: rpc_main.c and the ports' fault handlers).
EXIT_STATUSES = {120: "a CPU fault (HardFault, bus, memory or usage fault)",
                 121: "a RISC-V trap"}


def _stopped(board: Board, runner, err: RpcError, what: str) -> DeviceError:
    """Explain a failed call: with the exit status when an emulated device has ended."""
    status = None
    wait = getattr(runner, "wait", None)
    if wait is not None:
        try:
            status = wait(1.0)
        except (subprocess.TimeoutExpired, AttributeError):
            status = None
    if status is None:
        return DeviceError(f"{board.tag} {what} ({err}); check the serial port and that the "
                           "board was flashed")
    meaning = EXIT_STATUSES.get(status) or (
        "the model descriptor was rejected" if 100 <= status < 120 else "")
    return DeviceError(f"the firmware on {board.tag} ended with exit status {status}"
                       f"{f' ({meaning})' if meaning else ''}: {err}")


def _refused(board: Board, err: RemoteError) -> DeviceError:
    """Explain a request the device answered with an error status: it is alive,
    so the serial port is not the problem; for a failed run, what the model's
    return value means (RUN_STATUSES)."""
    meaning = ""
    if err.status is Status.RUN_FAILED and len(err.detail) >= 4:
        code = int.from_bytes(err.detail[:4], "little", signed=True)
        meaning = RUN_STATUSES.get(code, "")
    return DeviceError(f"{board.tag} answered with an error: {err}"
                       f"{f' ({meaning})' if meaning else ''}")


def _check_identity(client: Client, project: Project) -> None:
    """Refuse a device that runs another model (a stale flash on a real board)."""
    info = client.info()
    want = project.metadata["target_hash"]
    if info.model_name != project.name or not want.startswith(info.target_hash):
        raise DeviceError(f"the device runs model {info.model_name!r} (target hash "
                          f"{info.target_hash}), not {project.name!r} ({want[:32]}): flash the "
                          "project's firmware")


#: How far a measured core clock may sit from the record's before it is a
#: warning: the measurement's own reference (a 32 kHz or 12/40 MHz crystal,
#: +-50 ppm) is far better; 2 % still lets an uncalibrated RC oscillator
#: (nRF HFINT +-1.5 %, STM32 HSI +-1 %) pass as "right".
MEASURED_CLOCK_TOLERANCE = 0.02


def _mhz(hz: int) -> str:
    return f"{hz / 1e6:g} MHz"


def device_warnings(board: Board, report: DeviceReport | None) -> list[str]:
    """Where the device's report of itself differs from its board record
    (:meth:`Board.expected_device`): one message per fact, naming both."""
    if report is None:
        return []
    want = board.expected_device()
    where = f"the record {board.tag}" + (f" ({board.path})" if board.path else "")
    out = []
    if want.core_clock_hz is not None and report.core_clock_hz != want.core_clock_hz:
        got = (_mhz(report.core_clock_hz) if report.core_clock_hz else
               "an unknown clock (its clock set-up gave up)")
        out.append(f"the device runs its core at {got}; {where} says "
                   f"{_mhz(want.core_clock_hz)}")
    if want.core_clock_hz is not None and report.measured_clock_hz is not None and (
            abs(report.measured_clock_hz - want.core_clock_hz)
            > MEASURED_CLOCK_TOLERANCE * want.core_clock_hz):
        out.append(f"the device measured its core clock at {_mhz(report.measured_clock_hz)}; "
                   f"{where} says {_mhz(want.core_clock_hz)}")
    if want.flash_wait_states is not None and report.flash_wait_states != want.flash_wait_states:
        out.append(f"the device reads back {report.flash_wait_states} flash wait states; "
                   f"{where} says {want.flash_wait_states}")
    if want.caches is not None and set(report.caches) != set(want.caches):
        out.append(f"the device has caches {list(report.caches)} on; {where} says "
                   f"{list(want.caches)}")
    return out


@dataclass(frozen=True)
class BoardRun:
    """The outputs (one ``[N, *shape]`` array per model output) and per-run timings.

    ``clock_hz`` is the core clock the firmware reported in INFO (what its
    clock setup reached, or the reset clock where the setup gave up, as on
    QEMU's STM32); 0 when the port does not report one.
    """

    outputs: list[np.ndarray]
    timings: list[int]
    unit: TimerUnit
    build: BuildResult
    metadata: dict
    clock_hz: int = 0
    device: DeviceReport | None = None   # the firmware's report of itself (INFO)
    device_warnings: tuple[str, ...] = ()  # where it differs from the board record
    cores: tuple[int, ...] | None = None   # instructions per core and inference (emulated)

    @property
    def per_inference(self) -> int | None:
        """The mean timing rounded (counts under QEMU hardly vary with the data)."""
        return round(sum(self.timings) / len(self.timings)) if self.timings else None

    def report(self) -> dict:
        """The JSON summary ``aot run --json`` prints."""
        key = {TimerUnit.INSTRUCTIONS: "instructions_per_inference",
               TimerUnit.CYCLES: "cycles_per_inference"}.get(self.unit, "ns_per_inference")
        sizes = self.build.sizes
        return {
            "model": self.metadata["model"]["name"],
            "board": self.metadata["board"],
            "invocations": len(self.timings),
            key: self.per_inference,
            "timings": list(self.timings),
            "timer_unit": self.unit.name.lower(),
            "clock_hz": self.clock_hz or None,
            "device": self.device.to_json() if self.device else None,
            "device_warnings": list(self.device_warnings),
            "workspace_bytes": self.metadata["workspace"]["bytes"],
            "state_bytes": self.metadata["sizes"]["state"],
            "flash_bytes": sizes.flash if sizes else None,
            "ram_bytes": sizes.ram if sizes else None,
            "sizes": sizes.to_json() if sizes else None,
            **({"cores": [{"instructions": n} for n in self.cores]}
               if self.cores is not None else {}),
        }


def run_project(project: Project, inputs: list[np.ndarray], *, runner: str | None = None,
                serial_port: str | None = None, build: BuildResult | None = None,
                core_counter=None) -> BoardRun:
    """Run the ``[N, *shape]`` ``inputs`` (one per model input) on a built project.

    ``core_counter`` (an :class:`aot.cycles.vcpus.CoreCounter`, given by the
    command, which may use the cycle tools) adds each core's instructions per
    inference from QEMU's per-vCPU plugin."""
    meta = project.metadata
    inputs = check_inputs(meta, inputs)  # a wrong size would reach the device as a bad write
    n = inputs[0].shape[0] if inputs else 0
    outputs = [np.empty((n, *o["shape"]), np.dtype(o["dtype"])) for o in meta["outputs"]]
    timings: list[int] = []
    unit = TimerUnit.INSTRUCTIONS
    extra = core_counter.qemu_args(project) if core_counter is not None else ()
    with open_device(project, runner=runner, serial_port=serial_port, qemu_args=extra) as dev:
        info = dev.info()
        clock_hz = info.clock_hz
        warnings = tuple(device_warnings(project.board, info.device))
        for i in range(n):
            for port, x in zip(meta["inputs"], inputs):
                dev.write_tensor(port["c_name"], x[i])
            result = dev.run(1, timeout=RUN_TIMEOUT)
            timings += result.timings
            unit = result.unit
            for k, port in enumerate(meta["outputs"]):
                outputs[k][i] = dev.read_tensor(port["c_name"])
    cores = None
    if core_counter is not None:
        counts = core_counter.counts()
        if counts.windows != len(timings):
            raise DeviceError(f"the per-core count plugin saw {counts.windows} timed runs, "
                              f"the RPC {len(timings)}")
        cores = tuple(counts.per_window())
    return BoardRun(outputs, timings, unit, build, meta, clock_hz, info.device, warnings, cores)


def run_on_board(compiled, inputs: list[np.ndarray], *, workdir=None, runner: str | None = None,
                 serial_port: str | None = None, cache_dir: Path | None = None,
                 jobs: int | None = None, core_counter=None) -> BoardRun:
    """Build a :class:`~aot.compile.CompiledModel` for its board and run ``inputs`` there.

    ``inputs`` holds one ``[N, *shape]`` array per model input; the N
    invocations run in order on one boot.  The project lives in a
    temporary folder under ``workdir`` (removed afterwards).  Raises an
    :class:`~aot.errors.AotError` for anything the user can fix: no board,
    a missing toolchain or runner, firmware too big, a device that fails; inputs that
    do not match the model (:func:`aot.inputs.check_inputs`) before anything is built.
    """
    if compiled.board is None:
        raise DeviceError("running on a device needs a board: compile with --board")
    if compiled.cores > 1 and compiled.board.qemu is None:
        raise DeviceError(f"not supported yet: running on {compiled.board.tag}'s "
                          f"{compiled.cores} cores (build-only: `aot compile --cores "
                          f"{compiled.cores}` and `aot project` build the firmware, but no "
                          "run has checked that board's hand-over); qemu/mps2-an521 runs two")
    inputs = check_inputs(compiled.graph, inputs)  # before the build and the flash
    name = runner or compiled.board.runner.name
    if serial_port is None and (name == "none" or get_runner(name).needs_serial_port):
        # Found before the build, so that a board not plugged in is said at once.
        serial_port = pick_serial_port(compiled.board.console.usb, f"runner {name}")
    with tempfile.TemporaryDirectory(prefix="aot-fw-", dir=workdir) as tmp:
        root = Path(tmp)
        artifact = compiled.write(root / "artifact")
        project = create_project(artifact, compiled.board, root / "project")
        build = build_project(project, cache_dir=cache_dir, jobs=jobs)
        try:
            return run_project(project, inputs, runner=runner, serial_port=serial_port,
                               build=build, core_counter=core_counter)
        except RpcError as err:
            raise DeviceError(f"running {compiled.graph.name} on {compiled.board.tag} failed: "
                              f"{err}") from None
