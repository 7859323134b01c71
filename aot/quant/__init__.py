"""Quantization arithmetic: the one home of TFLM's integer semantics in Python.

* :mod:`~aot.quant.arith`: ranges, rounding, multipliers and the
  multiply-by-quantized-multiplier family, with TFLM's exact integer results;
* :mod:`~aot.quant.fixedpoint`: gemmlowp's fixed-point exp and reciprocal;
* :mod:`~aot.quant.params`: the parameters TFLM's ``Prepare`` functions derive
  from scales (softmax, mean, LSTM gates, log2 of a scale);
* :mod:`~aot.quant.lut`, :mod:`~aot.quant.sigmoid_table`: TFLM's int16 lookup
  tables.

The reference interpreter, the kernels and the graph passes all take their
arithmetic from here.  It depends on numpy only (tests/quant checks that it
imports nothing else of aot).
"""
