"""``aot target``: show a target's canonical forms and derived facts, list kinds."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from aot.commands.boards import table

if TYPE_CHECKING:
    from aot.target import Target

NAME = "target"
HELP = "show a target's canonical string, JSON and derived facts; list target kinds"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="target_command", metavar="ACTION", required=True)
    show = sub.add_parser(
        "show",
        help="canonical string, JSON and derived facts of a target",
        description="Show a target's canonical string, JSON, digest and derived facts. "
        "With --json, print only the canonical JSON (it can be fed back to aot).",
    )
    show.add_argument(
        "target",
        help='target string ("c -mcpu=cortex-m4"), JSON object or board tag (qemu/mps2-an386)',
    )
    sub.add_parser(
        "kinds",
        help="list target kinds and their attributes",
        description="List the registered target kinds and their attributes.",
    )


def _facts(t: Target) -> dict:
    return {
        "device_type": t.device_type,
        "isa": t.isa,
        "triple": t.triple,
        "float_abi": t.float_abi,
        "fpu": t.fpu,
        "has_fpu": t.has_fpu,
        "has_dsp": t.has_dsp,
        "has_mve": t.has_mve,
        "pointer_bits": t.pointer_bits,
        "vector_bytes": t.vector_bytes,
    }


def _show(t: Target) -> str:
    lines = [f"string   {t}", f"json     {t.to_json()}", f"digest   {t.digest()}"]
    for name, value in _facts(t).items():
        shown = "-" if value is None else str(value).lower() if isinstance(value, bool) else value
        lines.append(f"{name:<13}{shown}")
    return "\n".join(lines)


def _kinds_json() -> list[dict]:
    from aot.target import KINDS

    return [
        {
            "kind": k.name,
            "device_type": k.device_type,
            "default_keys": list(k.default_keys),
            "required": list(k.required),
            "attrs": [
                {
                    "name": a.name,
                    "type": a.type,
                    "default": a.default,
                    "choices": list(a.choices),
                    "help": a.help,
                }
                for a in k.attrs
            ],
        }
        for k in KINDS
    ]


def run(args: argparse.Namespace) -> int:
    from aot.target import KINDS, Target

    if args.target_command == "kinds":
        if args.json:
            print(json.dumps(_kinds_json(), indent=2, default=list))
            return 0
        for k in KINDS:
            print(f"{k.name}: {k.help} (device {k.device_type}, keys {list(k.default_keys)})")
            rows = [
                {
                    "attribute": "-" + a.name,
                    "type": a.type,
                    "default": "-" if a.default in (None, ()) else str(a.default),
                    "help": a.help,
                }
                for a in k.attrs
            ]
            print("  " + table(rows).replace("\n", "\n  ") + "\n")
        print("every kind also takes -keys=A,B  -host={TARGET}  -tag=VENDOR/BOARD")
        return 0
    t = Target(args.target)
    print(t.to_json() if args.json else _show(t))
    return 0
