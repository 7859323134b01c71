"""aot: an ahead-of-time compiler that puts neural networks on microcontrollers.

The pipeline and the folder layout are described in ``docs/architecture.md``;
each sub-package is one stage and is importable on its own.
"""

__version__ = "0.1.0.dev0"
