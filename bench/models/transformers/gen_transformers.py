"""Generate the small int8 transformers under bench/models/transformers/.

NEEDS TENSORFLOW (CPU build, 2.21 was used) in a separate virtual
environment; it is not a project dependency and CI never runs this script.
The .tflite files it writes are checked in, so tests and benches need only
the project's own dependencies:

    python3 -m venv ../tfvenv && ../tfvenv/bin/pip install tensorflow-cpu
    ../tfvenv/bin/python bench/models/transformers/gen_transformers.py

Models (random weights from a fixed seed; they are operator mixes, not trained
classifiers):

* ``attention_int8``: one attention block on a (1, 8, 16) input: Keras
  MultiHeadAttention (2 heads of 8), residual ADD, LayerNormalization.
* ``kwt_int8``: a keyword transformer (KWT): (1, 16, 20) features, a Dense
  patch embedding to 32, a learned position embedding, 2 blocks of
  pre-norm MultiHeadAttention (2 heads) and a ReLU MLP (64), a final
  LayerNormalization, the time mean, Dense(8) and softmax.
* ``kwt_gelu_int8``: the same with a GELU MLP (Keras ``gelu``); the
  converter emits the GELU builtin, which TFLM lacks (aot's extension).
* ``attention_int16``: ``attention_int8``'s block quantized 16x8 (int16
  activations, int8 weights; the converter cannot quantize the
  LayerNormalization's NEG to 16x8 and keeps it in float between a
  DEQUANTIZE and a QUANTIZE, as it does in int8).

The int8 ones are fully int8 (int8 input and output); all are quantized
with 200 representative samples drawn from N(0, 1).
"""

from __future__ import annotations

import pathlib

import numpy as np
import tensorflow as tf

HERE = pathlib.Path(__file__).resolve().parent


def attention_block(seq=8, dim=16, heads=2):
    x = tf.keras.Input((seq, dim), batch_size=1)
    a = tf.keras.layers.MultiHeadAttention(heads, dim // heads)(x, x)
    y = tf.keras.layers.LayerNormalization(epsilon=1e-5)(x + a)
    return tf.keras.Model(x, y)


class PositionEmbedding(tf.keras.layers.Layer):
    """A learned vector per time step, added to the input."""

    def build(self, shape):
        self.table = self.add_weight(shape=(shape[1], shape[2]), initializer="random_normal")

    def call(self, x):
        return x + self.table[None]


def kwt(seq=16, feat=20, dim=32, heads=2, mlp=64, blocks=2, classes=8, act="relu"):
    x = tf.keras.Input((seq, feat), batch_size=1)
    h = tf.keras.layers.Dense(dim)(x)
    h = PositionEmbedding()(h)
    for _ in range(blocks):
        n = tf.keras.layers.LayerNormalization(epsilon=1e-6)(h)
        h = h + tf.keras.layers.MultiHeadAttention(heads, dim // heads)(n, n)
        n = tf.keras.layers.LayerNormalization(epsilon=1e-6)(h)
        m = tf.keras.layers.Dense(mlp, activation=act)(n)
        h = h + tf.keras.layers.Dense(dim)(m)
    h = tf.keras.layers.LayerNormalization(epsilon=1e-6)(h)
    h = tf.keras.layers.GlobalAveragePooling1D()(h)
    y = tf.keras.layers.Dense(classes, activation="softmax")(h)
    return tf.keras.Model(x, y)


def quantize(model, shape, seed, int16=False):
    rng = np.random.default_rng(seed)

    def samples():
        for _ in range(200):
            yield [rng.normal(size=shape).astype(np.float32)]

    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = samples
    if int16:
        conv.target_spec.supported_ops = [
            tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8,
            tf.lite.OpsSet.TFLITE_BUILTINS]
    else:
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = conv.inference_output_type = tf.int16 if int16 else tf.int8
    return conv.convert()


def main():
    tf.keras.utils.set_random_seed(34)
    attention = attention_block()
    models = {
        "attention_int8": (attention, (1, 8, 16)),
        "kwt_int8": (kwt(), (1, 16, 20)),
        "kwt_gelu_int8": (kwt(act="gelu"), (1, 16, 20)),
    }
    for seed, (name, (model, shape)) in enumerate(models.items()):
        data = quantize(model, shape, seed)
        (HERE / f"{name}.tflite").write_bytes(data)
        print(f"{name}.tflite: {len(data)} bytes")
    for name, model, shape in [("attention_int16", attention, (1, 8, 16))]:
        data = quantize(model, shape, 0, int16=True)
        (HERE / f"{name}.tflite").write_bytes(data)
        print(f"{name}.tflite: {len(data)} bytes")


if __name__ == "__main__":
    main()
