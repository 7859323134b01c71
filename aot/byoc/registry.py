"""The registry of external codegens: what ``-libs=NAME`` may name.

:data:`CODEGENS` starts from one explicit list (:data:`BUILTIN`);
:func:`register` adds a user's codegen (one file: its pattern table,
``generate`` and ``configure``, then one ``register`` call, docs/byoc.md)
and refuses a name it already has; :func:`unregister` removes one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aot.byoc import cmsis_nn
from aot.byoc.contract import ExternalCodegen, ExternalCodegenError
from aot.errors import did_you_mean
from aot.target import Target

#: The codegens that ship with aot.
BUILTIN: tuple[ExternalCodegen, ...] = (cmsis_nn.CODEGEN,)

CODEGENS: dict[str, ExternalCodegen] = {}


def register(codegen: ExternalCodegen) -> ExternalCodegen:
    """Make ``codegen`` available to ``-libs=``; a name registered twice is an error."""
    if not isinstance(codegen, ExternalCodegen):
        raise ExternalCodegenError(f"register() takes an ExternalCodegen, not {codegen!r}")
    if codegen.name in CODEGENS:
        raise ExternalCodegenError(f"external codegen {codegen.name!r} is registered twice")
    CODEGENS[codegen.name] = codegen
    return codegen


def unregister(name: str) -> None:
    """Remove the codegen called ``name`` (tests, plug-ins replaced at run time)."""
    CODEGENS.pop(name, None)


for _codegen in BUILTIN:
    register(_codegen)


def get(name: str) -> ExternalCodegen:
    """The codegen ``-libs`` calls ``name``; an error naming the registered ones."""
    try:
        return CODEGENS[name]
    except KeyError:
        raise ExternalCodegenError(
            f"-libs={name}: no external codegen is called {name!r}{did_you_mean(name, CODEGENS)}"
            f"; registered: {', '.join(sorted(CODEGENS)) or 'none'} (docs/byoc.md tells how "
            "to add one)") from None


def configure(target: Target, options: Mapping[str, Mapping[str, Any]] | None = None
              ) -> dict[str, Mapping[str, Any]]:
    """Check every codegen of ``target``'s ``-libs`` against the target and its
    options (``{codegen name: {option: value}}``) before anything is compiled;
    returns the options each codegen's ``generate`` sees.  Options for a
    codegen the target does not name are refused (they would be ignored)."""
    options = dict(options or {})
    libs = tuple(target.attrs.get("libs") or ())
    if len(set(libs)) != len(libs):
        raise ExternalCodegenError(f"-libs={','.join(libs)} names a codegen twice")
    configured: dict[str, Mapping[str, Any]] = {}
    for name in libs:
        codegen = get(name)
        given = dict(options.pop(name, {}) or {})
        unknown = sorted(set(given) - set(codegen.options))
        if unknown:
            raise ExternalCodegenError(
                f"external codegen {name!r} has no option {unknown[0]!r}; its options: "
                f"{', '.join(codegen.options) or 'none'}")
        configured[name] = (codegen.configure(target, given) if codegen.configure is not None
                            else given)
    for name, given in options.items():
        if given:
            what = ", ".join(sorted(given))
            raise ExternalCodegenError(
                f"options for the external codegen {name!r} ({what}) but the target's -libs "
                f"does not name it: add -libs={','.join([*libs, name])} to the target (with "
                "--board: --target 'c -libs=...')")
    return configured


def tables(target: Target) -> tuple:
    """The pattern tables of the target's ``-libs``, in that order."""
    return tuple(get(name).table for name in (target.attrs.get("libs") or ()))
