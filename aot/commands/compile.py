"""``aot compile MODEL (--target T | --board TAG) -o DIR``: write the artifact.

Prints the sizes (workspace, constants, code) and, with ``--memory-report``,
the memory planner's table and chart.  docs/compile.md describes the
artifact and how firmware builds use it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
import warnings
from pathlib import Path

from aot.commands.build import default_cache_dir
from aot.commands.replay import CompileRecord, Tee

# The compiler, the tuner and the chart are imported where used: `aot --help` and the
# commands that only share this module's arguments do not load them (aot.cli builds the
# arguments of the command it runs only).

NAME = "compile"
HELP = "compile a model to C: an artifact with sources, header, metadata and build files"


def add_target_arguments(parser: argparse.ArgumentParser, *, board_default=None) -> None:
    """``--target`` and ``--board``; given together, the target refines the
    board's (:func:`target_from_args`).  ``board_default`` is the board when
    neither is given (the caller applies it: ``args.board`` stays None)."""
    parser.add_argument("--target", help="a target string, e.g. 'c -mcpu=cortex-m4'; with "
                        "--board it refines the board's target, e.g. adds -libs=cmsis-nn "
                        "(docs/targets.md)")
    parser.add_argument("--board",
                        help="a board tag, e.g. qemu/mps2-an386 (see `aot boards`)"
                        + (f"; default {board_default}" if board_default else ""))
    add_cores_argument(parser)
    add_codegen_argument(parser)


def add_cores_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cores", type=int, metavar="N",
                        help="cores of the board to run the model on (default 1: core 0; 2 on "
                        "qemu/mps2-an521 and raspberrypi/pico splits the layers across both, "
                        "docs/targets.md)")


def check_cores_argument(args: argparse.Namespace, board=None) -> None:
    """Refuse a ``--cores`` the board lacks or compilation would not honour."""
    from aot.target import check_cores, load_board

    if getattr(args, "cores", None) is None:
        return
    if board is None and args.board is not None:
        board = load_board(args.board)
    check_cores(board, args.cores)


def cores_from_args(args: argparse.Namespace, board) -> int:
    """The cores the model runs on: ``--cores``, else as many as a composite
    ``--target`` names (:func:`aot.target.board_devices`), else 1."""
    from aot.target import Target, board_devices

    if getattr(args, "cores", None) is not None:
        return args.cores
    target = getattr(args, "target", None)
    if target is not None and Target(target).kind == "composite":
        return board_devices(Target(target), board)[2]
    return 1


def target_from_args(args: argparse.Namespace, default_board: str | None = None):
    """The target and board (or None) that ``--board`` and ``--target`` name together,
    resolved once (:func:`aot.compile.resolve_target`; before ``--codegen``): a board,
    a target, or the board's target refined by ``--target``; ``default_board`` when
    neither is given.  ``--cores`` is checked against the board."""
    from aot.compile import CompileError, resolve_target

    if args.board is None and args.target is None:
        if default_board is None:
            raise CompileError("give --board (a board tag, see `aot boards`) or --target "
                               "(a target string, docs/targets.md)")
        target, board = resolve_target(default_board)
    elif args.board is not None:
        target, board = resolve_target(args.board, refine=args.target)
    else:
        target, board = resolve_target(args.target)
    check_cores_argument(args, board)
    return target, board


def add_codegen_argument(parser: argparse.ArgumentParser) -> None:
    from aot.target import CODEGENS

    parser.add_argument("--codegen", choices=CODEGENS,
                        help="the code generator of the kernels (default: the board's or "
                        "target's kind, c for the board records); llvm makes one object per "
                        "kernel for a Cortex-M or RISC-V board (docs/codegen.md)")


def _input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """``NAME=1,3,224,224`` -> (name, dims); sizes are checked against the model later."""
    name, sep, dims = text.rpartition("=")
    try:
        if not sep or not name or not dims:
            raise ValueError
        return name, tuple(int(d) for d in dims.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected NAME=D0,D1,... with integer sizes, e.g. input=1,3,224,224"
        ) from None


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """How the model file is read: shared by every command that loads one."""
    parser.add_argument("--input-shape", action="append", type=_input_shape, default=[],
                        metavar="NAME=D0,D1,...",
                        help="fix the shape of the input NAME where the model leaves sizes "
                        "open (ONNX dim_param or unknown); repeatable, one per input")


def input_shapes(args: argparse.Namespace) -> dict[str, tuple[int, ...]] | None:
    """The ``--input-shape`` options as ``load_model``'s ``input_shapes``."""
    from aot.frontend.errors import ModelError

    given: dict[str, tuple[int, ...]] = {}
    for name, dims in args.input_shape:
        if name in given:
            raise ModelError(f"--input-shape gives the input {name!r} twice")
        given[name] = dims
    return given or None


def add_compile_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_arguments(parser)
    parser.add_argument("--name", default="model",
                        help="C name prefix of the generated code (default: model)")
    parser.add_argument("--opt-level", type=int, default=2, help="pass opt level (0-3)")
    parser.add_argument("--disabled-pass", action="append", default=[], metavar="PASS",
                        help="turn a graph pass off (repeatable)")
    parser.add_argument("--dump-after", metavar="PASS",
                        help="print the graph after the pass PASS")
    parser.add_argument("--io-in-workspace", action=argparse.BooleanOptionalAction,
                        default=None,
                        help="place inputs and outputs inside the workspace (the default, as "
                        "TFLM's arena); --no-io-in-workspace keeps them in the caller's buffers")
    parser.add_argument("--no-inplace", action="store_const", const=False, default=None,
                        dest="inplace",
                        help="never let a kernel write its output over an input that dies "
                        "there, in place or overlapping (more workspace; see docs/memory.md)")
    parser.add_argument("--no-overlap", action="store_const", const=False, default=None,
                        dest="overlap",
                        help="keep in-place writes but never let an output overlap part of an "
                        "input (the overlap each kernel's loop nest proves; docs/memory.md)")
    parser.add_argument("--memory-budget", metavar="BYTES",
                        help="RAM the model may own (workspace with scratch, caller i/o, "
                        "state): bytes or K/M, e.g. 64K. Picks the plan with the fewest "
                        "instructions that fits among the choices the options above leave "
                        "open, or fails naming the smallest reachable (docs/memory.md)")
    parser.add_argument("--memory-regions", metavar="NAME[:BYTES][+const][+stack],...",
                        help="split the workspace over the board's data memories, e.g. "
                        "ram:48K,dtcm: the hottest buffers in the fastest (the record's speed "
                        "ranks); +const also copies the hottest kernels' constants there at "
                        "start-up, +stack puts the firmware's stack there; the artifact adds a "
                        "linker script for them (docs/memory.md)")
    parser.add_argument("--no-placement", action="store_false", dest="placement",
                        help="keep every constant in flash; by default, on a board whose flash "
                        "reads wait, the constants read most per byte are copied to the RAM "
                        "the plan leaves at start-up (docs/memory.md \"Placement\"); "
                        "--memory-regions replaces the default")
    parser.add_argument("--patches", metavar="off|auto|RxC|stream[:T]", default=None,
                        help="run the first layers as a stage: by default a stream stage "
                        "(bands of rows, no recomputation) when one lowers the RAM within 5%% "
                        "more work; off (no stage), auto (a patch stage within 5%% more MACs "
                        "that lowers the peak, else none), a patch grid such as 3x3 "
                        "(MCUNetV2), stream or stream:T (bands of T rows) (docs/memory.md)")
    parser.add_argument("--cmsis-nn", metavar="PATH", dest="cmsis_nn",
                        help="Arm's CMSIS-NN source tree, used in place by -libs=cmsis-nn "
                        "(e.g. --board qemu/mps2-an386 --target 'c -libs=cmsis-nn'; "
                        "docs/byoc.md); default: $CMSIS_NN_PATH")
    add_tuning_arguments(parser)


def add_tuning_arguments(parser: argparse.ArgumentParser) -> None:
    """``--tuning-records`` and ``--no-tuned-defaults``: the records a command compiles with
    (:func:`kernel_library`)."""
    parser.add_argument("--tuning-records", metavar="FILE", action="append",
                        help="an `aot tune` log: compile each tuned workload with its best "
                        "config for this target (repeatable: the fastest record of any log "
                        "wins; this model's own records before another model's); without it, "
                        "the records aot ships for the target's core apply (docs/tuning.md)")
    parser.add_argument("--no-tuned-defaults", dest="tuned_defaults", action="store_false",
                        help="without --tuning-records, compile with the library's schedules "
                        "instead of the pre-tuned records aot ships for the target's core")


class _PrintPasses(argparse.Action):
    """``--print-passes``: the graph passes in pipeline order, then exit."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from aot.passes import DEFAULT_PIPELINE

        width = max(len(p.name) for p in DEFAULT_PIPELINE)
        for p in DEFAULT_PIPELINE:
            first = p.doc.split("\n", 1)[0]
            print(f"{p.name:<{width}}  level {p.opt_level}  {first}")
        parser.exit()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from aot.export.sdk import SDK_PROJECTS

    parser.add_argument("--print-passes", action=_PrintPasses,
                        help="list the graph passes in pipeline order (names for "
                        "--dump-after and --disabled-pass) and exit")
    parser.add_argument("model", nargs="+",
                        help="a .tflite (or .onnx) model file; several make one artifact "
                        "whose models share one workspace (a group, docs/memory.md)")
    add_target_arguments(parser)
    parser.add_argument("-o", "--output", required=True, help="the artifact directory")
    parser.add_argument("--tar", action="store_true",
                        help="also write DIR.tar with the same files")
    parser.add_argument("--project", choices=sorted(SDK_PROJECTS),
                        help="lay DIR out for a vendor SDK: an ESP-IDF component or a Pico "
                        "SDK application holding the artifact in model/ (docs/integration.md)")
    add_compile_arguments(parser)
    parser.add_argument("--model-name", action="append", default=[], metavar="NAME",
                        help="with several models: the C prefix of each, in order (default: "
                        "each file's stem); --name is then the group's prefix")
    parser.add_argument("--no-code-size", action="store_false", dest="measure_code",
                        help="do not compile the generated C to measure its code size "
                        "(reported as \"code size not measured\")")
    parser.add_argument("--memory-report", action="store_true",
                        help="print the memory plan as a table and a chart, and draw it in "
                        "memory.svg beside the artifact (docs/memory.md)")
    parser.add_argument("--choose-layers", action="store_true",
                        help="per layer, keep whichever of aot's kernels and the -libs "
                        "codegens runs faster, measured on the board (builds and runs both "
                        "firmware images; docs/byoc.md)")
    parser.add_argument("--layer-costs", metavar="FILE",
                        help="with --choose-layers: write the measured costs to FILE; without: "
                        "apply the choice FILE holds (measured for this model and target) "
                        "without measuring again")


def codegen_options(args: argparse.Namespace, target) -> dict:
    """The external codegens' options given on the command line: ``--cmsis-nn``,
    else ``$CMSIS_NN_PATH`` when ``target``'s -libs names cmsis-nn."""
    if args.cmsis_nn:
        return {"cmsis-nn": {"path": args.cmsis_nn}}
    if os.environ.get("CMSIS_NN_PATH") and "cmsis-nn" in (target.attrs.get("libs") or ()):
        return {"cmsis-nn": {"path": os.environ["CMSIS_NN_PATH"]}}
    return {}


def options_from_args(args: argparse.Namespace, target, board, **options):
    """The compile options of the command line (:class:`aot.compile.CompileOptions`),
    built once for the ``target`` and ``board`` of :func:`target_from_args` (``--codegen``
    switches the target's kind); ``options`` are those the command sets itself
    (``kernel_library``, ``measure_code``, ...)."""
    from aot.compile import CompileOptions, switch_codegen

    return CompileOptions.for_target(
        switch_codegen(target, getattr(args, "codegen", None)), board, name=args.name,
        input_shapes=input_shapes(args), opt_level=args.opt_level,
        disabled_pass=args.disabled_pass, dump_after=args.dump_after,
        io_in_workspace=args.io_in_workspace, inplace=args.inplace, overlap=args.overlap,
        memory_budget=args.memory_budget, memory_regions=args.memory_regions,
        patches=args.patches, placement=args.placement,
        codegen_options=codegen_options(args, target), cores=cores_from_args(args, board),
        **options)


def _text_stream(args: argparse.Namespace):
    """Where dumps and tables go: stdout, or stderr under ``--json`` (stdout then
    holds the one JSON document)."""
    return sys.stderr if getattr(args, "json", False) else sys.stdout


def tuning_json(tuned) -> dict | None:
    if tuned is None:
        return None
    return {"applied": len(tuned.applied), "tunable": len(tuned.tunable), "stale": tuned.stale,
            "shipped": tuned.shipped.to_json() if tuned.shipped is not None else None}


def describe_tuned(tuned) -> str | None:
    """The report's line on the records a compilation used (None: the library's schedules)."""
    if tuned is None:
        return None
    if tuned.shipped is None:
        return (f"tuning records applied to {len(tuned.applied)} of {len(tuned.tunable)} "
                "tunable kernels")
    if not tuned.applied:
        return None
    return (f"pre-tuned records applied to {len(tuned.applied)} of {len(tuned.tunable)} "
            f"tunable kernels ({tuned.shipped.describe()}; --no-tuned-defaults: the "
            "library's schedules)")


def compile_from_args(args: argparse.Namespace, target, board, kernel_library=None):
    """Compile ``args.model`` for the ``target`` and ``board`` of :func:`target_from_args`
    as the command line says."""
    from aot.compile import compile_model

    if getattr(args, "choose_layers", False):
        return choose_from_args(args, target, kernel_library)
    options = options_from_args(args, target, board, dump_stream=_text_stream(args),
                                kernel_library=kernel_library,
                                measure_code=args.measure_code, cache_dir=default_cache_dir())
    costs = getattr(args, "layer_costs", None)
    if costs:
        from aot.tune.layers import read_costs
        options = dataclasses.replace(options,
                                      keep_with_aot=read_costs(costs, options.target))
    compiled = compile_model(args.model, options)
    if costs:
        from aot.tune.layers import check_costs_match
        check_costs_match(costs, compiled)
    return compiled


def choose_from_args(args: argparse.Namespace, target, kernel_library=None):
    """``--choose-layers``: measure both kernel libraries per layer on the board
    (:func:`aot.tune.layers.choose_layers`), print the table, return the choice."""
    from aot.compile import CompileError
    from aot.tune.layers import choose_layers, write_costs

    if args.board is None or args.target is None:
        raise CompileError("--choose-layers measures aot's kernels against the -libs codegens "
                           "on a board: give --board and --target 'c -libs=cmsis-nn'")
    if args.codegen is not None:
        raise CompileError("not supported yet: --choose-layers with --codegen")
    if args.patches not in (None, "off"):
        raise CompileError("not supported yet: --choose-layers with --patches")
    choice = choose_layers(args.model, args.board, args.target,
                           codegen_options=codegen_options(args, target),
                           cache_dir=default_cache_dir(), name=args.name,
                           input_shapes=input_shapes(args), opt_level=args.opt_level,
                           disabled_pass=args.disabled_pass,
                           io_in_workspace=args.io_in_workspace, inplace=args.inplace,
                           overlap=args.overlap, memory_budget=args.memory_budget,
                             memory_regions=args.memory_regions,
                           kernel_library=kernel_library, measure_code=args.measure_code)
    out = _text_stream(args)
    print("per-layer choice, each kernel run alone on the board (instructions or cycles):",
          file=out)
    print(choice.table(), file=out)
    if args.layer_costs:
        write_costs(choice, args.layer_costs)
        print(f"  costs written to {args.layer_costs} (--layer-costs without --choose-layers "
              "applies them)", file=out)
    return choice.compiled


def format_layers(compiled) -> str:
    """Who implements each layer (printed when the target names ``-libs``)."""
    layers = compiled.layers()
    by: dict[str, int] = {}
    for layer in layers:
        by[layer["by"]] = by.get(layer["by"], 0) + 1
    lines = ["  layers: " + ", ".join(f"{n} by {who}" for who, n in by.items())]
    width = max(len(", ".join(layer["nodes"])) for layer in layers) if layers else 0
    for layer in layers:
        note = f"  ({'; '.join(layer['declined'])})" if "declined" in layer else ""
        lines.append(f"    {', '.join(layer['nodes']):<{width}}  {'+'.join(layer['ops'])}: "
                     f"{layer['by']}{note}")
    return "\n".join(lines) + "\n"


def kernel_library(args: argparse.Namespace, target, board, model=None, shapes=None):
    """The records a command compiles with for ``target`` (on ``board`` or None): the
    user's ``--tuning-records`` (:func:`tuned_kernels`), else the ones aot ships for the
    target's core (:mod:`aot.tune.pretuned`) unless ``--no-tuned-defaults``; None: the
    library's own schedules."""
    if args.tuning_records:
        return tuned_kernels(args.tuning_records, target, board, model, shapes)
    if not args.tuned_defaults:
        return None
    from aot.compile import switch_codegen
    from aot.tune.library import TunedKernels

    # the code generator decides the code too: an llvm compile takes none of gcc's records
    tuned, notes = TunedKernels.shipped_for(switch_codegen(target,
                                                           getattr(args, "codegen", None)))
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return tuned


def tuned_kernels(path, target, board, model=None, shapes=None):
    """The kernel library with the records of ``path`` (a log or a list of logs)
    for ``target`` (on ``board`` or None) applied, ``model``'s own records first (the
    file, with ``shapes`` the graph they fix, as ``aot tune --input-shape`` names it;
    None for a group of models: the fastest record of any model); prints the notes
    about records made for other targets or taken from another model."""
    from aot.frontend import load_model
    from aot.tune.library import TunedKernels

    if model is not None and shapes:
        model = load_model(model, shapes)
    tuned, notes = TunedKernels.from_log(path, target, model=model,
                                         board=board.tag if board is not None else None)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return tuned


def group_from_args(args: argparse.Namespace, target, board, kernel_library=None):
    """Several model files: one group sharing one workspace (:func:`compile_group`) for
    the ``target`` and ``board`` of :func:`target_from_args`."""
    from aot.compile import CompileError, compile_group

    for option, given in (("--project", args.project), ("--choose-layers", args.choose_layers),
                          ("--layer-costs", args.layer_costs),
                          ("--input-shape", args.input_shape),
                          ("--memory-budget", args.memory_budget),
                          ("--patches", args.patches not in (None, "off"))):
        if given:
            raise CompileError(f"not supported yet: {option} with several models (a model "
                               "group); compile the models one by one to use it")
    names = args.model_name or None
    if names is not None and len(names) != len(args.model):
        raise CompileError(f"{len(names)} --model-name for {len(args.model)} models: give "
                           "one per model, in the order of the model files")
    options = options_from_args(args, target, board, dump_stream=_text_stream(args),
                                kernel_library=kernel_library,
                                measure_code=args.measure_code, cache_dir=default_cache_dir())
    return compile_group(args.model, options, names=names, name=args.name)


def run_group(args: argparse.Namespace) -> int:
    target, board = target_from_args(args)
    tuned = kernel_library(args, target, board)
    group = group_from_args(args, target, board, tuned)
    path = group.write(args.output, tar=args.tar)
    where = group.board.tag if group.board else str(group.target)
    charts = {}
    if args.memory_report:
        from aot.executor import format_memory_report
        from aot.executor.memory_chart import memory_svg

        for m in group.models:
            chart = Path(path) / f"memory_{m.name}.svg" if Path(path).is_dir() else \
                Path(path).with_suffix(f".memory_{m.name}.svg")
            chart.write_text(memory_svg(m.plan, f"{m.graph.name} ({m.name}) on {where}: "
                                        f"{m.plan.workspace_bytes:,}-byte workspace"))
            charts[m.name] = str(chart)
            if not args.json:
                print(f"{m.name} ({m.graph.name}):")
                print(format_memory_report(m.plan, constants=m.sizes.constants), end="")
                print(f"memory chart: {chart}")
    if args.json:
        print(json.dumps({
            "models": [{"name": m.name, "model": m.graph.name, "sizes": m.sizes.to_json(),
                        "memory_chart": charts.get(m.name)} for m in group.models],
            "target": str(group.target), "board": group.board.tag if group.board else None,
            "output": str(path), "workspace": f"{group.name}_workspace",
            "sizes": group.sizes.to_json(),
            "regions": group.metadata()["group"].get("regions", {}),
            "tuning_records": tuning_json(tuned)}, indent=2))
        return 0
    print(f"compiled {len(group.models)} models for {where} into {path}, sharing "
          f"{group.name}_workspace")
    for m in group.models:
        print(f"  {m.name} ({m.graph.name}): {m.sizes}")
    separate = sum(m.sizes.workspace for m in group.models)
    print(f"  group: {group.sizes}")
    print(f"  shared workspace {group.sizes.workspace} bytes instead of {separate} in "
          f"separate workspaces")
    shared = group.metadata()["group"].get("regions", {})
    if shared:
        print("  shared region arrays: " + ", ".join(
            f"{r['symbol']} {r['bytes']} bytes" for r in shared.values())
              + f"; link with codegen/{group.name}_regions.ld after the port's script")
    if describe_tuned(tuned):
        print(f"  {describe_tuned(tuned)}")
    return 0


def run(args: argparse.Namespace) -> int:
    if isinstance(args.model, list):
        if len(args.model) > 1:
            return run_group(args)
        if args.model_name:
            from aot.compile import CompileError
            raise CompileError("--model-name names the models of a group (several model "
                               "files); for one model use --name")
        args.model = args.model[0]
    # Nothing changed since the last compile into this folder: print its report
    # (aot.commands.replay).
    record = CompileRecord.of(args, default_cache_dir())
    if record is None:
        return run_one(args)
    replayed = record.replay()
    if replayed is not None:
        print(replayed, end="")
        return 0
    out = Tee(sys.stdout)
    with warnings.catch_warnings(record=True) as notes, contextlib.redirect_stdout(out):
        status = run_one(args)
    for n in notes:  # printed as the command line prints notes; not recorded
        warnings.showwarning(n.message, n.category, n.filename, n.lineno)
    if status == 0 and not notes:
        record.save(out.text)
    return status


def run_one(args: argparse.Namespace) -> int:
    """Compile one model (``args.model``) and print its report."""
    from aot.compile import CompileError

    target, board = target_from_args(args)
    tuned = kernel_library(args, target, board, args.model, input_shapes(args))
    compiled = compile_from_args(args, target, board, tuned)
    for note in tuned.stale if tuned is not None else ():
        print(f"note: {note}", file=sys.stderr)
    if args.project and args.tar:
        raise CompileError("--tar writes an artifact's archive; with --project, archive the "
                           "project folder yourself")
    if args.project and compiled.llvm is not None:
        raise CompileError(f"not supported yet: --project {args.project} with the llvm "
                           "codegen (the SDK layouts build C sources only); drop --project "
                           "and link the artifact's objects, or use --codegen c")
    if args.project:
        from aot.export.sdk import write_sdk_project

        path = write_sdk_project(args.project, args.output, compiled.name, compiled.files,
                                 compiled.metadata())
    else:
        path = compiled.write(args.output, tar=args.tar)
    where = compiled.board.tag if compiled.board else str(compiled.target)
    chart = None
    if args.memory_report:  # the chart's and the report's modules only here
        from aot.executor import format_memory_report
        from aot.executor.memory_chart import memory_svg

        chart = Path(path) / "memory.svg" if Path(path).is_dir() else \
            Path(path).with_suffix(".memory.svg")
        chart.write_text(memory_svg(compiled.plan, f"{compiled.graph.name} on {where}: "
                                    f"{compiled.plan.workspace_bytes:,}-byte workspace"))
        if not args.json:
            print(format_memory_report(compiled.plan, constants=compiled.sizes.constants), end="")
            print(f"memory chart: {chart}")
    if args.json:
        plan = compiled.plan
        print(json.dumps({
            "model": compiled.graph.name, "name": compiled.name,
            "target": str(compiled.target),
            "board": compiled.board.tag if compiled.board else None,
            "output": str(path), "project": args.project, "sizes": compiled.sizes.to_json(),
            "memory_budget": compiled.budget.to_json() if compiled.budget else None,
            "patches": compiled.patches.to_json() if compiled.patches else None,
            "memory_regions": dict(plan.regions), "region_constants": dict(
                plan.region_constants),
            "placement": compiled.placement.to_json() if compiled.placement else None,
            "memory_chart": str(chart) if chart else None,
            "layers": compiled.layers() if compiled.target.attrs.get("libs") else None,
            "tuning_records": tuning_json(tuned)}, indent=2))
        return 0
    print(f"compiled {compiled.graph.name} for {where} into {path}")
    hand_written = [f"{k.name} ({', '.join(dict.fromkeys(k.op_names))})"
                    for k in compiled.kernels if compiled.llvm is not None and k.func is None]
    if hand_written:
        print(f"  note: C kernels of an external codegen, compiled by the board's compiler "
              f"beside the LLVM objects: {', '.join(hand_written)}")
    print(f"  {compiled.sizes}")
    if compiled.budget is not None:
        print(f"  {compiled.budget.summary()}")
    if compiled.patches is not None:
        print(f"  {compiled.patches.summary()}")
    if compiled.plan.region_constants and compiled.placement is None:  # --memory-regions
        moved = [k.name for k in compiled.kernels if k.constant_section]
        print("  constants copied at start-up: " + ", ".join(
            f"{n} bytes to {r}" for r, n in compiled.plan.region_constants.items())
              + f" (the kernels {', '.join(moved)})")
    for line in compiled.placement.lines() if compiled.placement else ():
        print(f"  {line}")
    if compiled.plan.stack_region:
        print(f"  stack: {compiled.plan.stack_bytes} bytes in {compiled.plan.stack_region}")
    if compiled.plan.regions:
        speeds = compiled.plan.region_speeds
        print(f"  memory regions: ram (the workspace) {compiled.plan.workspace_bytes} bytes, "
              + ", ".join(f"{r} {n} bytes (section .aot_region.{r}"
                          + (f", speed {speeds[r]})" if speeds.get(r) else ")")
                          for r, n in compiled.plan.regions.items())
              + f"; link with codegen/{compiled.name}_regions.ld after the port's script")
    if compiled.target.attrs.get("libs"):
        print(format_layers(compiled), end="")
    if describe_tuned(tuned):
        print(f"  {describe_tuned(tuned)}")
    return 0
