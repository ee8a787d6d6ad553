"""What each task wrote: its checksum record (a manifest), written after its data.

A task's manifest lists the zarr chunk keys it wrote with the size and CRC-32
of each chunk file (``None`` for a chunk zarr did not write because it held
only fill values).  Manifests live under ``<store>/.boardsweep/manifests/``
(``sim/`` per task block, ``exact/`` per grid point), beside the zarr arrays;
zarr and xarray ignore the folder.  :mod:`.integrity` checks them.
"""

from __future__ import annotations

import json
import zlib
from typing import Iterable, Mapping

import fsspec
from fsspec.implementations.local import LocalFileSystem

from .zarr_private import chunk_key

__all__ = ["INTEGRITY_SCHEME", "MANIFEST_DIR", "sim_name", "exact_name", "chunk_paths", "record"]

INTEGRITY_SCHEME = "chunk-crc32/1"
MANIFEST_DIR = ".boardsweep/manifests"


def sim_name(index: tuple[int, ...], start: int) -> str:
    return "sim/" + ".".join(map(str, (*index, start))) + ".json"


def exact_name(index: tuple[int, ...]) -> str:
    return "exact/" + (".".join(map(str, index)) or "point") + ".json"


def _fs(url: str):
    return fsspec.core.url_to_fs(url)


def chunk_paths(arrays, names: Iterable[str], coords: tuple[int, ...]) -> list[str]:
    """Store-relative paths of the chunk at ``coords`` (padded with zeros) of
    each array (``arrays``: a zarr group or a mapping of name to array)."""
    paths = []
    for name in names:
        array = arrays[name]
        full = tuple(coords) + (0,) * (array.ndim - len(coords))
        paths.append(f"{name}/{chunk_key(array, full)}")
    return paths


def _fingerprint(data: bytes | None) -> list[int] | None:
    return None if data is None else [len(data), zlib.crc32(data)]


def _read_many(fs, root: str, paths: list[str]) -> dict[str, bytes | None]:
    """Raw bytes of each store-relative path (``None`` where there is no file)."""
    if isinstance(fs, LocalFileSystem):  # plain reads: fsspec's per-file cost dominates small files
        return {p: _read_local(f"{root}/{p}") for p in paths}
    full = [f"{root}/{p}" for p in paths]
    got = fs.cat(full, on_error="return") if full else {}
    out = {}
    for p, f in zip(paths, full):
        value = got.get(f)
        out[p] = value if isinstance(value, (bytes, bytearray)) else None
    return out


def _read_local(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def record(url: str, paths: list[str] | Mapping[str, list[int] | None], index: tuple[int, ...],
           start: int | None) -> None:
    """Write the manifest of one task after its data and done flags:
    ``paths`` are the chunk files it wrote (store-relative; a mapping where
    the writer knows their size and CRC-32, else they are read back),
    ``start`` the first replicate of a simulation block (``None`` for an
    exact task)."""
    fs, root = _fs(url)
    if isinstance(paths, Mapping):
        chunks = dict(paths)
    else:
        data = _read_many(fs, root, paths)
        chunks = {p: _fingerprint(data[p]) for p in paths}
    manifest = {"scheme": INTEGRITY_SCHEME, "chunks": chunks}
    name = exact_name(index) if start is None else sim_name(index, start)
    target = f"{root}/{MANIFEST_DIR}/{name}"
    if isinstance(fs, LocalFileSystem):  # object storage has no folders to make
        fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
    fs.pipe_file(target, json.dumps(manifest).encode())
