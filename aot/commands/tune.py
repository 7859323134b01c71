"""``aot tune MODEL --board TAG --trials N --log FILE``: tune kernels on the device.

Measures candidate schedules of every distinct tunable workload of the
model on the board (QEMU, the host, or a real board on ``--port``),
appending each result to the log; a log that already holds results for
the board's target resumes the session; ``--tuning-records`` starts from
another model's log (shared workloads).  ``aot compile --tuning-records
FILE`` then compiles with the best record per workload.  docs/tuning.md
describes the search spaces, the measurement and the records.
"""

from __future__ import annotations

import argparse
import json
import sys

from typing import TYPE_CHECKING

from aot.commands.compile import add_model_arguments, input_shapes
from aot.tune.errors import TuneError

if TYPE_CHECKING:
    from aot.tune.session import Progress

NAME = "tune"
HELP = "tune the model's kernels on a board (QEMU or real) and write tuning records"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # The tuner's modules: loaded for `aot tune` only (aot.cli builds the arguments
    # of the command it runs).
    from aot.tune.measure import COSTS
    from aot.tune.session import LOADERS, TUNER_NAMES

    parser.add_argument("model", help="a .tflite (or .onnx) model file")
    parser.add_argument("--board", required=True, help="a board tag, e.g. qemu/mps2-an386")
    parser.add_argument("--port", help="serial port of a real board, e.g. /dev/ttyACM0")
    parser.add_argument("--runner", help="flash runner (default: the board's first); every "
                        "batch (or workload, with the RAM loader) is one image, so the runner "
                        "must flash")
    parser.add_argument("--loader", choices=LOADERS, default="auto",
                        help="how candidates reach the device: 'ram' loads each over the RPC "
                        "into the RAM of one image per workload, 'image' builds one image per "
                        "batch; 'auto' (default) is 'ram' on real boards that declare executable "
                        "RAM (memory.ram_code_bytes), 'image' on emulated ones (a QEMU restart "
                        "costs less than its slow UART)")
    parser.add_argument("--farm", metavar="local|ray://HOST:PORT",
                        help="measure on several boards at once: 'local' runs --boards QEMU "
                        "(or host) boards in a process pool on this machine; ray://HOST:PORT "
                        "runs on the boards of a Ray cluster whose nodes declare the custom "
                        "resource board:<TAG> (docs/tuning.md)")
    parser.add_argument("--boards", metavar="N|TAG@PORT[#PROBE],...",
                        help="boards measuring in parallel (default: 1 without --farm, 2 with "
                        "--farm local, every board of the tag a Ray cluster declares); real "
                        "boards by serial port, e.g. st/nucleo-l4r5zi@/dev/ttyACM0,"
                        "st/nucleo-l4r5zi@/dev/ttyACM1 (each flashed through the probe on "
                        "that USB port, or #PROBE's serial number; docs/tuning.md)")
    parser.add_argument("--trials", type=int,
                        help="configs to measure per workload (the default config included); "
                        "with --budget, at most that many")
    parser.add_argument("--budget", metavar="TIME",
                        help="time for the whole model, e.g. 20m, 90s, 1h: a scheduler gives "
                        "more trials to the workloads that take more of the model's time")
    parser.add_argument("--log", required=True,
                        help="JSON-lines tuning log: appended to, and resumed from (this "
                        "model's records only: a log may be shared by models)")
    parser.add_argument("--tuning-records", metavar="FILE", action="append",
                        help="start from another model's log (repeatable): its records of "
                        "workloads this model shares (same operators, attributes, shapes and "
                        "dtypes; see docs/tuning.md) are not measured again, except the default "
                        "config and the 3 fastest, confirmed on this model; read, never "
                        "written; the --log itself imports its other models' records)")
    parser.add_argument("--tuner", choices=TUNER_NAMES, default="evolution",
                        help="search strategy (default: evolution); 'auto' searches schedules "
                        "generated from each kernel's loop nest, guided by a learned cost model")
    parser.add_argument("--cost", choices=COSTS, default=None,
                        help="what a candidate costs (default: cycles on a board whose memory "
                        "waits, such as st/nucleo-l4r5zi's flash, else instructions): "
                        "instructions counted on the device (exact under QEMU), or 'cycles': "
                        "estimated Cortex-M cycles "
                        "of its runs traced under QEMU, priced as aot profile prices the "
                        "board (its core table and memory model: flash wait states, caches; "
                        "--loader image); a real board is estimated on its trace board unless "
                        "--port, --boards TAG@PORT or a --runner other than qemu names the "
                        "device, whose DWT cycle counter then measures; records of another "
                        "kind or board's memory in --log are ignored (docs/tuning.md)")
    parser.add_argument("--batch", type=int, default=16,
                        help="candidates per firmware image (default: 16)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed runs per candidate; the fastest counts (default: 3); "
                        "with --cost cycles on QEMU the estimate comes from one more, traced "
                        "run (it is the same for every run)")
    parser.add_argument("--early-stopping", type=int, metavar="N",
                        help="stop a workload after N trials without a better config")
    parser.add_argument("--workload", action="append", metavar="TEXT",
                        help="tune only workloads whose key or description contains TEXT")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random choices")
    add_model_arguments(parser)


def _printer(stream):
    tty = stream.isatty()

    def show(p: Progress) -> None:
        text = p.line()
        if tty and p.budget is None:
            stream.write("\r\033[K" + text + ("\n" if p.trial >= p.trials else ""))
        else:
            stream.write(text + "\n")
        stream.flush()
    return show


def parse_budget(text: str) -> float:
    """Seconds in ``90s``, ``20m``, ``1.5h`` or a plain number of seconds."""
    units = {"s": 1.0, "m": 60.0, "h": 3600.0}
    value, scale = (text[:-1], units[text[-1]]) if text and text[-1] in units else (text, 1.0)
    try:
        seconds = float(value) * scale
    except ValueError:
        raise TuneError(f"--budget {text!r} is not a time: use e.g. 20m, 90s or 1h") from None
    if seconds <= 0:
        raise TuneError(f"--budget must be positive, not {text!r}")
    return seconds


def run(args: argparse.Namespace) -> int:
    from aot.frontend import load_model
    from aot.tune.farm import parse_boards
    from aot.tune.records import unit_name
    from aot.tune.session import TuneOptions, tune_model

    if args.trials is None and args.budget is None:
        raise TuneError("give --trials (configs per workload) or --budget (time for the "
                        "whole model, e.g. --budget 20m)")
    if (args.trials is not None and args.trials < 1) or args.batch < 1 or args.repeats < 1:
        raise TuneError("--trials, --batch and --repeats must be at least 1")
    budget = parse_budget(args.budget) if args.budget is not None else None
    boards = parse_boards(args.boards) if args.boards is not None else None
    shapes = input_shapes(args)
    model = load_model(args.model, shapes) if shapes else args.model
    options = TuneOptions.build(args.board, trials=args.trials, log=args.log,
                                tuner=args.tuner, budget=budget, cost=args.cost,
                                batch_size=args.batch, repeats=args.repeats,
                                early_stopping=args.early_stopping, runner=args.runner,
                                serial_port=args.port, seed=args.seed, only=args.workload,
                                loader=args.loader, farm=args.farm, boards=boards,
                                tuning_records=args.tuning_records,
                                progress=_printer(sys.stderr))
    report = tune_model(model, options)
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    if args.json:
        print(json.dumps({
            "model": str(args.model), "board": args.board, "log": str(args.log),
            "loader": report.loader, "boards": report.boards, "measured": report.measured,
            "seconds": report.seconds, "per_minute": report.per_minute,
            "overrun_seconds": report.overrun, "unit": report.unit, "notes": report.notes,
            "workloads": [{"key": w.key, "description": w.description, "groups": w.groups,
                           "trials": w.trials, "failed": w.failed, "imported": w.imported,
                           "default_cost": w.default_cost, "best_cost": w.best_cost,
                           "best_config": w.best_config} for w in report.workloads]},
            indent=2, default=str))
        return 0
    how = "loaded into RAM" if report.loader == "ram" else "one image per batch"
    if report.boards > 1:
        how += f", {report.boards} boards"
    unit = unit_name(report.unit) if report.unit else "the board timer's units"
    print(f"tuned {len(report.workloads)} workloads: {report.measured} candidates ({how}) in "
          f"{report.seconds:.1f} s ({report.per_minute:.0f} per minute); log {args.log}; "
          f"costs in {unit}")
    for w in report.workloads:
        if w.best_cost is None and w.trials == 0:
            print(f"  {w.description}: not measured (the --budget ran out first)")
            continue
        if w.best_cost is None:
            print(f"  {w.description}: no candidate ran correctly ({w.failed} failed)")
            continue
        ratio = f"{w.best_cost / w.default_cost:.3f}x" if w.default_cost else "n/a"
        imported = f" ({w.imported} imported)" if w.imported else ""
        print(f"  {w.description} (x{len(w.groups)}): {w.default_cost} -> {w.best_cost} "
              f"({ratio}) after {w.trials} trials{imported}, {w.failed} failed; "
              f"best {w.best_config}")
    return 0
