"""DEPTHWISE_CONV_2D, organised as conv2d (docs/kernels.md):

* :mod:`~aot.kernels.depthwise_conv2d.compute`: the tensor expression
  (conv2d's pieces without the channel reduction), registered as the compute rule;
* :mod:`~aot.kernels.depthwise_conv2d.schedules`: the template per target key
  (conv2d's, whose knobs cover depthwise rows) and the space and schedule of
  the blocked rows the auto tuner's ``dwblock`` sketch searches;
* :mod:`~aot.kernels.depthwise_conv2d.blocked`: the blocked rows' tensor
  intrinsic;
* ``include/``: the C, ``aot_depthwise.h`` (the library's row helpers
  ``aot_depthwise_s8`` and ``aot_depthwise_requant_s8``, with its Helium
  half) and ``aot_dwblock.h`` (the blocked rows).

The intrinsic onto the row helpers and the rewrite fusing them with the
epilogue are conv2d's (:mod:`aot.kernels.conv2d.intrin`,
:mod:`aot.kernels.conv2d.fuse`), beside the template both operators share.
"""

from aot.kernels.depthwise_conv2d import compute, schedules  # noqa: F401  (register the rule and templates)
