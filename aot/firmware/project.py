"""Firmware projects: an artifact plus a board record made into a standalone folder.

:func:`create_project` writes::

    PROJ/project.json   what aot needs later (board, port, toolchain, files)
    PROJ/Makefile       `make -j` -> build/firmware.elf and build/firmware.map
    PROJ/CMakeLists.txt `cmake -S PROJ -B B && cmake --build B` -> B/firmware.elf
    PROJ/model/         the artifact (generated C, header, RPC descriptor, metadata.json)
    PROJ/runtime/       the C runtime and the board's port; runtime/src/rpc_main.c is
                        main(): it serves the model descriptor over the port's UART

Both build files use the runtime's own fragments (runtime/runtime.mk and
runtime/runtime.cmake) with the board's compiler, CPU flags and memory map
written out explicitly; the linker script is the port's template filled in
with the board's flash and RAM (build/link.ld).  Neither build needs Python.
"""

from __future__ import annotations

import json
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from aot.version import __version__
from aot import export
from aot.export import firmware_variables, read_metadata, runtime_files
from aot.firmware.errors import ProjectError
from aot.target import Board, load_board

PROJECT_FORMAT = "aot-project"
PROJECT_VERSION = 1
ELF = "build/firmware.elf"
MAP = "build/firmware.map"

@dataclass(frozen=True)
class Project:
    """A project folder and its ``project.json``."""

    path: Path
    data: dict

    @property
    def name(self) -> str:
        """The model's C name prefix."""
        return self.data["name"]

    @property
    def board_tag(self) -> str:
        return self.data["board"]

    @property
    def board(self) -> Board:
        return load_board(self.data["board"])

    @property
    def elf(self) -> Path:
        return self.path / self.data["elf"]

    @property
    def map_file(self) -> Path:
        return self.path / self.data["map"]

    @property
    def metadata(self) -> dict:
        """The artifact's metadata.json."""
        return read_metadata(self.path / "model")

    @property
    def core_tasks(self) -> list[dict]:
        """The functions the model hands to further cores (metadata.json's
        ``entry.tasks``: per task its ``core`` and ``function``); none on one core."""
        return list(self.metadata.get("entry", {}).get("tasks", []))

    @property
    def model_sources(self) -> list[str]:
        return list(self.data["model_sources"])

    @property
    def model_objects(self) -> list[str]:
        """Prebuilt objects of the model (kernels compiled by LLVM), linked as they are."""
        return list(self.data.get("model_objects", []))


def runtime_port(board: Board) -> str:
    """The runtime_c/ports folder for ``board``, or a :class:`ProjectError`."""
    port = export.runtime_port(board)
    if port is None:
        raise ProjectError(f"not supported yet: the C runtime has no port {board.port!r} for "
                           f"{board.tag}; ports: {', '.join(export.runtime_ports())}")
    return port


def load_project(path) -> Project:
    """Read ``PROJ/project.json``; a :class:`ProjectError` if it is not a project."""
    path = Path(path)
    try:
        data = json.loads((path / "project.json").read_text())
    except (OSError, ValueError) as err:
        raise ProjectError(f"{path} is not an aot firmware project (no readable project.json: "
                           f"{getattr(err, 'strerror', None) or err}); create one with "
                           "`aot project create`") from None
    if data.get("format") != PROJECT_FORMAT or data.get("format_version") != PROJECT_VERSION:
        raise ProjectError(f"{path}/project.json is not an aot project of format version "
                           f"{PROJECT_VERSION}; recreate it with `aot project create`")
    return Project(path, data)


def _unpack(archive: Path, into: Path) -> Path:
    """The artifact folder inside an ``aot compile --tar`` archive, extracted into ``into``."""
    try:
        with tarfile.open(archive) as tar:
            tar.extractall(into, filter="data")
    except (tarfile.TarError, OSError) as err:
        raise ProjectError(f"{archive} is neither an artifact folder nor a readable artifact "
                           f"archive: {err}") from None
    tops = [p for p in into.iterdir() if (p / "metadata.json").is_file()]
    if len(tops) != 1:
        raise ProjectError(f"{archive} does not hold one artifact folder (<name>/metadata.json)")
    return tops[0]


def _check_artifact(artifact: Path, board: Board) -> dict:
    if not artifact.exists():
        raise ProjectError(f"artifact {artifact} does not exist; write one with `aot compile`")
    meta = read_metadata(artifact)
    built_for = meta.get("board")
    if built_for is not None and built_for != board.tag:
        raise ProjectError(f"the artifact {artifact} was compiled for {built_for}, not "
                           f"{board.tag}: compile it again with --board {board.tag}")
    if built_for is None and meta.get("target") != str(board.target):
        raise ProjectError(f"the artifact {artifact} was compiled for target "
                           f"{meta.get('target')!r}, not for {board.tag}: compile it with "
                           f"--board {board.tag}")
    name = meta["name"]
    if meta.get("group") is not None:
        raise ProjectError(f"not supported yet: RPC firmware for the model group {name} in "
                           f"{artifact} ({', '.join(meta['group']['models'])}); compile each "
                           "model alone for `aot project`, or build the group's artifact into "
                           "firmware with its own main (docs/memory.md)")
    if not (artifact / "codegen" / f"{name}_rpc.c").is_file():
        raise ProjectError(f"the artifact {artifact} has no RPC descriptor "
                           f"codegen/{name}_rpc.c; compile it again with this aot version")
    return meta


def _settings(board: Board, port: str, meta: dict, model_sources: list[str],
              model_objects: list[str]) -> dict:
    """Everything the build files say, as data (also written to project.json):
    the board's part is :func:`aot.export.board_build`, the one place it is
    worked out; the variables that shape the compile are
    :func:`aot.export.firmware_variables`, which the code size is measured with."""
    tc = board.toolchain
    built = export.board_build(board)
    compiled = firmware_variables(board)
    return {
        "format": PROJECT_FORMAT,
        "format_version": PROJECT_VERSION,
        "aot_version": __version__,
        "name": meta["name"],
        "model": meta["model"]["name"],
        "board": board.tag,
        "board_version": board.versioned_tag,
        "port": port,
        "cc": compiled["cc"],
        "size": tc.tool("size"),
        "arch_flags": compiled["arch_flags"],
        # The toolchain's flags, then the board facts for the port (board_defines).
        "cflags": compiled["cflags"],
        "ldflags": built["ldflags"],
        # The model's own linker scripts (its buffers in other memories), after the port's.
        "linker_scripts": [f"model/{p}" for p in meta.get("build", {}).get("linker_scripts", [])],
        "opt_flags": compiled["opt_flags"],
        "build_id": f"aot-{__version__}",
        "memory": built["memory"],
        "model_sources": model_sources,
        "model_objects": model_objects,
        "elf": ELF,
        "map": MAP,
    }


def makefile(s: dict) -> str:
    """The project's Makefile: runtime.mk with the board's settings."""
    srcs = " \\\n  ".join(s["model_sources"])
    scripts = "".join(f" -T{p}" for p in s.get("linker_scripts", []))
    objs = "".join(f" \\\n  {o}" for o in s.get("model_objects", []))
    mem = ""
    if s["memory"]:
        m = s["memory"]
        mem = (f"AOT_FLASH_ORIGIN := {m['flash_origin']}\nAOT_FLASH_LENGTH := {m['flash_length']}\n"
               f"AOT_RAM_ORIGIN := {m['ram_origin']}\nAOT_RAM_LENGTH := {m['ram_length']}\n"
               f"AOT_STACK_SIZE := {m['stack_size']}\n")
    return f"""# Generated by aot {s['aot_version']}: RPC firmware of the model {s['model']} for
# {s['board']}.  `make -j` builds {s['elf']} (and {s['map']}) with the board's
# toolchain alone; the linker script is the port's template with the memory map
# below (build/link.ld).  `make aot-print-runtime-objects` lists the objects
# that depend only on the runtime and these flags (aot build caches them).

CC := {s['cc']}
AOT_RUNTIME_DIR := runtime
AOT_PORT := {s['port']}
AOT_ARCH_FLAGS := {' '.join(s['arch_flags'])}
AOT_OPT_FLAGS := {' '.join(s['opt_flags'])}
AOT_BOARD_TAG := {s['board']}
AOT_BUILD_ID := {s['build_id']}
AOT_EXTRA_CFLAGS := -Imodel/include {' '.join(s['cflags'])}
{mem}AOT_BUILD_DIR := build
AOT_FIRMWARE := {s['elf']}
AOT_APP_SRCS := \\
  {srcs}
AOT_APP_OBJS :={objs}

include $(AOT_RUNTIME_DIR)/runtime.mk
# Expanded when the link runs, so these land after the objects.
AOT_PORT_LDFLAGS += {' '.join(s['ldflags'])}{scripts} -Wl,-Map={s['map']} -lm

.DEFAULT_GOAL := $(AOT_FIRMWARE)
.PHONY: clean aot-print-runtime-objects
clean:
\trm -rf $(AOT_BUILD_DIR)
aot-print-runtime-objects:
\t@echo $(foreach s,$(AOT_RUNTIME_SRCS) $(AOT_PORT_SRCS) $(AOT_PORT_ASM_SRCS),$(call aot_obj,$(s)))
"""


def cmake_lists(s: dict) -> str:
    """The project's CMakeLists.txt: runtime.cmake's aot_add_rpc_firmware."""
    cross = ""
    if s["port"] != "host":
        cross = (f"set(CMAKE_SYSTEM_NAME Generic)\nset(CMAKE_C_COMPILER {s['cc']})\n"
                 f"set(CMAKE_ASM_COMPILER {s['cc']})\n"
                 "set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)\n")
    mem = ""
    if s["memory"]:
        m = s["memory"]
        mem = (f"\n  FLASH_ORIGIN {m['flash_origin']} FLASH_LENGTH {m['flash_length']}"
               f"\n  RAM_ORIGIN {m['ram_origin']} RAM_LENGTH {m['ram_length']}")
    scripts = "".join(f" -T${{CMAKE_CURRENT_LIST_DIR}}/{p}" for p in s.get("linker_scripts", []))
    # Prebuilt objects (kernels from LLVM) are sources CMake links as they are.
    opt = export.cmake_opt_flags("firmware", s["opt_flags"])
    srcs = "\n".join(f"  {p}" if p.startswith("/") else f"  ${{CMAKE_CURRENT_LIST_DIR}}/{p}"
                     for p in [*s["model_sources"], *s.get("model_objects", [])])
    return f"""# Generated by aot {s['aot_version']}: RPC firmware of the model {s['model']} for
# {s['board']}, the CMake counterpart of the Makefile:
#   cmake -S <this folder> -B build-cmake && cmake --build build-cmake
# builds build-cmake/firmware.elf with the board's toolchain.
cmake_minimum_required(VERSION 3.16)
{cross}project(aot_firmware C ASM)

include(${{CMAKE_CURRENT_LIST_DIR}}/runtime/runtime.cmake)
set(model_sources
{srcs}
)
aot_add_rpc_firmware(firmware PORT {s['port']} SOURCES ${{model_sources}}
  ARCH_FLAGS {' '.join(s['arch_flags'])} {' '.join(s['cflags'])}
  BOARD_TAG {s['board']} BUILD_ID {s['build_id']}{mem})
{opt}target_include_directories(firmware PRIVATE ${{CMAKE_CURRENT_LIST_DIR}}/model/include)
target_link_options(firmware PRIVATE {' '.join(s['ldflags'])}{scripts} -Wl,-Map=firmware.map)
target_link_libraries(firmware PRIVATE m)
"""


def create_project(artifact, board: Board | str, out) -> Project:
    """Write a standalone firmware project for ``artifact`` on ``board`` into ``out``.

    ``artifact`` is an artifact folder or its ``.tar`` archive.  ``out``
    must be new, empty, or an earlier project (which is replaced,
    build folder included).  Raises :class:`ProjectError` for an artifact
    compiled for another board, a board without a runtime port, or an
    ``out`` that holds anything else.
    """
    board = load_board(board) if isinstance(board, str) else board
    artifact, out = Path(artifact), Path(out)
    if artifact.is_file():
        with tempfile.TemporaryDirectory(prefix="aot-artifact-") as tmp:
            return create_project(_unpack(artifact, Path(tmp)), board, out)
    meta = _check_artifact(artifact, board)
    port = runtime_port(board)
    if out.exists():
        if not out.is_dir():
            raise ProjectError(f"{out} exists and is not a directory")
        if any(out.iterdir()) and not (out / "project.json").is_file():
            raise ProjectError(f"{out} is not empty and holds no aot project: create the "
                               "project in a new or empty directory")
    try:
        for sub in ("model", "runtime", "build"):
            shutil.rmtree(out / sub, ignore_errors=True)
        out.mkdir(parents=True, exist_ok=True)
        shutil.copytree(artifact, out / "model", ignore=shutil.ignore_patterns("runtime"))
        # The artifact carries the runtime and its port; an artifact of an
        # older aot that lacks port files gets them from this aot's runtime_c.
        if (artifact / "runtime").is_dir():
            shutil.copytree(artifact / "runtime", out / "runtime")
        for rel, src in runtime_files(port).items():
            dest = out / rel
            if not dest.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest)
        sources = sorted(str(p.relative_to(out)) for p in (out / "model" / "codegen").glob("*.c"))
        # The runtime's sources the model itself calls (aot/cores.h's hand-over).
        sources += [f"runtime/{s}" for s in meta.get("build", {}).get("runtime_sources", [])]
        objects = [f"model/{o}" for o in meta.get("build", {}).get("objects", [])]
        # External codegens' libraries are compiled from where they are (never copied).
        extra_sources, extra_flags = export.external_build(meta.get("build", {}))
        settings = _settings(board, port, meta, sources + extra_sources, objects)
        settings["cflags"] += extra_flags
        (out / "Makefile").write_text(makefile(settings))
        (out / "CMakeLists.txt").write_text(cmake_lists(settings))
        (out / "project.json").write_text(json.dumps(settings, indent=2) + "\n")
    except OSError as err:
        raise ProjectError(f"cannot write the project to {out}: {err.strerror or err}") from None
    return Project(out, settings)
