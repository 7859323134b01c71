"""The firmware flow: a compiled artifact made into firmware, run on a board.

Read top to bottom, ``aot run`` on a board is::

    compiled = aot.compile.compile_model(model, board)       # the artifact
    project = create_project(compiled.write(dir), board, proj)
    build = build_project(project, cache_dir=cache)          # make -j, sizes
    with open_device(project) as dev: ...                    # runner + RPC

:func:`run_on_board` does all of it for a sequence of inputs, and
:func:`verify_model` compares the board's outputs with the reference
interpreter.  docs/firmware.md describes the project layout and the commands
(``aot project create``, ``aot build``, ``aot flash``, ``aot run``,
``aot verify``).
"""

from aot.errors import BuildError
from aot.firmware.build import BuildResult, ObjectCache, build_project
from aot.firmware.device import BoardRun, open_device, run_on_board, run_project
from aot.firmware.errors import DeviceError, FirmwareError, ProjectError
from aot.firmware.project import Project, create_project, load_project
from aot.firmware.sizes import FirmwareSizes, parse_map
from aot.firmware.verify import VerifyReport, verify_model

__all__ = [
    "BoardRun", "BuildError", "BuildResult", "DeviceError", "FirmwareError", "FirmwareSizes",
    "ObjectCache", "Project", "ProjectError", "VerifyReport", "build_project",
    "create_project", "load_project", "open_device", "parse_map", "run_on_board",
    "run_project", "verify_model",
]
