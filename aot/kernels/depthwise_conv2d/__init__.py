"""DEPTHWISE_CONV_2D, organised as conv2d (docs/kernels.md):

* :mod:`~aot.kernels.depthwise_conv2d.compute`: the tensor expression
  (conv2d's pieces without the channel reduction), registered as the compute rule;
* :mod:`~aot.kernels.depthwise_conv2d.schedules`: the template per target key
  (built from conv2d's row-schedule pieces; conv2d's own for one input
  channel) and the space and schedule of the blocked rows the auto tuner's
  ``dwblock`` sketch searches;
* :mod:`~aot.kernels.depthwise_conv2d.intrin`: the row intrinsic onto
  ``aot_depthwise_s8``;
* :mod:`~aot.kernels.depthwise_conv2d.fuse`: the rewrite fusing those rows
  with their epilogue into ``aot_depthwise_requant_s8``;
* :mod:`~aot.kernels.depthwise_conv2d.blocked`: the blocked rows' tensor
  intrinsic;
* ``include/``: the C, ``aot_depthwise.h`` (the library's row helpers
  ``aot_depthwise_s8`` and ``aot_depthwise_requant_s8``, with its Helium
  half) and ``aot_dwblock.h`` (the blocked rows).

Depthwise imports conv2d's shared pieces (the row window, the fusing
machinery and requantization rows, the row-schedule pieces), never the reverse.
"""

from aot.kernels.depthwise_conv2d import compute, schedules  # noqa: F401  (register the rule and templates)
