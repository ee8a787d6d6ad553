"""Fill a file system: write ``path`` until the disk is full (ENOSPC), the one
way every full-disk test makes its disk full (a small tmpfs, or the store's)."""

from __future__ import annotations

import errno

BLOCK = b"\0" * 65536


def fill_disk(path) -> None:
    """Write zeros to ``path`` until the file system says it is full; any
    other error is raised."""
    with open(path, "wb") as filler:
        try:
            while True:
                filler.write(BLOCK)
                filler.flush()
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
