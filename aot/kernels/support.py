"""The support headers the generated kernels include, read from package data.

The C is kept as real header files (package data, so an installed wheel has
them; see pyproject.toml), edited as C.  Shared, in ``aot/kernels/include/``:

* ``aot_kernel_target.h``: what the core offers (``AOT_HAVE_DSP``,
  ``AOT_HAVE_MVE``) and the attributes the helpers and the constant arrays
  use (``AOT_ALIGNED``);
* ``aot_kernel_fixedpoint.h``: TFLM's fixed-point arithmetic
  (requantization, softmax's exp and reciprocal), bit-exact with
  :mod:`aot.quant.arith` and :mod:`aot.quant.fixedpoint`;
* ``aot_kernel_int8.h``: the int8 dot products the operators' helpers are
  built from (portable and DSP), ``aot_kernel_mve.h`` their Helium versions.

Each operator's own helpers are in ``aot/kernels/<op>/include/`` (e.g.
``aot_conv2d.h``, its Helium half ``aot_conv2d_mve.h``).  Every header
includes the headers it uses.  A kernel file includes
:data:`COMMON_HEADERS` and the headers its operators declare
(:func:`aot.kernels.registry.kernel_includes`); all of them are written into
one folder beside the kernels (compile output, tuning projects, tests),
whatever the target: the C preprocessor of the core a kernel is built for
picks the portable, DSP or Helium paths.
"""

from __future__ import annotations

import functools
import re
from importlib import resources

#: The header of the core's facts and attributes (``AOT_ALIGNED``): what C
#: that defines kernel constants needs, an external codegen's too.
TARGET_HEADER = "aot_kernel_target.h"
#: The headers every generated kernel file includes: the target's facts and
#: the fixed-point arithmetic of the quantized operators' epilogues.
COMMON_HEADERS = (TARGET_HEADER, "aot_kernel_fixedpoint.h")


@functools.cache
def _headers() -> tuple[tuple[str, str], ...]:
    # importlib.resources rather than a path from __file__: it also works
    # from a wheel, a zip or any other loader.
    root = resources.files("aot.kernels")
    folders = [root.joinpath("include")] + [
        d.joinpath("include") for d in root.iterdir()
        if d.is_dir() and d.joinpath("include").is_dir()]
    found: dict[str, str] = {}
    for folder in folders:
        for f in folder.iterdir():
            if not f.name.endswith(".h"):
                continue
            if f.name in found:  # they are written into one folder
                raise RuntimeError(f"two kernel headers are named {f.name}")
            found[f.name] = f.read_text(encoding="utf-8")
    return tuple(sorted(found.items()))


def header_define(name: str) -> int:
    """The integer value of ``#define name <int>`` in the support headers: a
    capacity the helpers and the schedules both use is written once, in C."""
    found = [int(m.group(1)) for _, text in _headers()
             for m in re.finditer(rf"^#define {re.escape(name)} (\d+)\b", text, re.M)]
    if len(found) != 1:
        raise RuntimeError(f"the support headers define {name} {len(found)} times, not once")
    return found[0]


def support_files(target=None) -> dict[str, str]:
    """The support headers by file name, to be written in one folder beside
    the kernels (the same for every target)."""
    del target  # the C preprocessor picks the portable, DSP or Helium paths
    return dict(_headers())
