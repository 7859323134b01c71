"""onnxruntime sessions for comparing ONNX models with the reference.

onnxruntime's x86 integer GEMM (QLinearConv, QLinearMatMul, QDQ graphs it
fuses into them) multiplies uint8 activations by int8 weights with AVX2's
VPMADDUBSW, which saturates each pair of products to int16.  On a CPU with
AVX2 but no VNNI (e.g. the AMD EPYC machines this project is tested on) its
results then drift by tens of output steps; on a VNNI CPU they do not, so
the same test passed or failed with the machine.  The session option
``session.x64quantprecision`` selects non-saturating kernels, so onnxruntime
is then an oracle that does not depend on the CPU it runs on.  Those kernels
exist only for uint8 activations (the saturating case); for a graph they do
not cover, onnxruntime refuses the option at session creation and the
default kernels are used (the int8-activation tests pass with them on an
AVX2-only CPU too).
"""

from __future__ import annotations

import onnxruntime as ort


#: What onnxruntime raises when no kernel of a node's types exists.
_NO_KERNEL = ort.capi.onnxruntime_pybind11_state.NotImplemented


def ort_session(model, *, quiet: bool = False) -> ort.InferenceSession:
    """A CPU session for ``model`` (a path or serialized bytes) whose integer
    kernels do not saturate intermediate products where onnxruntime has such
    kernels; ``quiet`` hides the warnings onnxruntime prints for models that
    list initializers as inputs."""
    source = model if isinstance(model, bytes) else str(model)
    try:
        return _session(source, quiet, precise=True)
    except _NO_KERNEL:
        return _session(source, quiet, precise=False)


def _session(source, quiet: bool, precise: bool) -> ort.InferenceSession:
    options = ort.SessionOptions()
    if precise:
        options.add_session_config_entry("session.x64quantprecision", "1")
    if quiet:
        options.log_severity_level = 3
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
