"""Read a whole zarr array of a local store straight from its chunk files.

A sweep store holds one small chunk file per task and variable: thousands of
them.  zarr-python reads each through its async machinery at about 0.3 ms a
chunk; this reader opens the files one after the other and decodes them with
the same codec (numcodecs' Zstd) at about 35 microseconds each (a thread pool
was slower: the work per file is Python, not waiting).  It handles only the
layout boardsweep writes (local files, a regular chunk grid, ``bytes`` then
``zstd`` codecs, little-endian or single-byte types); for anything else
:func:`read` returns ``None`` and the caller reads through zarr.  A chunk file
that is absent reads as the fill value, as in zarr; one that does not decode
raises :class:`ChunkUnreadable` (the integrity check names it).
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import numpy as np

__all__ = ["ChunkUnreadable", "read"]


class ChunkUnreadable(ValueError):
    """A chunk file exists but does not decode to a chunk of the array."""


def read(url: str | os.PathLike, name: str, region: tuple[slice, ...] = ()) -> np.ndarray | None:
    """The array ``name`` of the store at ``url`` (``region``: slices of its
    leading dims, default everything), or ``None`` where this reader does not
    apply (not a local path, other codecs, a missing or odd ``zarr.json``)."""
    url = os.fspath(url)
    if "://" in url and not url.startswith("file://"):
        return None
    root = Path(url.removeprefix("file://")) / name
    meta = _plain_meta(root)
    if meta is None:
        return None
    shape, chunks, dtype, fill, sep = meta
    region = tuple(region) + (slice(None),) * (len(shape) - len(region))
    bounds = [s.indices(n)[:2] for s, n in zip(region, shape)]
    out = np.full([hi - lo for lo, hi in bounds], fill, dtype=dtype)
    ranges = [range(lo // c, -(-hi // c)) for (lo, hi), c in zip(bounds, chunks)]
    base = os.path.join(str(root), "c")
    for coord in itertools.product(*ranges):
        path = base + "/" + sep.join(map(str, coord)) if coord else base
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            continue
        chunk = _decode(raw, dtype, chunks, path)
        src, dst = [], []
        for i, c, (lo, hi) in zip(coord, chunks, bounds):
            start, stop = max(i * c, lo), min((i + 1) * c, hi)
            src.append(slice(start - i * c, stop - i * c))
            dst.append(slice(start - lo, stop - lo))
        out[tuple(dst)] = chunk[tuple(src)]
    return out


def _decode(raw: bytes, dtype: np.dtype, chunks: tuple[int, ...], path: str) -> np.ndarray:
    from numcodecs.zstd import decompress

    try:
        data = decompress(raw)
        return np.frombuffer(data, dtype=dtype).reshape(chunks)
    except Exception as exc:  # noqa: BLE001 - any decoding failure is a damaged chunk
        raise ChunkUnreadable(f"chunk file {path} does not decode: {exc}") from None


def _plain_meta(root: Path):
    """(shape, chunks, dtype, fill value, key separator) of a zarr v3 array
    written with boardsweep's codecs, else ``None``."""
    try:
        meta = json.loads((root / "zarr.json").read_text())
    except (OSError, ValueError):
        return None
    try:
        if meta.get("zarr_format") != 3 or meta.get("node_type") != "array":
            return None
        grid, keys = meta["chunk_grid"], meta["chunk_key_encoding"]
        if grid.get("name") != "regular" or keys.get("name") != "default":
            return None
        codecs = [c.get("name") for c in meta["codecs"]]
        if codecs != ["bytes", "zstd"]:
            return None
        endian = meta["codecs"][0].get("configuration", {}).get("endian", "little")
        dtype = np.dtype(meta["data_type"])
        if dtype.itemsize > 1 and endian != "little":
            return None
        dtype = dtype.newbyteorder("<") if dtype.itemsize > 1 else dtype
        fill = meta["fill_value"]
        fill = np.nan if fill == "NaN" else fill
        sep = keys.get("configuration", {}).get("separator", "/")
        return (tuple(meta["shape"]), tuple(grid["configuration"]["chunk_shape"]), dtype, fill, sep)
    except (KeyError, TypeError, ValueError):
        return None
