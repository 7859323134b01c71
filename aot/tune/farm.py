"""Board farms: measuring a batch of candidates on several boards at once.

A farm is what :func:`aot.tune.session.tune_model` hands each batch to::

    with farm:
        results = farm.measure(workload, configs)  # one Result per config, in order
        farm.boards                                # boards that measure in parallel

Three farms share that interface:

* :class:`Flows`: one board, measured in this process (batch images or the
  RAM loader, :data:`aot.tune.session.LOADERS`);
* :class:`LocalFarm` (``--farm local --boards N``): a pool of N worker
  processes on this machine, each owning one board (a QEMU instance or a
  host process) through its own :class:`Flows`;
* :class:`RayFarm` (``--farm ray://HOST:PORT``): the boards of a Ray
  cluster.  Each node declares its boards as a custom resource per board
  tag (:func:`board_resource`: ``ray start --resources
  '{"board:qemu/mps2-an386": 2}'``); each chunk of a batch is a Ray task
  that needs one unit of it, so it runs on whichever node has a free board
  of the right kind, builds its image there once and measures the chunk.
  The search stays on the head.

A farm lowers the batch's configs on the head and keeps one config per
distinct C (as one image would), splits those into at most ``boards``
contiguous chunks (:func:`split`), measures them in parallel and returns
one result per config in the order of the configs.  A workload does not pickle (its template holds
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
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing.util import Finalize
from pathlib import Path

from aot import __version__
from aot.tune.errors import TuneError
from aot.tune.loader import LoaderUnavailable, RamBuilder, RamRunner, measure_ram
from aot.tune.measure import (
    RUN_TIMEOUT,
    Builder,
    Result,
    Runner,
    distinct_candidates,
    measure,
)
from aot.tune.workload import Workload

#: Times Ray runs a chunk again after its node or worker died.
RETRIES = 3
#: What ``--farm`` accepts besides ``ray://HOST:PORT``.
LOCAL = "local"
#: Boards of ``--farm local`` without ``--boards`` (this machine has 2 cores).
LOCAL_BOARDS = 2


def board_resource(tag: str) -> str:
    """The Ray custom resource that counts the boards of ``tag`` on a node."""
    return f"board:{tag}"


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


class Flows:
    """The one-board farm: measures a batch through the RAM loader or with batch
    images (see :data:`aot.tune.session.LOADERS`); falls back from the first to
    the second when the loader turns out to be unavailable, unless ``forced``."""

    boards = 1

    def __init__(self, board, work: Path, cache: Path, *, runner, serial_port, repeats: int,
                 ram: bool, forced: bool, notes: list[str], timeout: float = RUN_TIMEOUT):
        self.builder = Builder(board, work, cache_dir=cache)
        self.runner = Runner(runner=runner, serial_port=serial_port, repeats=repeats,
                             timeout=timeout)
        self.ram = ram
        self.forced = forced
        self.notes = notes
        self.ram_builder = RamBuilder(board, work / "ram", cache_dir=cache)
        self.ram_runner = RamRunner(runner=runner, serial_port=serial_port, repeats=repeats,
                                    timeout=timeout)

    @classmethod
    def from_spec(cls, spec: BoardSpec, work: Path, cache: Path, notes: list[str]) -> Flows:
        return cls(spec.board, work, cache, runner=spec.runner, serial_port=spec.serial_port,
                   repeats=spec.repeats, ram=spec.ram, forced=spec.forced, notes=notes,
                   timeout=spec.timeout)

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
    flows = Flows.from_spec(spec, Path(work) / f"board-{os.getpid()}", Path(cache), notes)
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
        """The head lowers the configs and sends one config per distinct C (the
        others get its result, as within one image), split across the boards."""
        configs = list(configs)
        candidates, failed = distinct_candidates(workload, configs)
        outcomes = {c.index: ("build", None, (), "", error, 0.0) for c, error in failed}
        firsts = [cand.configs[0] for cand in candidates]
        self._measure(workload, split(firsts, self.boards), outcomes)
        for cand in candidates:
            if cand.configs[0].index in outcomes:
                for c in cand.configs[1:]:
                    outcomes[c.index] = outcomes[cand.configs[0].index]
        return in_order(configs, outcomes)


class LocalFarm(_Parallel):
    """``boards`` worker processes on this machine, one board each (see the
    module docstring).  Only boards that this machine can run several of
    (QEMU, the host) qualify; a worker that dies has its chunk measured again
    once, on a fresh pool."""

    def __init__(self, spec: BoardSpec, boards: int, work: Path, cache: Path,
                 notes: list[str]):
        if boards < 1:
            raise TuneError(f"--boards must be at least 1, not {boards}")
        board = spec.board
        if boards > 1 and not (board.emulated or board.platform == "host"):
            raise TuneError(f"--boards {boards} with {board.tag}: a local farm of several real "
                            "boards (one serial port each) is not supported yet; tune one "
                            "board at a time")
        super().__init__(spec, boards, notes)
        self.work = Path(work)
        self.cache = Path(cache)
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # fork: a worker starts at once with the head's modules loaded, and does not
            # import the caller's main module again (spawn would, unguarded scripts included).
            self._pool = ProcessPoolExecutor(
                max_workers=self.boards, mp_context=multiprocessing.get_context("fork"),
                initializer=_init_local_board,
                initargs=(self.spec, str(self.work), str(self.cache)))
        return self._pool

    def worker_pids(self) -> list[int]:
        """The worker processes' ids (empty before the first batch)."""
        pool = self._pool
        return list(pool._processes) if pool is not None and pool._processes else []

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def _measure(self, workload, chunks, outcomes) -> None:
        lost = self._run(workload, chunks, outcomes)
        if lost:
            # A worker died and took the pool with it: measure its chunks once more.
            self._abandon()
            lost = self._run(workload, [chunk for chunk, _ in lost], outcomes)
            for chunk, reason in lost:
                outcomes.update(_failed(chunk, reason))
            if lost:
                self._abandon()

    def _run(self, workload, chunks, outcomes) -> list[tuple[list, str]]:
        """Measure ``chunks`` into ``outcomes``; the chunks whose worker died, with why."""
        pool = self._executor()
        futures = [(chunk, pool.submit(_local_chunk, workload.source, workload.key,
                                       [c.index for c in chunk], type(workload)))
                   for chunk in chunks]
        lost = []
        for chunk, future in futures:
            try:
                tuples, notes = future.result()
            except BrokenProcessPool as err:
                lost.append((chunk, f"board lost: its worker process died twice ({err})"))
                continue
            self._merge_notes(notes)
            outcomes.update({t[0]: t[1:] for t in tuples})
        return lost

    def _abandon(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


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
    in its temporary folder, shared by its tasks)."""
    if __version__ != head_version:
        raise TuneError(f"this node runs aot {__version__}, the head {head_version}: install "
                        "the same aot on every node")
    notes: list[str] = []
    cache = Path(tempfile.gettempdir()) / f"aot-farm-objects-{os.getuid()}"
    with tempfile.TemporaryDirectory(prefix="aot-farm-") as work:
        with Flows.from_spec(spec, Path(work), cache, notes) as flows:
            return measure_chunk(flows, source, key, indices, kind), notes


class RayFarm(_Parallel):
    """The boards of tag ``spec.board.tag`` in the Ray cluster at ``address``
    (see the module docstring); ``boards`` defaults to every such board the
    cluster declares."""

    def __init__(self, address: str, spec: BoardSpec, boards: int | None, notes: list[str]):
        ray = _ray()
        board = spec.board
        if not (board.emulated or board.platform == "host"):
            raise TuneError(f"{board.tag} on a Ray farm: serial-attached boards (a port per "
                            "board on each node) are not supported yet; Ray farms run QEMU and "
                            "host boards")
        if boards is not None and boards < 1:
            raise TuneError(f"--boards must be at least 1, not {boards}")
        self._owns = not ray.is_initialized()
        if self._owns:
            try:
                ray.init(address=address, logging_level="ERROR", log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as err:
                raise TuneError(f"cannot join the Ray cluster at {address}: {err}") from None
        resource = board_resource(board.tag)
        total = int(ray.cluster_resources().get(resource, 0))
        if total < 1:
            self.close()
            raise TuneError(f"no node of the Ray cluster at {address} declares {resource!r}: "
                            f"start nodes with ray start --resources '{{\"{resource}\": N}}'")
        if boards is not None and boards > total:
            self.close()
            raise TuneError(f"--boards {boards}: the Ray cluster at {address} declares only "
                            f"{total} of {resource!r}")
        super().__init__(spec, boards or total, notes)
        self._ray = ray
        # num_cpus=0: the board resource alone decides where and how many run at once.
        self._task = ray.remote(_ray_chunk).options(
            resources={resource: 1}, num_cpus=0, max_retries=RETRIES, retry_exceptions=False)
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
        pending = [(chunk, self._task.remote(self.spec, ref, workload.key,
                                             [c.index for c in chunk], type(workload),
                                             __version__))
                   for chunk in chunks]
        for chunk, future in pending:
            try:
                tuples, notes = ray.get(future)
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


def open_farm(spec: BoardSpec, *, farm: str | None, boards: int | None, work: Path,
              cache: Path, notes: list[str]):
    """The farm for ``--farm``/``--boards``: :class:`Flows` without either (or
    with one local board), else a :class:`LocalFarm` (:data:`LOCAL_BOARDS`
    boards unless ``boards`` says) or a :class:`RayFarm`."""
    kind, address = parse_farm(farm) if farm is not None else (LOCAL, None)
    if boards is not None and boards < 1:
        raise TuneError(f"--boards must be at least 1, not {boards}")
    if kind == "ray":
        return RayFarm(address, spec, boards, notes)
    if boards is None and farm is not None:
        boards = LOCAL_BOARDS
    if boards is None or boards == 1:
        return Flows.from_spec(spec, work, cache, notes)
    return LocalFarm(spec, boards, work, cache, notes)
