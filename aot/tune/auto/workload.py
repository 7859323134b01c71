"""A workload searched over its sketches instead of its template's space."""

from __future__ import annotations

from dataclasses import fields

from aot.kernels.depthwise_conv2d.schedules import apply_dwblock
from aot.kernels.kernel import Kernel
from aot.tune.auto.sketch import (AutoConfig, AutoSpace, apply_block, apply_tiled, file_knobs,
                                  sketches)
from aot.tune.workload import Workload, lower_with


def apply(template, s, final, stages, config: AutoConfig) -> None:
    """Schedule with ``config``: its template's code for the ``template``
    sketch, the blocking or tiling rules otherwise."""
    if config.sketch == "template":
        template.apply(s, final, stages, config.config)
    elif config.sketch == "block":
        apply_block(s, final, stages, config)
    elif config.sketch == "dwblock":
        apply_dwblock(s, final, stages, config)
    else:
        apply_tiled(s, final, stages, config, intrin=config.sketch == "dot")


def finish(template, kernel: Kernel, config: AutoConfig) -> Kernel:
    """The file knobs (``optimize``, ``vector_isa``) every sketch has."""
    return template.finish(kernel, config.config)


def space_for(template, stages, final, target) -> AutoSpace:
    return AutoSpace(sketches(template, stages, final, target),
                     file_knobs(template, stages, final, target))


class AutoWorkload(Workload):
    """:class:`~aot.tune.workload.Workload` whose ``space`` is an
    :class:`AutoSpace` and ``default`` the library's schedule in it (the
    template sketch's default).  Same key, inputs and reference data, so its
    records live beside the template tuner's."""

    @classmethod
    def of(cls, wl: Workload) -> AutoWorkload:
        # the same objects: inputs, reference data and the check cases' outputs
        # (computed once per workload) are shared with ``wl``
        out = cls(**{f.name: getattr(wl, f.name) for f in fields(wl)})
        seen = {}

        def capture(s, final, stages):
            seen["stages"], seen["final"] = stages, final
            wl.template.apply(s, final, stages, wl.default)
        lower_with(wl.group, wl.graph, wl.target, name="probe", schedule=capture)
        out.space = space_for(wl.template, seen["stages"], seen["final"], wl.target)
        out.default = out.space.config({"sketch": "template", **wl.default.to_json()})
        return out

    def lower(self, config, name: str) -> Kernel:
        def schedule(s, final, stages):
            apply(self.template, s, final, stages, config)
        kernel = lower_with(self.group, self.graph, self.target, name=name, schedule=schedule)
        return finish(self.template, kernel, config)
