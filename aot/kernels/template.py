"""Schedule templates: knobs, configuration spaces and templates over them.

A *template* is ordinary schedule code for one anchor operator whose
decisions are read from a configuration instead of being fixed.  Each
operator package registers one per target key
(:func:`aot.kernels.registry.template`); its default configuration *is*
the kernel library's schedule for that key, and the auto-tuner
(:mod:`aot.tune`) searches the same template, so an untuned compilation
and the default configuration give the same C by construction.

A :class:`ConfigSpace` is the cartesian product of its knobs; config
``i`` is ``i`` written in mixed radix (the first knob varies slowest),
so a space is enumerable (``space[i]``, ``iter(space)``) and printable
(``str(space)``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace

from aot.errors import AotError


class ConfigError(AotError):
    """A configuration that is not a point of its template's space."""


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
        """The index of the config with these knob values; a :class:`ConfigError`
        if a knob is missing or a value is not in the space."""
        index = 0
        for knob in self.knobs:
            if knob.name not in values:
                raise ConfigError(f"the config has no value for knob {knob.name!r}")
            value = values[knob.name]
            if isinstance(value, list):
                value = tuple(value)
            if value not in knob.values:
                raise ConfigError(f"knob {knob.name!r} has no value {value!r} "
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


def divisors(n: int, candidates) -> tuple[int, ...]:
    """The ``candidates`` that divide ``n`` (knob values for split factors)."""
    return tuple(f for f in candidates if f <= n and n % f == 0)


def extent(d) -> int:
    """The constant extent of an axis or shape entry."""
    return int(getattr(d, "value", d))


@dataclass(frozen=True)
class Template:
    """The schedule of one anchor operator on one target key, over named knobs.

    ``knobs(stages, final)`` returns the knobs for a workload (the stages
    its compute rule built), ``default_values(stages, final)`` the values
    that make the kernel library's schedule, and ``apply(s, final, stages,
    values)`` schedules.  The library schedules with :meth:`schedule` (the
    default values); the tuner searches :meth:`space`, which adds the
    :data:`OPTIMIZE` knob, and on cores with Helium and DSP the
    :data:`VECTOR_ISA` knob, both applied to the kernel's C by
    :meth:`finish`.
    """

    anchor: str
    key: str
    knobs: Callable
    default_values: Callable
    apply: Callable

    def space(self, stages, final, target) -> ConfigSpace:
        return ConfigSpace([*self.knobs(stages, final), *_file_knobs(target)])

    def default(self, stages, final, target) -> Config:
        return self.space(stages, final, target).config(
            {**self.default_values(stages, final),
             **{k.name: k.values[0] for k in _file_knobs(target)}})

    def schedule(self, s, final, stages) -> None:
        """The kernel library's schedule: :attr:`apply` with the default values."""
        self.apply(s, final, stages, self.default_values(stages, final))

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
