"""The explicit list of ``aot`` sub-commands, in the order ``--help`` shows them.

Add a command by writing a module with ``NAME``, ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``, and listing it here.
"""

from aot.commands import boards, compile, inspect, interpret, operators, run, target
from aot.commands import build, config, flash, project, verify
from aot.commands import profile, tune

COMMANDS: list = [inspect, operators, interpret, compile, run, boards, target, project, build,
                  flash, verify, profile, tune, config]
