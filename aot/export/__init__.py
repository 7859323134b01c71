"""The artifact: a directory (or .tar) that firmware builds use without Python.

Layout (``P`` is the name prefix)::

    metadata.json          compiler version, target, board, inputs/outputs
                           (shape, dtype, quantization), memory plan, sizes
    include/P.h            the model's interface
    codegen/P.c            the entry function
    codegen/P_kernels_*.c  one file per kernel, plus the kernels' support headers
    codegen/P_rpc.c        the RPC model descriptor (RPC firmware only)
    runtime/               the runtime_c files RPC firmware needs: include/, src/,
                           runtime.mk/.cmake and the board's port (nothing of it is
                           needed for plain inference)
    CMakeLists.txt         a static library target P (and P_rpc)
    P.mk                   a Makefile fragment building libP.a

metadata.json's ``build`` section (:func:`build_settings`) is the one
description of how to build the artifact: its sources, include folders and,
for a board, the runtime port, compiler, flags, port defines and memory map.
CMakeLists.txt and P.mk are printed from it, and aot/cmake/aot.cmake
(``aot_add_model``) and ``aot project`` read it instead of working it out again.

:func:`write_artifact` writes it; :func:`read_metadata` reads it back.
"""

from __future__ import annotations

import functools
from fractions import Fraction
import io
import json
import re
import tarfile
from pathlib import Path

from aot.version import __version__
from aot.codegen.cc import FirmwareCommand, STRICT_FLAGS
from aot.codegen.jinja import templates
from aot.errors import AotError
from aot.resources import runtime_dir
from aot.target import DEFAULT_OPT_FLAGS


def _template(name: str):
    """One of aot/export/templates (artifact build files, SDK layouts)."""
    return templates("aot.export").get_template(name)


METADATA_VERSION = 1
#: The C runtime's sources (runtime_c/ in the repository, package data in the
#: wheel; :func:`aot.resources.runtime_dir` knows which).
RUNTIME_DIR = runtime_dir()


class ExportError(AotError):
    """The artifact cannot be written or read."""


#: The ``format`` of every artifact's metadata.json.
METADATA_FORMAT = "aot-artifact"


def artifact_metadata(name: str, model_name: str, source: str, target, board) -> dict:
    """The part of metadata.json every artifact has (a compiled model's adds
    its interface, kernels, plan and sizes; a tuning image's adds nothing):
    the one place its format and identity fields are written."""
    return {
        "format": METADATA_FORMAT,
        "format_version": METADATA_VERSION,
        "aot_version": __version__,
        "name": name,
        "model": {"name": model_name, "source": source},
        "target": str(target),
        "target_hash": target.digest(),
        "board": board.tag if board is not None else None,
        "board_version": board.versioned_tag if board is not None else None,
    }


def runtime_ports() -> list[str]:
    """The names of the runtime's ports (``runtime_c/ports/<name>/port.mk``)."""
    return sorted(p.parent.name for p in RUNTIME_DIR.glob("ports/*/port.mk"))


def runtime_files(port: str | None) -> dict[str, Path]:
    """The runtime_c files RPC firmware needs: artifact path -> source file.

    The headers and sources of the runtime, its build fragments (runtime.mk,
    board.mk, runtime.cmake), and for a
    known ``port`` that port's folder plus any port folder its ``port.mk``
    pulls in (mps2 uses the shared cortex-m startup).
    """
    if not (RUNTIME_DIR / "include").is_dir():
        raise ExportError(f"the C runtime is missing: expected it in {RUNTIME_DIR}")
    folders = ["include", "src"]
    pending = [port] if port else []
    while pending:
        p = pending.pop()
        folder = f"ports/{p}"
        if folder in folders or not (RUNTIME_DIR / folder).is_dir():
            continue
        folders.append(folder)
        mk = RUNTIME_DIR / folder / "port.mk"
        if mk.exists():
            pending += re.findall(r"\$\(AOT_RUNTIME_DIR\)/ports/([\w.-]+)", mk.read_text())
    files = {f"runtime/{p.name}": p for p in sorted(RUNTIME_DIR.glob("*.*")) if p.is_file()}
    for folder in folders:
        for src in sorted((RUNTIME_DIR / folder).rglob("*")):
            if src.is_file() and "__pycache__" not in src.parts:
                files[f"runtime/{src.relative_to(RUNTIME_DIR)}"] = src
    return files


_MK_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(:=|\?=|\+=)\s*(.*)$")
_MK_VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def port_settings(port: str) -> dict[str, str]:
    """The variables ``runtime_c/ports/<port>/port.mk`` sets, as Make
    evaluates them (the part of Make port files use: ``:=``, ``?=``, ``+=``,
    ``include`` and ``$(VAR)``, the same subset runtime.cmake reads); an
    :class:`ExportError` for anything else.  ``AOT_PORT_CFLAGS`` are flags the
    model's C is built with in that port's firmware (picolibc's specs on
    RISC-V, for instance)."""
    values = {"AOT_RUNTIME_DIR": str(RUNTIME_DIR)}

    def expand(text: str) -> str:
        return _MK_VAR.sub(lambda m: values.get(m.group(1), ""), text)

    def read(path: Path) -> None:
        try:
            text = path.read_text()
        except OSError as err:
            raise ExportError(f"cannot read {path}: {err.strerror}") from None
        for line in text.replace("\\\n", " ").splitlines():
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("include "):
                read(Path(expand(line[len("include "):].strip())))
                continue
            m = _MK_ASSIGN.match(line)
            if m is None:
                raise ExportError(f"{path}: {line!r} is outside the part of Make port files "
                                  "use (assignments, include, $(VAR))")
            name, op, value = m.group(1), m.group(2), expand(m.group(3)).strip()
            if op == "?=" and name in values:
                continue
            if op == "+=" and values.get(name):
                value = f"{values[name]} {value}"
            values[name] = value

    if port not in runtime_ports():
        raise ExportError(f"unknown runtime port {port!r}; ports: {', '.join(runtime_ports())}")
    read(RUNTIME_DIR / "ports" / port / "port.mk")
    del values["AOT_RUNTIME_DIR"]
    return values


#: Board ``port`` names whose runtime folder is named differently: the
#: board records name the hardware family, runtime_c/ports the concrete image.
RUNTIME_PORTS = {"mps3": "mps3-an547"}


def runtime_port(board) -> str | None:
    """The runtime_c/ports folder that serves ``board``, or None when the
    runtime has no port for it."""
    port = RUNTIME_PORTS.get(board.port, board.port)
    return port if port in runtime_ports() else None


def cortex_m_startup(board) -> bool:
    """Whether ``board``'s runtime port uses the shared Cortex-M start-up
    (runtime_c/ports/cortex-m/startup.c; the ports' linker scripts collect
    ``.aot_copy_table`` and define ``__aot_stack_limit`` for it), which copies
    the sections listed in the table and takes the stack's top and bottom
    from a linker script linked after the port's: what ``--memory-regions
    NAME+const`` (on a pool) and ``NAME+stack`` need (:mod:`aot.executor.regions`)."""
    port = runtime_port(board) if board is not None else None
    if port is None:
        return False
    sources = port_settings(port).get("AOT_PORT_SRCS", "").split()
    return any(Path(s).as_posix().endswith("ports/cortex-m/startup.c") for s in sources)


def _hex(value: int) -> str:
    return f"0x{value:08x}"


def _symbol(text: str) -> str:
    """``st/nucleo-l4r5zi`` -> ``ST_NUCLEO_L4R5ZI``: a board fact as part of a C macro name."""
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").upper()


def board_defines(board) -> list[str]:
    """The board facts a port is compiled with, as ``-D`` flags.

    ``AOT_BOARD_FACTS`` says that the facts below are given (ports check
    them against what they implement), ``AOT_BOARD_<TAG>`` names the board (``st/nucleo-l4r5zi`` ->
    ``AOT_BOARD_ST_NUCLEO_L4R5ZI``) so that a port serving several boards
    (stm32) picks that board's pins and clock registers;
    ``AOT_CONSOLE_BASE``/``AOT_CONSOLE_BAUD``/``AOT_CONSOLE_KIND_<KIND>`` come
    from ``[console]``, ``AOT_CPU_HZ`` from ``clock_hz``,
    ``AOT_TIMER_KIND_<KIND>`` from ``[timer]``, and for a SysTick counted
    under QEMU's ``-icount`` ``AOT_TICK_INSNS_NUM``/``AOT_TICK_INSNS_DEN``
    (``icount_instructions_per_tick`` = NUM / DEN, DEN a power of two).
    A multi-core board adds its ``[cores]``: ``AOT_BOARD_CORES``,
    ``AOT_CORES_START_<START>``, ``AOT_CORES_SYSCTL_BASE``,
    ``AOT_CORES_IDENTITY_BASE`` and ``AOT_CORES_STACK_BYTES``.
    Empty for the host, whose port needs no facts.
    """
    if board.platform == "host":
        return []
    flags = ["-DAOT_BOARD_FACTS=1", f"-DAOT_BOARD_{_symbol(board.tag)}=1"]
    if board.console is not None:
        if board.console.base is not None:
            flags.append(f"-DAOT_CONSOLE_BASE={_hex(board.console.base)}u")
        flags.append(f"-DAOT_CONSOLE_BAUD={int(board.console.baud)}u")
        flags.append(f"-DAOT_CONSOLE_KIND_{_symbol(board.console.kind)}=1")
    if board.clock_hz:
        flags.append(f"-DAOT_CPU_HZ={int(board.clock_hz)}u")
    if board.timer is not None:
        flags.append(f"-DAOT_TIMER_KIND_{_symbol(board.timer.kind)}=1")
        per_tick = board.timer.icount_instructions_per_tick
        if board.timer.kind == "systick" and per_tick:
            ratio = Fraction(per_tick).limit_denominator(1 << 10)
            if ratio != per_tick or ratio.denominator & (ratio.denominator - 1):
                raise ExportError(
                    f"{board.path or board.tag}: field 'timer.icount_instructions_per_tick' "
                    f"= {per_tick} is not NUM / DEN with DEN a power of two, which the "
                    "runtime's SysTick vernier needs (e.g. 40, 31.25, 62.5)")
            flags += [f"-DAOT_TICK_INSNS_NUM={ratio.numerator}",
                      f"-DAOT_TICK_INSNS_DEN={ratio.denominator}"]
    cores = board.cores
    if cores.count > 1:
        flags += [f"-DAOT_BOARD_CORES={cores.count}",
                  f"-DAOT_CORES_START_{_symbol(cores.start)}=1",
                  f"-DAOT_CORES_SYSCTL_BASE={_hex(cores.sysctl_base)}u",
                  f"-DAOT_CORES_IDENTITY_BASE={_hex(cores.identity_base)}u",
                  f"-DAOT_CORES_STACK_BYTES={cores.stack_bytes}"]
    return flags


def opt_flags(board) -> list[str]:
    """The optimisation every build of the model's C uses: the board record's
    ``toolchain.opt_flags``, or :data:`aot.target.tags.DEFAULT_OPT_FLAGS` for a
    bare target (metadata.json's ``build.opt_flags``).  A build that chose its
    own (a CMake build type, ``-O`` in CFLAGS) keeps its choice
    (docs/integration.md)."""
    return list(board.toolchain.opt_flags if board is not None else DEFAULT_OPT_FLAGS)


def board_build(board) -> dict | None:
    """How firmware for ``board`` is built: its runtime port, compiler, CPU
    flags, other flags, port defines and memory map (the ``board`` part of
    metadata.json's ``build``); None without a board or a runtime port.
    ``cflags`` (the record's, e.g. ``-ffunction-sections``) apply to the
    model's C as well as the port's, ``defines`` to the port's only."""
    if board is None:
        return None
    port = runtime_port(board)
    if port is None:
        return None
    tc = board.toolchain
    memory = None
    if board.memory is not None:
        memory = {"flash_origin": _hex(board.memory.flash.origin),
                  "flash_length": _hex(board.memory.flash.length),
                  "ram_origin": _hex(board.memory.ram.origin),
                  "ram_length": _hex(board.memory.ram.length),
                  "stack_size": _hex(board.memory.stack_bytes)}
    return {"tag": board.tag, "port": port, "cc": tc.tool("gcc"),
            "cpu_flags": list(tc.cpu_flags), "cflags": list(tc.cflags),
            "defines": board_defines(board), "ldflags": list(tc.ldflags), "memory": memory}


def build_settings(name: str, files, board, external=(), cores: int = 1) -> dict:
    """metadata.json's ``build``: the library's C sources, its prebuilt objects
    (the kernels of an ``llvm`` target, compiled by LLVM for the board's core:
    link them as they are), the RPC descriptor's sources, the include folders
    (relative to the artifact), the linker scripts to add after the port's
    (``codegen/P_regions.ld`` when buffers live in other memories; link with
    ``-T`` each), :func:`opt_flags`, :func:`board_build`, and ``external``: per
    external codegen (``-libs``) the library folder it calls (``root``, also
    the CMake/Make variable ``variable``) with the sources, include folders
    (relative to it) and defines every build of the model adds; ``runtime_sources``:
    the runtime's sources (relative to ``runtime_c/``) beyond the RPC server's that
    the model calls (``src/cores.c`` when it hands work to core 1: ``cores`` 2; absent
    otherwise)."""
    return {"sources": library_sources(files, name),
            "objects": sorted(p for p in files if p.startswith("codegen/") and p.endswith(".o")),
            "rpc_sources": [f"codegen/{name}_rpc.c"] if f"codegen/{name}_rpc.c" in files else [],
            "include_dirs": ["include"],
            "linker_scripts": sorted(p for p in files if p.endswith(".ld")),
            "opt_flags": opt_flags(board),
            "board": board_build(board),
            "external": [dict(e) for e in external],
            **({"runtime_sources": ["src/cores.c"]} if cores > 1 else {})}


def external_build(build: dict) -> tuple[list[str], list[str]]:
    """The absolute sources and the compiler flags (``-I``, ``-D``) of metadata.json's
    ``build.external`` (:func:`build_settings`); an error naming the codegen when
    its library folder is gone."""
    sources, flags = [], []
    for lib in build.get("external", []):
        root = Path(lib["root"])
        if not root.is_dir():
            raise ExportError(f"the external codegen {lib['codegen']!r} calls the library in "
                              f"{root}, which does not exist any more: compile the model "
                              "again with the library's folder")
        sources += [str(root / s) for s in lib["sources"]]
        flags += [f"-I{root / d}" for d in lib["include_dirs"]]
        flags += [f"-D{d}" for d in lib["defines"]]
    return sources, flags


_DEFINE = re.compile(r"^\s*#\s*define\s+(AOT_\w+)\s+\(?(0x[0-9A-Fa-f]+|\d+)u?\)?\s*(?:/\*.*)?$",
                     re.MULTILINE)


@functools.cache
def runtime_config() -> dict[str, int]:
    """The runtime's default capacities, ``{"AOT_MAX_KERNELS": 256, ...}``, as
    runtime_c/include/aot/config.h defines them: the one place they live, so
    the host reads them instead of repeating the numbers."""
    path = RUNTIME_DIR / "include" / "aot" / "config.h"
    try:
        text = path.read_text()
    except OSError as err:
        raise ExportError(f"the C runtime is missing: cannot read {path}: "
                          f"{err.strerror or err}") from None
    return {name: int(value, 0) for name, value in _DEFINE.findall(text)}


def cmake_lists(name: str, build: dict) -> str:
    """A CMakeLists.txt with the static library ``name`` and the object library
    ``name_rpc``, printed from metadata.json's ``build`` (:func:`build_settings`)."""
    return _template("CMakeLists.txt.j2").render(name=name, **build)


def cmake_opt_flags(target: str, flags) -> str:
    """CMake text giving ``target`` the optimisation ``flags`` unless the build
    chose its own (a CMAKE_BUILD_TYPE, or -O in CMAKE_C_FLAGS): the rule every
    generated CMakeLists.txt follows (templates/cmake_flags.j2)."""
    return _template("cmake_flags.j2").module.opt_flags(target, list(flags))


def make_fragment(name: str, build: dict) -> str:
    """A Makefile fragment: variables for the sources and flags, and a libP.a
    rule, printed from metadata.json's ``build`` (:func:`build_settings`)."""
    return _template("model.mk.j2").render(name=name, UP=name.upper(), **build)


def library_sources(files: dict[str, str], name: str) -> list[str]:
    """The .c files of the model library (everything generated except the RPC descriptor)."""
    return sorted(p for p in files if p.startswith("codegen/") and p.endswith(".c")
                  and p != f"codegen/{name}_rpc.c")


def write_artifact(out_dir, name: str, files: dict[str, str], metadata: dict, *,
                   tar: bool = False) -> Path:
    """Write the artifact into ``out_dir``: a new or empty directory, or an earlier
    artifact, whose codegen/, include/ and runtime/ are replaced (never a folder
    holding anything else, so ``-o .`` cannot wipe a project's include/).

    ``files`` are the generated texts (or bytes: objects) by relative path; ``metadata["build"]``
    (:func:`build_settings`) says which runtime port to include.  Files whose
    bytes do not change keep their time stamps.  With ``tar``, also
    writes ``<out_dir>.tar`` holding the same tree under ``<name>/`` and
    returns that path; otherwise returns ``out_dir``.
    """
    out = Path(out_dir)
    build = metadata.get("build") or build_settings(name, files, None)
    try:
        if out.exists() and not out.is_dir():
            raise ExportError(f"{out} exists and is not a directory")
        if out.is_dir() and any(out.iterdir()) and not _is_artifact(out):
            raise ExportError(f"{out} is not empty and holds no aot artifact: write the "
                              "artifact to a new or empty directory")
        out.mkdir(parents=True, exist_ok=True)
        texts = {rel: text if isinstance(text, bytes) else text.encode()
                 for rel, text in files.items()}
        texts["CMakeLists.txt"] = cmake_lists(name, build).encode()
        texts[f"{name}.mk"] = make_fragment(name, build).encode()
        texts["metadata.json"] = (json.dumps(metadata, indent=2, sort_keys=False)
                                  + "\n").encode()
        port = build["board"]["port"] if build["board"] else None
        for rel, src in runtime_files(port).items():
            texts[rel] = src.read_bytes()
        _write_changed(out, texts)
        if not tar:
            return out
        tar_path = out.resolve().with_name(out.resolve().name + ".tar")
        with tarfile.open(tar_path, "w") as archive:
            for path in sorted(out.rglob("*")):
                if path.is_file():
                    archive.add(path, arcname=f"{name}/{path.relative_to(out)}",
                                filter=_normalize)
        return tar_path
    except OSError as err:
        raise ExportError(f"cannot write the artifact to {out}: {err.strerror or err}") from None


def _write_changed(out: Path, texts: dict[str, bytes]) -> None:
    """Make ``out`` hold ``texts``: files whose bytes are unchanged keep their
    time stamps (so a build system recompiles only what changed), and files of
    an earlier artifact that are no longer part of it go."""
    for sub in ("codegen", "include", "runtime"):
        for path in sorted((out / sub).rglob("*"), reverse=True):
            rel = path.relative_to(out).as_posix()
            if path.is_file() and rel not in texts:
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    for rel, data in texts.items():
        path = out / rel
        try:
            if path.read_bytes() == data:
                continue
        except OSError:
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _is_artifact(path: Path) -> bool:
    try:
        return json.loads((path / "metadata.json").read_text()).get("format") == METADATA_FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def _normalize(info: tarfile.TarInfo) -> tarfile.TarInfo:
    # Same inputs, same archive: no owner names or times from this machine.
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


def read_metadata(artifact) -> dict:
    """``metadata.json`` of an artifact directory or .tar."""
    path = Path(artifact)
    try:
        if path.is_dir():
            return json.loads((path / "metadata.json").read_text())
        with tarfile.open(path) as archive:
            member = next(m for m in archive.getmembers()
                          if m.name.endswith("/metadata.json") and m.name.count("/") == 1)
            return json.load(io.TextIOWrapper(archive.extractfile(member)))
    except (OSError, StopIteration, tarfile.TarError, json.JSONDecodeError) as err:
        raise ExportError(f"{path} is not an aot artifact: {err}") from None


def firmware_variables(board) -> dict | None:
    """The variables of ``board``'s firmware project that shape how its C is
    compiled, as data: ``cc`` (``CC``), ``port`` (``AOT_PORT``), ``arch_flags``
    (``AOT_ARCH_FLAGS``), ``opt_flags`` (``AOT_OPT_FLAGS``) and ``cflags`` (the
    record's cflags, then the board facts: ``AOT_EXTRA_CFLAGS`` after
    ``-Imodel/include``).  :func:`aot.firmware.project.create_project` writes
    them into project.json and the Makefile, and :func:`firmware_command` makes
    the code size's command of them.  None for a board the runtime has no port for."""
    built = board_build(board)
    if built is None:
        return None
    return {"cc": built["cc"], "port": built["port"], "arch_flags": built["cpu_flags"],
            "opt_flags": opt_flags(board), "cflags": [*built["cflags"], *built["defines"]]}


def firmware_command(variables: dict, extra_flags=()) -> FirmwareCommand:
    """The model sources' compile command in a firmware project with these
    :func:`firmware_variables` (or a project.json, whose ``cflags`` hold the
    external libraries' flags already), with ``extra_flags`` after the cflags
    (the external libraries' ``-I``/``-D``), composed as runtime.mk composes
    ``AOT_APP_CFLAGS``."""
    port_cflags = port_settings(variables["port"]).get("AOT_PORT_CFLAGS", "").split()
    return FirmwareCommand(variables["cc"], (
        *STRICT_FLAGS, "-Iruntime/include", *variables["arch_flags"], *variables["opt_flags"],
        *port_cflags, "-Imodel/include", *variables["cflags"], *extra_flags))
