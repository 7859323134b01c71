"""Knobs, configuration spaces and the tunable templates.

A *template* is ordinary schedule code for one anchor operator whose
decisions are read from a :class:`Config` instead of being fixed.  Its
:meth:`Template.space` declares the knobs (each a name and a finite tuple
of values valid for the workload) and :meth:`Template.default` names the
configuration that reproduces the kernel library's own strategy for the
target's key, so an untuned compilation and the default configuration
produce the same C.

A :class:`ConfigSpace` is the cartesian product of its knobs; config
``i`` is ``i`` written in mixed radix (the first knob varies slowest),
so a space is enumerable (``space[i]``, ``iter(space)``) and printable
(``str(space)``).

Templates registered in :data:`TEMPLATES`, by (anchor, target key):
``conv2d``, ``depthwise_conv2d`` and ``dense``, each for ``arm_cpu``
(the DSP dot product is a knob when the target has the DSP extension;
Helium or DSP helpers one where it has both) and ``riscv``; conv2d and
depthwise_conv2d also for ``arm_mve``, with the library's vectorized
epilogue as a knob.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace

from aot.errors import AotError


class TuneError(AotError):
    """A tuning request that cannot be served (no template, bad records, ...)."""


@dataclass(frozen=True)
class Knob:
    """One decision of a template: ``values`` in a fixed order; ``doc`` says what it changes."""

    name: str
    values: tuple
    doc: str = ""

    def __post_init__(self):
        if not self.values:
            raise ValueError(f"knob {self.name} has no values")
        if len(set(self.values)) != len(self.values):
            raise ValueError(f"knob {self.name} repeats a value: {self.values}")


class Config(Mapping):
    """A value for every knob of a space, and its index in the space."""

    def __init__(self, space: ConfigSpace, index: int):
        self.space = space
        self.index = index
        digits = []
        rest = index
        for knob in reversed(space.knobs):
            rest, d = divmod(rest, len(knob.values))
            digits.append(knob.values[d])
        self._values = dict(zip((k.name for k in space.knobs), reversed(digits)))

    def __getitem__(self, name):
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def to_json(self) -> dict:
        return dict(self._values)

    def __str__(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self._values.items()) or "(no knobs)"

    def __repr__(self) -> str:
        return f"Config({self.index}: {self})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Config) and other.space == self.space and \
            other.index == self.index

    def __hash__(self) -> int:
        return hash(self.index)


class ConfigSpace:
    """The cartesian product of ``knobs`` (see the module docstring for the order)."""

    def __init__(self, knobs: list[Knob]):
        names = [k.name for k in knobs]
        if len(set(names)) != len(names):
            raise ValueError(f"knob names repeat: {names}")
        self.knobs = tuple(knobs)

    def __len__(self) -> int:
        return math.prod(len(k.values) for k in self.knobs)

    def __getitem__(self, index: int) -> Config:
        if not 0 <= index < len(self):
            raise IndexError(f"config {index} is outside a space of {len(self)}")
        return Config(self, index)

    def __iter__(self) -> Iterator[Config]:
        return (Config(self, i) for i in range(len(self)))

    def __eq__(self, other) -> bool:
        return isinstance(other, ConfigSpace) and other.knobs == self.knobs

    def __hash__(self) -> int:
        return hash(self.knobs)

    def index_of(self, values: Mapping) -> int:
        """The index of the config with these knob values; a :class:`TuneError`
        if a knob is missing or a value is not in the space."""
        index = 0
        for knob in self.knobs:
            if knob.name not in values:
                raise TuneError(f"the config has no value for knob {knob.name!r}")
            value = values[knob.name]
            if isinstance(value, list):
                value = tuple(value)
            if value not in knob.values:
                raise TuneError(f"knob {knob.name!r} has no value {value!r} "
                                f"(values: {list(knob.values)})")
            index = index * len(knob.values) + knob.values.index(value)
        return index

    def config(self, values: Mapping) -> Config:
        return Config(self, self.index_of(values))

    def neighbours(self, config: Config) -> list[Config]:
        """Configs that differ from ``config`` in exactly one knob."""
        out = []
        for knob in self.knobs:
            for v in knob.values:
                if v != config[knob.name]:
                    out.append(self.config({**config, knob.name: v}))
        return out

    def __str__(self) -> str:
        lines = [f"config space: {len(self)} configs"]
        for k in self.knobs:
            lines.append(f"  {k.name}: {list(k.values)}" + (f"  # {k.doc}" if k.doc else ""))
        return "\n".join(lines)


# -------------------------------------------------------------------- templates

def _extent(d) -> int:
    return int(getattr(d, "value", d))


def _divisors(n: int, candidates) -> tuple[int, ...]:
    return tuple(f for f in candidates if f <= n and n % f == 0)


@dataclass(frozen=True)
class Template:
    """A tunable schedule for one anchor operator on one target key.

    ``knobs(stages, final, target)`` returns the knobs for a workload;
    ``default(stages, final, target)`` the knob values of the library's
    own strategy; ``apply(s, final, stages, values)`` schedules.  Every
    template also has the :data:`OPTIMIZE` knob, and on cores with Helium
    and DSP the :data:`VECTOR_ISA` knob, both applied to the kernel's C by
    :meth:`finish`.
    """

    anchor: str
    key: str
    knobs: Callable
    default_values: Callable
    apply: Callable

    def space(self, stages, final, target) -> ConfigSpace:
        return ConfigSpace([*self.knobs(stages, final, target), *_file_knobs(target)])

    def default(self, stages, final, target) -> Config:
        return self.space(stages, final, target).config(
            {**self.default_values(stages, final, target),
             **{k.name: k.values[0] for k in _file_knobs(target)}})

    @staticmethod
    def finish(kernel, config: Config):
        """The kernel with its C compiled as the config's :data:`OPTIMIZE`
        value says (a GCC pragma ahead of everything, so the inlined
        helpers of the support header follow it too) and, with
        :data:`VECTOR_ISA` ``dsp``, ``AOT_NO_MVE`` defined ahead of the
        support header."""
        head = ""
        if config.get(VECTOR_ISA.name, VECTOR_ISA.values[0]) == "dsp":
            head += "#define AOT_NO_MVE 1\n"
        value = config[OPTIMIZE.name]
        if value != OPTIMIZE.values[0]:
            flags = ", ".join(f'"{f}"' for f in value.split(","))
            head = f"#pragma GCC optimize ({flags})\n" + head
        return replace(kernel, prelude=(head,)) if head else kernel


#: GCC optimization of one kernel's file beyond the project's -O2 (the
#: boards' toolchains are GCC; other compilers ignore the pragma).
OPTIMIZE = Knob("optimize", ("O2", "O3", "unroll-loops", "O3,unroll-loops"),
                "GCC optimization of the kernel's file")


#: On a core with Helium (MVE), which helpers of the support header the
#: kernel's file uses: the Helium ones (the library's choice) or the DSP
#: extension's.  The loop nest is the same; only the helpers' bodies differ.
VECTOR_ISA = Knob("vector_isa", ("mve", "dsp"),
                  "Helium or DSP-extension helpers of the support header (cores with both)")


def _file_knobs(target) -> list[Knob]:
    """The knobs every template has, applied to the kernel's file by
    :meth:`Template.finish`: the ISA where there is a choice, then
    :data:`OPTIMIZE`."""
    both = getattr(target, "has_mve", False) and getattr(target, "has_dsp", False)
    return [VECTOR_ISA, OPTIMIZE] if both else [OPTIMIZE]


TEMPLATES: dict[tuple[str, str], Template] = {}


def register(anchor: str, keys: tuple[str, ...], knobs, default_values, apply) -> None:
    for key in keys:
        if (anchor, key) in TEMPLATES:
            raise ValueError(f"template {(anchor, key)!r} is registered twice")
        TEMPLATES[(anchor, key)] = Template(anchor, key, knobs, default_values, apply)


def find_template(anchor: str, target) -> Template | None:
    """The template for ``anchor`` under the first of the target's keys that has one."""
    for key in getattr(target, "keys", ()) or ():
        if (anchor, key) in TEMPLATES:
            return TEMPLATES[(anchor, key)]
    return None


def _uses_intrinsics(target) -> bool:
    """The library's arm_cpu strategies tensorize the int8 arithmetic."""
    return "arm_cpu" in (getattr(target, "keys", ()) or ())


# -- conv2d and depthwise conv2d: by output row, as aot.kernels.conv2d --------

def _row_fits(stages) -> bool:
    from aot.kernels.conv2d import STACK_BUDGET, row_buffer_bytes
    return row_buffer_bytes(stages) <= STACK_BUDGET


def _accumulations(stages, depthwise: bool) -> tuple[str, ...]:
    """How the accumulators may be computed: the library's row intrinsic
    (``conv_s8``/``depthwise_s8``, int8 only), one ``aot_dot_s8`` per tap
    (``dot_s8``, conv2d int8 only) or plain loops (conv2d: also with the
    unrolled output channels innermost, ``loops_o_inner``)."""
    if depthwise:
        return ("depthwise_s8", "loops") if "depthwise_s8" in stages else ("loops",)
    loops = ("loops", "loops_o_inner")
    return ("conv_s8", "dot_s8", *loops) if "dot_s8" in stages else loops


def _conv_knobs(stages, final, target, *, depthwise: bool) -> list[Knob]:
    acc = stages["acc"]
    _, _, _, o = acc.op.axis
    kw = acc.op.reduce_axis[1]
    knobs = [Knob("tile", ("row", "pixel") if _row_fits(stages) else ("pixel",),
                  "accumulate a whole output row (stack buffers) or one pixel at a time"),
             Knob("accumulate", _accumulations(stages, depthwise),
                  "row intrinsic of the support header, a dot call per tap, or loops")]
    if depthwise:
        knobs.append(Knob("taps_outer", (False, True),
                          "loops: the taps (kh, kw) outside the pixels of the row"))
    elif "dot_s8" in stages:
        knobs.append(Knob("widen_input", (True, False),
                          "conv_s8: widen input chunks once into a stack buffer"))
    knobs.append(Knob("unroll_o", _divisors(_extent(o.dom.extent), (1, 2, 4, 8, 16)),
                      "loops and dot: output channels per unrolled step"))
    if _extent(kw.dom.extent) > 1:
        knobs.append(Knob("unroll_kw", (False, True), "loops and dot: unroll the kernel-width "
                          "taps"))
    knobs.append(Knob("unroll_epilogue", _divisors(_extent(final.op.axis[-1].dom.extent),
                                                   (1, 2, 4, 8)),
                      "channels per unrolled step of the requantizing epilogue"))
    return knobs


def _conv_default(stages, final, target, *, depthwise: bool) -> dict:
    choices = _accumulations(stages, depthwise)
    values = {"tile": "row" if _row_fits(stages) else "pixel", "unroll_o": 1,
              "unroll_kw": False, "unroll_epilogue": 1,
              "accumulate": choices[0] if _uses_intrinsics(target) else "loops"}
    if depthwise:
        values["taps_outer"] = False
    elif "dot_s8" in stages:
        from aot.kernels.arm_cpu import WIDEN_INPUT
        values["widen_input"] = WIDEN_INPUT
    return values


def _apply_conv(s, final, stages, cfg, *, depthwise: bool) -> None:
    from aot.kernels.arm_cpu import _tensorize_conv, _tensorize_dot

    acc = stages["acc"]
    level = 1 if cfg["tile"] == "row" else 2
    s[acc].compute_at(s[final], final.op.axis[level])
    if "pad" in stages:
        s[stages["pad"]].compute_at(s[acc], acc.op.axis[level])
    if cfg["unroll_epilogue"] > 1:
        _, ei = s[final].split(final.op.axis[-1], factor=cfg["unroll_epilogue"])
        s[final].unroll(ei)
    if cfg["accumulate"] == "depthwise_s8":
        _tensorize_conv(s, stages, level, depthwise)
        return
    if cfg["accumulate"] == "conv_s8":
        _tensorize_conv(s, stages, level, depthwise, widen=cfg["widen_input"])
        return
    _, _, w, o = acc.op.axis
    # A factor of 1 leaves the loop unsplit: no extra loop in the C.
    inner = [o]
    if cfg["unroll_o"] > 1:
        inner = list(s[acc].split(o, factor=cfg["unroll_o"]))
        s[acc].unroll(inner[1])
    kw = acc.op.reduce_axis[1]
    if depthwise:
        kh = acc.op.reduce_axis[0]
        if cfg["taps_outer"]:
            s[acc].reorder(kh, kw, w, *inner)
        else:
            s[acc].reorder(w, kh, kw, *inner)
    elif cfg["accumulate"] == "dot_s8":
        _tensorize_dot(s, stages)
    elif cfg["accumulate"] == "loops_o_inner" and len(inner) == 2:
        # each input value feeds the unroll_o accumulators of the step
        kh, _, rc = acc.op.reduce_axis
        s[acc].reorder(w, inner[0], kh, kw, rc, inner[1])
    if cfg.get("unroll_kw"):
        s[acc].unroll(kw)


register("conv2d", ("arm_cpu", "riscv"),
         lambda st, f, t: _conv_knobs(st, f, t, depthwise=False),
         lambda st, f, t: _conv_default(st, f, t, depthwise=False),
         lambda s, f, st, c: _apply_conv(s, f, st, c, depthwise=False))
register("depthwise_conv2d", ("arm_cpu", "riscv"),
         lambda st, f, t: _conv_knobs(st, f, t, depthwise=True),
         lambda st, f, t: _conv_default(st, f, t, depthwise=True),
         lambda s, f, st, c: _apply_conv(s, f, st, c, depthwise=True))


# -- arm_mve: the arm_cpu templates plus the library's vectorized epilogue ---

def _requant_row_applies(final) -> bool:
    from aot.kernels.arm_mve import _requant_pattern
    return _requant_pattern(final) is not None


def _mve_conv_knobs(stages, final, target, *, depthwise: bool) -> list[Knob]:
    knobs = _conv_knobs(stages, final, target, depthwise=depthwise)
    if _requant_row_applies(final):
        knobs.append(Knob("requant_row", (True, False),
                          "the whole epilogue of a pixel as one aot_requant_row_s8 call "
                          "(Helium, four outputs per step; only with unroll_epilogue 1)"))
    return knobs


def _mve_conv_default(stages, final, target, *, depthwise: bool) -> dict:
    values = _conv_default(stages, final, target, depthwise=depthwise)
    if _requant_row_applies(final):
        values["requant_row"] = True
    return values


def _apply_mve_conv(s, final, stages, cfg, *, depthwise: bool) -> None:
    from aot.kernels.arm_mve import _tensorize_epilogue

    _apply_conv(s, final, stages, cfg, depthwise=depthwise)
    if cfg.get("requant_row") and cfg["unroll_epilogue"] == 1:
        _tensorize_epilogue(s, final)


# The library's arm_mve strategies (aot.kernels.arm_mve) tensorize the
# requantizing epilogue on top of the arm_cpu schedule, so the default of
# these templates does too: an untuned config equals the untuned kernel.
register("conv2d", ("arm_mve",),
         lambda st, f, t: _mve_conv_knobs(st, f, t, depthwise=False),
         lambda st, f, t: _mve_conv_default(st, f, t, depthwise=False),
         lambda s, f, st, c: _apply_mve_conv(s, f, st, c, depthwise=False))
register("depthwise_conv2d", ("arm_mve",),
         lambda st, f, t: _mve_conv_knobs(st, f, t, depthwise=True),
         lambda st, f, t: _mve_conv_default(st, f, t, depthwise=True),
         lambda s, f, st, c: _apply_mve_conv(s, f, st, c, depthwise=True))


# -- dense: one output at a time, as aot.kernels.dense -----------------------

def _dense_row_fits(stages) -> bool:
    from aot.kernels.arm_cpu import dense_chunk
    return dense_chunk(_extent(stages["acc"].shape[1])) > 0


def _dense_accumulations(stages) -> tuple[str, ...]:
    """The library's row intrinsic (``dense_s8``: all units at once, int8, on
    the stack within its budget), one ``aot_dot_s8`` per unit, or loops."""
    if "dot_s8" not in stages:
        return ("loops",)
    return (("dense_s8",) if _dense_row_fits(stages) else ()) + ("dot_s8", "loops")


def _dense_knobs(stages, final, target) -> list[Knob]:
    acc = stages["acc"]
    units = _extent(acc.op.axis[-1].dom.extent)
    depth = _extent(acc.op.reduce_axis[0].dom.extent)
    return [Knob("accumulate", _dense_accumulations(stages),
                 "row intrinsic of the support header, a dot call per unit, or loops"),
            Knob("unroll_k", _divisors(depth, (1, 4, 8)), "loops: reduction steps per "
                 "unrolled step"),
            Knob("unroll_u", _divisors(units, (1, 2, 4)), "outputs per unrolled step")]


def _dense_default(stages, final, target) -> dict:
    choices = _dense_accumulations(stages)
    return {"accumulate": choices[0] if _uses_intrinsics(target) else "loops",
            "unroll_k": 1, "unroll_u": 1}


def _apply_dense(s, final, stages, cfg) -> None:
    from aot.kernels.arm_cpu import _tensorize_dot, tensorize_dense_rows

    acc = stages["acc"]
    if cfg["accumulate"] == "dense_s8":
        units = tensorize_dense_rows(s, final, stages)
        if cfg["unroll_u"] > 1:
            _, ui = s[final].split(units, factor=cfg["unroll_u"])
            s[final].unroll(ui)
        return
    ui = final.op.axis[-1]
    if cfg["unroll_u"] > 1:
        _, ui = s[final].split(ui, factor=cfg["unroll_u"])
    s[acc].compute_at(s[final], ui)
    if cfg["accumulate"] == "dot_s8":
        _tensorize_dot(s, stages)
    elif cfg["unroll_k"] > 1:
        _, ki = s[acc].split(acc.op.reduce_axis[0], factor=cfg["unroll_k"])
        s[acc].unroll(ki)
    if cfg["unroll_u"] > 1:
        s[final].unroll(ui)


register("dense", ("arm_cpu", "riscv"), _dense_knobs, _dense_default, _apply_dense)
