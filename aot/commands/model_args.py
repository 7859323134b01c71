"""The options of the commands that run a model on inputs (``aot interpret``,
``aot run``, ``aot verify``, ``aot profile``): ``--input``, ``--fill``,
``--seed``, ``--allow-nonfinite`` and ``--output``.

The file convention is described in :mod:`aot.commands.interpret`; the work
is done in :mod:`aot.commands.model_io`, which reads :data:`FILLS` from here.
This module imports nothing heavy: every command's parser is built from it
before the command runs (``aot --help`` loads no numpy).
"""

from __future__ import annotations

import argparse
from pathlib import Path

#: ``--fill``: what runs when no ``--input`` is given
#: (:func:`aot.commands.model_io.fill_inputs`).
FILLS = ("zeros", "ones", "random", "sample")
DEFAULT_FILL = "random"


def add_input_arguments(parser: argparse.ArgumentParser, *, required: bool = False,
                        fill: bool = False,
                        help: str = ".npy ([N, *input shape]) or, for several inputs, "
                                    ".npz") -> None:
    """``--input`` and ``--allow-nonfinite``, the options of every command that
    runs a model on the user's inputs (read by :func:`aot.commands.model_io.load_inputs`); with
    ``fill``, also ``--fill`` and ``--seed`` in place of ``--input``
    (:func:`aot.commands.model_io.inputs_from_args`)."""
    if not fill:
        parser.add_argument("--input", required=required, type=Path, help=help)
    else:
        which = parser.add_mutually_exclusive_group()
        which.add_argument("--input", type=Path, help=help)
        which.add_argument("--fill", choices=FILLS,
                           help="run one invocation of generated inputs instead of --input: "
                                "zeros or ones (the stored value, the raw integer of a "
                                "quantized input), seeded random values (as aot verify makes "
                                "them), or the model's sample inputs (samples/<model>.npy "
                                f"beside the model file); default {DEFAULT_FILL} when --input "
                                "is not given")
        parser.add_argument("--seed", type=int, default=0, help="seed of --fill random")
    parser.add_argument("--allow-nonfinite", action="store_true",
                        help="run float inputs holding NaN or Inf (refused by default: a "
                             "model's answer to them is not defined)")


def add_output_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", type=Path, metavar="FILE.npy|FILE.npz",
                        help="write the outputs to exactly this file: .npy (a model with one "
                             "output) or .npz (any model; keys output_0, output_1, ...); "
                             "without it the outputs are printed (top 5 for a classifier)")
