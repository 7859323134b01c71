"""The ``aot`` command.

Each sub-command lives in its own module under :mod:`aot.commands` and is
listed once in :data:`aot.commands.COMMANDS`.  A module provides ``NAME``,
``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``.

Exit status: 0 on success, 1 when a command ran but its check failed (for
example ``aot verify`` found a mismatch), 2 for bad input (any
:class:`aot.errors.AotError` or a usage error), 3 for an internal error.
"""

from __future__ import annotations

import argparse
import sys
import traceback
import warnings

from aot import __version__
from aot.commands import COMMANDS
from aot.errors import AotError, AotWarning

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


def build_parser(prog: str = "aot", commands: list | None = None, *,
                 arguments_of: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``prog`` with the sub-commands ``commands`` (default: all of
    :data:`aot.commands.COMMANDS`); ``west aot`` (aot/west_commands.py) asks for
    a subset under its own name.

    ``arguments_of`` (a command name, or ``""`` for none) adds only that
    command's arguments: a command's arguments may load the modules it runs
    (the tuner's choices), which other commands and ``--help`` should not pay
    for."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Compile neural networks ahead of time to C for microcontrollers.",
    )
    parser.add_argument("--version", action="version", version=f"aot {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show a traceback for internal errors"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS if commands is None else commands:
        cmd = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        if arguments_of is None or arguments_of == module.NAME:
            module.add_arguments(cmd)
        cmd.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None, *, prog: str = "aot",
         commands: list | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # The first word that is not an option names the command (aot's own options
    # take no value); only its arguments are built.
    named = next((a for a in argv if not a.startswith("-")), "")
    parser = build_parser(prog, commands, arguments_of=named)
    args = parser.parse_args(argv)
    if not hasattr(args, "_run"):
        parser.print_help()
        return EXIT_BAD_INPUT
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_notice
            return int(args._run(args) or 0)
    except AotError as err:
        print(f"{prog} {args.command}: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"{prog} {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception:  # a bug in this project, not in the user's input
        if args.debug:
            traceback.print_exc()
        else:
            exc = sys.exc_info()[1]
            print(
                f"{prog} {args.command}: internal error: {type(exc).__name__}: {exc}\n"
                "This is a bug in aot; rerun with --debug for a traceback and report it.",
                file=sys.stderr,
            )
        return EXIT_INTERNAL


_python_showwarning = warnings.showwarning


def _show_notice(message, category, filename, lineno, file=None, line=None) -> None:
    """Print the library's notices (:class:`AotWarning`) as ``note: ...``, other
    warnings as Python does."""
    if issubclass(category, AotWarning):
        print(f"note: {message}", file=sys.stderr)
    else:
        _python_showwarning(message, category, filename, lineno, file, line)
