"""Test helpers shared across test packages: a TFLite model builder and the TFLM oracle."""
