"""Auto-tuning kernels on the device over the serial RPC (see docs/tuning.md).

* the knobs, config spaces and templates it searches live with the
  operators (:mod:`aot.kernels.template`, ``aot/kernels/<op>/schedules.py``);
* :mod:`aot.tune.workload`: the distinct tunable kernels of a model;
* :mod:`aot.tune.tuner`: random, grid and evolutionary search;
* :mod:`aot.tune.measure`: the builder and the runner (many candidates per
  firmware image, every output checked against the reference);
* :mod:`aot.tune.records`: tuning records as JSON lines;
* :mod:`aot.tune.session`: :func:`tune_model`, the loop tying them together.
"""
