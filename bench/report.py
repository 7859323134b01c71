"""docs/numbers.md, the one page of current figures, from the benches' JSON.

    .venv/bin/python bench/report.py [--collect out] [--results bench/results]
                                     [--output docs/numbers.md] [--allow-mixed] [--check]
                                     [--no-pages]

Reads the JSON files of :data:`INPUTS` from ``--results`` (bench/results/, committed:
small files, so that the page can be regenerated and checked), and writes
``--output`` with one table per bench and board, each saying which bench and commit
produced it.  ``--collect DIR`` first copies those files from DIR (where the benches
write them, out/ by default) into ``--results``.  ``--check`` writes nothing: exit 1
when ``--output`` differs from what would be written (tests/bench/test_report.py).
A page that must show a table itself (:data:`EMBEDS`: the farm's in docs/tuning.md) holds
a marked block that the same run writes (``--no-pages``: numbers.md alone).

The inputs must all carry a stamp (bench/stamp.py) naming the same commit, with no
uncommitted changes: a page mixing commits would again quote figures that disagree.
An input whose figures no other table quotes may name its own commit, saying why
(:attr:`Input.own_commit`: the tuning farm's simulated boards measure no compiled code);
its table names it, as every table does.
``--allow-mixed`` writes such a page anyway and says so at its top.  A missing input
is always an error: run the bench (the command is in the error) first.

Every other page links to a section of docs/numbers.md instead of copying a figure;
tests/bench/test_report.py checks that README and docs quote no KWS instruction count
outside it (except under a "History" heading, dated by its commit).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
OUTPUT = ROOT / "docs" / "numbers.md"
BOARD = "qemu/mps2-an386"   # the headline board: BASELINE.md measured TFLM on it
SHORT = {"mlperf_kws_dscnn": "KWS", "mlperf_vww_mobilenetv1_025": "VWW",
         "mlperf_ic_resnet8": "ResNet-8", "mlperf_ad_fc_autoencoder": "AD"}


class ReportError(Exception):
    """An input is missing, unstamped, or from another commit than the others."""


@dataclass(frozen=True)
class Input:
    file: str       # in bench/results/ (and out/, where the bench writes it)
    command: str    # the command that writes it
    # why this input's figures may come from another commit than the others' (said on
    # the page): none of them is a figure of the compiled code that another table
    # quotes; "" for the inputs that must agree
    own_commit: str = ""


INPUTS = (
    Input("bench_models_qemu.json",
          "bench/bench_models_qemu.py --board qemu/mps2-an386 --board qemu/mps2-an500 "
          "--board qemu/mps3-an547 --board qemu/sifive-e"),
    Input("bench_models_qemu_silicon.json",
          "bench/bench_models_qemu.py --board qemu/netduinoplus2 --board qemu/mps2-an505 "
          "--board qemu/microbit --json out/bench_models_qemu_silicon.json"),
    Input("bench_cycles_mlperf.json", "bench/bench_cycles_mlperf.py"),
    Input("bench_compile_timing.json", "bench/bench_compile.py --timing"),
    Input("bench_farm.json", "bench/bench_farm.py --sim 2.0 --sim-candidate 0.05 --per-board 16 "
          "--budget 180 --boards 1,2,4,8",
          own_commit="its simulated boards measure the tuning farm, no compiled code"),
)


def load(results: Path) -> dict[str, dict]:
    """Every input by file name; ReportError when one is missing or unstamped."""
    data = {}
    for inp in INPUTS:
        path = results / inp.file
        if not path.is_file():
            raise ReportError(f"{path} is missing: run `.venv/bin/python {inp.command}`, then "
                              f"`bench/report.py --collect out`")
        doc = json.loads(path.read_text())
        stamp = doc.get("stamp") if isinstance(doc, dict) else None
        if not isinstance(stamp, dict) or not stamp.get("commit"):
            raise ReportError(f"{path} carries no commit stamp (written before bench/stamp.py?): "
                              f"run `.venv/bin/python {inp.command}` again")
        data[inp.file] = doc
    return data


def mixed(data: dict[str, dict]) -> str | None:
    """Why the inputs cannot stand for one commit, or None when they can (inputs
    with an ``own_commit`` reason aside, which only must be committed)."""
    own = {i.file for i in INPUTS if i.own_commit}
    commits = {name: doc["stamp"]["commit"] for name, doc in data.items() if name not in own}
    if len(set(commits.values())) > 1:
        return "the inputs come from different commits: " + ", ".join(
            f"{name} {commit[:8]}" for name, commit in commits.items())
    dirty = [name for name, doc in data.items() if doc["stamp"].get("dirty")]
    if dirty:
        return (f"{', '.join(dirty)} ran on a tree with uncommitted changes to "
                f"{data[dirty[0]]['stamp']['commit'][:8]}")
    return None


def _stamp(doc: dict) -> str:
    s = doc["stamp"]
    dirty = " with uncommitted changes" if s.get("dirty") else ""
    return f"commit `{s['commit'][:8]}`{dirty}, {s['date']}"


def _source(inp: Input, doc: dict) -> str:
    return f"*From `{inp.command}`, {_stamp(doc)}.*"


def _origin(data: dict[str, dict], file: str) -> str:
    inp = next(i for i in INPUTS if i.file == file)
    return f"`{inp.command}`, {_stamp(data[file])}"


def _n(v) -> str:
    return "n/a" if v is None else f"{v:,}"


def _x(v) -> str:
    return "n/a" if v is None else f"{v:.2f}x"


def _span(values: list[float]) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "n/a"
    lo, hi = min(values), max(values)
    return f"{lo:.2f}x" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}-{hi:.2f}x"


def _exact(r: dict) -> str:
    if r.get("bit_exact"):
        return "yes"
    return f"float, max diff {r['max_abs_diff']:.1e}" if r.get("passed") else "NO"


def _row(cells: list) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _table(head: list[str], rows: list[list]) -> list[str]:
    return [_row(head), "|" + "---|" * len(head), *(_row(r) for r in rows)]


def _board_run(models: dict, board: str) -> dict | None:
    return next((run for run in models["runs"] if run["board"] == board), None)


def headline(data: dict[str, dict]) -> list[str]:
    """The MLPerf Tiny models on the Cortex-M4 against TFLM, one row per model."""
    run = _board_run(data["bench_models_qemu.json"], BOARD) or {"models": []}
    fw = {r["model"]: r for r in run["models"] if "error" not in r}
    cyc = {r["model"]: r for r in data["bench_cycles_mlperf.json"]["rows"]
           if r["board"] == BOARD}
    comp = {r["model"]: r for r in data["bench_compile_timing.json"]["models"]}
    rows, ratios = [], {"instr": [], "cycles": [], "ram": [], "flash": []}
    for model, short in SHORT.items():
        f, c, t = fw.get(model, {}), cyc.get(model, {}), comp.get(model, {})
        ram, flash = f.get("activation_ram", {}), f.get("flash", {})
        ratios["instr"].append(f.get("vs_tflm_cmsis_nn"))
        ratios["cycles"].append(c.get("ours_over_tflm_cmsis_nn"))
        ratios["ram"].append(ram.get("vs_tflm_arena"))
        ratios["flash"].append(flash.get("vs_tflm_cmsis_nn"))
        cold = t.get("cold", {}).get("total")
        rows.append([
            f"{short} ({model})", _n(f.get("instructions_per_inference")),
            _x(f.get("vs_tflm_cmsis_nn")), _n(c.get("aot", {}).get("cycles")),
            _x(c.get("ours_over_tflm_cmsis_nn")), _x(c.get("ratio")),
            f"{_n(ram.get('total'))} ({_x(ram.get('vs_tflm_arena'))})",
            f"{_n(flash.get('standalone'))} ({_x(flash.get('vs_tflm_cmsis_nn'))})",
            "n/a" if cold is None else f"{cold[0]:.1f} ({cold[1]:.1f})",
            _exact(f) if f else "n/a"])
    return [
        "## Headline",
        "",
        f"On {BOARD} (QEMU, Cortex-M4F, gcc -O2) against TensorFlow Lite Micro with Arm's "
        "CMSIS-NN kernels (../shared/docs/BASELINE.md), aot executes "
        f"{_span(ratios['instr'])} its instructions and takes {_span(ratios['cycles'])} its "
        "estimated Cortex-M4 cycles (both sides priced by the same cycle model, "
        "docs/cycles.md), in "
        f"{_span(ratios['ram'])} the activation RAM of TFLM's arena and "
        f"{_span(ratios['flash'])} the flash of its firmware.",
        "",
        *_table(["model", "instructions", "vs TFLM+CMSIS-NN", "est. M4 cycles",
                 "vs TFLM+CMSIS-NN (est. cycles)", "vs best published (cycles)",
                 "activation RAM, bytes (vs TFLM arena)",
                 "flash, bytes (vs TFLM+CMSIS-NN firmware)", "compile, s: wall (CPU)",
                 "bit-exact"], rows),
        "",
        f"*Instructions, RAM and flash: {_origin(data, 'bench_models_qemu.json')}; "
        f"cycles: {_origin(data, 'bench_cycles_mlperf.json')}; compile time (cold: a fresh "
        f"process, an empty cache): {_origin(data, 'bench_compile_timing.json')}.*",
        "",
        "Definitions are in the sections below.",
    ]


def firmware(runs: list[tuple[dict, Input]]) -> list[str]:
    """bench_models_qemu.py: one table per board, the runs of each input file in turn (the
    emulated boards of the cores BASELINE.md measured first, then the closest emulated
    silicon: the NUCLEO boards' STM32F405, a Cortex-M33, the micro:bit's Cortex-M0)."""
    out = [
        "## Firmware",
        "",
        "Every shared model compiled, built (gcc -O2) and run as firmware under QEMU "
        "(`-icount`, exact instruction counts per inference, the mean over the model's "
        "sample inputs or two seeded random ones), its outputs checked against "
        "aot.reference (= TFLM) bit for bit. "
        "*Activation RAM* = workspace + the model's caller i/o buffers + the deepest stack "
        "of one inference, the same three kinds of data TFLM's arena holds. *Flash* = the "
        "standalone image (model code, constants, startup, port, C library; without the "
        "RPC's objects) against TFLM's whole release firmware. Ratios below 1 mean aot "
        "needs less; TFLM figures exist only where BASELINE.md measured the core. The "
        "bench itself prints a wider table (workspace, stack and flash by part; its "
        "columns are defined in docs/firmware.md) and keeps every part in its JSON.",
    ]
    for doc, inp in runs:
        out += ["", _source(inp, doc)]
        out += _board_tables(doc)
    return out


def _board_tables(doc: dict) -> list[str]:
    out = []
    for run in doc["runs"]:
        rows = []
        for r in run["models"]:
            if "error" in r:
                error = r["error"].split("; largest ")[0]
                if not r.get("does_not_fit"):
                    error = f"error: {error}"
                rows.append([r["model"], error, *[""] * 8])
                continue
            a, f = r["activation_ram"], r["flash"]
            per_mac = "n/a" if r["instructions_per_mac"] is None else \
                f"{r['instructions_per_mac']:.2f}"
            rows.append([
                r["model"], _n(r["macs"]), _n(r["instructions_per_inference"]), per_mac,
                _x(r["vs_tflm_cmsis_nn"]), _x(r["vs_tflm_reference"]),
                f"{_n(a['total'])} ({_x(a['vs_tflm_arena'])})",
                f"{_n(f['standalone'])}",
                f"{_x(f['vs_tflm_cmsis_nn'])} / {_x(f['vs_tflm_reference'])}", _exact(r)])
        out += ["", f"### {run['board']}: {run['cpu']}", "",
                f"Baseline: {run['baseline']}.", "",
                *_table(["model", "MACs", "instructions", "instr/MAC", "vs TFLM+CMSIS-NN",
                         "vs TFLM ref", "activation RAM, bytes (vs TFLM arena)",
                         "flash, bytes", "vs TFLM flash CMSIS-NN / ref", "bit-exact"], rows)]
    return out


def cycles(doc: dict, inp: Input) -> list[str]:
    """bench_cycles_mlperf.py: estimated cycles, ours and TFLM+CMSIS-NN's, and published."""
    rows = []
    for r in doc["rows"]:
        a, c = r.get("aot", {}), r.get("cmsis_nn", {})
        exact = all(r[s]["exact"] for s in ("aot", "cmsis_nn") if s in r)
        rows.append([
            r["model"], _n(r.get("macs")), _n(a.get("instructions")), _n(a.get("cycles")),
            "n/a" if "cycles_per_mac" not in r else f"{r['cycles_per_mac']:.2f}",
            "n/a" if "ms_at_120mhz" not in r else f"{r['ms_at_120mhz']:.1f}",
            _n(c.get("instructions")), _n(c.get("cycles")),
            _x(r.get("ours_over_tflm_cmsis_nn")),
            f"{r['published_cycles'] / 1e6:g} M: {r['published_source']}",
            _x(r.get("ratio")), "yes" if exact else "NO"])
    board = doc["rows"][0]["board"] if doc["rows"] else BOARD
    return [
        "## Cycles",
        "",
        f"`aot profile` on {board}: the exact instructions of one inference (one seeded "
        "random input), the Cortex-M4 cycles the core's timing table estimates from QEMU's "
        "execution trace with zero wait states (docs/cycles.md), and the time at 120 MHz, "
        "the clock of the NUCLEO-L4R5ZI on which the best published Cortex-M4 results "
        "(MLPerf Tiny) were measured. *TFLM+CMSIS-NN* is the same model with every layer "
        "handed to CMSIS-NN (`-libs=cmsis-nn`), profiled the same way: TFLM's kernels "
        "without its interpreter (docs/performance.md). Both outputs are checked bit-exact.",
        "",
        _source(inp, doc),
        "",
        *_table(["model", "MACs", "instructions", "est. cycles", "cycles/MAC",
                 "ms @ 120 MHz", "TFLM+CMSIS-NN instructions", "TFLM+CMSIS-NN est. cycles",
                 "ours / TFLM+CMSIS-NN", "best published (cycles)", "est. / published",
                 "bit-exact"], rows),
    ]


def compile_time(doc: dict, inp: Input) -> list[str]:
    """bench_compile.py --timing: whole `aot compile` processes and their stages, cold,
    warm and unchanged, and issue 38's goals read from them."""
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_compile import timing_table  # the bench prints the same table

    s = doc["stamp"]
    load = " ".join(f"{v:.1f}" for v in s["load_average"])
    return [
        "## Compile time",
        "",
        f"`aot compile MODEL --board {doc['board']} -o DIR` in a fresh process, seconds "
        "wall (CPU, the C compilers it ran included): *cold* with an empty object cache, "
        "*warm* with the objects the cold run cached and another output folder, "
        "*unchanged* the warm command again (replayed from its record). The stages are "
        "docs/compile.md's (\"Compile time\"); *write* is the rest of the command (the "
        "artifact written, the report printed; a replay's whole work). The synthetic models "
        "(depthwise 3x3 and pointwise 1x1 int8 layers alternating) show how the time grows "
        f"with layers. Each run is the median by wall time of {_repeats(doc)} (each from an "
        f"empty cache). {s['cores']} cores, load average {load} before and "
        f"{doc.get('load_after', 'n/a')} after: read CPU time where wall time is noisy.",
        "",
        _source(inp, doc),
        "",
        *timing_table(doc["models"], doc["startup"]).splitlines(),
        "",
        *compile_goals(doc),
    ]


def _repeats(doc: dict) -> str:
    counts = {r[run].get("repeats", 1) for r in doc["models"] for run in ("cold", "warm")
              if run in r}
    n = max(counts)
    return "one run" if n == 1 else f"{n} runs"


#: Issue 38's goals, seconds of wall time on this machine (2 cores).
COLD_GOAL, UNCHANGED_GOAL, STARTUP_GOAL = 1.5, 0.5, 0.2


def compile_goals(doc: dict) -> list[str]:
    """Issue 38's goals read from the timing table: met or not, with the figures."""
    models = [r for r in doc["models"] if "layers" not in r]
    grown = sorted((r for r in doc["models"] if "layers" in r), key=lambda r: r["layers"])

    def worst(run: str) -> tuple[float, str]:
        return max((r[run]["total"][0], SHORT.get(r["model"], r["model"]))
                   for r in models if run in r)

    def met(ok: bool) -> str:
        return "met" if ok else "**not met**"

    cold, cold_model = worst("cold")
    same, same_model = worst("unchanged")
    lines = ["Issue 38's goals, read from this table:", "",
             f"- cold compile at most {COLD_GOAL} s wall: {met(cold <= COLD_GOAL)} "
             f"(slowest {cold_model}, {cold:.2f} s; "
             + ", ".join(f"{SHORT.get(r['model'], r['model'])} {r['cold']['total'][0]:.2f}"
                         for r in models) + ");",
             f"- unchanged at most {UNCHANGED_GOAL} s: {met(same <= UNCHANGED_GOAL)} "
             f"(slowest {same_model}, {same:.2f} s);",
             f"- start-up (`aot --help`) at most {STARTUP_GOAL} s: "
             f"{met(doc['startup'][0] <= STARTUP_GOAL)} ({doc['startup'][0]:.2f} s);"]
    if grown:
        def per_layer(r):  # cold CPU seconds per layer, the stages that grow with layers
            stages = r["cold"]["stages"]
            return sum(stages[k][1] for k in ("lowering", "planning", "codegen",
                                              "code size") if k in stages) / r["layers"]
        rates = [per_layer(r) for r in grown]
        lines.append("- time linear in layers: cold CPU per layer (lowering, planning, "
                     "codegen and code size) " + ", ".join(
                         f"{r['layers']} layers {v * 1000:.0f} ms" for r, v in zip(grown, rates))
                     + f": {met(max(rates) <= 1.25 * min(rates))} (within 25%).")
    else:
        lines[-1] = lines[-1][:-1] + "."
    return lines


def farm_table(doc: dict, inp: Input) -> list[str]:
    """The farm's scaling table and its source line (numbers.md, and docs/tuning.md's
    block: :data:`EMBEDS`)."""
    rows = [[r["farm"], r["boards"], _n(r["candidates"]), f"{r['per_minute']:,.0f}",
             _x(r["speedup"]), f"{r['steady_per_minute']:,.0f}", _x(r["steady_speedup"]),
             f"{1000 * r['head_cpu_seconds_per_candidate']:.2f}", r["bad"]]
            for r in doc["rows"]]
    return [_source(inp, doc), "",
            *_table(["farm", "boards", "candidates", "candidates/min", "speed-up",
                     "steady candidates/min", "steady speed-up", "head CPU ms/candidate",
                     "wrong or failed"], rows)]


def farm(doc: dict, inp: Input) -> list[str]:
    """bench_farm.py --sim: how the tuning farm scales, with simulated boards."""
    b = doc["build"]
    cores = doc["stamp"]["cores"]
    cpu = (b["lower_cpu_seconds"] + b["compile_cpu_seconds"]) / b["candidates"]
    one = doc["per_board"] / (doc["image_seconds"] + doc["per_board"] * doc["candidate_seconds"])
    load = " ".join(f"{v:.1f}" for v in doc["stamp"]["load_average"])
    lines = [
        "## Tuning farm",
        "",
        f"How `aot tune` scales with boards (docs/tuning.md, \"Scaling, shown with simulated "
        f"boards\"): budgeted sessions (`tune_model`: the {doc['tuner']} tuner, the task "
        f"scheduler, the farm, the log) of the {doc['workloads']} workloads of "
        f"{SHORT.get(doc['model'], doc['model'])}, {doc['budget']:g} s each, "
        f"{doc['per_board']} candidates per board in a batch, on simulated boards of "
        f"{doc['board']}'s kind: each image takes {doc['image_seconds']:g} s and each "
        f"candidate {doc['candidate_seconds']:g} s more of wall time while the host sleeps, as "
        "flashing and running a real board does, and the costs are fakes (unit `simulated`). "
        "The boards build nothing: this is the scaling of the measurement stage with a fixed, "
        "pre-built candidate set, the head's real work included. *local* is `--farm local` "
        "(one board in the head's process, more a worker process each), *ray* a local Ray "
        "cluster of that many boards (nodes of two). *Steady*: after the scheduler's warm-up "
        "(each workload's default config alone, then a batch of each), in which each board's "
        "worker starts, imports aot and extracts the model: on a Ray cluster a worker per "
        "board, all on this machine's cores here (on a real cluster on each node's own). "
        "Head CPU: the head process's CPU time per candidate in the steady state. Goal "
        "(issue 32): 3.5x with 4 boards, 6x with 8. The whole session's speed-up is below "
        "the steady one: its warm-up takes as long or longer with more boards (the default "
        "configs measured one at a time, the workers' starts sharing this machine's cores). "
        f"{cores} cores shared with other work, load average {load} before and "
        f"{' '.join(f'{v:.1f}' for v in doc['load_after'])} after.",
        "",
        *farm_table(doc, inp),
        "",
        f"Building what a real board measures, on this machine: lowering and compiling one "
        f"board's batch image of {b['candidates']} candidates of {doc['model']}'s first "
        f"convolution ({b['distinct']} distinct kernels, a warm object cache) took "
        f"{b['lower_seconds']:.2f} s lowering and {b['compile_seconds']:.2f} s compiling "
        f"(wall), {cpu:.2f} s of CPU per candidate: {cores} cores build at most "
        f"{60 * cores / cpu:.0f} candidates per minute, against {60 * one:.0f} that one "
        "simulated board measures. A local farm whose host builds for its boards is bound by "
        "the host's cores, not by its boards; on a Ray cluster each node builds for its own "
        "boards.",
    ]
    f = doc.get("fault")
    if f:
        lines += ["", f"A node lost mid-session: a Ray cluster of two nodes of two simulated "
                  f"boards; one node killed {f['killed_after_seconds']:.1f} s into the session "
                  "(one second into the second batch after the warm-up). The session went on "
                  f"with {f['boards_after']} boards, Ray measuring the lost chunks again: "
                  f"{_n(f['candidates'])} candidates in {f['seconds']:.1f} s, "
                  f"{f['per_minute_before']:,.0f} per minute in the batch before the kill and "
                  f"{f['per_minute_after']:,.0f} from the kill to the end (which includes the "
                  "time Ray takes to declare the node dead, by its health checks, before the "
                  f"lost chunks run again); {f['failed']} records failed, "
                  f"{f['repeated']} configs recorded twice."]
    return lines


def render(results: Path = RESULTS, allow_mixed: bool = False) -> str:
    """The text of docs/numbers.md; ReportError on a missing, unstamped or mixed input."""
    data = load(results)
    why = mixed(data)
    if why and not allow_mixed:
        raise ReportError(f"{why}; run every bench of bench/report.py at one committed "
                          "commit, or pass --allow-mixed (the page then says so)")
    own = [i for i in INPUTS if i.own_commit]
    stamps = {doc["stamp"]["commit"][:8] for name, doc in data.items()
              if name not in {i.file for i in own}}
    lines = [
        "# Numbers",
        "",
        "<!-- Generated by bench/report.py from bench/results/*.json: do not edit; "
        "regenerate instead. -->",
        "",
        "The current figures of aot, written by `bench/report.py` from the JSON the benches "
        "wrote (kept in bench/results/, so this page can be regenerated and is checked by "
        "tests/bench/test_report.py). Other pages link here instead of copying figures; "
        "figures elsewhere under a *History* heading are earlier measurements, each with "
        "its commit.",
        "",
    ]
    if why:
        lines += [f"**Mixed inputs (--allow-mixed): {why}.** Figures of different tables "
                  "may not agree with each other.", ""]
    else:
        lines += [f"Every table below was measured at commit `{stamps.pop()}`"
                  + "".join(f", except `{i.file}`'s, whose commit its table names "
                            f"({i.own_commit})" for i in own) + ".", ""]
    lines += ["To measure again: run the benches one at a time on a committed tree "
              "(they take minutes under QEMU), then `bench/report.py --collect out`:", "",
              "```sh", *(f".venv/bin/python {i.command}" for i in INPUTS),
              ".venv/bin/python bench/report.py --collect out", "```", ""]
    inputs = {i.file: i for i in INPUTS}
    lines += headline(data) + [""]
    lines += firmware([(data[f], inputs[f]) for f in ("bench_models_qemu.json",
                                                       "bench_models_qemu_silicon.json")])
    lines += [""]
    lines += cycles(data["bench_cycles_mlperf.json"], inputs["bench_cycles_mlperf.json"]) + [""]
    lines += compile_time(data["bench_compile_timing.json"],
                          inputs["bench_compile_timing.json"]) + [""]
    lines += farm(data["bench_farm.json"], inputs["bench_farm.json"])
    return "\n".join(_wrap(lines)) + "\n"


#: Tables another page must show itself (an issue asks for the table there): that page
#: holds a block between these marks, which :func:`pages` writes from the same JSON as
#: docs/numbers.md, so the page carries the generated table, never a hand copy.
EMBEDS = {"docs/tuning.md": {"farm": ("bench_farm.json", farm_table)}}
BEGIN = "<!-- bench/report.py writes this block ({}) from bench/results/: do not edit -->"
END = "<!-- end of bench/report.py's block ({}) -->"


def pages(results: Path = RESULTS, root: Path = ROOT) -> dict[Path, str]:
    """Each page of :data:`EMBEDS` with its blocks written anew; ReportError when a
    page lacks a block's marks."""
    data = load(results)
    inputs = {i.file: i for i in INPUTS}
    out = {}
    for page, blocks in EMBEDS.items():
        path = root / page
        text = path.read_text()
        for name, (file, make) in blocks.items():
            begin, end = BEGIN.format(name), END.format(name)
            if text.count(begin) != 1 or text.count(end) != 1:
                raise ReportError(f"{page} has no block '{name}' (a line `{begin}` and a "
                                  f"line `{end}`) for bench/report.py to write")
            head, rest = text.split(begin + "\n")
            _, tail = rest.split(end)
            body = "\n".join(_wrap(make(data[file], inputs[file])))
            text = f"{head}{begin}\n{body}\n{end}{tail}"
        out[path] = text
    return out


def _wrap(lines: list[str], width: int = 100) -> list[str]:
    """Prose wrapped as the other pages are; tables, headings and code kept whole."""
    out, fenced = [], False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        keep = fenced or line.startswith(("|", "#", "```", "<!--")) or len(line) <= width
        out += [line] if keep else textwrap.wrap(line, width, break_long_words=False,
                                                 break_on_hyphens=False)
    return out


def collect(source: Path, results: Path) -> None:
    """Copy the inputs from where the benches wrote them; ReportError if one is missing."""
    missing = [i for i in INPUTS if not (source / i.file).is_file()]
    if missing:
        raise ReportError(f"{source / missing[0].file} is missing: run "
                          f"`.venv/bin/python {missing[0].command}` first")
    results.mkdir(parents=True, exist_ok=True)
    for i in INPUTS:
        shutil.copyfile(source / i.file, results / i.file)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collect", type=Path, metavar="DIR",
                    help="first copy the inputs from DIR (where the benches wrote them: out)")
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--output", type=Path, default=OUTPUT)
    ap.add_argument("--allow-mixed", action="store_true",
                    help="write the page from inputs of different commits, saying so")
    ap.add_argument("--no-pages", dest="pages", action="store_false",
                    help="write (or --check) docs/numbers.md only, not the blocks other "
                    "pages carry (EMBEDS)")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 when --output is not what would be written")
    args = ap.parse_args(argv)
    try:
        if args.collect:
            collect(args.collect, args.results)
        text = render(args.results, args.allow_mixed)
    except ReportError as err:
        print(f"report.py: error: {err}", file=sys.stderr)
        return 2
    try:
        written = {args.output: text, **(pages(args.results) if args.pages else {})}
    except ReportError as err:
        print(f"report.py: error: {err}", file=sys.stderr)
        return 2
    if args.check:
        stale = [p for p, t in written.items() if not p.is_file() or p.read_text() != t]
        for p in stale:
            print(f"{p} is not what bench/report.py writes from {args.results}: "
                  "run `.venv/bin/python bench/report.py`", file=sys.stderr)
        return 1 if stale else 0
    for p, t in written.items():
        p.write_text(t)
        print(f"wrote {p}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
