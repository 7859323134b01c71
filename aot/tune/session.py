"""Tuning a model on a board, and applying the records when compiling.

:func:`tune_model` is the whole recipe::

    workloads = extract_workloads(model)          # distinct kernels + reference data
    for each workload:
        resume: feed the configs the log already measured to the tuner
        import: feed another model's records of the same workload as priors
        measure first: the default config (the untuned kernel is the baseline)
                       and the best CONFIRM imported configs, on this model
        run_search(tuner, measure batch on the board -> append to the log)

:class:`TunedKernels` is what compilation uses: for a group whose
workload has a record it schedules with the record's config, otherwise
with the library's own strategy.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from aot.cycles.errors import CycleModelError
from aot.cycles.memory import memory_for_board
from aot.cycles.session import check_emulated
from aot.kernels.template import ConfigError
from aot.target import Board, load_board
from aot.tune import records as rec
from aot.tune.errors import TuneError
from aot.tune.auto import AutoTuner, AutoWorkload
from aot.tune.farm import BoardSpec, SerialBoard, open_farm, parse_boards, parse_farm
from aot.tune.farm_sim import SimBoard
from aot.tune.loader import ram_code_bytes
from aot.tune.measure import COSTS, Pricing, estimates_cycles, max_batch, pricing
from aot.tune.scheduler import ScheduleStep, Task, TaskScheduler, count_new
from aot.tune.tuner import TUNERS, run_search
from aot.tune.workload import extract_workloads

#: How candidates reach the device: ``ram`` loads each into the RAM of one
#: image per workload (aot.tune.loader), ``image`` builds one image per batch,
#: ``auto`` (see :func:`choose_loader`) picks one for the board.
LOADERS = ("auto", "ram", "image")


@dataclass
class Progress:
    """One progress report: after each measured batch of a workload."""

    workload: str
    index: int          # 1-based workload number
    workloads: int
    trial: int
    trials: int | None
    best: int | None
    default: int | None
    per_minute: float
    # with a time budget: the model's estimated tuned and untuned cost of the
    # tunable kernels (sum of groups x best), seconds spent and the budget
    estimate: float | None = None
    untuned: float | None = None
    elapsed: float = 0.0
    budget: float | None = None

    def line(self) -> str:
        best = "-" if self.best is None else f"{self.best:.0f}"
        gain = ""
        if self.best is not None and self.default:
            gain = f" ({self.best / self.default:.3f}x default)"
        of = f"/{self.trials}" if self.trials is not None else ""
        text = (f"[{self.index}/{self.workloads}] {self.workload}: trial "
                f"{self.trial}{of}, best {best}{gain}, "
                f"{self.per_minute:.0f} candidates/min")
        if self.budget is not None:
            if self.estimate is not None and self.untuned:
                text += (f"; model estimate {self.estimate:.0f} "
                         f"({self.estimate / self.untuned:.3f}x untuned)")
            text += f"; {self.elapsed:.0f}/{self.budget:.0f} s"
        return text


@dataclass
class WorkloadSummary:
    key: str
    description: str
    groups: list[str]
    trials: int
    default_cost: int | None
    best_cost: int | None
    best_config: dict | None
    failed: int
    imported: int = 0          # trials taken from --tuning-records (another model's log)


@dataclass
class TuneReport:
    workloads: list[WorkloadSummary] = field(default_factory=list)
    measured: int = 0
    seconds: float = 0.0
    loader: str = "image"      # the flow that measured the candidates (ram or image)
    boards: int = 1            # boards that measured in parallel (aot.tune.farm)
    overrun: float = 0.0       # seconds past the --budget (0 within it)
    unit: str | None = None    # of the costs (cost_unit); None: a real board's own timer
    notes: list[str] = field(default_factory=list)

    @property
    def per_minute(self) -> float:
        return 60.0 * self.measured / self.seconds if self.seconds else 0.0


#: Imported configs (``--tuning-records``) measured again per workload, the
#: fastest first: another model's records say which configs are worth trying,
#: but only a measurement on this model (its weights, its reference output,
#: this board) may make one the best.
CONFIRM = 3

#: Every ``--tuner``: the config-space tuners of aot.tune.tuner, and ``auto``
#: (aot.tune.auto: sketches and a learned cost model).
TUNER_NAMES = (*TUNERS, "auto")


@dataclass(frozen=True)
class TuningBoard:
    """The facts of the board a session tunes on, derived once (:meth:`of`) and read by
    every later step: whether a ``device`` is named (:func:`names_device`), the
    ``trace`` board whose QEMU runs the candidates of a real board estimated in cycles
    (:func:`trace_for`), the ``price`` of estimated cycles (the core timing table and
    memory model, :func:`aot.tune.measure.pricing`; None unless ``cost`` is an
    estimate), the ``unit`` of the costs (:func:`cost_unit`) and the ``loader`` that
    brings the candidates to the device (``ram`` or ``image``, :func:`choose_loader`;
    ``forced``: ``ram`` was asked for)."""

    board: Board
    cost: str = "instructions"
    device: bool = False
    trace: Board | None = None
    price: Pricing | None = None
    unit: str | None = None
    loader: str = "image"
    forced: bool = False
    chosen: bool = False   # the cost is the board's (board_cost), not asked for

    @classmethod
    def of(cls, board: Board | str, cost: str = "instructions", *, loader: str = "auto",
           farm: str | None = None, device: bool = False,
           chosen: bool = False) -> TuningBoard:
        """The facts of ``board`` for ``cost`` measured through ``loader`` (:data:`LOADERS`)
        on a ``device`` or not, each checked (:func:`check_cost`; the RAM loader needs a
        board that declares executable RAM)."""
        board = load_board(board) if isinstance(board, str) else board
        trace = trace_for(board, cost, device=device)
        price = check_cost(board, cost, loader, farm, trace=trace)
        if loader not in LOADERS:
            raise TuneError(f"unknown loader {loader!r}; loaders: {', '.join(LOADERS)}")
        if loader == "ram" and ram_code_bytes(board) <= 0:
            raise TuneError(f"{board.tag} does not declare executable RAM for loaded code "
                            "(memory.ram_code_bytes in its board record): use --loader image")
        return cls(board, cost, device, trace, price, cost_unit(board, cost, price),
                   choose_loader(board, loader, cost, trace=trace), forced=loader == "ram",
                   chosen=chosen)

    def spec(self, runner: str | None, serial_port: str | None, repeats: int,
             sim: SimBoard | None = None) -> BoardSpec:
        """How a worker drives the board (:class:`aot.tune.farm.BoardSpec`): on the
        trace board, its QEMU, whatever ``runner`` says; ``sim``: simulated boards."""
        return BoardSpec(self.board, None if self.trace is not None else runner, serial_port,
                         repeats, ram=self.loader == "ram", forced=self.forced,
                         cost=self.cost, trace=self.trace, sim=sim)

    def cost_note(self) -> str | None:
        """What a session says when it took ``cycles`` as the board's default cost."""
        if not (self.chosen and self.cost == "cycles"):
            return None
        return (f"costs are {rec.unit_name(self.unit)} by default on {self.board.tag}, whose "
                "memory waits (flash wait states, caches); --cost instructions counts "
                "instructions instead")

    def trace_note(self) -> str:
        """What a session estimated on the trace board says about it."""
        board = self.board
        return (f"--cost cycles on {board.tag}: estimated on {self.trace.tag} (QEMU) with "
                f"{board.tag}'s core table and memory model; "
                + ("give --port or --runner to measure with the device's cycle counter "
                   "instead" if board.timer.kind == "dwt_cyccnt"
                   else f"the device's own timer ({board.timer.kind}) does not count cycles"))


@dataclass(frozen=True)
class TuneOptions:
    """Everything one tuning session is asked for, checked once where it is built
    (:meth:`build`); :func:`tune_model` takes it (or builds it from keywords).

    ``board`` holds the board's facts (:class:`TuningBoard`).  With ``trials`` alone,
    each workload in turn gets ``trials`` configs.  With a ``budget`` (seconds),
    :class:`aot.tune.scheduler.TaskScheduler` shares it among the workloads, weighted
    by how many of the model's groups run each (``trials`` then caps each workload).
    ``tuner`` is one of :data:`TUNER_NAMES`; ``batch_size`` candidates make one image
    per board, each run ``repeats`` times; ``early_stopping`` ends a workload's search
    after that many trials without a better config.

    Results are appended to ``log`` as they are measured, each naming the model
    (:func:`aot.tune.records.model_identity`); configs the log already holds for this
    model and target are not measured again (another model's records in the same log
    are skipped, with a note, unless ``log`` is also among ``tuning_records``; records
    that name no model count as this model's own).  ``only`` limits the session to
    workloads whose key or description contains one of its strings.  When ``auto``
    chose the RAM loader and the device turns out not to offer it, the session goes
    on with batch images (``report.notes`` says so).

    ``tuning_records`` are logs of other sessions (another model with layers of the
    same workload key, see docs/tuning.md): their records for this target seed the
    tuners as priors (not measured again, except the default config and the
    :data:`CONFIRM` fastest, measured first on this model), and count as trials; they
    are read, never written.  ``log`` itself may be one of them: its other models'
    records are imported.  Records of the log or of ``tuning_records`` whose costs are
    of another kind (:func:`cost_unit`: another board's memory is another kind) are
    ignored, with a note.

    ``farm`` and ``boards`` choose where candidates are measured (:mod:`aot.tune.farm`):
    by default one board in this process; ``boards`` N > 1 (or ``farm="local"``) a pool
    of N local boards, real boards (:class:`aot.tune.farm.SerialBoard`) one local slot
    each; ``farm="ray://HOST:PORT"`` the boards of a Ray cluster (all of them unless
    ``boards`` says how many or which).  ``runner`` and ``serial_port`` drive one board;
    ``workdir`` and ``cache_dir`` are this machine's folders for the builds (default:
    a temporary folder).  ``progress`` is called after each measured batch.

    ``sim`` (benches and tests of the farms' scaling, :mod:`aot.tune.farm_sim`)
    measures on simulated boards of the board's kind: the session, its tuner,
    scheduler, farm and log are the real ones, the costs fakes in the unit
    :data:`aot.tune.records.SIMULATED`, which no other session resumes from and
    compiling never applies.
    """

    board: TuningBoard
    log: Path
    trials: int | None = None
    budget: float | None = None
    tuner: str = "evolution"
    batch_size: int = 16
    repeats: int = 3
    early_stopping: int | None = None
    runner: str | None = None
    serial_port: str | None = None
    workdir: Path | None = None
    cache_dir: Path | None = None
    seed: int = 0
    only: tuple[str, ...] = ()
    farm: str | None = None
    boards: int | list[SerialBoard] | None = None
    tuning_records: tuple = ()
    progress: Callable[[Progress], None] | None = None
    sim: SimBoard | None = None

    @property
    def unit(self) -> str | None:
        """The unit of the session's costs: the board's (:class:`TuningBoard`), or
        :data:`aot.tune.records.SIMULATED` on simulated boards."""
        return rec.SIMULATED if self.sim is not None else self.board.unit

    @classmethod
    def build(cls, board: Board | str, *, log, cost: str | None = None,
              loader: str = "auto", boards: int | str | list[SerialBoard] | None = None,
              only=None, tuning_records=None, **options) -> TuneOptions:
        """The options of a session on ``board`` measuring ``cost`` (None: the board's,
        :func:`board_cost`) through ``loader`` (:class:`TuningBoard`), each checked and
        every combination the tuner refuses refused here, before any workload is
        extracted.  ``boards`` may be the text ``TAG@PORT,...`` of ``--boards``; the
        other ``options`` are the fields of the same name."""
        tuner = options.get("tuner", "evolution")
        if tuner not in TUNER_NAMES:
            raise TuneError(f"unknown tuner {tuner!r}; tuners: {', '.join(TUNER_NAMES)}")
        if isinstance(boards, str):
            boards = parse_boards(boards)
        board = load_board(board) if isinstance(board, str) else board
        runner, farm = options.get("runner"), options.get("farm")
        chosen = cost is None
        if chosen:
            cost = board_cost(board, loader, farm, runner=runner, boards=boards,
                              serial_port=options.get("serial_port"))
        device = names_device(board, cost, runner=runner, boards=boards, farm=farm,
                              serial_port=options.get("serial_port"))
        facts = TuningBoard.of(board, cost, loader=loader, farm=farm, device=device,
                               chosen=chosen)
        made = cls(facts, Path(log), boards=boards, only=tuple(only or ()),
                   tuning_records=tuple(tuning_records or ()), **options)
        made.check()
        return made

    def check(self) -> None:
        """Refuse the combinations of options a session cannot run."""
        trials, budget = self.trials, self.budget
        if trials is None and budget is None:
            raise TuneError("give --trials (configs per workload) or --budget (time for the "
                            "model)")
        if trials is not None and trials < 1:
            raise TuneError(f"--trials must be at least 1, not {trials}")
        if budget is not None and budget <= 0:
            raise TuneError(f"--budget must be positive, not {budget} s")
        if self.runner == "none" and self.board.trace is None:
            raise TuneError("tuning flashes a new image per batch of candidates (per workload "
                            "with the RAM loader): give a runner that flashes the board (e.g. "
                            "--runner openocd) instead of 'none'")
        if isinstance(self.boards, int) and self.boards < 1:
            raise TuneError(f"--boards must be at least 1, not {self.boards}")
        if not 1 <= self.batch_size <= max_batch():
            raise TuneError(f"--batch must be 1 to {max_batch()}: one image holds at most "
                            "that many candidates (the runtime's AOT_MAX_KERNELS less the "
                            f"image's own kernels), not {self.batch_size}")
        if self.farm is not None and parse_farm(self.farm)[0] == "ray" and (
                self.workdir or self.cache_dir):
            raise TuneError("workdir and cache_dir are this machine's folders: a Ray farm "
                            "builds on its nodes, in their temporary folders; leave them out")


def tune_model(model, options: TuneOptions | Board | str, **keywords) -> TuneReport:
    """Tune every distinct workload of ``model`` with ``options``: a
    :class:`TuneOptions`, or a board (a :class:`Board` or its tag) with the options as
    keywords (:meth:`TuneOptions.build`'s), a convenience that builds them::

        tune_model("kws.tflite", "qemu/mps2-an386", trials=64, log="kws.jsonl")
    """
    if not isinstance(options, TuneOptions):
        options = TuneOptions.build(options, **keywords)
    elif keywords:
        raise TypeError(f"tuning options given twice: a TuneOptions and the keywords "
                        f"{', '.join(keywords)}; use dataclasses.replace(options, ...)")
    facts = options.board
    target = facts.board.target
    identity = rec.model_identity(model)   # before extract_workloads rewrites a Graph
    _, workloads = extract_workloads(model, target)
    if options.only:
        workloads = [w for w in workloads
                     if any(s in w.key or s in w.description for s in options.only)]
    if not workloads:
        raise TuneError(f"{getattr(model, 'name', model)} has no tunable workload for {target} "
                        "(templates exist for int8/float conv2d, depthwise_conv2d and dense "
                        "on arm_cpu and riscv)")
    old, imported, notes = _records(options, target, identity)
    with tempfile.TemporaryDirectory(prefix="aot-tune-") as tmp:
        work = Path(options.workdir) if options.workdir else Path(tmp)
        # Without a cache folder, the runtime objects are cached for this session only.
        cache = options.cache_dir or Path(tmp) / "object-cache"
        report = TuneReport(notes=notes["log"], unit=options.unit)
        if facts.cost_note():
            report.notes.append(facts.cost_note())
        if facts.trace is not None:
            report.notes.append(facts.trace_note())
        spec = facts.spec(options.runner, options.serial_port, options.repeats, options.sim)
        with open_farm(spec, farm=options.farm, boards=options.boards, work=work,
                       cache=cache, notes=report.notes) as flows:
            report.boards = flows.boards
            _tune(workloads, flows, old, imported, report, options, identity)
            report.loader = "ram" if flows.ram else "image"
        if options.tuning_records:
            report.notes += notes["imports"] + _import_notes(imported, report)
        return report


def _records(options: TuneOptions, target, identity: dict) -> tuple[list, list, dict]:
    """The records a session resumes from (its log's) and imports (``tuning_records``),
    those of the session's cost unit only, and the notes about the others (``log``:
    said first; ``imports``: said with the imports' outcome)."""
    unit, log = options.unit, options.log
    old, log_notes = _resumed(log, target, identity, options.tuning_records)
    imported, import_notes = _imported(options.tuning_records, log, target, identity)
    old, ignored = rec.of_unit(old, unit)
    log_notes += _unit_notes(ignored, unit, log, "resumed from")
    imported, ignored = rec.of_unit(imported, unit)
    import_notes += _unit_notes(ignored, unit, "--tuning-records", "imported from")
    return old, imported, {"log": log_notes, "imports": import_notes}


def names_device(board, cost: str, *, runner: str | None = None,
                 serial_port: str | None = None, boards=None, farm: str | None = None) -> bool:
    """Whether the options name a device for ``--cost cycles`` on a real board to
    be measured on (docs/tuning.md "Cost"): a serial port (``--port``, ``--boards
    TAG@PORT,...``), a flash runner other than ``qemu``, or a Ray farm (whose
    nodes declare the boards they drive).  Without one, the cycles of a real
    board are estimated on its trace board (:func:`trace_for`): this machine may
    have no board attached, and the estimate prices the board's own memory.
    ``--runner qemu`` asks for the estimate, so with a serial port it is
    refused: it cannot say which of the two is meant."""
    ray = farm is not None and parse_farm(farm)[0] == "ray"
    ports = serial_port is not None or isinstance(boards, list)
    if runner == "qemu" and board.qemu is None and cost == "cycles" and (ports or ray):
        where = "--port" if serial_port is not None else ("--farm ray" if ray else "--boards")
        raise TuneError(f"--cost cycles on {board.tag} with --runner qemu and {where}: "
                        "--runner qemu estimates on the board's trace board, a serial port "
                        "or Ray farm measures on the device; leave out one of them")
    return ports or ray or (runner is not None and runner != "qemu")


def trace_for(board, cost: str, *, device: bool):
    """The emulated board whose QEMU runs the candidates when ``--cost cycles`` on
    the real board ``board`` is estimated (no device named: :func:`names_device`),
    its record's ``memory.timing.trace_board``; None when ``board`` runs the
    candidates itself (an emulated board, or the device)."""
    if cost != "cycles" or device or board.qemu is not None or board.platform == "host":
        return None
    try:
        return load_board(memory_for_board(board).trace_board)
    except CycleModelError as err:
        raise TuneError(f"--cost cycles on {board.tag}: {err}") from None


def board_cost(board, loader: str = "auto", farm: str | None = None, *,
               runner: str | None = None, serial_port: str | None = None,
               boards=None) -> str:
    """The ``cost`` a session on ``board`` takes when none is given: ``cycles``
    where the board's memory model makes a cycle differ from an instruction (its
    record's memory timing has flash wait states or caches: the real boards; the
    estimate prices them as ``aot profile`` does) and the session can price them
    (:func:`check_cost`), else ``instructions`` (QEMU's exact count; an emulated
    board's memory never waits)."""
    try:
        if board.memory is None or board.memory.timing is None or \
                pricing(board).memory is None or pricing(board).memory.zero_wait:
            return "instructions"
        device = names_device(board, "cycles", runner=runner, serial_port=serial_port,
                              boards=boards, farm=farm)
        check_cost(board, "cycles", loader, farm,
                   trace=trace_for(board, "cycles", device=device))
    except (TuneError, CycleModelError):
        return "instructions"
    return "cycles"


def check_cost(board, cost: str, loader: str = "auto", farm: str | None = None, *,
               trace) -> Pricing | None:
    """Refuse a ``--cost`` that ``board`` cannot measure (docs/tuning.md "Cost").

    ``cycles`` is aot.cycles' estimate from QEMU's execution trace on an
    emulated board whose core has a timing table (with QEMU installed here
    unless a Ray farm's nodes run it), priced with the board's memory model
    where its record has one; on a real board without a ``device``
    (:func:`names_device`), the same estimate on its trace board priced with
    the real board's core table and memory model, which its record must
    describe (the missing fields are named, never taken as zero wait states).
    The estimate needs batch images (the trace is priced from the image's
    ELF, which a RAM-loaded candidate is not part of).  On a real board with a
    device, ``cycles`` is the device's own timer when its runtime reads the
    DWT cycle counter (measured cycles, not verified on hardware here).

    ``trace`` is :func:`trace_for`'s; the pricing of the estimate is returned
    (:func:`aot.tune.measure.pricing`), None where nothing is estimated."""
    if cost not in COSTS:
        raise TuneError(f"unknown cost {cost!r}; costs: {', '.join(COSTS)}")
    if cost != "cycles":
        return None
    if board.qemu is None and trace is None:
        if board.timer.kind != "dwt_cyccnt":
            raise TuneError(
                f"--cost cycles on {board.tag}: the board is not emulated (no QEMU execution "
                "trace to estimate cycles from) and its runtime's timer is "
                f"{board.timer.kind!r}, not a cycle counter (the DWT cycle counter of boards "
                "whose timer kind is dwt_cyccnt); use --cost instructions, or tune on the "
                "emulated board of the same core (aot boards lists them)")
        return None
    try:
        price = pricing(board)
        if trace is not None and trace.qemu is None:
            raise CycleModelError(f"memory.timing.trace_board {trace.tag} is not emulated; "
                                  "name an emulated board of the same core")
        if farm is None or parse_farm(farm)[0] != "ray":   # a Ray farm's nodes run QEMU
            check_emulated(trace or board)
    except CycleModelError as err:
        raise TuneError(f"--cost cycles on {board.tag}: {err}") from None
    if loader == "ram" and trace is not None:
        raise TuneError(f"--cost cycles on {board.tag} with --loader ram: without --port or "
                        f"--runner the cycles are estimated on {trace.tag} under QEMU, which "
                        "needs batch images; give the device (--port, --runner) to measure "
                        "RAM-loaded candidates with its cycle counter, or leave out --loader")
    if loader == "ram":
        raise TuneError("--cost cycles with --loader ram is not supported yet: the cycle "
                        "estimate prices QEMU's trace from the image's ELF, and a candidate "
                        "loaded into RAM is not part of it; use --loader image (the default "
                        "on emulated boards)")
    return price


def cost_unit(board, cost: str, price: Pricing | None) -> str | None:
    """The ``unit`` of the records a session of ``cost`` on ``board`` writes:
    estimated cycles (``estimated_cycles``, or ``estimated_cycles@BOARD`` priced
    with ``board``'s memory model: ``price``, :func:`check_cost`'s),
    ``instructions`` (QEMU's count), ``cycles`` (a real board's cycle counter,
    with a device), or None for ``instructions`` on a real board (its
    timer's unit, whatever the device reports)."""
    if price is not None:
        return price.unit
    if cost == "cycles":
        return "cycles"
    return "instructions" if board.qemu is not None else None


def _unit_notes(ignored: list[rec.Record], unit: str | None, where, verb: str) -> list[str]:
    """What a session says about records it did not take because their costs are
    of another kind than its own."""
    if not ignored:
        return []
    units = sorted({r.unit for r in ignored})
    own = rec.unit_name(unit) if unit else "the device timer's units"
    return [f"ignoring {len(ignored)} records in {where} whose costs are in "
            f"{' and '.join(rec.unit_name(u) for u in units)}: this session measures "
            f"{own} (--cost), and costs of different kinds are not compared; such configs "
            f"are measured again rather than {verb} that log"]


def choose_loader(board, loader: str = "auto", cost: str = "instructions", *,
                  trace=None) -> str:
    """``ram`` or ``image`` for ``loader`` on ``board``.

    ``auto`` is ``ram`` on real boards that declare executable RAM: a
    workload then needs one flash instead of one per batch, which saves
    flashing time and flash wear (some parts are rated for 10k erase
    cycles).  Emulated boards use batch images: restarting QEMU costs about
    a second, while its UART model takes about 17 kB/s, so loading a
    candidate (5-13 kB for kws's first convolution) costs more than its
    share of a reboot (bench/bench_tune.py, docs/tuning.md).
    """
    if loader == "auto":
        if estimates_cycles(board, cost) or trace is not None:
            return "image"   # the cycle estimate needs the candidates in the traced ELF
        return "ram" if ram_code_bytes(board) > 0 and not board.emulated else "image"
    return loader


def budget_notes(scheduler: TaskScheduler) -> list[str]:
    """What a budgeted run says about its end: past the budget (a batch took
    longer than the estimate from the workload's last one), or stopped before
    it because the next batch would not have finished."""
    budget = scheduler.budget
    if scheduler.overrun > 0:
        return [f"the run took {scheduler.elapsed:.1f} s, {scheduler.overrun:.1f} s past the "
                f"--budget of {budget:g} s: a batch took longer than expected from its workload's "
                "last one (or was the first of its size)"]
    if scheduler.stopped_early is not None:
        name, expected, left = scheduler.stopped_early
        return [f"stopped {left:.1f} s before the --budget of {budget:g} s: the next batch "
                f"({name}) would take about {expected:.1f} s, as its last one did"]
    return []


def _import_notes(imported: list[rec.Record], report: TuneReport) -> list[str]:
    """What ``--tuning-records`` brought: how many workloads started from them,
    or that none did."""
    used = [w for w in report.workloads if w.imported]
    if not used:
        return [f"none of the {len(imported)} records of --tuning-records for this target is "
                "of a workload of this model (the same operators, attributes, shapes and "
                "dtypes); each workload was tuned from scratch"]
    return [f"{len(used)} of {len(report.workloads)} workloads started from --tuning-records "
            f"({sum(w.imported for w in used)} imported configs; the default and the "
            f"{CONFIRM} fastest of each workload measured again)"]


def _resumed(log: Path, target, identity: dict, imports) -> tuple[list[rec.Record], list[str]]:
    """The records of ``log`` a session of the model ``identity`` resumes from
    (its own, and those that name no model), and notes about the others
    (another model's, skipped unless ``log`` is among ``imports``) and about
    records that name no model."""
    if not log.is_file():
        return [], []
    own, others = rec.split_by_model(rec.load(log), identity)
    notes = []
    others = [r for r in others if r.target == str(target)]
    if others and not any(Path(p).resolve() == log.resolve() for p in imports):
        notes.append(f"ignoring {len(others)} records of another model "
                     f"({rec.model_names(others)}) in {log}: a session resumes its own "
                     f"model's records; import them with --tuning-records {log}")
    unnamed = sum(r.model is None and r.target == str(target) for r in own)
    if unnamed:
        notes.append(f"{unnamed} records in {log} name no model (written before records named "
                     "their model): taken as this model's own")
    return own, notes


def _imported(paths, log: Path, target, identity: dict) -> tuple[list[rec.Record], list[str]]:
    """The records of the logs ``paths`` made for ``target`` (``--tuning-records``
    of ``aot tune``), and notes about those ignored (other targets); of the
    session's own ``log``, only other models' records (its own are resumed)."""
    out, notes = [], []
    for path in paths:
        path = Path(path)
        records = rec.load(path)
        if path.resolve() == log.resolve():
            records = rec.split_by_model(records, identity)[1]
        chosen, ignored = rec.for_target(records, target)
        out += chosen
        notes += [f"--tuning-records {path}: {note}" for note in ignored]
    return out, notes


def _tune(workloads, flows, old, imported, report, options: TuneOptions,
          model: dict) -> None:
    """Measure the workloads' candidates (as records of ``model``): one after the other
    (``options.trials`` each), or sharing ``options.budget`` seconds through the task
    scheduler.  A batch holds ``options.batch_size`` candidates per board of ``flows``
    (a farm spreads it)."""
    start = time.perf_counter()
    trials, budget, progress = options.trials, options.budget, options.progress
    early_stopping = options.early_stopping
    batch = options.batch_size * max(1, int(getattr(flows, "boards", 1)))
    tasks = [_task(wl, options.board.board, flows, options.log, old, imported, report,
                   tuner=options.tuner, seed=options.seed, model=model) for wl in workloads]

    def per_minute() -> float:
        elapsed = time.perf_counter() - start
        return 60.0 * report.measured / elapsed if elapsed else 0.0

    if budget is None:
        for number, task in enumerate(tasks, 1):
            def on_batch(done, configs, costs, task=task, number=number):
                if progress is not None:
                    progress(Progress(task.name, number, len(tasks), task.trials, trials,
                                      task.best, task.default_cost, per_minute()))
            def counted(configs, task=task):   # the scheduler counts its trials itself
                costs = task.measure(configs)
                task.trials += count_new(task.tuner, configs)
                return costs
            if task.first:
                first, task.first = task.first, []
                task.tuner.update(first, counted(first))
                on_batch(len(first), first, None)
            if task.done:   # its default did not build (_task)
                continue
            run_search(task.tuner, counted, trials=max(0, trials - task.trials),
                       batch_size=batch, early_stopping=early_stopping, on_batch=on_batch)
    else:
        def on_step(step: ScheduleStep) -> None:
            if progress is not None:
                t = step.task
                progress(Progress(t.name, step.index, step.tasks, t.trials, trials, t.best,
                                  t.default_cost, per_minute(), estimate=step.estimate,
                                  untuned=step.untuned, elapsed=step.elapsed, budget=budget))
        scheduler = TaskScheduler(tasks, batch_size=batch, budget=budget, max_trials=trials,
                                  early_stopping=early_stopping, seed=options.seed,
                                  progress=on_step)
        scheduler.run()
        report.overrun = scheduler.overrun
        report.notes += budget_notes(scheduler)
    for task in tasks:
        wl, search = task.workload, task.tuner
        report.workloads.append(WorkloadSummary(
            wl.key, wl.description, wl.groups, len(search.measured), task.default_cost,
            search.best_cost, search.best.to_json() if search.best else None, task.failed,
            task.imported))
    report.seconds = time.perf_counter() - start


def _configs(wl, records, auto: bool) -> dict[int, tuple]:
    """``records`` of ``wl`` as ``index -> (config, cost)``: the fastest ``ok``
    cost of a config measured several times, else None (failed).  Records that
    do not fit the space (another tuner's, an older template's) are skipped."""
    out: dict[int, tuple] = {}
    for r in records:
        if r.workload != wl.key or r.target != str(wl.target):
            continue
        values = r.config
        if auto and "sketch" not in values:
            values = {"sketch": "template", **values}   # a template tuner's record
        try:
            config = wl.space.config(values)
        except ConfigError:
            continue
        cost = r.cost if r.status == "ok" else None
        if config.index in out and out[config.index][1] is not None:
            if cost is None or out[config.index][1] <= cost:
                continue
        out[config.index] = (config, cost)
    return out


def _task(wl, board, flows, log, old, imported, report, *, tuner: str, seed: int,
          model: dict | None = None) -> Task:
    """The task of one workload: its tuner (resumed from the log's records for
    this target, seeded with the imported ones), the configs it measures
    first and how its batches are measured and logged (as records of
    ``model``)."""
    if tuner == "auto":
        wl = AutoWorkload.of(wl)
        search = AutoTuner(wl.space, wl.lower, seed=seed)
    else:
        search = TUNERS[tuner](wl.space, seed=seed)
    task = Task(wl.description, search, None, weight=len(wl.groups), workload=wl)
    own = _configs(wl, old, tuner == "auto")
    for config, cost in own.values():
        search.update([config], [cost])
    if wl.default.index in own and own[wl.default.index][1] is not None:
        task.default_cost = own[wl.default.index][1]
    others = _configs(wl, imported, tuner == "auto")
    priors = {i: v for i, v in others.items() if i not in own}
    if priors:
        search.prior([c for c, _ in priors.values()], [cost for _, cost in priors.values()])
    task.imported = len(priors)
    # The fastest imported configs, unless this log measured them already (a
    # resumed session confirms no more than the first did).
    fastest = sorted((cost, i) for i, (_, cost) in others.items()
                     if cost is not None and i != wl.default.index)[:CONFIRM]
    confirm = [priors[i][0] for _, i in fastest if i in priors]
    task.first = ([wl.default] if wl.default.index not in own else []) + confirm
    task.trials = len(search.measured)
    if search.best_cost is not None:
        task.history.append((task.trials, search.best_cost))

    def measure(configs):
        results = flows.measure(wl, configs)
        rec.append(log, [rec.from_result(wl, board, r, model) for r in results])
        report.measured += len(results)
        by_index = {r.config.index: r for r in results}
        for r in results:
            if r.config == wl.default and r.ok:
                task.default_cost = r.cost
            elif r.config == wl.default and r.status == "build" and not task.done:
                # The library's schedule compiles in the model: what does not build is the
                # measuring firmware (a board too small for the layer's own buffers), and
                # no other candidate would either.
                task.done = True
                reason = r.error.splitlines()[0] if r.error else "no message"
                report.notes.append(f"{wl.description}: not tuned: the library's own schedule "
                                    f"did not build for measuring on {board.tag} ({reason})")
            task.failed += not r.ok
        return [by_index[c.index].cost if by_index[c.index].ok else None for c in configs]

    task.measure = measure
    return task
