"""DEPTHWISE_CONV_2D, organised as conv2d (docs/kernels.md):

* :mod:`~aot.kernels.depthwise_conv2d.compute`: the tensor expression
  (conv2d's pieces without the channel reduction), registered as the compute rule;
* :mod:`~aot.kernels.depthwise_conv2d.schedules`: the template per target key
  (conv2d's, whose knobs cover depthwise rows) and the space and schedule of
  the blocked rows the auto tuner's ``dwblock`` sketch searches;
* :mod:`~aot.kernels.depthwise_conv2d.blocked`: the blocked rows' tensor
  intrinsic, whose C is ``include/aot_dwblock.h``.

The library's row helpers (``aot_depthwise_s8``, fused with the epilogue as
``aot_depthwise_requant_s8``) are still in conv2d's header
(``conv2d/include/aot_conv2d.h``), beside the convolution's they share code
with; the intrinsic and the fusing rewrite onto them are conv2d's too
(:mod:`aot.kernels.conv2d.intrin`, :mod:`aot.kernels.conv2d.fuse`).
"""

from aot.kernels.depthwise_conv2d import compute, schedules  # noqa: F401  (register the rule and templates)
