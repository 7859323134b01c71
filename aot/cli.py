"""The ``aot`` command.

Each sub-command lives in its own module under :mod:`aot.commands` and is
listed once in :data:`aot.commands.COMMANDS`.  A module provides ``NAME``,
``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``.

What every command shares lives here, once:

* ``--json`` (added to every command and its actions): the command prints
  one JSON document on stdout instead of text (its shape per command is in
  docs/cli.md); a failure prints ``{"error": MESSAGE, "exit": STATUS}``
  there instead of the text on stderr, so CI can parse either.
* Exit status: 0 on success, 1 when a command ran but its check failed (for
  example ``aot verify`` found a mismatch), 2 for bad input (any
  :class:`aot.errors.AotError` or a usage error), 3 for an internal error,
  130 after Ctrl-C and 143 after SIGTERM (temporary folders removed, as the
  ``with`` blocks that made them unwind), 141 when the reader of stdout went
  away (``aot inspect M | head -2``: quiet, as for any Unix tool).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import sys
import traceback
import warnings

from aot.version import __version__
from aot.commands import COMMANDS
from aot.errors import AotError, AotWarning

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE
EXIT_TERMINATED = 128 + signal.SIGTERM


class _UsageError(Exception):
    """argparse refused the command line (raised instead of exiting so that
    ``--json`` can report it like any other failure)."""

    def __init__(self, parser: argparse.ArgumentParser, message: str):
        super().__init__(message)
        self.parser = parser


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(self, message)


class _Terminated(BaseException):
    """SIGTERM, raised where the process is so that ``with`` blocks unwind
    (temporary folders, emulators) as they do for Ctrl-C."""


def _add_json(parser: argparse.ArgumentParser, *, default=argparse.SUPPRESS) -> None:
    """``--json`` on ``parser`` and, recursively, on the parsers of its
    sub-commands and actions.  Only the top parser has a default: argparse
    copies a sub-parser's defaults over what its parent parsed, so theirs are
    SUPPRESS and ``aot --json boards show TAG`` keeps the flag."""
    parser.add_argument("--json", action="store_true", default=default,
                        help="print one JSON document on stdout, errors included "
                             "(docs/cli.md)")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                _add_json(sub)


def build_parser(prog: str = "aot", commands: list | None = None, *,
                 arguments_of: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``prog`` with the sub-commands ``commands`` (default: all of
    :data:`aot.commands.COMMANDS`); ``west aot`` (aot/west_commands.py) asks for
    a subset under its own name.

    ``arguments_of`` (a command name, or ``""`` for none) adds only that
    command's arguments: a command's arguments may load the modules it runs
    (the tuner's choices), which other commands and ``--help`` should not pay
    for."""
    parser = _Parser(
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
    _add_json(parser, default=False)
    return parser


def main(argv: list[str] | None = None, *, prog: str = "aot",
         commands: list | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    as_json, debug, name = "--json" in argv, "--debug" in argv, prog
    try:
        # The first word that is not an option names the command (aot's own
        # options take no value); only its arguments are built.
        named = next((a for a in argv if not a.startswith("-")), "")
        parser = build_parser(prog, commands, arguments_of=named)
        try:
            args = parser.parse_args(argv)
        except _UsageError as err:  # exits, as argparse does, after the one printer
            if not as_json:
                err.parser.print_usage(sys.stderr)
            sys.exit(_fail(err.parser.prog, "error", str(err), EXIT_BAD_INPUT, as_json))
        if not hasattr(args, "_run"):
            if as_json:
                return _fail(prog, "error", f"no command given; `{prog} --help` lists them",
                             EXIT_BAD_INPUT, as_json)
            parser.print_help()
            return EXIT_BAD_INPUT
        as_json, debug, name = args.json, args.debug, f"{prog} {args.command}"
        return _run(args, name)
    except BrokenPipeError:
        if not _stdout_broken():
            return _internal(name, debug, as_json)
        # Nobody reads stdout any more (`| head`): point it at /dev/null so that
        # the interpreter's final flush cannot fail either, and leave quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE


def _run(args: argparse.Namespace, name: str) -> int:
    """Run the command, turning every way it can end into an exit status."""
    as_json = args.json
    handler_set, previous = _on_sigterm()
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_notice
            status = int(args._run(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not at the interpreter's exit
        return status
    except AotError as err:
        return _fail(name, "error", str(err), EXIT_BAD_INPUT, as_json)
    except KeyboardInterrupt:
        return _fail(name, "interrupted", "", EXIT_INTERRUPTED, as_json)
    except _Terminated:
        return _fail(name, "terminated", "", EXIT_TERMINATED, as_json)
    except BrokenPipeError:
        raise  # main tells a closed stdout from a bug
    except Exception:  # a bug in this project, not in the user's input
        return _internal(name, args.debug, as_json)
    finally:
        if handler_set:
            signal.signal(signal.SIGTERM, previous)


def _internal(name: str, debug: bool, as_json: bool) -> int:
    exc = sys.exc_info()[1]
    if debug:
        traceback.print_exc()
    return _fail(name, "internal error",
                 f"{type(exc).__name__}: {exc}\nThis is a bug in aot; rerun with --debug for a "
                 "traceback and report it.", EXIT_INTERNAL, as_json)


def _fail(name: str, kind: str, message: str, status: int, as_json: bool) -> int:
    """The one printer of failures: ``NAME: KIND: MESSAGE`` on stderr, or with
    ``--json`` ``{"error": MESSAGE, "exit": STATUS}`` on stdout (KIND leads the
    message unless it is a plain ``error``)."""
    if as_json:
        text = message if kind == "error" else f"{kind}: {message}" if message else kind
        print(json.dumps({"error": text, "exit": status}))
    else:
        print(f"{name}: {kind}: {message}" if message else f"{name}: {kind}", file=sys.stderr)
    return status


def _on_sigterm():
    """Make SIGTERM unwind like Ctrl-C: ``(True, previous handler)``, or
    ``(False, None)`` where signals cannot be set (not the main thread)."""
    def terminate(signum, frame):
        raise _Terminated()

    try:
        return True, signal.signal(signal.SIGTERM, terminate)
    except ValueError:
        return False, None


def _stdout_broken() -> bool:
    """Whether stdout is a pipe whose reader has gone (POLLERR on its write end)."""
    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), 0)
        return any(ev & select.POLLERR for _, ev in poll.poll(0))
    except (AttributeError, OSError, ValueError):
        return False


_python_showwarning = warnings.showwarning


def _show_notice(message, category, filename, lineno, file=None, line=None) -> None:
    """Print the library's notices (:class:`AotWarning`) as ``note: ...``, other
    warnings as Python does."""
    if issubclass(category, AotWarning):
        print(f"note: {message}", file=sys.stderr)
    else:
        _python_showwarning(message, category, filename, lineno, file, line)
