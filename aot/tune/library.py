"""The kernel library with tuning records applied: what compiling with records uses.

:class:`TunedKernels` has the interface of :mod:`aot.kernels` that
:func:`aot.compile.compile_model` takes as ``kernel_library``.  It is kept
apart from the tuner (:mod:`aot.tune.session`) so that a compile with
records, which every ``aot compile`` is when aot ships records for the
target's core (:mod:`aot.tune.pretuned`), loads neither the tuner, the
firmware builder nor the cycle model.
"""

from __future__ import annotations

import os

from aot.kernels import lower_group, support_files
from aot.kernels.registry import find_template, select_strategy
from aot.kernels.template import ConfigError
from aot.tune import pretuned
from aot.tune import records as rec
from aot.tune.keys import workload_key


class TunedKernels:
    """The kernel library with the schedules of tuning records for one target.

    It has the interface of :mod:`aot.kernels` that
    :func:`aot.compile.compile_model` uses (``lower_group``,
    ``support_files``), so ``compile_model(..., kernel_library=tuned)``
    compiles with the best config per workload; ``applied`` lists the groups
    that used a record, ``tunable`` those that have a template.
    """

    def __init__(self, best: dict[str, rec.Record], target, shipped=None):
        self.best = best
        self.target = target
        #: the :class:`aot.tune.pretuned.Bundle` the records come from, None: the user's
        self.shipped = shipped
        self.applied: list[str] = []   # groups compiled with a record's config
        self.tunable: list[str] = []   # groups that have a template
        # groups whose record no longer fits its space: compiled with the library's
        # schedule, and said so (the compile command prints these as notes)
        self.stale: list[str] = []

    @classmethod
    def from_log(cls, path, target, model=None,
                 board: str | None = None) -> tuple[TunedKernels, list[str]]:
        """The best record per workload of ``path`` (one log, or a list of logs:
        the fastest record of any of them) for ``target``, and notes about
        records ignored (made for other targets).  With ``model`` (the model
        file or Graph being compiled), a workload's records of that model win
        over other models', and with ``board`` (the tag compiled for) estimates
        priced with that board's memory over other boards' (:func:`aot.tune.records.best`)."""
        paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
        identity = rec.model_identity(model) if model is not None else None
        chosen, notes = rec.best([r for p in paths for r in rec.load(p)], target, identity,
                                 board)
        return cls(chosen, target), notes

    @classmethod
    def shipped_for(cls, target) -> tuple[TunedKernels | None, list[str]]:
        """The kernel library with aot's pre-tuned records for ``target``
        (:mod:`aot.tune.pretuned`), None when none ship for its core, and notes
        (a log of another aot version, not applied)."""
        bundle, records, notes = pretuned.for_target(target)
        if not records:
            return None, notes
        chosen, more = rec.best(records, target)
        return cls(chosen, target, shipped=bundle), notes + more

    @property
    def whole_layers_only(self) -> bool:
        """Whether the default stream stage is skipped for this library: the
        user's records were tuned for the whole layers (a band's kernel would
        lose them); aot's own records only add to the library's defaults."""
        return self.shipped is None

    def for_group(self, group):
        """``(schedule, finish)`` for ``group``: ``schedule(s, final, stages)``
        applies the record's config when its workload has one, else the
        library's strategy; ``finish(kernel)`` then applies the config's
        compile options.  None for groups without a template."""
        if group.kind == "view" or group.anchor is None:
            return None
        template = find_template(group.anchor.op, self.target)
        if template is None:
            return None
        keys = tuple(self.target.keys)
        chosen = {}

        def schedule(s, final, stages):
            record = self.best.get(workload_key(group, stages))
            if record is not None:
                # a record of the auto tuner names its sketch (aot.tune.auto)
                auto = "sketch" in record.config
                space = (_auto_space(template, stages, final, self.target) if auto
                         else template.space(stages, final, self.target))
                try:
                    chosen["config"] = space.config(record.config)
                except ConfigError as err:
                    # the template or the sketch rules changed since the record was made
                    self.stale.append(f"{group.name}: its tuning record no longer fits the "
                                      f"{'auto' if auto else 'template'} space ({err}); "
                                      "compiled with the library's schedule instead")
                if "config" in chosen:
                    self.applied.append(group.name)
                    if auto:
                        _auto_apply(template, s, final, stages, chosen["config"])
                    else:
                        template.apply(s, final, stages, chosen["config"])
                    return
            select_strategy(group.anchor.op, keys)[1](s, final, stages)

        def finish(kernel):
            if "config" not in chosen:
                return kernel
            config = chosen["config"]
            return template.finish(kernel, getattr(config, "config", config))
        return schedule, finish

    def lower_group(self, group, ag, target, *, name: str):
        tuned = self.for_group(group)
        if tuned is None:
            return lower_group(group, ag, target, name=name)
        self.tunable.append(group.name)
        schedule, finish = tuned
        return finish(lower_group(group, ag, target, name=name, schedule=schedule))

    @staticmethod
    def support_files(target) -> dict[str, str]:
        return support_files(target)


# The auto tuner's sketches (aot.tune.auto) are loaded for the first record that names
# one: importing them loads the tuner and the firmware builder (about 0.3 s), which a
# compile with template records, such as aot's pre-tuned ones, does without.
def _auto_space(template, stages, final, target):
    from aot.tune.auto.workload import space_for
    return space_for(template, stages, final, target)


def _auto_apply(template, s, final, stages, config) -> None:
    from aot.tune.auto.workload import apply
    apply(template, s, final, stages, config)
