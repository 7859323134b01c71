"""Board farms: measuring a batch of candidates on several boards at once.

A farm is what :func:`aot.tune.session.tune_model` hands each batch to::

    with farm:
        results = farm.measure(workload, configs)  # one Result per config, in order
        farm.boards                                # boards that measure in parallel

Three farms share that interface:

* :class:`Flows`: one board, measured in this process (batch images or the
  RAM loader, :data:`aot.tune.session.LOADERS`);
* :class:`LocalFarm` (``--farm local --boards N``): N worker processes on
  this machine, each owning one board (a QEMU instance or a host process)
  through its own :class:`Flows`; or, with ``--boards TAG@PORT,...``
  (:class:`SerialBoard`), one worker per real board, flashing it through its
  own probe and talking on its own port;
* :class:`RayFarm` (``--farm ray://HOST:PORT``): the boards of a Ray
  cluster.  Each node declares its boards as a custom resource per board
  tag (:func:`board_resource`: ``ray start --resources
  '{"board:qemu/mps2-an386": 2}'``); each chunk of a batch is a Ray task
  that needs one unit of it, so it runs on whichever node has a free board
  of the right kind, builds its image there once and measures the chunk.
  Real boards are resources per port, ``board:TAG@PORT`` (:func:`ray_slots`).
  The search stays on the head.

A farm splits the batch's configs into at most ``boards`` contiguous chunks
(:func:`split`), measures them in parallel and returns one result per config
in the order of the configs.  The head lowers nothing: each board's worker
lowers its own chunk, keeps one config per distinct C (as one image does)
and builds it, so the head's work per candidate stays small and the boards'
lowering runs in parallel (on a Ray cluster, on the nodes' own cores).
Configs of different chunks with the same C are measured once per chunk.
:class:`_Parallel` counts the head's time outside waiting for the boards
(``head_seconds``, ``head_candidates``).  A workload does not pickle (its template holds
local functions), so a chunk carries the workload's
:class:`~aot.tune.workload.WorkloadSource` (the model graph, target and
sample input) and its key; a worker extracts the workloads once per source
and keeps them.  Results cross back as plain tuples, and the head attaches
its own :class:`~aot.kernels.template.Config` objects to them.

Failures become results, never a lost or repeated record: a candidate that
is wrong, crashes or hangs the device is measured as such on its board
(:mod:`aot.tune.measure`); a board whose worker dies (a killed process, a
node that leaves the cluster) has its chunk measured again, on a fresh
worker (local pool, once) or on another node (Ray retries the task up to
:data:`RETRIES` times), and its board process (QEMU, the host port) dies
with it (:func:`flash.base.die_with_owner`); a chunk that still gets no
answer is recorded as ``error`` with the reason, and the session goes on.  Only the head writes
records, once per config, after the chunk's results came back.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from multiprocessing.util import Finalize
from pathlib import Path

from aot.version import __version__
from aot.target import load_board
from aot.target.errors import TargetError
from aot.tune.errors import TuneError
from aot.tune.farm_sim import SimBoard, SimFlows, check_sim
from aot.tune.loader import LoaderUnavailable, RamBuilder, RamRunner, measure_ram
from aot.tune.measure import RUN_TIMEOUT, Builder, Result, Runner, measure
from aot.tune.workload import Workload
from flash import RunnerError, get_runner
from flash.serial_port import probe_serial

#: Times Ray runs a chunk again after its node or worker died.
RETRIES = 3
#: What ``--farm`` accepts besides ``ray://HOST:PORT``.
LOCAL = "local"
#: Boards of ``--farm local`` without ``--boards`` (this machine has 2 cores).
LOCAL_BOARDS = 2


def board_resource(tag: str, sim: bool = False) -> str:
    """The Ray custom resource that counts the boards of ``tag`` on a node;
    with ``sim``, its simulated boards (``board:sim/TAG``: a node declares
    those only for benches and tests, and a real session never takes them)."""
    return f"board:sim/{tag}" if sim else f"board:{tag}"


def parse_farm(text: str) -> tuple[str, str | None]:
    """``("local", None)`` or ``("ray", address)`` for a ``--farm`` value:
    ``ray://HOST:PORT`` is a cluster's Ray Client address (``aot tune`` runs
    on any machine), ``ray`` the cluster this machine is a node of (Ray's
    ``address="auto"``: ``RAY_ADDRESS`` or the local head; run on the head)."""
    if text == LOCAL:
        return LOCAL, None
    if text == "ray":
        return "ray", "auto"
    if text.startswith("ray://") and len(text) > len("ray://"):
        return "ray", text
    raise TuneError(f"unknown farm {text!r}: give 'local' (a process pool on this machine), "
                    "'ray' (the Ray cluster this machine belongs to) or ray://HOST:PORT (the "
                    "Ray client address of a cluster's head)")


@dataclass(frozen=True)
class BoardSpec:
    """How a worker drives its board: everything :class:`Flows` needs but the folders."""

    board: object
    runner: str | None = None
    serial_port: str | None = None
    repeats: int = 3
    ram: bool = False
    forced: bool = False
    timeout: float = RUN_TIMEOUT
    probe: str | None = None    # the debug probe's serial number (one of several boards)
    jobs: int | None = None     # compile jobs per batch image; None: one per core
    cost: str = "instructions"  # aot.tune.measure.COSTS: travels with every chunk
    # the emulated board the candidates run on when ``board`` (a real board) is
    # priced from its trace (--cost cycles without a device, aot.tune.session.trace_for)
    trace: object | None = None
    sim: SimBoard | None = None  # a simulated board (aot.tune.farm_sim): benches, tests

    @property
    def counted(self) -> bool:
        """Whether the farm's boards of this kind are counted rather than named by
        serial port: QEMU, host processes or simulated boards, of which a machine
        (a Ray node) runs as many as it declares."""
        board = self.board
        return self.sim is not None or board.emulated or board.platform == "host"


@dataclass(frozen=True)
class SerialBoard:
    """A real board of a farm: ``TAG@PORT`` or ``TAG@PORT#PROBE`` (:func:`parse_boards`):
    its board tag, the serial port its RPC talks on and, where several boards
    hang off one machine, the serial number of the debug probe that flashes it
    (by default read from sysfs: :func:`flash.serial_port.probe_serial`)."""

    tag: str
    port: str
    probe: str | None = None

    def __str__(self) -> str:
        return f"{self.tag}@{self.port}" + (f"#{self.probe}" if self.probe else "")


def parse_board(text: str) -> SerialBoard:
    """One ``TAG@PORT[#PROBE]`` (see :class:`SerialBoard`)."""
    tag, at, rest = text.partition("@")
    port, hash_, probe = rest.partition("#")
    if not (tag and at and port) or (hash_ and not probe) or "@" in port:
        raise TuneError(f"--boards: {text!r} is not TAG@PORT or TAG@PORT#PROBE (e.g. "
                        "st/nucleo-l4r5zi@/dev/ttyACM0 or "
                        "st/nucleo-l4r5zi@/dev/ttyACM0#0670FF485550755187121723)")
    return SerialBoard(tag, port, probe or None)


def parse_boards(text: str) -> int | list[SerialBoard]:
    """``--boards``: a number of boards (QEMU or host boards, or the boards a
    Ray cluster declares), or a comma-separated list of real boards
    ``TAG@PORT[#PROBE]``, each a farm slot of its own."""
    if text.strip().isdigit():
        n = int(text)
        if n < 1:
            raise TuneError(f"--boards must be at least 1, not {n}")
        return n
    boards = [parse_board(item.strip()) for item in text.split(",")]
    ports = [b.port for b in boards]
    twice = sorted({p for p in ports if ports.count(p) > 1})
    if twice:
        raise TuneError(f"--boards names port {', '.join(twice)} more than once: one board per "
                        "serial port")
    return boards


def _runner_class(spec: BoardSpec):
    try:
        return get_runner(spec.runner or spec.board.runner.name)
    except RunnerError as err:
        raise TuneError(str(err)) from None


def serial_specs(spec: BoardSpec, boards: list[SerialBoard]) -> list[BoardSpec]:
    """One :class:`BoardSpec` per real board of ``boards`` (``--boards
    TAG@PORT,...``): ``spec`` with the board's port and probe.  Every board
    must be ``spec``'s (the tuned target's) kind of real board; with more than
    one, each needs a probe serial number (given, or read from sysfs) unless
    the runner flashes through the port (esptool)."""
    board = spec.board
    if spec.sim is not None:
        raise TuneError(f"--boards {', '.join(map(str, boards))}: a simulated board has no "
                        "serial port; give a number of boards")
    if board.emulated or board.platform == "host":
        raise TuneError(f"--boards {', '.join(map(str, boards))}: {board.tag} runs in a process "
                        "here and has no serial port; give a number of boards (--boards N)")
    if spec.serial_port is not None:
        raise TuneError("give the serial ports in --boards TAG@PORT,... or one board's with "
                        "--port, not both")
    for b in boards:
        try:
            tag = load_board(b.tag).tag
        except TargetError as err:
            raise TuneError(f"--boards {b}: {err}") from None
        if tag != board.tag:
            raise TuneError(f"--boards {b}: a farm measures the --board it tunes for "
                            f"({board.tag}), not {tag}")
    runner = _runner_class(spec)
    out = []
    for b in boards:
        probe = b.probe
        if probe is None and len(boards) > 1 and not runner.port_selects_board:
            probe = probe_serial(b.port)
            if probe is None:
                raise TuneError(
                    f"--boards {b}: cannot tell which debug probe flashes the board on "
                    f"{b.port} (not a USB serial port of this machine, or sysfs does not "
                    f"say); give its serial number: {b}#PROBE (`ls -l /dev/serial/by-id`, "
                    "`pyocd list`)")
        out.append(replace(spec, serial_port=b.port, probe=probe))
    return out


class Flows:
    """The one-board farm: measures a batch through the RAM loader or with batch
    images (see :data:`aot.tune.session.LOADERS`); falls back from the first to
    the second when the loader turns out to be unavailable, unless ``forced``."""

    boards = 1

    def __init__(self, board, work: Path, cache: Path, *, runner, serial_port, repeats: int,
                 ram: bool, forced: bool, notes: list[str], timeout: float = RUN_TIMEOUT,
                 probe: str | None = None, jobs: int | None = None,
                 cost: str = "instructions", trace=None):
        # a real board priced from a trace: its batches are built for and run on ``trace``
        self.builder = Builder(trace or board, work, cache_dir=cache, jobs=jobs)
        self.runner = Runner(runner=runner, serial_port=serial_port, repeats=repeats,
                             timeout=timeout, probe=probe, cost=cost,
                             priced=board if trace is not None else None)
        self.ram = ram
        self.forced = forced
        self.notes = notes
        self.ram_builder = RamBuilder(board, work / "ram", cache_dir=cache, jobs=jobs)
        self.ram_runner = RamRunner(runner=runner, serial_port=serial_port, repeats=repeats,
                                    timeout=timeout, probe=probe, cost=cost)

    @classmethod
    def from_spec(cls, spec: BoardSpec, work: Path, cache: Path, notes: list[str]) -> Flows:
        return cls(spec.board, work, cache, runner=spec.runner, serial_port=spec.serial_port,
                   repeats=spec.repeats, ram=spec.ram, forced=spec.forced, notes=notes,
                   timeout=spec.timeout, probe=spec.probe, jobs=spec.jobs, cost=spec.cost,
                   trace=spec.trace)

    def __enter__(self) -> Flows:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.ram_runner.close()

    def measure(self, workload, configs):
        if self.ram:
            try:
                return measure_ram(self.ram_builder, self.ram_runner, workload, configs)
            except LoaderUnavailable as err:
                if self.forced:
                    raise
                self.ram_runner.close()
                self.ram = False
                self.notes.append(f"RAM loader not used ({err}); one image per batch instead")
        return measure(self.builder, self.runner, workload, configs)


def board_flows(spec: BoardSpec, work: Path, cache: Path, notes: list[str]):
    """The measuring flow of one board of ``spec``: :class:`Flows`, or a
    :class:`~aot.tune.farm_sim.SimFlows` for a simulated board."""
    if spec.sim is not None:
        check_sim(spec)
        return SimFlows(spec.sim)
    return Flows.from_spec(spec, work, cache, notes)


def split(configs: list, boards: int) -> list[list]:
    """``configs`` in at most ``boards`` contiguous chunks whose sizes differ by at
    most one (fewer chunks than boards when there are fewer configs)."""
    n = min(boards, len(configs))
    if n == 0:
        return []
    size, extra = divmod(len(configs), n)
    chunks, start = [], 0
    for k in range(n):
        end = start + size + (k < extra)
        chunks.append(configs[start:end])
        start = end
    return chunks


def in_order(configs: list, outcomes: dict[int, tuple]) -> list[Result]:
    """One :class:`Result` per config from ``outcomes`` (config index -> status,
    cost, timings, unit, error, seconds); a config without an outcome is an
    ``error`` that says so rather than a missing record."""
    out = []
    for c in configs:
        o = outcomes.get(c.index)
        if o is None:
            out.append(Result(c, "error", error="farm: no result came back for this config"))
        else:
            status, cost, timings, unit, error, seconds = o
            out.append(Result(c, status, cost if status == "ok" else None, tuple(timings), unit,
                              error, seconds))
    return out


def _failed(chunk: list, reason: str) -> dict[int, tuple]:
    return {c.index: ("error", None, (), "", reason, 0.0) for c in chunk}


# --- worker side: one board per process ------------------------------------------------

_worker: dict = {}      # this process's board: "spec", "flows", "notes", "sources"


def _workload(source, key: str, kind: type):
    """The workload ``key`` of ``source`` as a ``kind`` (the head's workload class:
    the template's space, or another such as aot.tune.auto's), extracted once per
    source and made once per kind in this process."""
    sources = _worker.setdefault("sources", {})
    if source.token not in sources:
        sources.clear()  # one model at a time: a new session's source replaces the last
        sources[source.token] = source.workloads()
    found = sources[source.token].get(key)
    if found is None:
        raise TuneError(f"workload {key} is not among the model's workloads on this worker "
                        f"(aot {__version__}): do the farm's nodes run the same aot?")
    kinds = _worker.setdefault("kinds", {})
    if (source.token, key, kind) not in kinds:
        kinds[(source.token, key, kind)] = kind.of(found)
    return kinds[(source.token, key, kind)]


def measure_chunk(flows: Flows, source, key: str, indices: list[int],
                  kind: type = Workload) -> list[tuple]:
    """Measure the configs ``indices`` (of the space of ``kind``, see
    :func:`_workload`) of workload ``key`` on ``flows``' board; the
    outcomes as plain tuples (index, status, cost, timings, unit, error, seconds).
    Anything that goes wrong on the worker but a forced loader that is
    unavailable (a configuration error the session must stop for) is the
    chunk's outcome, with its reason."""
    try:
        wl = _workload(source, key, kind)
        configs = [wl.space[i] for i in indices]
        results = flows.measure(wl, configs)
    except LoaderUnavailable:
        raise  # only escapes Flows when the loader was asked for: the session must stop
    except Exception as err:  # the board or its worker broke: the chunk fails, the run goes on
        return [(i, "error", None, (), "", f"board worker: {type(err).__name__}: {err}", 0.0)
                for i in indices]
    return [(r.config.index, r.status, r.cost, tuple(r.timings), r.unit, r.error, r.seconds)
            for r in results]


def _init_local_board(spec: BoardSpec, work: str, cache: str) -> None:
    notes: list[str] = []
    # a forked worker starts with a copy of the head's state: caches the head
    # filled (measuring in-process) must not stand for this worker's workloads
    _worker.clear()
    flows = board_flows(spec, Path(work) / f"board-{os.getpid()}", Path(cache), notes)
    _worker.update(spec=spec, flows=flows, notes=notes)
    # Finalize, not atexit: a pool worker leaves through multiprocessing's own exit path.
    Finalize(flows, flows.close, exitpriority=10)


def _local_chunk(source, key: str, indices: list[int],
                 kind: type) -> tuple[list[tuple], list[str]]:
    flows = _worker["flows"]
    return measure_chunk(flows, source, key, indices, kind), list(_worker["notes"])


class _Parallel:
    """What the parallel farms share: notes, ``ram``, ordering and merging."""

    def __init__(self, spec: BoardSpec, boards: int, notes: list[str]):
        self.spec = spec
        self.boards = boards
        self.notes = notes
        self.ram = spec.ram
        self.head_seconds = 0.0   # the head's time in measure() outside waiting for boards
        self.head_candidates = 0  # configs measured, the denominator of head_seconds
        self._waited = 0.0

    def _merge_notes(self, notes: list[str]) -> None:
        for note in notes:
            if note not in self.notes:
                self.notes.append(note)
            if note.startswith("RAM loader not used"):
                self.ram = False

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def measure(self, workload, configs):
        """The configs split across the boards as they are: each board's worker
        lowers its chunk (the head would lower the batch alone, one config
        after the other, while the boards wait)."""
        start, waited = time.perf_counter(), self._waited
        configs = list(configs)
        outcomes: dict[int, tuple] = {}
        self._measure(workload, split(configs, self.boards), outcomes)
        results = in_order(configs, outcomes)
        self.head_seconds += time.perf_counter() - start - (self._waited - waited)
        self.head_candidates += len(configs)
        return results

    def _wait(self, get):
        """``get()``, counted as time the head waits for the boards."""
        start = time.perf_counter()
        try:
            return get()
        finally:
            self._waited += time.perf_counter() - start


class LocalFarm(_Parallel):
    """Worker processes on this machine, one per board (see the module
    docstring).  ``boards`` is a number of boards that this machine runs
    several of (QEMU, the host), or real boards given by serial port
    (:class:`SerialBoard`, :func:`serial_specs`).  Each board is a slot with a
    pool of one worker, so chunk ``k`` of a batch runs on board ``k``; a
    worker that dies has its chunk measured again once, on a fresh worker for
    the same board."""

    def __init__(self, spec: BoardSpec, boards: int | list[SerialBoard], work: Path,
                 cache: Path, notes: list[str]):
        check_sim(spec)
        if isinstance(boards, int):
            if boards < 1:
                raise TuneError(f"--boards must be at least 1, not {boards}")
            board = spec.board
            # (a real board priced from its trace board's QEMU runs here N times too)
            if boards > 1 and not (spec.counted or spec.trace is not None):
                raise TuneError(f"--boards {boards} with {board.tag}: a farm of real boards "
                                "needs each one's serial port: --boards "
                                f"{board.tag}@/dev/ttyACM0,{board.tag}@/dev/ttyACM1")
            self.slots = [spec] * boards
        else:
            self.slots = serial_specs(spec, boards)
        if spec.jobs is None:
            # The slots compile on this machine's cores at once: share them out.
            share = max(1, (os.cpu_count() or 1) // len(self.slots))
            self.slots = [replace(s, jobs=share) for s in self.slots]
        super().__init__(spec, len(self.slots), notes)
        self.work = Path(work)
        self.cache = Path(cache)
        self._pools: list[ProcessPoolExecutor | None] = [None] * len(self.slots)

    def _executor(self, slot: int) -> ProcessPoolExecutor:
        if self._pools[slot] is None:
            # fork: a worker starts at once with the head's modules loaded, and does not
            # import the caller's main module again (spawn would, unguarded scripts included).
            self._pools[slot] = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("fork"),
                initializer=_init_local_board,
                initargs=(self.slots[slot], str(self.work), str(self.cache)))
        return self._pools[slot]

    def worker_pids(self) -> list[int]:
        """The worker processes' ids (empty before the first batch)."""
        return [pid for pool in self._pools if pool is not None and pool._processes
                for pid in pool._processes]

    def close(self) -> None:
        for slot, pool in enumerate(self._pools):
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
                self._pools[slot] = None

    def _measure(self, workload, chunks, outcomes) -> None:
        lost = self._run(workload, list(enumerate(chunks)), outcomes)
        if lost:
            # A worker died and took its slot's pool with it: measure its chunk once more.
            for slot, _, _ in lost:
                self._abandon(slot)
            lost = self._run(workload, [(slot, chunk) for slot, chunk, _ in lost], outcomes)
            for slot, chunk, reason in lost:
                outcomes.update(_failed(chunk, reason))
                self._abandon(slot)

    def _run(self, workload, chunks, outcomes) -> list[tuple[int, list, str]]:
        """Measure ``(slot, chunk)`` pairs into ``outcomes``; the ones whose worker
        died, with why."""
        futures = [(slot, chunk, self._executor(slot).submit(
                        _local_chunk, workload.source, workload.key, [c.index for c in chunk],
                        type(workload)))
                   for slot, chunk in chunks]
        lost = []
        for slot, chunk, future in futures:
            try:
                tuples, notes = self._wait(future.result)
            except BrokenProcessPool as err:
                lost.append((slot, chunk, f"board lost: its worker process died twice ({err})"))
                continue
            self._merge_notes(notes)
            outcomes.update({t[0]: t[1:] for t in tuples})
        return lost

    def _abandon(self, slot: int) -> None:
        pool, self._pools[slot] = self._pools[slot], None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


# --- Ray -------------------------------------------------------------------------------

def _ray():
    try:
        import ray
    except ImportError:
        raise TuneError("--farm ray://... needs Ray on the head and on every node: install "
                        "aot with the 'farm' extra (pip install 'aot[farm]')") from None
    return ray


def _ray_chunk(spec: BoardSpec, source, key: str, indices: list[int], kind: type,
               head_version: str) -> tuple[list[tuple], list[str]]:
    """A Ray task: one chunk on one board of the node it runs on (a fresh
    :class:`Flows` in a private folder; the node's runtime objects are cached
    in its temporary folder, shared by its tasks).  A real board's probe, when
    its resource did not name one, is read from the node's sysfs."""
    if __version__ != head_version:
        raise TuneError(f"this node runs aot {__version__}, the head {head_version}: install "
                        "the same aot on every node")
    if spec.serial_port is not None and spec.probe is None \
            and not _runner_class(spec).port_selects_board:
        spec = replace(spec, probe=probe_serial(spec.serial_port))
    notes: list[str] = []
    cache = Path(tempfile.gettempdir()) / f"aot-farm-objects-{os.getuid()}"
    with tempfile.TemporaryDirectory(prefix="aot-farm-") as work:
        with board_flows(spec, Path(work), cache, notes) as flows:
            return measure_chunk(flows, source, key, indices, kind), notes


def ray_slots(resources: dict[str, float], spec: BoardSpec,
              boards: int | list[SerialBoard] | None) -> list[tuple[str, BoardSpec]]:
    """The boards of a Ray cluster (its ``resources``, summed over the nodes)
    that measure for ``spec``: ``(resource, spec of the board)`` per board.

    An emulated or host board is ``board:TAG``, one unit per board.  A real
    board is ``board:TAG@PORT`` or ``board:TAG@PORT#PROBE`` (:class:`SerialBoard`),
    one unit per node that has a board of that kind on that port, so a task that
    takes one unit uses that port on its node.  ``boards`` limits the slots to
    a number, or to the given real boards."""
    board = spec.board
    if spec.counted:
        if isinstance(boards, list):
            raise TuneError(f"--boards {', '.join(map(str, boards))}: {board.tag} has no serial "
                            "port; give a number of boards")
        key = board_resource(board.tag, sim=spec.sim is not None)
        slots = [(key, spec)] * int(resources.get(key, 0))
    else:
        prefix = board_resource(board.tag) + "@"
        found = sorted(k for k in resources if k.startswith(prefix))
        if isinstance(boards, list):
            wanted = [board_resource(str(b)) for b in boards]
            missing = [w for w in wanted if w not in found]
            if missing:
                raise TuneError(f"no node of the Ray cluster declares {', '.join(missing)}")
            found = wanted
        slots = []
        for key in found:
            real = parse_board(key[len("board:"):])
            one = replace(spec, serial_port=real.port, probe=real.probe)
            slots += [(key, one)] * int(resources[key])
    if isinstance(boards, int):
        if boards > len(slots):
            raise TuneError(f"--boards {boards}: the Ray cluster declares only {len(slots)} "
                            f"board(s) for {board.tag}")
        slots = slots[:boards]
    return slots


class RayFarm(_Parallel):
    """The boards for ``spec.board`` in the Ray cluster at ``address`` (see the
    module docstring and :func:`ray_slots`); ``boards`` defaults to every such
    board the cluster declares."""

    def __init__(self, address: str, spec: BoardSpec,
                 boards: int | list[SerialBoard] | None, notes: list[str]):
        ray = _ray()
        board = spec.board
        check_sim(spec)
        if isinstance(boards, int) and boards < 1:
            raise TuneError(f"--boards must be at least 1, not {boards}")
        if spec.serial_port is not None:
            raise TuneError("--port names a port of this machine; a Ray farm's real boards are "
                            "the nodes' resources board:TAG@PORT (docs/tuning.md)")
        self._owns = not ray.is_initialized()
        if self._owns:
            try:
                ray.init(address=address, logging_level="ERROR", log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as err:
                raise TuneError(f"cannot join the Ray cluster at {address}: {err}") from None
        try:
            slots = ray_slots(ray.cluster_resources(), spec, boards)
        except TuneError:
            self.close()
            raise
        if not slots:
            self.close()
            resource = board_resource(board.tag, sim=spec.sim is not None)
            if not spec.counted:
                resource += "@PORT"
            raise TuneError(f"no node of the Ray cluster at {address} declares {resource!r}: "
                            f"start nodes with ray start --resources '{{\"{resource}\": N}}'")
        super().__init__(spec, len(slots), notes)
        self._ray = ray
        self._slots = slots
        self._task = ray.remote(_ray_chunk)
        self._sources: dict[str, object] = {}

    def close(self) -> None:
        ray = _ray()
        if getattr(self, "_owns", False) and ray.is_initialized():
            ray.shutdown()
        self._owns = False

    def _measure(self, workload, chunks, outcomes) -> None:
        ray = self._ray
        source = workload.source
        if source.token not in self._sources:  # each node fetches the model once
            self._sources = {source.token: ray.put(source)}
        ref = self._sources[source.token]
        pending = []
        for (resource, spec), chunk in zip(self._slots, chunks):
            # num_cpus=0: the board resource alone decides where and how many run at once.
            task = self._task.options(resources={resource: 1}, num_cpus=0,
                                      max_retries=RETRIES, retry_exceptions=False)
            pending.append((chunk, task.remote(spec, ref, workload.key, [c.index for c in chunk],
                                               type(workload), __version__)))
        for chunk, future in pending:
            try:
                tuples, notes = self._wait(lambda future=future: ray.get(future))
            except TuneError as err:
                # Raised by the task (a node runs another aot, a forced loader is missing):
                # the session must stop; Ray's wrapper carries the remote traceback.
                raise TuneError(str(getattr(err, "cause", None) or err)) from None
            except ray.exceptions.RayError as err:
                reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err)
                outcomes.update(_failed(chunk, f"board lost after {RETRIES} retries: "
                                        f"{type(err).__name__}: {reason}"))
                continue
            self._merge_notes(notes)
            outcomes.update({t[0]: t[1:] for t in tuples})


def open_farm(spec: BoardSpec, *, farm: str | None, boards: int | list[SerialBoard] | None,
              work: Path, cache: Path, notes: list[str]):
    """The farm for ``--farm``/``--boards``: :class:`Flows` without either (or
    with one board), else a :class:`LocalFarm` (:data:`LOCAL_BOARDS` boards
    unless ``boards`` says: a number, or real boards by serial port) or a
    :class:`RayFarm`."""
    kind, address = parse_farm(farm) if farm is not None else (LOCAL, None)
    check_sim(spec)
    if isinstance(boards, int) and boards < 1:
        raise TuneError(f"--boards must be at least 1, not {boards}")
    if kind == "ray":
        return RayFarm(address, spec, boards, notes)
    if isinstance(boards, list):
        if len(boards) == 1:
            (one,) = serial_specs(spec, boards)
            return board_flows(one, work, cache, notes)
        return LocalFarm(spec, boards, work, cache, notes)
    if boards is None and farm is not None:
        boards = LOCAL_BOARDS
    if boards is None or boards == 1:
        return board_flows(spec, work, cache, notes)
    return LocalFarm(spec, boards, work, cache, notes)
