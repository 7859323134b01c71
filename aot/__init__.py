"""aot: an ahead-of-time compiler that puts neural networks on microcontrollers.

The pipeline and the folder layout are described in ``docs/architecture.md``;
each sub-package is one stage and is importable on its own.
"""

from aot.version import __version__

__all__ = ["Target", "build", "lower", "__version__"]


def __getattr__(name: str):
    # ``aot.Target`` on first use: the command line starts without the target package.
    if name == "Target":
        from aot.target import Target
        return Target
    raise AttributeError(f"module 'aot' has no attribute {name!r}")


def lower(sch, args, name="default_function", **kwargs):
    """Lower a schedule to a loop nest (PrimFunc); see aot.codegen.build."""
    from aot.codegen.build import lower as _lower
    return _lower(sch, args, name=name, **kwargs)


def build(sch, args=None, target="c", name="default_function", **kwargs):
    """Generate C for a schedule; see aot.codegen.build."""
    from aot.codegen.build import build as _build
    return _build(sch, args, target=target, name=name, **kwargs)
