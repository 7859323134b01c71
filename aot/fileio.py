"""Files written whole or not at all: :func:`write_atomic`.

Caches and records that several processes read while others write them (the
object cache, the compile records, the runtime objects of ``aot build``) are
written to a temporary file in the destination's folder and renamed over it,
so a reader sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file renamed into place
    (the folder must exist; an :class:`OSError` is the caller's to report)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
