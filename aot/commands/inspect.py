"""``aot inspect MODEL``: what a model contains and what it costs.

Prints inputs and outputs with their quantization, operator counts, one line
per layer with its MACs and parameter bytes, and the totals: MACs, parameter
bytes, state bytes and the activation memory lower bound for the model's own
operator order (see :mod:`aot.ir.analysis` for the exact definitions).
``--json`` prints the same facts, plus every tensor, as one JSON object.
"""

from __future__ import annotations

import argparse
import json

from aot.commands.compile import add_model_arguments, input_shapes

NAME = "inspect"
HELP = "show a model's operators, tensors, MACs and memory needs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help="a .tflite or .onnx model file")
    add_model_arguments(parser)


def _type(t: dict) -> str:
    text = f"{t['dtype']}[{','.join(str(d) for d in t['shape'])}]"
    q = t.get("quantization")
    if q:
        if q["axis"] is None:
            text += f" scale={q['scale'][0]:.6g} zero_point={q['zero_point'][0]}"
        else:
            text += f" per-axis({q['axis']}) x{len(q['scale'])}"
    return text


def format_summary(info: dict) -> str:
    lines = [f"model {info['name']}"]
    for role in ("inputs", "outputs"):
        for t in info[role]:
            lines.append(f"  {role[:-1]:<7} {t['name']!r}: {_type(t)}")
    lines.append("operators:")
    for op, count in info["operators"].items():
        lines.append(f"  {op:<18} {count:>4}")
    lines.append("layers:")
    lines.append(f"  {'#':>3}  {'op':<18} {'output':<32} {'MACs':>12} {'params':>9}")
    for layer in info["layers"]:
        out = layer["output"]
        out_text = f"{out['dtype']}[{','.join(str(d) for d in out['shape'])}]"
        lines.append(f"  {layer['index']:>3}  {layer['op']:<18} {out_text:<32} "
                     f"{layer['macs']:>12,} {layer['param_bytes']:>9,}")
    lines.append(f"tensors: {len(info['tensors'])}")
    for t in info["tensors"]:
        lines.append(f"  {t['kind']:<10} {t['bytes']:>9,}  {_type(t):<44} {t['name']}")
    lines += [
        f"total MACs: {info['total_macs']:,}",
        f"parameter bytes: {info['param_bytes']:,}",
        f"state bytes: {info['state_bytes']:,}",
        f"activation peak (inputs and outputs included): {info['activation_peak_bytes']:,} "
        f"bytes at layer {info['activation_peak_node']}",
        f"workspace lower bound (inputs and outputs excluded): "
        f"{info['workspace_lower_bound_bytes']:,} bytes at layer {info['workspace_peak_node']}",
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from aot.ir.analysis import summarize
    from aot.frontend import load_model
    info = summarize(load_model(args.model, input_shapes(args)))
    if args.json:
        print(json.dumps(info, indent=1))
    else:
        print(format_summary(info))
    return 0
