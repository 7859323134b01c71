"""Where the shared models are: ``../shared/models`` relative to the project root.

Tests read the models from there and never copy them into the project.
tests/conftest.py may point the tests at another folder (:func:`use_models_dir`)
before any test module imports these names.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = ROOT.parent / "shared" / "models"


MANIFEST = MODELS_DIR / "MANIFEST.json"


def _manifest() -> list[dict]:
    return json.loads(MANIFEST.read_text()) if MANIFEST.exists() else []


#: The manifest entries, one per model file.
MODELS = _manifest()
MODEL_NAMES = [m["name"] for m in MODELS]


def use_models_dir(path: Path) -> None:
    """Read the models (and their manifest) from ``path`` instead."""
    global MODELS_DIR, MANIFEST, MODELS, MODEL_NAMES
    MODELS_DIR = Path(path).resolve()
    MANIFEST = MODELS_DIR / "MANIFEST.json"
    MODELS = _manifest()
    MODEL_NAMES = [m["name"] for m in MODELS]

#: Seeded random invocations appended to each model's samples.
RANDOM_INVOCATIONS = 4


def random_inputs(graph, seed: int, count: int = RANDOM_INVOCATIONS) -> list[list]:
    """``count`` invocations of seeded random inputs for ``graph``.

    Integer inputs alternate between values near the zero point (like real
    data: later layers stay unsaturated) and the full range (exercises
    saturation); float inputs are standard normal.
    """
    rng = np.random.default_rng(seed)
    sequence = []
    for step in range(count):
        inputs = []
        for t in graph.inputs:
            if t.dtype == "float32":
                inputs.append(rng.standard_normal(t.shape).astype(np.float32))
                continue
            info = np.iinfo(t.type.np_dtype)
            if step % 2:
                x = rng.integers(info.min, info.max, t.shape, endpoint=True)
            else:
                x = rng.normal(t.quant.zero_point[0], 20, t.shape).round()
            inputs.append(np.clip(x, info.min, info.max).astype(t.type.np_dtype))
        sequence.append(inputs)
    return sequence


def model_sequence(entry: dict, graph) -> list[list]:
    """The model's sample inputs (when the shared folder has them), then seeded
    random ones: one list of input arrays per invocation, run from a fresh state."""
    sample = MODELS_DIR / "samples" / f"{entry['name']}.npy"
    sequence = [[x] for x in np.load(sample)] if sample.exists() else []
    return sequence + random_inputs(graph, seed=len(entry["name"]))


#: Arm's CMSIS-NN source tree beside the project (unmodified, Apache-2.0): the
#: cmsis-nn codegen's tests compile it in place, never copy it.
CMSIS_NN_DIR = ROOT.parent / "shared" / "third_party" / "CMSIS-NN"

#: The small int8 transformers the project generates and checks in
#: (bench/models/transformers/gen_transformers.py, which needs TensorFlow).
TRANSFORMERS_DIR = ROOT / "bench" / "models" / "transformers"
