"""Where a store is: a local folder or object storage, asked in one place.

Light (the standard library only), so that the CLI's start, its Ctrl-C line and
a run's head start ask it before zarr or fsspec is imported; the store
re-exports it (:func:`boardsweep.pipeline.store.local_root`).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["local_root"]

#: URL prefixes that name a local folder (fsspec's local file system).
LOCAL_PREFIXES = ("file://", "local://")


def local_root(url: str | os.PathLike) -> Path | None:
    """The folder of a local store (``file://`` and ``local://`` dropped), or
    ``None`` for a store behind another fsspec URL (``s3://...``, a chained
    ``simplecache::s3://...``): the one place the question is asked."""
    url = os.fspath(url)
    if ("://" in url and not url.startswith(LOCAL_PREFIXES)) or "::" in url:
        return None
    for prefix in LOCAL_PREFIXES:
        url = url.removeprefix(prefix)
    return Path(url)
