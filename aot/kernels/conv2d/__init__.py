"""CONV_2D, the worked example of an operator package (docs/kernels.md).

* :mod:`~aot.kernels.conv2d.compute`: the tensor expression (padding,
  accumulation, requantizing epilogue), registered as the compute rule;
  depthwise_conv2d and dense build on its pieces;
* :mod:`~aot.kernels.conv2d.schedules`: the schedule template, one per
  target key, whose default configuration is the library's schedule and
  which the tuner searches, built from row-schedule pieces depthwise_conv2d's
  template shares;
* :mod:`~aot.kernels.conv2d.intrin`: tensor intrinsics onto the int8
  helpers of the support headers (portable C, DSP, Helium), and the row
  window and buffers depthwise's intrinsic shares;
* :mod:`~aot.kernels.conv2d.fuse`: the rewrites fusing a row's accumulation
  call with its epilogue's, the machinery and requantization rows
  depthwise's rewrite shares;
* :mod:`~aot.kernels.conv2d.paths`: which path of the C helpers a call
  takes, decided when the C is generated;
* :mod:`~aot.kernels.conv2d.helium`: the Helium requantizing epilogue;
* :mod:`~aot.kernels.conv2d.blocked`: the blocked intrinsic of the auto
  tuner's ``block`` sketch;
* ``include/``: their C, ``aot_conv2d.h`` (with its Helium half) and
  ``aot_block.h``, which its kernels include (the rule's ``headers``).
"""

from aot.kernels.conv2d import compute, schedules  # noqa: F401  (register the rule and templates)
