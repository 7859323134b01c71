"""The operator kernel library: one fused group -> one C function.

``lower_group(group, ag, target, name=...)`` builds the group's tensor
expression from each node's compute rule (one folder per operator:
:mod:`~aot.kernels.conv2d`, :mod:`~aot.kernels.depthwise_conv2d` and
:mod:`~aot.kernels.dense` with compute, schedule templates, intrinsics and
C headers; :mod:`~aot.kernels.pool`, :mod:`~aot.kernels.elementwise`,
:mod:`~aot.kernels.activation`, :mod:`~aot.kernels.movement`,
:mod:`~aot.kernels.batch_matmul`, :mod:`~aot.kernels.transpose_conv2d`,
:mod:`~aot.kernels.reduce` and :mod:`~aot.kernels.softmax` with their compute
and fixed schedule), schedules it with the strategy the target's keys select
(:mod:`aot.kernels.registry`; a template's default for the tunable
operators) and lowers it to loop IR, which :mod:`aot.codegen` prints.  The stateful operators (SVDF,
LSTM), whose state is updated in place, render the C template in their
folder instead (:mod:`~aot.kernels.svdf`, :mod:`~aot.kernels.lstm`,
:mod:`~aot.kernels.variable`).  A kernel file includes the shared support
headers and those its operators declare
(:func:`~aot.kernels.registry.kernel_includes`); :func:`support_files` are
all of them, written beside the kernel files.
"""

from aot.kernels import (  # noqa: F401  (each module registers its rules)
    activation, batch_matmul, conv2d, dense, depthwise_conv2d, elementwise, lstm, movement, pool,
    reduce, softmax, svdf, topk, transpose_conv2d, variable,
)
from aot.kernels.group import lower_group
from aot.kernels.kernel import Kernel, KernelError, KernelParam
from aot.kernels.parts import PartArg, PartKernel, lower_parts
from aot.kernels.registry import COMPUTES, HANDWRITTEN, STRATEGIES, TEMPLATES
from aot.kernels.support import support_files

__all__ = ["COMPUTES", "HANDWRITTEN", "STRATEGIES", "TEMPLATES", "Kernel", "KernelError",
           "KernelParam", "PartArg", "PartKernel", "lower_group", "lower_parts",
           "support_files"]
