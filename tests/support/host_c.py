"""Check C helpers of the kernel headers on this machine: a C program that
counts its mismatches, built with the sanitizers, must print 0."""

from __future__ import annotations

import subprocess


def assert_no_mismatches(tmp_path, src: str) -> None:
    """Build ``src`` against the headers in ``tmp_path`` (gcc, C99, -O2, ASan and
    UBSan), run it, and require exit status 0 and the printed count 0."""
    (tmp_path / "t.c").write_text(src)
    subprocess.run(["gcc", "-std=c99", "-O2", "-fsanitize=address,undefined",
                    "-fno-sanitize-recover=all", "-I", str(tmp_path), str(tmp_path / "t.c"),
                    "-o", str(tmp_path / "t")], check=True)
    out = subprocess.run([str(tmp_path / "t")], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "0", out.stdout + out.stderr
