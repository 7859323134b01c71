"""Timing classes of Arm M-profile instructions: the vocabulary of the core tables.

:func:`classify` maps capstone's instruction name (no condition code, no
``.w``) to one class; every core table (``aot/cycles/cores/*.toml``) gives
cycles per class, so a new instruction needs one line here and none there.
``op_str`` tells scalar floating point (``s``/``d`` registers) from Helium
(``q`` registers).
"""

from __future__ import annotations

import re

#: Every class a core table must price (tests/cycles check each table has them all).
CLASSES = (
    "alu", "mul", "mac", "mul_long", "div", "load", "store", "ldrd", "strd", "ldm", "stm",
    "branch", "branch_call", "branch_reg", "branch_table", "branch_loop", "loop_start",
    "it", "nop", "barrier", "system",
    "falu", "fmac", "fdiv", "vload", "vstore", "vldm", "vstm", "vmov2",
    "mve", "mve_mac", "mve_load", "mve_store",
)

_MUL = {"mul", "smmul", "smmulr", "smuad", "smuadx", "smusd", "smusdx", "smulbb", "smulbt",
        "smultb", "smultt", "smulwb", "smulwt"}
_MAC = {"mla", "mls", "smmla", "smmlar", "smmls", "smmlsr", "smlad", "smladx", "smlsd",
        "smlsdx", "smlabb", "smlabt", "smlatb", "smlatt", "smlawb", "smlawt"}
_MUL_LONG = {"umull", "smull", "umlal", "smlal", "umaal", "smlald", "smlaldx", "smlsld",
             "smlsldx", "smlalbb", "smlalbt", "smlaltb", "smlaltt"}
_LOAD = {"ldr", "ldrb", "ldrh", "ldrsb", "ldrsh", "ldrex", "ldrexb", "ldrexh", "ldrt",
         "ldrbt", "ldrht", "ldrsbt", "ldrsht", "lda", "ldab", "ldah", "ldaex"}
_STORE = {"str", "strb", "strh", "strex", "strexb", "strexh", "strt", "strbt", "strht",
          "stl", "stlb", "stlh", "stlex"}
_LDM = {"ldm", "ldmdb", "ldmia", "pop"}
_STM = {"stm", "stmdb", "stmia", "push"}
_FMAC = {"vmla", "vmls", "vnmla", "vnmls", "vfma", "vfms", "vfnma", "vfnms"}
_MVE_MAC = {"vmladav", "vmladava", "vmlav", "vmlava", "vmlaldav", "vmlaldava", "vmlsdav",
            "vmlsdava", "vrmlaldavh", "vrmlaldavha", "vmla", "vmlas", "vfma", "vfmas",
            "vmul", "vmulh", "vrmulh", "vqdmulh", "vqrdmulh", "vmullb", "vmullt",
            "vqdmlah", "vqrdmlah", "vqdmladh", "vqrdmladh"}
_Q = re.compile(r"\bq\d+\b")


def classify(name: str, op_str: str = "") -> str:
    """The timing class of the instruction ``name`` (capstone's, e.g. ``ldrb``)."""
    if name.startswith("v"):
        return _vector_class(name, op_str)
    if name in _LOAD:
        return "load"
    if name in _STORE:
        return "store"
    if name in _LDM:
        return "ldm"
    if name in _STM:
        return "stm"
    if name in ("ldrd", "ldaexd", "ldrexd"):
        return "ldrd"
    if name in ("strd", "stlexd", "strexd"):
        return "strd"
    if name in _MUL:
        return "mul"
    if name in _MAC:
        return "mac"
    if name in _MUL_LONG:
        return "mul_long"
    if name in ("sdiv", "udiv"):
        return "div"
    if name in ("b", "cbz", "cbnz", "wls", "wlstp"):
        return "branch"
    if name == "bl":
        return "branch_call"
    if name in ("bx", "blx", "bxns", "blxns"):
        return "branch_reg"
    if name in ("tbb", "tbh"):
        return "branch_table"
    if name in ("le", "letp", "lctp"):
        return "branch_loop"
    if name in ("dls", "dlstp"):
        return "loop_start"
    if name == "it":
        return "it"
    if name in ("nop", "hint", "yield", "sev"):
        return "nop"
    if name in ("dmb", "dsb", "isb"):
        return "barrier"
    if name in ("mrs", "msr", "cpsid", "cpsie", "svc", "bkpt", "wfi", "wfe", "udf"):
        return "system"
    return "alu"


def _vector_class(name: str, op_str: str) -> str:
    helium = bool(_Q.search(op_str)) or name.startswith(("vldrb", "vldrh", "vldrw", "vldrd",
                                                         "vstrb", "vstrh", "vstrw", "vstrd",
                                                         "vld2", "vld4", "vst2", "vst4", "vctp",
                                                         "vpst", "vpt"))
    if helium:
        if name.startswith(("vldr", "vld2", "vld4")):
            return "mve_load"
        if name.startswith(("vstr", "vst2", "vst4")):
            return "mve_store"
        return "mve_mac" if name in _MVE_MAC else "mve"
    if name == "vldr":
        return "vload"
    if name == "vstr":
        return "vstore"
    if name in ("vldmia", "vldmdb", "vldm", "vpop"):
        return "vldm"
    if name in ("vstmia", "vstmdb", "vstm", "vpush"):
        return "vstm"
    if name in _FMAC:
        return "fmac"
    if name in ("vdiv", "vsqrt"):
        return "fdiv"
    if name == "vmov" and len(re.findall(r"\br\d+\b|\b(?:lr|ip|sb|sl|fp)\b", op_str)) == 2:
        return "vmov2"
    return "falu"
