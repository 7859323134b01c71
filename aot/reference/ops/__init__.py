"""numpy reference kernels, bit-exact with TFLite Micro's reference kernels.

Pure functions on numpy arrays and plain scalars, independent of the graph
IR: activations NHWC, weights as TFLite stores them (conv OHWI, depthwise
``[1, KH, KW, C*M]``, dense ``[out, in]``), quantization passed as explicit
scales and zero points (the float32 values stored in the model).  The dtype
of the main input selects the path: int8, int16 (16x8: int8 weights) or
float32.  Integer kernels reproduce TFLM's fixed-point arithmetic exactly
(docs/reference.md states it); float32 kernels agree within 1e-5 relative.

Kernels by module:

* ``conv``: ``conv2d``, ``depthwise_conv2d``, ``transpose_conv2d``
* ``fully_connected``: ``fully_connected``
* ``batch_matmul``: ``batch_matmul``
* ``pool``: ``average_pool2d``, ``max_pool2d``
* ``softmax``: ``softmax``
* ``elementwise``: ``add``, ``sub``, ``mul``, ``maximum``, ``minimum``
* ``activations``: ``relu``, ``relu6``, ``relu_n1_to_1``, ``leaky_relu``,
  ``hard_swish``, ``logistic``, ``tanh``
* ``quantize``: ``quantize``, ``dequantize``
* ``reduce``: ``mean``, ``reduce_sum``, ``cumsum``
* ``shape``: ``concatenation``, ``pad``, ``strided_slice``, ``transpose``,
  ``reshape``, ``gather``, ``gather_nd``
* ``svdf``: ``svdf`` (state in, new state out)
* ``lstm``: ``unidirectional_sequence_lstm`` (hidden and cell state in and out)

Helpers: ``common`` (padding and receptive fields).  The integer
arithmetic (QuantizeMultiplier, the multiply/round primitives, gemmlowp
fixed point, the int16 look-up tables, the Prepare-time parameters) lives in
:mod:`aot.quant`, shared with the kernels and the passes.
"""
