"""Artifacts laid out for a vendor SDK's build: ``aot compile --project KIND``.

* ``esp-idf``: the model as an ESP-IDF component (``CMakeLists.txt`` calling
  ``idf_component_register``, ``idf_component.yml``, the artifact in ``model/``);
* ``pico-sdk``: a Pico SDK application (``pico_sdk_import.cmake``,
  ``CMakeLists.txt`` with ``pico_sdk_init`` and ``pico_add_extra_outputs``,
  a ``main.c`` that runs the model, the artifact in ``model/``).

Each kind is a record of :data:`SDK_PROJECTS`: the runtime ports whose boards
its SDK builds for and the templates it prints.  Neither SDK can be
downloaded here: the layouts are checked by tests (structure, sources that
cross-compile), never built by the SDKs themselves (docs/integration.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from aot.version import __version__
from aot.codegen.jinja import templates
from aot.export import METADATA_FORMAT, ExportError, write_artifact

#: printf conversion and argument cast of each element type main.c prints.
_PRINTF = {"int8": ("%d", "(int)"), "uint8": ("%u", "(unsigned)"), "int16": ("%d", "(int)"),
           "int32": ("%ld", "(long)"), "float32": ("%g", "(double)")}


@dataclass(frozen=True)
class SdkProject:
    """One SDK layout: which runtime ports (boards) it serves, the templates
    it prints (output name -> template under aot/export/templates), and
    whether one of them is a main() that runs the model (and so needs the
    inputs' and outputs' C types)."""

    kind: str
    ports: tuple[str, ...]
    templates: dict[str, str]
    runs_model: bool = False
    idf_targets: tuple[str, ...] = ()


#: Where the artifact goes inside every SDK layout.
MODEL_DIR = "model"

SDK_PROJECTS = {
    "esp-idf": SdkProject("esp-idf", ("esp32c3",),
                          {"CMakeLists.txt": "esp-idf/CMakeLists.txt.j2",
                           "idf_component.yml": "esp-idf/idf_component.yml.j2"},
                          idf_targets=("esp32c3",)),
    "pico-sdk": SdkProject("pico-sdk", ("rp2040",),
                           {"CMakeLists.txt": "pico-sdk/CMakeLists.txt.j2",
                            "pico_sdk_import.cmake": "pico-sdk/pico_sdk_import.cmake.j2",
                            "main.c": "pico-sdk/main.c.j2"},
                           runs_model=True),
}


def _component_version(version: str) -> str:
    """aot's version as the semantic version the component manager accepts
    (``0.1.0.dev0`` -> ``0.1.0-dev0``)."""
    release, _, rest = version.partition(".dev")
    return f"{release}-dev{rest}" if _ else release


def _port(p: dict) -> dict:
    if p["dtype"] not in _PRINTF:
        raise ExportError(f"not supported yet: the Pico SDK example for a {p['dtype']} "
                          f"tensor ({p['name']})")
    from aot.codegen.c import C_TYPES  # the loop IR's C types: loaded for this layout only
    ctype = C_TYPES[p["dtype"]]
    fmt, cast = _PRINTF[p["dtype"]]
    count = 1
    for d in p["shape"]:
        count *= d
    zero = p["quantization"]["zero_point"][0] if p.get("quantization") else 0
    return {"c_name": p["c_name"], "ctype": ctype, "format": fmt, "cast": cast,
            "count": count, "zero": zero}


def write_sdk_project(kind: str, out_dir, name: str, files: dict[str, str],
                      metadata: dict) -> Path:
    """Write the artifact of ``name`` laid out for the SDK ``kind`` into ``out_dir``."""
    try:
        sdk = SDK_PROJECTS[kind]
    except KeyError:
        raise ExportError(f"unknown --project {kind!r}; known: "
                          f"{', '.join(sorted(SDK_PROJECTS))}") from None
    if metadata["build"].get("external"):
        codegens = ", ".join(lib["codegen"] for lib in metadata["build"]["external"])
        raise ExportError(f"not supported yet: --project {kind} with layers handed to "
                          f"external codegens ({codegens}; the SDK layouts do not compile their "
                          "libraries yet): use the artifact's CMakeLists.txt, which does, or "
                          "drop -libs")
    if metadata["build"].get("linker_scripts"):
        raise ExportError(f"not supported yet: --project {kind} with buffers in other memory "
                          "regions (the SDK's linker script would need their sections): compile "
                          "without --memory-regions, or use the artifact's own build files")
    board = metadata["build"]["board"]
    if board is None or board["port"] not in sdk.ports:
        where = metadata.get("board") or metadata.get("target")
        raise ExportError(f"--project {kind} builds for boards of the runtime port(s) "
                          f"{', '.join(sdk.ports)}, not for {where}: compile with --board "
                          "of such a board (`aot boards` lists each board's port)")
    out = Path(out_dir)
    if out.is_dir() and any(out.iterdir()) and not _is_sdk_project(out, kind):
        raise ExportError(f"{out} is not empty and holds no aot {kind} project: write it to a "
                          "new or empty directory")
    write_artifact(out / MODEL_DIR, name, files, metadata)
    values = dict(name=name, version=__version__, model=metadata["model"]["name"],
                  model_dir=MODEL_DIR,
                  board=metadata["board"], sources=metadata["build"]["sources"],
                  include_dirs=metadata["build"]["include_dirs"],
                  opt_flags=metadata["build"]["opt_flags"], cflags=board["cflags"],
                  component_version=_component_version(__version__),
                  idf_targets=sdk.idf_targets)
    if sdk.runs_model:
        values.update(inputs=[_port(p) for p in metadata["inputs"]],
                      outputs=[_port(p) for p in metadata["outputs"]])
    try:
        for rel, template in sdk.templates.items():
            (out / rel).write_text(templates("aot.export").get_template(template).render(**values))
    except OSError as err:
        raise ExportError(f"cannot write the {kind} project to {out}: "
                          f"{err.strerror or err}") from None
    return out


def _is_sdk_project(out: Path, kind: str) -> bool:
    meta = out / MODEL_DIR / "metadata.json"
    try:
        return json.loads(meta.read_text()).get("format") == METADATA_FORMAT
    except (OSError, ValueError, AttributeError):
        return False
