"""``aot project create --board TAG --artifact DIR -o PROJ``: a standalone firmware project.

The project (docs/firmware.md) holds the artifact, the C runtime with the
board's port, a Makefile and a CMakeLists.txt; it builds without Python.
"""

from __future__ import annotations

import argparse
import json


NAME = "project"
HELP = "create a standalone firmware project from an artifact for a board"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="project_command", metavar="ACTION", required=True)
    create = sub.add_parser("create", help="write a firmware project",
                            description="Write a firmware project (model, runtime, port, "
                                        "Makefile, CMakeLists.txt) for a board.")
    create.add_argument("--board", required=True, help="board tag, e.g. qemu/mps2-an386")
    create.add_argument("--artifact", required=True,
                        help="the artifact directory written by `aot compile`")
    create.add_argument("-o", "--output", required=True, help="the project directory")


def run(args: argparse.Namespace) -> int:
    from aot.firmware import create_project
    project = create_project(args.artifact, args.board, args.output)
    if args.json:
        print(json.dumps({"project": str(project.path), "model": project.data["model"],
                          "board": project.board_tag}, indent=2))
        return 0
    print(f"created the firmware project {project.path} for {project.data['model']} on "
          f"{project.board_tag}")
    print(f"  build it with `aot build {project.path}` (or `make -C {project.path}`, or CMake)")
    return 0
