"""Measuring candidates on a board: one firmware image serves a whole batch.

:class:`Builder` lowers each candidate config of a workload to C, drops
candidates whose C is identical to another's (only the kernel name
differs; they share one measurement), and builds ONE firmware project for
the batch with the board's toolchain: ``make -j`` compiles the candidates
in parallel and the runtime objects come from the firmware object cache,
so only the candidates themselves are compiled.

The image's RPC descriptor (written here, in the runtime's ``aot_model_t``
format) declares one tensor per kernel parameter (``in0``, ``in1``, ...,
and ``out``), ``sample<i>`` (the sample inputs, kept), ``expected`` (the
reference output) and ``digests``, and one named kernel per candidate
(``c0``, ``c1``, ...) plus :data:`BOOKKEEPING_KERNELS`: ``clear``, which
fills ``out`` with a sentinel byte so a candidate that writes nothing cannot
pass, ``check``, which compares ``out`` with ``expected`` on the device,
``restore``, and the check cases' ``case<k>`` and ``check_case``.

:class:`Runner` boots the image once, writes the workload's sample inputs,
the reference output and the digests of the check cases' reference outputs
(again after any wrong result, since a faulty kernel may have overwritten
them) and, for each candidate: runs ``restore`` and ``clear``, runs the
candidate ``repeats`` times (each run is timed by the device) and runs
``check``, then for each of :data:`CHECK_CASES` (extreme and random inputs
the device fills itself) ``case<k>``, the candidate once and
``check_case``; only a wrong output is read back over the link (to count
the differing values), so a candidate costs a few small round trips
whatever the size of its output.  A candidate that gives a wrong result is
``wrong``; one that makes the device stop answering (a crash or a hang) is
``error``/``timeout`` and the device is restarted (QEMU reboots; a real
board is reflashed) before the next candidate.  Only ``ok`` results carry
a cost (the fewest timer units of the repeats: instructions under QEMU).

With ``cost="cycles"`` on an emulated board the runner checks the batch as
above, then boots the image again under QEMU with its execution log on
(:class:`aot.cycles.calls.CallTrace`) and runs each candidate that was right
once more on the sample input: its cost is the estimated cycles of that run
(the same for every run of the same code on the same input), the kernel's
own code and the helpers it calls, priced as ``aot profile`` prices it
(:func:`pricing`): by the core timing table and the memory system of the
priced board, which is the emulated board itself or the real board whose
``memory.timing.trace_board`` it is (the batch is then built for the trace
board, and :class:`Runner`'s ``priced`` names the real one).  A memory that
waits (flash wait states, caches) is priced from the run's data addresses
(unit ``estimated_cycles@BOARD``); one that never waits by the core table
alone (unit ``estimated_cycles``).  On a real board measured on the device,
``cycles`` is its own timer, which must count cycles (the DWT cycle
counter).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
import numpy as np

from aot.version import __version__
from aot.codegen.c import C_TYPES
from aot.cycles.calls import CallTrace
from aot.cycles.cores import CoreTiming, core_for_board
from aot.cycles.errors import CycleModelError
from aot.cycles.memory import MemorySystem, memory_for_board
from aot.executor.codegen import RpcTensor, rpc_tables
from aot.export import artifact_metadata, runtime_config
from aot.firmware import BuildError, build_project, create_project, open_device
from aot.firmware.errors import FirmwareError
from aot.kernels import support_files
from aot.kernels.template import Config
from aot.rpc import RpcError
from aot.rpc.errors import RemoteError, RpcTimeoutError
from aot.tune.errors import TuneError
from aot.tune.records import estimated_unit

#: Sentinel byte ``clear`` writes over the output before each candidate.
SENTINEL = 0xA5
#: Seconds one timed batch of runs may take before the candidate counts as hung.
RUN_TIMEOUT = 30.0
#: What a candidate's cost is (``aot tune --cost``): the device's timer
#: (instructions, exact under QEMU), or cycles (estimated from QEMU's execution
#: trace on an emulated board, the cycle counter on a real one).
COSTS = ("instructions", "cycles")


@dataclass(frozen=True)
class CheckCase:
    """An input every candidate must also get right: each input tensor filled with
    its dtype's minimum or maximum (-1.0 and 1.0 for floats, whose extremes would
    only give infinities), or with seeded pseudo-random values (:func:`case_inputs`)."""

    fill: str           # "min", "max" or "random"
    seed: int = 0


#: The inputs a candidate is checked on after its timed runs on the sample input:
#: the extremes show saturation and overflow bugs that real activations rarely
#: reach, the random ones values the sample does not hold.  The device makes them
#: itself (kernels ``case<k>``), so they cost no transfer.
CHECK_CASES = (CheckCase("min"), CheckCase("max"), CheckCase("random", 1),
               CheckCase("random", 2))
#: The descriptor's own kernels, ahead of the candidates in its kernel table.
BOOKKEEPING_KERNELS = ("clear", "check", "restore", "check_case",
                       *(f"case{k}" for k in range(len(CHECK_CASES))))

_TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("aot.tune", "templates"), trim_blocks=True,
    lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
    autoescape=False)


def render(template: str, **context) -> str:
    """``aot/tune/templates/<template>`` rendered (the C and linker scripts of
    tuning images), with ``version`` set."""
    return _TEMPLATES.get_template(template).render(version=__version__, **context)


@dataclass
class Result:
    """The outcome of one candidate: ``status`` is ok, wrong, error, timeout or build."""

    config: Config
    status: str
    cost: int | None = None
    timings: tuple[int, ...] = ()
    unit: str = ""
    error: str = ""
    seconds: float = 0.0     # wall time of this candidate's build share plus its runs

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class Candidate:
    """One distinct kernel of a batch and the configs that produce its C."""

    name: str
    configs: list[Config]
    source: str
    kernel: object


@dataclass
class Batch:
    """A built firmware project holding several candidates of one workload."""

    workload: object
    candidates: list[Candidate]
    project: object
    params: list = field(default_factory=list)
    build_seconds: float = 0.0
    build_error: str = ""


def max_batch() -> int:
    """Most candidates one image may hold: the runtime serves at most
    ``AOT_MAX_KERNELS`` named kernels (runtime_c/include/aot/config.h) and
    refuses a larger descriptor at boot, and :data:`BOOKKEEPING_KERNELS` take
    their share."""
    return runtime_config()["AOT_MAX_KERNELS"] - len(BOOKKEEPING_KERNELS)


def _float_input(dtype) -> bool:
    return np.dtype(dtype).kind == "f"


def _fill_value(dtype: str, fill: str):
    if _float_input(dtype):
        return -1.0 if fill == "min" else 1.0
    info = np.iinfo(dtype)
    return int(info.min if fill == "min" else info.max)


def _c_literal(dtype: str, value) -> str:
    if _float_input(dtype):
        return f"{value:.1f}f"
    suffix = "LL" if np.dtype(dtype).itemsize == 8 else ""
    if value < 0 and value == np.iinfo(dtype).min:  # -2147483648 is not a C literal
        return f"({value + 1}{suffix} - 1)"
    return f"{value}{suffix}"


def _seed(case: CheckCase) -> int:
    return (case.seed * 0x9E3779B9) & 0xFFFFFFFF or 1


def _xorshift(state: int):
    """The device's generator (``tune_next`` in the descriptor): xorshift32."""
    while True:
        state ^= (state << 13) & 0xFFFFFFFF
        state ^= state >> 17
        state ^= (state << 5) & 0xFFFFFFFF
        yield state


def case_inputs(params, shapes: dict[str, tuple], case: CheckCase) -> dict[str, np.ndarray]:
    """The inputs the device's ``case<k>`` kernel writes, by kernel param tensor
    name (``shapes`` gives each input's shape).  Random integer inputs take one
    generator step per byte (its top byte), float inputs one per value
    (uniform in [-1, 1), exact in float32); the inputs are filled in parameter
    order from one stream."""
    out = {}
    rng = _xorshift(_seed(case))
    for p in params:
        if p.role != "input":
            continue
        dtype = np.dtype(p.dtype).newbyteorder("<")
        count = p.nbytes // dtype.itemsize
        if case.fill != "random":
            x = np.full(count, _fill_value(p.dtype, case.fill), dtype)
        elif _float_input(p.dtype):
            steps = np.array([next(rng) for _ in range(count)], np.int64)
            x = ((steps >> 8) - (1 << 23)).astype(np.float32) * np.float32(2.0 ** -23)
        else:
            x = np.frombuffer(bytes(next(rng) >> 24 for _ in range(p.nbytes)), dtype)
        out[p.tensor] = x.astype(p.dtype).reshape(shapes[p.tensor])
    return out


def case_outputs(wl, params) -> list[np.ndarray]:
    """The reference output of ``wl`` for each of :data:`CHECK_CASES` (cached on
    the workload)."""
    shapes = {name: np.shape(x) for name, x in wl.inputs.items()}
    outs = []
    for k, case in enumerate(CHECK_CASES):
        key = f"{k}:{case}"
        if key not in wl.case_outputs:
            wl.case_outputs[key] = wl.reference(case_inputs(params, shapes, case))
        outs.append(wl.case_outputs[key])
    return outs


def describe_case(case: CheckCase, params) -> str:
    """How an error message names a case: ``every input value -128``."""
    if case.fill == "random":
        return f"pseudo-random input (seed {case.seed})"
    values = sorted({f"{_fill_value(p.dtype, case.fill):g}" for p in params
                     if p.role == "input"})
    return f"input with every input value {' or '.join(values)}"


def _normalized(source: str, name: str) -> str:
    return source.replace(name, "@")


def descriptor(prefix: str, target_hash: str, kernel, names: list[str]) -> str:
    """The RPC descriptor C of a batch: tensors ``in<i>``/``out`` for the
    kernel's parameters, ``sample<i>`` (the sample inputs, kept), ``expected``
    (the reference output for them) and ``digests`` (the CRC-32 of the
    reference output of each of :data:`CHECK_CASES`); kernels ``clear``,
    ``check`` (returns 1 when ``out`` differs from ``expected``), ``restore``
    (``sample<i>`` back into ``in<i>``), ``case<k>`` (fills ``in<i>`` with
    case k and clears ``out``), ``check_case`` (returns 1 when ``out``'s
    CRC-32 is not the last filled case's digest), and one per entry of
    ``names`` (at most :func:`max_batch`).  The functions come from
    ``templates/batch_rpc.c.j2``, the tables from the executor's
    :func:`aot.executor.codegen.rpc_tables`, as a model's do."""
    if len(names) > max_batch():
        raise TuneError(f"a tuning image holds at most {max_batch()} candidates (the runtime's "
                        f"AOT_MAX_KERNELS less {len(BOOKKEEPING_KERNELS)} kernels of its own), "
                        f"not {len(names)}")
    tensors, arrays, args, inputs, out = [], [], [], [], None

    def tensor(ident, dtype, count, nbytes, role):
        symbol = f"{prefix}_{ident}"
        tensors.append(RpcTensor(ident, dtype, role, True, (count,), nbytes, symbol))
        arrays.append({"ctype": C_TYPES[dtype], "symbol": symbol, "count": count})
        return symbol

    for i, p in enumerate(kernel.params):
        count = p.nbytes // _itemsize(p.dtype)
        symbol = tensor(f"in{i}" if p.role == "input" else "out", p.dtype, count, p.nbytes,
                        p.role)
        args.append(symbol)
        if p.role == "output":
            out = {"symbol": symbol, "nbytes": p.nbytes, "dtype": p.dtype, "count": count}
        else:
            inputs.append({"index": i, "symbol": symbol, "nbytes": p.nbytes, "count": count,
                           "dtype": p.dtype, "is_float": _float_input(p.dtype)})
    for x in inputs:
        x["sample"] = tensor(f"sample{x['index']}", x["dtype"], x["count"], x["nbytes"],
                             "input")
    tensor("expected", out["dtype"], out["count"], out["nbytes"], "input")
    tensor("digests", "int32", len(CHECK_CASES), 4 * len(CHECK_CASES), "input")
    cases = [{"what": describe_case(case, kernel.params),
              "seed": _seed(case) if case.fill == "random" else None,
              "fills": [_c_literal(x["dtype"], _fill_value(x["dtype"], case.fill))
                         for x in inputs] if case.fill != "random" else []}
             for case in CHECK_CASES]
    kernels = [(k, f"{prefix}_{k}") for k in BOOKKEEPING_KERNELS]
    kernels += [(f"c{i}", f"{prefix}_run_{i}") for i in range(len(names))]
    tables = rpc_tables(prefix, prefix, target_hash, tensors, kernels, run=f"{prefix}_clear")
    return render(
        "batch_rpc.c.j2", prefix=prefix, arrays=arrays, out=out, inputs=inputs,
        cases=cases, sentinel=SENTINEL, args=args, candidates=names, tables=tables,
        prototypes=[kernel.prototype.replace(f"int32_t {kernel.name}(", f"int32_t {n}(")
                    for n in names])


def _itemsize(dtype: str) -> int:
    return np.dtype(dtype).itemsize


class Builder:
    """Lowers candidate configs and builds batch firmware (see the module docstring).

    ``workdir`` holds the projects; ``cache_dir`` the runtime object cache
    shared by every batch (and every session).
    """

    def __init__(self, board, workdir: Path, *, cache_dir: Path | None = None,
                 jobs: int | None = None):
        self.board = board
        self.workdir = Path(workdir)
        self.cache_dir = Path(cache_dir) if cache_dir else self.workdir / "object-cache"
        self.jobs = jobs
        self._count = 0

    def candidates(self, workload, configs: list[Config]) -> tuple[list[Candidate], list]:
        """Distinct candidates for ``configs``, and (config, error) for configs that
        could not be lowered (:func:`distinct_candidates`)."""
        return distinct_candidates(workload, configs)

    def build(self, workload, candidates: list[Candidate]) -> Batch:
        """One firmware project for ``candidates``; ``build_error`` is set if it
        does not build (each candidate is then rebuilt alone by the caller)."""

        start = time.perf_counter()
        self._count += 1
        project = write_project(workload, candidates, self.board,
                                self.workdir / f"batch{self._count}")
        batch = Batch(workload, candidates, project, list(candidates[0].kernel.params))
        try:
            build_project(project, cache_dir=self.cache_dir, jobs=self.jobs)
        except BuildError as err:
            batch.build_error = str(err)
        batch.build_seconds = time.perf_counter() - start
        return batch


def distinct_candidates(workload, configs: list[Config]) -> tuple[list[Candidate], list]:
    """Distinct candidates for ``configs`` (configs whose C is the same up to the
    kernel's name share one), and (config, error) for configs that could not be
    lowered."""
    distinct: dict[str, Candidate] = {}
    failed = []
    for config in configs:
        name = f"tune_c{config.index}"
        try:
            kernel = workload.lower(config, name)
        except Exception as err:  # a template bug must not end the session
            failed.append((config, f"lowering failed: {type(err).__name__}: {err}"))
            continue
        digest = hashlib.sha256(_normalized(kernel.source, kernel.name).encode()).hexdigest()
        if digest in distinct:
            distinct[digest].configs.append(config)
        else:
            distinct[digest] = Candidate(name, [config], kernel.source, kernel)
    return list(distinct.values()), failed


def workload_params(workload):
    """The kernel parameters of ``workload`` (the same for every config)."""
    return workload.lower(workload.default, "tune_params").params


#: Bytes of a board's stack a measured kernel leaves to the firmware below its
#: frame: the RPC server's calls down to the candidate, an exception frame and
#: its handler (``aot.firmware.stack`` bounds them at 268-392 bytes in the
#: tuning images of the M0, M4, M55 and RISC-V ports; tests/tune/test_measure.py
#: checks the M4's bound against this).
KERNEL_STACK_RESERVE = 512


def stack_guard(board) -> str:
    """A line ahead of a candidate's C that makes GCC refuse to compile it when
    one of its functions' frames (the always-inlined helpers' buffers
    included) passes what the board's stack leaves a kernel
    (:data:`KERNEL_STACK_RESERVE`): such a candidate is recorded ``build``
    with GCC's "stack usage is N bytes" instead of overflowing the stack on
    the device, where it may corrupt memory without crashing.  Empty for
    boards without a memory map (host processes)."""
    memory = getattr(board, "memory", None)
    if memory is None:
        return ""
    limit = max(memory.stack_bytes - KERNEL_STACK_RESERVE, 0)
    return ("#if defined(__GNUC__) && !defined(__clang__)\n"
            f'#pragma GCC diagnostic error "-Wstack-usage={limit}"\n'
            "#endif\n")


def write_project(workload, candidates: list[Candidate], board, root: Path):
    """A firmware project in ``root/project`` serving ``candidates`` (possibly none)
    of ``workload`` through the descriptor of :func:`descriptor`."""

    shutil.rmtree(root, ignore_errors=True)
    artifact = root / "artifact"
    (artifact / "codegen").mkdir(parents=True)
    (artifact / "include").mkdir()
    target = workload.target
    for rel, text in support_files(target).items():
        (artifact / "codegen" / rel).write_text(text)
    guard = stack_guard(board)
    for cand in candidates:
        (artifact / "codegen" / f"{cand.name}.c").write_text(guard + cand.source)
    first = candidates[0].kernel if candidates else workload.lower(workload.default, "tune_params")
    (artifact / "codegen" / "tune_rpc.c").write_text(
        descriptor("tune", target.digest(), first, [c.name for c in candidates]))
    meta = artifact_metadata("tune", f"tune {workload.description}", workload.key, target,
                             board)
    (artifact / "metadata.json").write_text(json.dumps(meta, indent=2))
    return create_project(artifact, board, root / "project")


class Runner:
    """Runs batches on the board through its runner (QEMU, host, a real board)."""

    def __init__(self, *, runner: str | None = None, serial_port: str | None = None,
                 repeats: int = 3, timeout: float = RUN_TIMEOUT, probe: str | None = None,
                 cost: str = "instructions", priced=None):
        if cost not in COSTS:
            raise TuneError(f"unknown cost {cost!r}; costs: {', '.join(COSTS)}")
        # the board whose core and memory price estimated cycles (None: the batch's own)
        self.priced = priced
        self.runner = runner
        self.serial_port = serial_port
        self.probe = probe      # the debug probe's serial number, one board of several
        self.repeats = repeats
        self.timeout = timeout
        self.cost = cost
        # while a batch runs: its cost is estimated from a trace (the device's count of
        # the first, untraced pass only checks the candidates)
        self._estimating = False

    def run(self, batch: Batch) -> list[Result]:
        """One result per config of the batch, in candidate order.

        For estimated cycles, two boots: the candidates are run and checked as
        for instructions (untraced), then the image boots again under traced
        QEMU and each candidate that was right runs once more on the sample
        input, priced from the trace (:func:`traced_cost`).  QEMU's exec log
        slows a run down more than ten times (docs/tuning.md "Cost"), so the
        repeats, the check cases and the failing candidates stay untraced."""

        wl = batch.workload
        trace = None
        if estimates_cycles(batch.project.board, self.cost):
            price = pricing(self.priced or batch.project.board)
            trace = call_trace(batch.project, len(batch.candidates), price)
        self._estimating = trace is not None
        results = self._run_candidates(batch, list(range(len(batch.candidates))),
                                       self._open_device,
                                       lambda dev, index: self._measure(dev, index, wl))
        if trace is not None:
            ok = [i for i, r in results.items() if r[0] == "ok"]
            traced = self._run_candidates(
                batch, ok, lambda _: trace.device(),
                lambda dev, index: traced_cost(trace, dev, wl, self._runs(dev, index),
                                               self.timeout, price.unit))
            for index, outcome in traced.items():
                results[index] = (*outcome[:5], results[index][5] + outcome[5])
        out = []
        for index, cand in enumerate(batch.candidates):
            status, cost, timings, unit, error, secs = results[index]
            share = batch.build_seconds / len(batch.candidates)
            for config in cand.configs:
                out.append(Result(config, status, cost, timings, unit, error, secs + share))
        return out

    def _run_candidates(self, batch: Batch, indices: list[int], open_device,
                        measure) -> dict[int, tuple]:
        """``measure(dev, index)`` for each candidate of ``indices`` on a device of
        ``open_device()``, restarted after a candidate that crashes or hangs:
        ``index -> (status, cost, timings, unit, error, seconds)``."""
        pending = list(indices)
        results: dict[int, tuple] = {}
        while pending:
            try:
                with open_device(batch) as dev:
                    self._write_inputs(dev, batch)
                    while pending:
                        index = pending[0]
                        start = time.perf_counter()
                        try:
                            outcome = measure(dev, index)
                        except (RpcError, CycleModelError) as err:
                            # a crash or hang while traced may also leave the trace short
                            status = "timeout" if isinstance(err, RpcTimeoutError) else "error"
                            results[index] = (status, None, (), "", f"device: {err}",
                                              time.perf_counter() - start)
                            pending.pop(0)
                            break  # restart the device for the next candidate
                        results[index] = (*outcome, time.perf_counter() - start)
                        pending.pop(0)
                        if outcome[0] == "wrong":
                            self._write_inputs(dev, batch)
            except (FirmwareError, RpcError, CycleModelError) as err:
                # The image does not boot or answer at all: nothing in it can be measured.
                for index in pending:
                    results[index] = ("error", None, (), "", f"device: {err}", 0.0)
                pending = []
        return results

    def _open_device(self, batch: Batch):
        return open_device(batch.project, runner=self.runner, serial_port=self.serial_port,
                           probe=self.probe)

    def _write_inputs(self, dev, batch: Batch) -> None:
        write_inputs(dev, batch.params, batch.workload)

    def _runs(self, dev, index: int):
        return lambda n: dev.run(n, kernel=f"c{index}", timeout=self.timeout)

    def _measure(self, dev, index: int, wl) -> tuple:
        outcome = timed_check(dev, wl, self._runs(dev, index), self.repeats, self.timeout)
        return outcome if self._estimating else device_cost(outcome, self.cost)


def estimates_cycles(board, cost: str) -> bool:
    """Whether ``cost`` for a batch built for ``board`` is aot.cycles' estimate
    from QEMU's trace (``cycles`` on an emulated board, which may stand in for
    a real one: :func:`pricing`) rather than the device's own timer."""
    return cost == "cycles" and board.qemu is not None


@dataclass(frozen=True)
class Pricing:
    """How estimated cycles are priced: a board's core table and its memory
    system (None: a board record without memory timing, priced at zero wait
    states: only emulated boards), and the unit of the costs."""

    core: CoreTiming
    memory: MemorySystem | None
    unit: str


def pricing(board) -> Pricing:
    """The pricing of ``board``'s estimated cycles, as ``aot profile`` prices that
    board; refuses a board without a core table, or a real board without memory
    timing (naming the missing fields: :func:`aot.cycles.memory.memory_for_board`)."""
    core = core_for_board(board)
    timing = board.memory.timing if board.memory is not None else None
    if board.qemu is not None and timing is None:
        return Pricing(core, None, estimated_unit(None))
    memory = memory_for_board(board)
    return Pricing(core, memory, estimated_unit(None if memory.zero_wait else board.tag))


def call_trace(project, candidates: int, price: Pricing):
    """The :class:`aot.cycles.calls.CallTrace` of a batch image: one call window
    per run of a candidate's RPC kernel ``c<i>`` (its function ``tune_run_<i>``),
    priced by ``price``."""
    return CallTrace(project, {f"c{i}": f"tune_run_{i}" for i in range(candidates)},
                     price.core, memory=price.memory)


def traced_cost(trace, dev, wl, run, timeout: float, unit: str) -> tuple:
    """A checked candidate's run on the sample input again, priced from ``trace``
    (a :class:`aot.cycles.calls.CallTrace` whose device ``dev`` is): ``restore``,
    ``clear``, ``run(1)``, ``check``.  One run: the estimate of a run is a function
    of the code and its input, the same every time (the device's timer is what
    ``--repeats`` runs several times for).  ``(status, cost, timings, unit, error)``
    with ``unit`` the pricing's (:func:`pricing`)."""
    dev.run(1, kernel="restore", timeout=timeout)
    dev.run(1, kernel="clear", timeout=timeout)
    since = trace.mark()
    run(1)
    cycles = tuple(round(e.cycles) for e in trace.estimates(since, 1, timeout))
    try:
        dev.run(1, kernel="check", timeout=timeout)
    except RemoteError:
        return ("wrong", None, cycles, unit,
                "right when run untraced, but its output differs from the reference in the "
                "traced run")
    return ("ok", min(cycles), cycles, unit, "")


def device_cost(outcome: tuple, cost: str) -> tuple:
    """``outcome`` of :func:`timed_check`, refused when ``cost`` is ``cycles`` and
    the device's timer counts something else (a board whose port has no cycle
    counter)."""
    status, value, timings, unit, error = outcome
    if cost == "cycles" and status == "ok" and unit != "cycles":
        return ("error", None, timings, unit,
                f"--cost cycles: the device's timer counts {unit}, not cycles")
    return outcome


def write_inputs(dev, params, wl) -> None:
    """Write the workload's sample inputs, its reference output and the digests
    of the check cases' reference outputs to the device."""
    for k, p in enumerate(params):
        if p.role == "input":
            dev.write_tensor(f"sample{k}", np.asarray(wl.inputs[p.tensor]).reshape(-1)
                             .astype(p.dtype))
        else:
            dev.write_tensor("expected", np.asarray(wl.expected).reshape(-1)
                             .astype(p.dtype))
            digests = [zlib.crc32(np.asarray(y).astype(np.dtype(p.dtype).newbyteorder("<"))
                                  .tobytes()) for y in case_outputs(wl, params)]
            dev.write_tensor("digests", np.array(digests, np.uint32).view(np.int32))


def timed_check(dev, wl, run, repeats: int, timeout: float) -> tuple:
    """``restore`` and ``clear``, ``run(repeats)`` (the candidate's timed runs
    on the sample input), ``check``, then for each of :data:`CHECK_CASES`:
    ``case<k>``, ``run(1)``, ``check_case``.  ``(status, cost, timings, unit,
    error)`` with status ok or wrong."""

    dev.run(1, kernel="restore", timeout=timeout)
    dev.run(1, kernel="clear", timeout=timeout)
    result = run(repeats)
    unit = result.unit.name.lower()
    try:
        dev.run(1, kernel="check", timeout=timeout)
    except RemoteError:
        # Only a wrong output crosses the link, to say how wrong it is.
        got = dev.read_tensor("out")
        want = np.asarray(wl.expected).reshape(-1).astype(got.dtype)
        bad = int((got != want).sum())
        return ("wrong", None, tuple(result.timings), unit,
                f"{bad} of {want.size} output values differ from the reference")
    for k, case in enumerate(CHECK_CASES):
        dev.run(1, kernel=f"case{k}", timeout=timeout)
        run(1)
        try:
            dev.run(1, kernel="check_case", timeout=timeout)
        except RemoteError:
            params = workload_params(wl)
            return ("wrong", None, tuple(result.timings), unit,
                    "right on the sample input, but the output differs from the reference "
                    f"on the {describe_case(case, params)}")
    return ("ok", min(result.timings), tuple(result.timings), unit, "")


def measure(builder: Builder, runner: Runner, workload, configs: list[Config]) -> list[Result]:
    """Build and run ``configs`` of ``workload``; one :class:`Result` per config.

    More distinct candidates than one image may hold (:func:`max_batch`) go
    into several images.  A batch that does not build (a candidate that does
    not compile, or too many candidates for the board's memory) is split in
    halves until the halves build or a single candidate is left, which is
    recorded as ``build``."""
    candidates, failed = builder.candidates(workload, configs)
    results = [Result(c, "build", error=e) for c, e in failed]
    size = max_batch()
    for start in range(0, len(candidates), size):
        results += _measure_candidates(builder, runner, workload,
                                       candidates[start:start + size])
    return results


def _measure_candidates(builder, runner, workload, candidates) -> list[Result]:
    if not candidates:
        return []
    batch = builder.build(workload, candidates)
    try:
        if not batch.build_error:
            return runner.run(batch)
    finally:
        shutil.rmtree(batch.project.path.parent, ignore_errors=True)
    if len(candidates) == 1:
        return [Result(c, "build", error=batch.build_error, seconds=batch.build_seconds)
                for c in candidates[0].configs]
    half = len(candidates) // 2
    return (_measure_candidates(builder, runner, workload, candidates[:half])
            + _measure_candidates(builder, runner, workload, candidates[half:]))
