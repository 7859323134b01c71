"""Building the support headers' LLVM bitcode (package build time; needs clang).

The kernels' C helpers live in the support headers (``include/`` and
``<op>/include/``).  The C path includes them; the LLVM path links the same
headers compiled to bitcode by clang (:mod:`aot.codegen.llvm_helpers` reads
it), so each helper has one source.  ``python -m aot.kernels.bitcode
[CLANG]`` rebuilds the shipped files (``aot/codegen/bitcode/``) after a
header changed; :func:`stale` (run by the tests) says when that was
forgotten.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from aot.codegen.llvm_helpers import MANIFEST, VARIANTS, shipped
from aot.errors import BuildError
from aot.kernels.support import support_files


#: clang's options for every variant: the headers' C99, optimised later by
#: LLVM with the constants of each call (no LLVM pass runs here, so no
#: ``optnone`` and nothing specialised for unknown shapes), freestanding
#: (no system headers: the file must not depend on the build machine's libc),
#: and no contraction of a * b + c (gcc's -std=c99 does none: the floats must match).
_FLAGS = ("-std=c99", "-O2", "-ffp-contract=off", "-Xclang", "-disable-llvm-passes",
          "-ffreestanding", "-nostdlibinc", "-Wall", "-Wno-unused-function",
          "-Wno-keyword-macro", "-DAOT_LLVM_BITCODE", "-emit-llvm", "-c")


def _unit(headers) -> str:
    """The translation unit: every header (the Helium halves ``*_mve.h`` through
    the headers that include them on a core with MVE), every helper kept
    although unused (``used`` on every ``static`` definition), so the bitcode
    defines them all."""
    return "#define static __attribute__((used)) static\n" + "".join(
        f'#include "{name}"\n' for name in sorted(headers) if not name.endswith("_mve.h"))


#: The C library the headers call, declared for a freestanding build (no
#: system headers): LLVM knows these functions (memcpy and memset become its
#: intrinsics, fmaxf/fminf its maxnum/minnum) and the kernels' objects and the
#: JIT link them from the machine's C library as the C path does.
_LIBC = {
    "string.h": ("#include <stddef.h>\n"
                 "void* memcpy(void* restrict d, const void* restrict s, size_t n);\n"
                 "void* memmove(void* d, const void* s, size_t n);\n"
                 "void* memset(void* d, int c, size_t n);\n"),
    "math.h": "float fmaxf(float a, float b);\nfloat fminf(float a, float b);\n",
}


def _headers() -> dict[str, str]:
    """The support headers by file name (one place, so a test can edit them)."""
    return support_files()


def source_digest() -> str:
    """A digest of what the bitcode is built from: the headers and the recipe."""
    h = hashlib.sha256()
    for name, text in sorted(_headers().items()):
        h.update(name.encode() + b"\0" + text.encode() + b"\0")
    h.update(repr((_FLAGS, _unit(_headers()), sorted(_LIBC.items()),
                   sorted(VARIANTS.values(), key=str))).encode())
    return h.hexdigest()


def build(out: Path, clang: str = "clang") -> dict:
    """Compile the support headers to one bitcode file per variant in ``out``
    with ``clang`` and write the manifest; returns the manifest."""
    out.mkdir(parents=True, exist_ok=True)
    try:
        version = subprocess.run([clang, "--version"], capture_output=True, text=True,
                                 check=True).stdout.splitlines()[0]
    except (OSError, subprocess.CalledProcessError) as err:
        raise BuildError(f"building the helper bitcode needs clang ({clang}: {err})") from None
    with tempfile.TemporaryDirectory(prefix="aot-bitcode-") as tmp:
        folder = Path(tmp)
        headers = _headers()
        for name, text in {**headers, **_LIBC}.items():
            (folder / name).write_text(text)
        (folder / "unit.c").write_text(_unit(headers))
        for v in VARIANTS.values():
            # relative names, so the bitcode does not name the temporary folder
            cmd = [clang, f"--target={v.triple}", *v.flags, *_FLAGS, "-I", ".", "unit.c",
                   "-o", str(out.resolve() / f"{v.name}.bc")]
            done = subprocess.run(cmd, capture_output=True, text=True, cwd=folder)
            if done.returncode != 0:
                raise BuildError(f"clang failed on the support headers for {v.name}:\n"
                                 f"{done.stderr.strip()}")
    manifest = {"sources": source_digest(), "clang": version,
                "variants": {v.name: {"triple": v.triple, "flags": list(v.flags)}
                             for v in VARIANTS.values()}}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def stale() -> str | None:
    """None when the shipped bitcode was built from the headers in this tree,
    else what is wrong (the test suite fails on it)."""
    try:
        manifest = json.loads(shipped(MANIFEST).read_text())
    except FileNotFoundError:
        return "no helper bitcode is shipped (python -m aot.kernels.bitcode)"
    if manifest.get("sources") != source_digest():
        return ("the helper bitcode was built from other support headers: rebuild it with "
                "python -m aot.kernels.bitcode")
    return None


def main(argv=None) -> int:
    """Rebuild the shipped bitcode from the headers (needs clang)."""
    out = Path(str(shipped(".")))
    clang = (argv or sys.argv[1:] or ["clang"])[0]
    manifest = build(out, clang)
    print(f"wrote {', '.join(manifest['variants'])} bitcode to {out} ({manifest['clang']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
