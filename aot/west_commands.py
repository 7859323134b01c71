"""``west aot compile | flash | verify | tune | boards``: aot inside a west workspace.

A workspace whose manifest lists this repository with
``west-commands: west-commands.yml`` (docs/integration.md) gets the command
``west aot``: west loads this file from the repository's checkout by its path,
and it imports the ``aot`` package of west's Python.  The sub-commands are
aot's own (their modules in :mod:`aot.commands`, parsed by :func:`aot.cli.main`
under the name ``west aot``); the workspace adds defaults from its
configuration (``west config``):

``aot.board``
    the board of ``compile``, ``verify`` and ``tune`` when the command line
    has neither ``--board`` nor ``--target``;
``aot.build-dir`` (default ``build/aot``)
    ``compile`` writes its artifact to ``<build-dir>/<model stem>`` when the
    command line has no ``-o``/``--output``; relative to the current folder,
    like ``west build``'s ``build``.

Outside a workspace west does not know the command at all (extension commands
come from the workspace's manifest) and says so itself:
``west: unknown command "aot"; do you need to run this inside a workspace?``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from west.commands import CommandError, WestCommand

try:
    import aot
    from aot.cli import build_parser, main as aot_main
    from aot.commands import boards as _boards, compile as _compile, flash as _flash
    from aot.commands import COMMANDS, tune as _tune, verify as _verify
    from aot.errors import did_you_mean, one_of
except ImportError as err:  # west's Python has no aot: say so when the command runs
    _IMPORT_ERROR: ImportError | None = err
    FORWARDED: list = []
else:
    _IMPORT_ERROR = None
    #: The aot sub-commands ``west aot`` offers, in the order its help lists them.
    FORWARDED = [_compile, _flash, _verify, _tune, _boards]

#: Sub-commands that take ``--board``/``--target`` and get ``aot.board``.
BOARD_COMMANDS = ("compile", "verify", "tune")
DEFAULT_BUILD_DIR = "build/aot"

DESCRIPTION = """\
aot's compile, flash, verify, tune and boards commands inside a west workspace;
`west aot COMMAND -h` shows a command's options.

Workspace defaults (west config):
  aot.board      board of compile, verify and tune when neither --board nor
                 --target is given, e.g. `west config aot.board qemu/mps2-an386`
  aot.build-dir  compile writes to <build-dir>/<model stem> when -o is not
                 given (default: build/aot)
"""


def _given(argv: list[str], *options: str) -> bool:
    """Whether one of the long ``options`` is on the command line, as ``--x V`` or
    ``--x=V``.  An abbreviation (``--boa``) is not seen: the default is then put
    first, so that argparse lets the user's later value win."""
    return any(a in options or a.split("=", 1)[0] in options for a in argv
               if a.startswith("--"))


def with_workspace_defaults(argv: list[str], board: str | None,
                            build_dir: str | None) -> list[str]:
    """``argv`` (``[command, *args]``) with the workspace's defaults added: the
    board when the command takes one and the line names neither a board nor a
    target, and compile's output folder when it has none."""
    name, rest = argv[0], argv[1:]
    added: list[str] = []
    if name in BOARD_COMMANDS and board and not _given(rest, "--board", "--target"):
        added += ["--board", board]
    if name == "compile" and not _given(rest, "--output") and "-o" not in rest \
            and not any(a.startswith("-o") and len(a) > 2 for a in rest):
        model = next((a for a in rest if not a.startswith("-") and
                      Path(a).suffix in (".tflite", ".onnx")), None)
        if model is not None:
            added += ["-o", str(Path(build_dir or DEFAULT_BUILD_DIR) / Path(model).stem)]
    return [name, *added, *rest]


class AotCommand(WestCommand):
    """The ``west aot`` extension command (west-commands.yml)."""

    def __init__(self):
        super().__init__(
            "aot",
            "compile, flash, verify and tune neural networks with aot",
            DESCRIPTION,
            # Every argument after `aot` goes to aot's own parser, in order.
            accepts_unknown_args=True,
        )

    def do_add_parser(self, parser_adder):
        return parser_adder.add_parser(
            self.name, help=self.help, description=self.description, add_help=False,
            usage="west aot COMMAND [ARGS...]",
            formatter_class=argparse.RawDescriptionHelpFormatter)

    def do_run(self, args, unknown):
        if _IMPORT_ERROR is not None:
            self.die(f"west aot needs the aot Python package in west's Python, which cannot "
                     f"import it ({_IMPORT_ERROR}).\nThings to try:\n"
                     f"  - install it there: pip install {Path(__file__).parent.parent}\n"
                     "  - or run west with the Python that has aot: python -m west aot ...")
        self._warn_if_other_aot()
        names = [m.NAME for m in FORWARDED]
        # aot's own options (--debug, --version) may come before the command.
        at = next((i for i, a in enumerate(unknown) if not a.startswith("-")), None)
        if at is None:
            if not unknown or any(a in ("-h", "--help") for a in unknown):
                build_parser("west aot", FORWARDED).print_help()
                print("\n" + DESCRIPTION.split("\n\n", 1)[1], end="")
                return
            at = len(unknown)
        elif unknown[at] not in names:
            name = unknown[at]
            other = name in {m.NAME for m in COMMANDS}
            self.die(f"unknown command {name!r}{did_you_mean(name, names)}; {one_of(names)}"
                     + (f" (run `aot {name}` outside west)" if other else ""))
        argv = unknown[:at]
        if at < len(unknown):
            argv += with_workspace_defaults(unknown[at:], self.config.get("aot.board"),
                                            self.config.get("aot.build-dir"))
        if argv != unknown:
            self.dbg("west aot: with the workspace's defaults:", " ".join(argv))
        try:
            status = aot_main(argv, prog="west aot", commands=FORWARDED)
        except SystemExit as exit_:  # argparse: usage errors (2), --help and --version (0)
            status = exit_.code if isinstance(exit_.code, int) else 2
        if status == 2 and at < len(unknown) and unknown[at] in BOARD_COMMANDS \
                and not self.config.get("aot.board") \
                and not _given(unknown[at + 1:], "--board", "--target"):
            self.inf("note: `west config aot.board TAG` gives this workspace a default board")
        if status:
            raise CommandError(returncode=status)

    def _warn_if_other_aot(self) -> None:
        """A workspace's checkout of the module and the aot that runs may differ."""
        here = Path(__file__).resolve().parent
        there = Path(aot.__file__).resolve().parent
        if here == there:
            return
        init = here / "__init__.py"
        mine = None
        if init.is_file():
            for line in init.read_text().splitlines():
                if line.startswith("__version__ = "):
                    mine = line.split("=", 1)[1].strip().strip("\"'")
        if mine is not None and mine != aot.__version__:
            self.wrn(f"the aot module at {here.parent} is version {mine}, but west's Python "
                     f"runs aot {aot.__version__} from {there}")
