"""The error hierarchy (aot.errors): each error class exists once."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import aot
import flash
from aot.errors import AotError, AotWarning, BuildError, PassError


def _error_classes():
    seen = {}
    for pkg in (aot, flash):
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            if info.name.endswith("__main__"):
                continue
            module = importlib.import_module(info.name)
            for _, obj in inspect.getmembers(module, inspect.isclass):
                if issubclass(obj, BaseException) and obj.__module__.startswith(("aot", "flash")):
                    seen.setdefault(obj.__name__, set()).add(obj)
    return seen


def test_no_two_error_classes_share_a_name():
    twice = {name: sorted(f"{c.__module__}.{c.__qualname__}" for c in classes)
             for name, classes in _error_classes().items() if len(classes) > 1}
    assert twice == {}


def test_every_error_a_user_can_cause_is_an_aot_error():
    classes = {c for group in _error_classes().values() for c in group}
    assert BuildError in classes and PassError in classes
    # Private signals (``_Name``) and FlatBufferError, the reader's internal signal,
    # are turned into AotErrors where they cross a stage boundary.  AotWarning is a
    # notice (the warnings module), not an error.
    outside = sorted(c.__qualname__ for c in classes
                     if not issubclass(c, (AotError, AotWarning))
                     and not c.__qualname__.startswith("_")
                     and c.__qualname__ != "FlatBufferError")
    assert outside == []
