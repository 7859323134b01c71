"""numpy reference kernels, bit-exact with TFLite Micro's reference kernels.

Pure functions on numpy arrays and plain scalars, independent of the graph
IR: activations NHWC, weights as TFLite stores them, quantization passed as
explicit scales and zero points (float32 values as stored in the model).
Integer kernels reproduce TFLM's fixed-point arithmetic exactly (see
docs/reference.md); float32 kernels agree within 1e-5 relative.
"""
