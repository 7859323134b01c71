"""The CMSIS-NN source tree a user gives (``--cmsis-nn PATH``): its checks and sources.

The tree is used in place, never copied: the build settings name its
folder, and every build compiles the C files of it that the generated
calls need.  Which files those are is read from the tree itself: an index
of the ``arm_*`` functions each ``Source/**/*.c`` file defines and the
``arm_*`` names it mentions, closed transitively from the entry points the
model calls (header-only inline functions are followed too).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from aot.byoc.contract import ExternalCodegenError

#: What a CMSIS-NN source tree must hold (the layout of Arm's repository).
REQUIRED = ("Include/arm_nnfunctions.h", "Include/arm_nn_types.h", "Source")
INCLUDE_DIRS = ("Include",)

_NAME = re.compile(r"\barm_\w+\b")
_DEF = re.compile(r"^(?![ \t#/*])[^\n;(]*?\b(arm_\w+)\s*\(", re.MULTILINE)


def check_tree(path) -> Path:
    """``path`` resolved, if it is a CMSIS-NN source tree; otherwise a clear error."""
    root = Path(path).expanduser()
    if not root.is_dir():
        raise ExternalCodegenError(
            f"cmsis-nn: the CMSIS-NN source tree {root} does not exist; give --cmsis-nn the "
            "folder of Arm's CMSIS-NN repository (it holds Include/ and Source/)")
    missing = [rel for rel in REQUIRED if not (root / rel).exists()]
    if missing:
        raise ExternalCodegenError(
            f"cmsis-nn: {root} is not a CMSIS-NN source tree (missing {', '.join(missing)}); "
            "give --cmsis-nn the folder that holds Include/arm_nnfunctions.h and Source/")
    return root.resolve()


def _definitions(text: str) -> dict[str, str]:
    """The functions ``text`` defines (a body follows the parameters), each with
    its body."""
    found = {}
    for m in _DEF.finditer(text):
        depth, i = 0, m.end() - 1
        while i < len(text):
            c = text[i]
            depth += c == "("
            depth -= c == ")"
            i += 1
            if depth == 0:
                break
        rest = text[i:i + 200]
        if not rest.lstrip().startswith("{"):
            continue
        start = i + rest.index("{")
        depth, j = 0, start
        while j < len(text):
            depth += text[j] == "{"
            depth -= text[j] == "}"
            j += 1
            if depth == 0:
                break
        found[m.group(1)] = text[start:j]
    return found


def _strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.DOTALL)


@functools.cache
def _index(root: Path) -> tuple[dict[str, str], dict[str, frozenset[str]]]:
    """(function -> where it is defined, place -> arm_* names it needs).

    A ``.c`` file is compiled whole, so the place is the file and it needs
    every name it mentions; a header's inline function is its own place
    (``header.h:name``) and needs what its body mentions."""
    defined: dict[str, str] = {}
    mentions: dict[str, frozenset[str]] = {}
    for path in sorted(root.glob("Include/**/*.h")):
        rel = path.relative_to(root).as_posix()
        for name, body in _definitions(_strip_comments(path.read_text(errors="replace"))).items():
            defined[name] = f"{rel}:{name}"
            mentions[defined[name]] = frozenset(_NAME.findall(body))
    for path in sorted(root.glob("Source/**/*.c")):
        rel = path.relative_to(root).as_posix()
        text = _strip_comments(path.read_text(errors="replace"))
        mentions[rel] = frozenset(_NAME.findall(text))
        for name in _definitions(text):
            defined[name] = rel
    return defined, mentions


def sources_for(root: Path, entry_points) -> tuple[str, ...]:
    """The ``Source/`` files (relative to ``root``) that define ``entry_points``
    and everything they call, transitively."""
    defined, mentions = _index(root)
    missing = [e for e in entry_points if e not in defined]
    if missing:
        raise ExternalCodegenError(
            f"cmsis-nn: {root} defines no {', '.join(missing)}: is it an older or newer "
            "CMSIS-NN than this codegen knows (it calls the s8 wrappers of CMSIS-NN 6)?")
    files: set[str] = set()
    todo = [defined[e] for e in entry_points]
    while todo:
        rel = todo.pop()
        if rel in files:
            continue
        files.add(rel)
        todo += [defined[n] for n in mentions[rel] if n in defined and defined[n] not in files]
    return tuple(sorted(f for f in files if f.endswith(".c")))
