"""Facts about a processor derived from a target's attributes.

The schedules and code generators ask questions such as "may I use the
Cortex-M DSP instructions?" or "how wide is a vector register?".  They are
answered here, from ``-mcpu``, ``-march``, ``-mtriple``, ``-mfloat-abi``,
``-mfpu`` and ``-mattr`` only, so the answer is the same wherever the target
is read.  Sources: the Arm Cortex-M technical reference manuals (which core
has which extension) and GCC's defaults for ``-mcpu`` (which FPU it picks).

Precedence: ``-mcpu`` names the core and its default extensions, ``+no...``
modifiers on it and ``-mattr`` features then switch extensions off (or on).
The FPU counts as usable only when the float ABI lets the compiler emit FPU
instructions (``softfp`` or ``hard``), because that is what matters for the
generated code: ``-mfloat-abi=soft`` on a Cortex-M4F means software floats.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aot.target.errors import TargetError, suggest


@dataclass(frozen=True)
class _Core:
    isa: str
    dsp: bool = False
    fpu: str | None = None  # GCC's default -mfpu for the core, None if it has none
    mve: bool = False


_ARM_CORES = {
    "cortex-m0": _Core("thumbv6m"),
    "cortex-m0plus": _Core("thumbv6m"),
    "cortex-m1": _Core("thumbv6m"),
    "cortex-m3": _Core("thumbv7m"),
    "cortex-m4": _Core("thumbv7em", dsp=True, fpu="fpv4-sp-d16"),
    "cortex-m7": _Core("thumbv7em", dsp=True, fpu="fpv5-d16"),
    "cortex-m23": _Core("thumbv8m.base"),
    "cortex-m33": _Core("thumbv8m.main", dsp=True, fpu="fpv5-sp-d16"),
    "cortex-m35p": _Core("thumbv8m.main", dsp=True, fpu="fpv5-sp-d16"),
    "cortex-m55": _Core("thumbv8.1m.main", dsp=True, fpu="fp-armv8-fullfp16-d16", mve=True),
    "cortex-m85": _Core("thumbv8.1m.main", dsp=True, fpu="fp-armv8-fullfp16-d16", mve=True),
}

# -march for Arm: only the extensions the architecture guarantees.
_ARM_ARCHS = {
    "armv6-m": _Core("thumbv6m"),
    "armv7-m": _Core("thumbv7m"),
    "armv7e-m": _Core("thumbv7em", dsp=True),
    "armv8-m.base": _Core("thumbv8m.base"),
    "armv8-m.main": _Core("thumbv8m.main"),
    "armv8.1-m.main": _Core("thumbv8.1m.main"),
}

# Instruction sets named by the first part of a triple, when no -mcpu or
# -march says more.
_TRIPLE_ARCHS = {
    "thumbv6m": _Core("thumbv6m"),
    "thumbv7m": _Core("thumbv7m"),
    "thumbv7em": _Core("thumbv7em", dsp=True),
    "thumbv8m.base": _Core("thumbv8m.base"),
    "thumbv8m.main": _Core("thumbv8m.main"),
    "thumbv8.1m.main": _Core("thumbv8.1m.main"),
    "x86_64": _Core("x86_64", fpu="sse2"),
    "aarch64": _Core("aarch64", fpu="neon"),
    "i686": _Core("i686", fpu="x87"),
    "riscv32": _Core("rv32i"),
    "riscv64": _Core("rv64i"),
}

_POINTER_BITS_64 = ("x86_64", "aarch64", "rv64")


@dataclass(frozen=True)
class Facts:
    """What a target says about its processor; ``None`` where it says nothing.

    - ``isa``: instruction set (``thumbv7em``, ``thumbv8.1m.main``,
      ``rv32imac``, ``x86_64``).
    - ``float_abi``: Arm float ABI (``soft``/``softfp``/``hard``), else None.
    - ``fpu``: the FPU the generated code may use (``fpv4-sp-d16``,
      ``f``/``d`` for the RISC-V extensions, ``sse2``), None if none.
    - ``has_dsp``: the Arm DSP extension (SIMD32: SMLAD, SXTB16, QADD...).
    - ``has_mve``: Arm Helium (M-profile vector extension).
    - ``pointer_bits``: 32 or 64.
    - ``vector_bytes``: the natural SIMD width in bytes: 16 with MVE, 4 with
      the DSP extension (four int8 lanes in a core register), 16/32/64 on
      x86_64 for SSE2/AVX(2)/AVX-512, 16 on AArch64 NEON; without SIMD the
      width of a core register (4 on Cortex-M0/M3 and rv32).
    - ``triple``: the LLVM triple (explicit ``-mtriple``, else derived).
    """

    isa: str | None = None
    float_abi: str | None = None
    fpu: str | None = None
    has_dsp: bool = False
    has_mve: bool = False
    pointer_bits: int | None = None
    vector_bytes: int | None = None
    triple: str | None = None

    @property
    def family(self) -> str | None:
        """``arm``, ``riscv``, ``x86`` or ``aarch64`` (None when unknown)."""
        if self.isa is None:
            return None
        if self.isa.startswith("thumb"):
            return "arm"
        if self.isa.startswith("rv"):
            return "riscv"
        if self.isa in ("x86_64", "i686"):
            return "x86"
        return self.isa


def _split_plus(value: str) -> tuple[str, list[str]]:
    base, *mods = value.lower().split("+")
    return base, mods


def _core(attrs: Mapping[str, Any]) -> tuple[_Core | None, list[str]]:
    """The core named by the attributes and the ``+...`` modifiers written."""
    if attrs.get("mcpu"):
        base, mods = _split_plus(attrs["mcpu"])
        if base in _ARM_CORES:
            return _ARM_CORES[base], mods
        if base.startswith("cortex-"):
            # A misspelt Arm core would silently lose its DSP/MVE kernels.
            raise TargetError(f"unknown Arm core -mcpu={base}{suggest(base, _ARM_CORES)}; "
                              f"known: {', '.join(_ARM_CORES)}")
    march = attrs.get("march")
    if march:
        base, mods = _split_plus(march)
        if base in _ARM_ARCHS:
            return _ARM_ARCHS[base], mods
        if base.startswith("armv"):
            raise TargetError(f"unknown Arm architecture -march={base}"
                              f"{suggest(base, _ARM_ARCHS)}; known: {', '.join(_ARM_ARCHS)}")
        if base.startswith(("rv32", "rv64")):
            return _riscv_core(base), mods
    triple = attrs.get("mtriple")
    if triple:
        arch = triple.split("-", 1)[0].lower()
        if arch in _TRIPLE_ARCHS:
            return _TRIPLE_ARCHS[arch], []
    return None, []


def _riscv_core(march: str) -> _Core:
    """A core from a RISC-V -march such as ``rv32imac`` or ``rv32imac_zicsr``."""
    isa = march.split("_", 1)[0]
    letters = set(isa[4:].replace("g", "imafd"))
    fpu = "d" if "d" in letters else "f" if "f" in letters else None
    return _Core(isa, fpu=fpu)


def derive(attrs: Mapping[str, Any]) -> Facts:
    """Facts of a processor target from its attributes (see :class:`Facts`)."""
    core, mods = _core(attrs)
    if core is None:
        return Facts(triple=attrs.get("mtriple"))
    features = [f.lower() for f in attrs.get("mattr") or ()]
    isa = core.isa
    arm = isa.startswith("thumb")

    dsp = core.dsp and "nodsp" not in mods
    dsp = (dsp or "dsp" in mods or "+dsp" in features) and "-dsp" not in features
    mve = core.mve and "nomve" not in mods
    mve = (mve or "mve" in mods or "+mve" in features or "+mve.fp" in features) and (
        "-mve" not in features
    )
    dsp = dsp or mve  # Helium requires the DSP extension (Armv8.1-M)

    float_abi = None
    fpu = core.fpu
    if "nofp" in mods or "-fpregs" in features or "-fp" in features:
        fpu = None
    if arm:
        float_abi = attrs.get("mfloat-abi") or (
            "hard" if (attrs.get("mtriple") or "").endswith("eabihf") else "soft"
        )
        mfpu = attrs.get("mfpu")
        if mfpu and mfpu != "auto":
            fpu = None if mfpu == "none" else mfpu
        if float_abi == "soft":
            fpu = None

    pointer_bits = 64 if isa.startswith(_POINTER_BITS_64) else 32
    if mve:
        vector_bytes = 16
    elif dsp:
        vector_bytes = 4
    elif isa == "x86_64":
        vector_bytes = 16
        if "+avx" in features or "+avx2" in features:
            vector_bytes = 32
        if "+avx512f" in features:
            vector_bytes = 64
    elif isa == "aarch64":
        vector_bytes = 16
    elif isa.startswith("rv") and "v" in isa[4:]:
        vector_bytes = 16  # the V extension guarantees VLEN >= 128
    else:
        vector_bytes = pointer_bits // 8

    triple = attrs.get("mtriple")
    if triple is None and arm:
        triple = f"{isa}-none-eabi" + ("hf" if float_abi == "hard" else "")
    elif triple is None and isa.startswith("rv"):
        triple = f"riscv{pointer_bits}-unknown-elf"

    return Facts(
        isa=isa,
        float_abi=float_abi,
        fpu=fpu,
        has_dsp=dsp,
        has_mve=mve,
        pointer_bits=pointer_bits,
        vector_bytes=vector_bytes,
        triple=triple,
    )


def derived_keys(attrs: Mapping[str, Any], facts: Facts) -> list[str]:
    """Keys implied by the attributes: ``-device`` and the processor family.

    ``-device=arm_cpu`` adds ``arm_cpu``; a Cortex-M (or any Arm Thumb
    instruction set) adds ``arm_cpu``; a RISC-V ``-march``/``-mtriple`` adds
    ``riscv``.  Schedules are chosen by these keys.
    """
    keys = []
    if attrs.get("device"):
        keys.append(attrs["device"])
    if facts.family == "arm" or (attrs.get("mcpu") or "").startswith("cortex-m"):
        keys.append("arm_cpu")
    elif facts.family == "riscv":
        keys.append("riscv")
    return keys
