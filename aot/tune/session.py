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

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from aot.cycles.errors import CycleModelError
from aot.cycles.memory import memory_for_board
from aot.cycles.session import check_emulated
from aot.kernels import lower_group, support_files
from aot.kernels.registry import find_template, select_strategy
from aot.kernels.template import ConfigError
from aot.target import load_board
from aot.tune import records as rec
from aot.tune.errors import TuneError
from aot.tune.auto import AutoTuner, AutoWorkload
from aot.tune.auto.workload import apply as auto_apply
from aot.tune.auto.workload import space_for as auto_space
from aot.tune.farm import BoardSpec, SerialBoard, open_farm, parse_boards, parse_farm
from aot.tune.farm_sim import SimBoard
from aot.tune.loader import ram_code_bytes
from aot.tune.measure import COSTS, estimates_cycles, max_batch, pricing
from aot.tune.scheduler import ScheduleStep, Task, TaskScheduler, count_new
from aot.tune.tuner import TUNERS, run_search
from aot.tune.workload import extract_workloads, lower_with, workload_key

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


def tune_model(model, board, *, trials: int | None = None, log, tuner: str = "evolution",
               budget: float | None = None, cost: str = "instructions",
               batch_size: int = 16, repeats: int = 3, early_stopping: int | None = None,
               runner: str | None = None, serial_port: str | None = None,
               workdir=None, cache_dir=None, seed: int = 0, only: list[str] | None = None,
               loader: str = "auto", farm: str | None = None,
               boards: int | str | list[SerialBoard] | None = None,
               tuning_records: list | None = None,
               progress: Callable[[Progress], None] | None = None,
               sim: SimBoard | None = None) -> TuneReport:
    """Tune every distinct workload of ``model`` on ``board``.

    With ``trials`` alone, each workload in turn gets ``trials`` configs.
    With a ``budget`` (seconds), :class:`aot.tune.scheduler.TaskScheduler`
    shares it among the workloads, weighted by how many of the model's
    groups run each (``trials`` then caps each workload).  ``tuner`` is one
    of :data:`TUNER_NAMES`; ``cost`` one of :data:`aot.tune.measure.COSTS`
    (:func:`check_cost`): ``cycles`` ranks candidates by aot.cycles' estimate
    of their cycles under QEMU, priced with the board's core table and memory
    model; a real board is estimated on its trace board (:func:`trace_for`)
    unless ``serial_port``, ``runner``, ``boards`` or a Ray ``farm`` names a
    device whose cycle counter measures (:func:`names_device`).  Records of
    the log or of ``tuning_records`` whose costs are of another kind
    (:func:`cost_unit`: another board's memory is another kind) are ignored,
    with a note.

    Results are appended to ``log`` as they are measured, each naming the
    model (:func:`aot.tune.records.model_identity`); configs the log already
    holds for this model and target are not measured again (another model's
    records in the same log are skipped, with a note, unless ``log`` is also
    among ``tuning_records``; records that name no model count as this
    model's own).  ``only`` limits
    the session to workloads whose key or description contains one of its
    strings.  ``loader`` is one of :data:`LOADERS`; when ``auto`` chose the
    RAM loader and the device turns out not to offer it, the session goes
    on with batch images (``report.notes`` says so).

    ``tuning_records`` are logs of other sessions (another model with
    layers of the same workload key, see docs/tuning.md): their records for
    this target seed the tuners as priors (not measured again, except the
    default config and the :data:`CONFIRM` fastest, measured first on this
    model), and count as trials; they are read, never written.  ``log``
    itself may be one of them: its other models' records are imported.

    ``farm`` and ``boards`` choose where candidates are measured
    (:mod:`aot.tune.farm`): by default one board in this process; ``boards``
    N > 1 (or ``farm="local"``) a pool of N local boards, real boards
    (:class:`aot.tune.farm.SerialBoard`, or the text ``TAG@PORT,...`` of
    ``--boards``) one local slot each; ``farm="ray://HOST:PORT"`` the boards
    of a Ray cluster (all of them unless ``boards`` says how many or which).

    ``sim`` (benches and tests of the farms' scaling, :mod:`aot.tune.farm_sim`)
    measures on simulated boards of ``board``'s kind: the session, its tuner,
    scheduler, farm and log are the real ones, the costs fakes in the unit
    :data:`aot.tune.records.SIMULATED`, which no other session resumes from
    and compiling never applies.
    """

    board = load_board(board) if isinstance(board, str) else board
    if tuner not in TUNER_NAMES:
        raise TuneError(f"unknown tuner {tuner!r}; tuners: {', '.join(TUNER_NAMES)}")
    if isinstance(boards, str):
        boards = parse_boards(boards)
    device = names_device(board, cost, runner=runner, serial_port=serial_port, boards=boards,
                          farm=farm)
    check_cost(board, cost, loader, farm, device=device)
    trace = trace_for(board, cost, device=device)
    if trace is not None:
        runner = None   # the trace board's own runner: its QEMU
    if trials is None and budget is None:
        raise TuneError("give --trials (configs per workload) or --budget (time for the model)")
    if trials is not None and trials < 1:
        raise TuneError(f"--trials must be at least 1, not {trials}")
    if budget is not None and budget <= 0:
        raise TuneError(f"--budget must be positive, not {budget} s")
    if runner == "none":
        raise TuneError("tuning flashes a new image per batch of candidates (per workload with "
                        "the RAM loader): give a runner that flashes the board (e.g. --runner "
                        "openocd) instead of 'none'")
    if isinstance(boards, int) and boards < 1:
        raise TuneError(f"--boards must be at least 1, not {boards}")
    if loader not in LOADERS:
        raise TuneError(f"unknown loader {loader!r}; loaders: {', '.join(LOADERS)}")
    if loader == "ram" and ram_code_bytes(board) <= 0:
        raise TuneError(f"{board.tag} does not declare executable RAM for loaded code "
                        "(memory.ram_code_bytes in its board record): use --loader image")
    if not 1 <= batch_size <= max_batch():
        raise TuneError(f"--batch must be 1 to {max_batch()}: one image holds at most that "
                        "many candidates (the runtime's AOT_MAX_KERNELS less the image's own "
                        f"kernels), not {batch_size}")
    if farm is not None and parse_farm(farm)[0] == "ray" and (workdir or cache_dir):
        raise TuneError("workdir and cache_dir are this machine's folders: a Ray farm builds "
                        "on its nodes, in their temporary folders; leave them out")
    target = board.target
    identity = rec.model_identity(model)   # before extract_workloads rewrites a Graph
    _, workloads = extract_workloads(model, target)
    if only:
        workloads = [w for w in workloads
                     if any(s in w.key or s in w.description for s in only)]
    if not workloads:
        raise TuneError(f"{getattr(model, 'name', model)} has no tunable workload for {target} "
                        "(templates exist for int8/float conv2d, depthwise_conv2d and dense "
                        "on arm_cpu and riscv)")
    log = Path(log)
    old, log_notes = _resumed(log, target, identity, tuning_records or [])
    imported, import_notes = _imported(tuning_records or [], log, target, identity)
    unit = rec.SIMULATED if sim is not None else cost_unit(board, cost, device=device)
    old, ignored = rec.of_unit(old, unit)
    log_notes += _unit_notes(ignored, unit, log, "resumed from")
    imported, ignored = rec.of_unit(imported, unit)
    import_notes += _unit_notes(ignored, unit, "--tuning-records", "imported from")
    with tempfile.TemporaryDirectory(prefix="aot-tune-") as tmp:
        work = Path(workdir) if workdir else Path(tmp)
        # Without a cache folder, the runtime objects are cached for this session only.
        cache = cache_dir or Path(tmp) / "object-cache"
        report = TuneReport(notes=log_notes, unit=unit)
        spec = BoardSpec(board, runner, serial_port, repeats,
                         ram=choose_loader(board, loader, cost, device=device) == "ram",
                         forced=loader == "ram", cost=cost, trace=trace, sim=sim)
        if trace is not None:
            report.notes.append(f"--cost cycles on {board.tag}: estimated on {trace.tag} "
                                f"(QEMU) with {board.tag}'s core table and memory model; "
                                + ("give --port or --runner to measure with the device's "
                                   "cycle counter instead" if board.timer.kind == "dwt_cyccnt"
                                   else f"the device's own timer ({board.timer.kind}) does not "
                                   "count cycles"))
        with open_farm(spec, farm=farm, boards=boards, work=work, cache=cache,
                       notes=report.notes) as flows:
            report.boards = flows.boards
            _tune(workloads, board, flows, log, old, imported, report, trials=trials,
                  tuner=tuner, model=identity, batch_size=batch_size, early_stopping=early_stopping,
                  seed=seed, progress=progress, budget=budget)
            report.loader = "ram" if flows.ram else "image"
        if tuning_records:
            report.notes += import_notes + _import_notes(imported, report)
        return report


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


def check_cost(board, cost: str, loader: str = "auto", farm: str | None = None, *,
               device: bool = False) -> None:
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
    DWT cycle counter (measured cycles, not verified on hardware here)."""
    if cost not in COSTS:
        raise TuneError(f"unknown cost {cost!r}; costs: {', '.join(COSTS)}")
    if cost != "cycles":
        return
    trace = trace_for(board, cost, device=device)
    if board.qemu is None and trace is None:
        if board.timer.kind != "dwt_cyccnt":
            raise TuneError(
                f"--cost cycles on {board.tag}: the board is not emulated (no QEMU execution "
                "trace to estimate cycles from) and its runtime's timer is "
                f"{board.timer.kind!r}, not a cycle counter (the DWT cycle counter of boards "
                "whose timer kind is dwt_cyccnt); use --cost instructions, or tune on the "
                "emulated board of the same core (aot boards lists them)")
        return
    try:
        pricing(board)
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


def cost_unit(board, cost: str, *, device: bool = False) -> str | None:
    """The ``unit`` of the records a session of ``cost`` on ``board`` writes:
    estimated cycles (``estimated_cycles``, or ``estimated_cycles@BOARD`` priced
    with ``board``'s memory model: :func:`aot.tune.measure.pricing`),
    ``instructions`` (QEMU's count), ``cycles`` (a real board's cycle counter,
    with a ``device``), or None for ``instructions`` on a real board (its
    timer's unit, whatever the device reports)."""
    if cost == "cycles" and (board.qemu is not None
                             or trace_for(board, cost, device=device) is not None):
        return pricing(board).unit
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
                  device: bool = False) -> str:
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
        if estimates_cycles(board, cost) or trace_for(board, cost, device=device) is not None:
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


def _tune(workloads, board, flows, log, old, imported, report, *, trials, tuner, batch_size,
          early_stopping, seed, progress, budget=None, model=None) -> None:
    """Measure the workloads' candidates: one after the other (``trials`` each),
    or sharing ``budget`` seconds through the task scheduler.  A batch holds
    ``batch_size`` candidates per board of ``flows`` (a farm spreads it)."""
    start = time.perf_counter()
    batch = batch_size * max(1, int(getattr(flows, "boards", 1)))
    tasks = [_task(wl, board, flows, log, old, imported, report, tuner=tuner, seed=seed,
                   model=model) for wl in workloads]

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
                                  early_stopping=early_stopping, seed=seed, progress=on_step)
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


class TunedKernels:
    """The kernel library with the schedules of tuning records for one target.

    It has the interface of :mod:`aot.kernels` that
    :func:`aot.compile.compile_model` uses (``lower_group``,
    ``support_files``), so ``compile_model(..., kernel_library=tuned)``
    compiles with the best config per workload; ``applied`` lists the groups
    that used a record, ``tunable`` those that have a template.
    """

    def __init__(self, best: dict[str, rec.Record], target):
        self.best = best
        self.target = target
        self.applied: list[str] = []   # groups compiled with a record's config
        self.tunable: list[str] = []   # groups that have a template
        # groups whose record no longer fits its space: compiled with the library's
        # schedule, and said so (the compile command prints these as notes)
        self.stale: list[str] = []

    @classmethod
    def from_log(cls, path, target, model=None,
                 board: str | None = None) -> tuple[TunedKernels, list[str]]:
        """The best record per workload of ``path`` (one log, or a list of logs:
        the fastest record of any of them) for ``target``, and notes about
        records ignored (made for other targets).  With ``model`` (the model
        file or Graph being compiled), a workload's records of that model win
        over other models', and with ``board`` (the tag compiled for) estimates
        priced with that board's memory over other boards' (:func:`aot.tune.records.best`)."""
        paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
        identity = rec.model_identity(model) if model is not None else None
        chosen, notes = rec.best([r for p in paths for r in rec.load(p)], target, identity,
                                 board)
        return cls(chosen, target), notes

    def for_group(self, group):
        """``(schedule, finish)`` for ``group``: ``schedule(s, final, stages)``
        applies the record's config when its workload has one, else the
        library's strategy; ``finish(kernel)`` then applies the config's
        compile options.  None for groups without a template."""
        if group.kind == "view" or group.anchor is None:
            return None
        template = find_template(group.anchor.op, self.target)
        if template is None:
            return None
        keys = tuple(self.target.keys)
        chosen = {}

        def schedule(s, final, stages):
            record = self.best.get(workload_key(group, stages))
            if record is not None:
                # a record of the auto tuner names its sketch (aot.tune.auto)
                auto = "sketch" in record.config
                space = (auto_space(template, stages, final, self.target) if auto
                         else template.space(stages, final, self.target))
                try:
                    chosen["config"] = space.config(record.config)
                except ConfigError as err:
                    # the template or the sketch rules changed since the record was made
                    self.stale.append(f"{group.name}: its tuning record no longer fits the "
                                      f"{'auto' if auto else 'template'} space ({err}); "
                                      "compiled with the library's schedule instead")
                if "config" in chosen:
                    self.applied.append(group.name)
                    if auto:
                        auto_apply(template, s, final, stages, chosen["config"])
                    else:
                        template.apply(s, final, stages, chosen["config"])
                    return
            select_strategy(group.anchor.op, keys)[1](s, final, stages)

        def finish(kernel):
            if "config" not in chosen:
                return kernel
            config = chosen["config"]
            return template.finish(kernel, getattr(config, "config", config))
        return schedule, finish

    def lower_group(self, group, ag, target, *, name: str):

        tuned = self.for_group(group)
        if tuned is None:
            return lower_group(group, ag, target, name=name)
        self.tunable.append(group.name)
        schedule, finish = tuned
        return finish(lower_with(group, ag, target, name=name, schedule=schedule))

    @staticmethod
    def support_files(target) -> dict[str, str]:
        return support_files(target)
