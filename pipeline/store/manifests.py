"""What each task wrote: its checksum record (a manifest), written after its data.

A task's manifest lists the zarr chunk keys it wrote with the size and CRC-32
of each chunk file (``None`` for a chunk zarr did not write because it held
only fill values).  Manifests live under ``<store>/.boardsweep/manifests/``
(``sim/`` per task block, ``exact/`` per grid point), beside the zarr arrays;
zarr and xarray ignore the folder.  :mod:`.integrity` checks them.

A manifest also binds its cells to their sweep (``bound``,
:data:`BINDING_SCHEME`): the SHA-256 of what identifies the cells (the
store's canonical spec without what a growth may change, i.e. game, seed,
parameters, run shape, checkpoints; the grid point's values; the first
replicate of the block) and of the chunk checksums.  Chunk files and their
manifest copied in from another store (another seed, other parameters,
another grid point) verify by content but not by binding, so they are found
and recomputed.  A store made before the binding (no ``record_binding``
attribute) accepts a manifest without one, verified by content alone.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..plan import chunk_bounds
from .chunkfiles import fingerprint
from .storage import Storage, open_storage
from .zarr_private import chunk_key

__all__ = ["INTEGRITY_SCHEME", "BINDING_SCHEME", "BINDING_ATTR", "MANIFEST_DIR", "Sweep", "sweep_of", "sim_name",
           "exact_name", "chunk_paths", "record", "grid_region", "store_chunks", "GRID_CHUNKS_ATTR"]

INTEGRITY_SCHEME = "chunk-crc32/1"
MANIFEST_DIR = ".boardsweep/manifests"

#: How a manifest binds its cells to their sweep (root attribute :data:`BINDING_ATTR`).
BINDING_SCHEME = ("sha256 of JSON {sweep: canonical spec without grid and run.replicates, point: {axis: value}, "
                  "start: first replicate or null, chunks}")
BINDING_ATTR = "record_binding"
#: Root attribute: grid points per task along each grid axis (absent: one).
GRID_CHUNKS_ATTR = "grid_chunks"


@dataclass(frozen=True)
class Sweep:
    """What a store's manifests are bound to: its canonical spec less what a
    growth may change (as JSON), its grid axes and their values."""

    identity: str
    axes: tuple[str, ...]
    grid: Mapping[str, list]
    required: bool  # the store binds every manifest (made with :data:`BINDING_SCHEME`)
    grid_chunks: tuple[int, ...] | None = None  # grid points per task along each axis (None: one)

    def binding(self, index: tuple[int, ...], start: int | None, chunks: Mapping[str, Any]) -> str:
        """The ``bound`` value of the manifest of task (``index``: its chunk's
        grid coordinates, ``start``) holding ``chunks``: bound to the grid
        values of the chunk's first point, which a growth never changes."""
        sizes = self.grid_chunks or (1,) * len(index)
        point = {axis: self.grid[axis][i * g] for axis, i, g in zip(self.axes, index, sizes)}
        text = json.dumps({"point": point, "start": start, "chunks": chunks}, sort_keys=True)
        return hashlib.sha256((self.identity + "\n" + text).encode()).hexdigest()


def sweep_of(attrs: Mapping[str, Any]) -> Sweep | None:
    """The :class:`Sweep` of a store's attributes (``None`` where they hold no readable spec)."""
    try:
        canonical = json.loads(attrs["spec_canonical"])
        grid = {str(a): list(v) for a, v in canonical.get("grid", {}).items()}
        axes = tuple(str(a) for a in attrs.get("grid_axes", list(grid)))
        if set(axes) != set(grid):
            return None
        kept = {k: v for k, v in canonical.items() if k != "grid"}
        kept["run"] = {k: v for k, v in dict(canonical.get("run", {})).items() if k != "replicates"}
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return Sweep(json.dumps(kept, sort_keys=True), axes, grid, attrs.get(BINDING_ATTR) == BINDING_SCHEME,
                 store_chunks(attrs))


#: The sweep of each store a worker writes into, per (store, canonical spec hash).
_SWEEPS: dict[tuple[str, str], Sweep | None] = {}


def _sweep(url: str, token: str | None) -> Sweep | None:
    """The :class:`Sweep` of the store at ``url``, read from its root
    metadata (kept per ``token``, a hash of the canonical spec)."""
    key = (url, token or "")
    if token and key in _SWEEPS:
        return _SWEEPS[key]
    try:
        attrs = json.loads(open_storage(url).read("zarr.json") or b"{}").get("attributes", {})
    except (OSError, ValueError, AttributeError):
        attrs = {}
    found = sweep_of(attrs)
    if token:
        if len(_SWEEPS) > 16:
            _SWEEPS.clear()
        _SWEEPS[key] = found
    return found


def grid_region(index: tuple[int, ...], chunks: tuple[int, ...] | None,
                shape: tuple[int, ...]) -> tuple[slice, ...]:
    """The grid slices of the task chunk at grid coordinates ``index``
    (``chunks``: points per task along each axis, ``None``: one)."""
    return tuple(slice(lo, hi) for lo, hi in chunk_bounds(index, chunks or (1,) * len(index), shape))


def store_chunks(attrs: Mapping[str, Any]) -> tuple[int, ...] | None:
    """Grid points per task along each axis, as a store records them
    (root attribute ``grid_chunks``; ``None`` for a store of one point per task)."""
    found = attrs.get(GRID_CHUNKS_ATTR)
    if not isinstance(found, list) or not all(isinstance(g, int) and g >= 1 for g in found):
        return None
    return tuple(found)


def sim_name(index: tuple[int, ...], start: int) -> str:
    return "sim/" + ".".join(map(str, (*index, start))) + ".json"


def exact_name(index: tuple[int, ...]) -> str:
    return "exact/" + (".".join(map(str, index)) or "point") + ".json"


def chunk_paths(arrays, names: Iterable[str], coords: tuple[int, ...]) -> list[str]:
    """Store-relative paths of the chunk at ``coords`` (padded with zeros) of
    each array (``arrays``: a zarr group or a mapping of name to array)."""
    paths = []
    for name in names:
        array = arrays[name]
        full = tuple(coords) + (0,) * (array.ndim - len(coords))
        paths.append(f"{name}/{chunk_key(array, full)}")
    return paths


def read_many(files: Storage, paths: list[str]) -> dict[str, bytes | None]:
    """Raw bytes of each store-relative path (``None`` where there is no file
    or it cannot be read: the check then names it)."""
    return files.read_many(paths, strict=False)


def record(url: str, paths: list[str] | Mapping[str, list[int] | None], index: tuple[int, ...],
           start: int | None, token: str | None = None, sweep: Sweep | None = None) -> None:
    """Write the manifest of one task after its data and done flags:
    ``paths`` are the chunk files it wrote (store-relative; a mapping where
    the writer knows their size and CRC-32, else they are read back),
    ``start`` the first replicate of a simulation block (``None`` for an
    exact task).  The manifest is bound to the store's sweep (``sweep``,
    else read from the store, kept per ``token``)."""
    files = open_storage(url)
    if isinstance(paths, Mapping):
        chunks = dict(paths)
    else:
        data = read_many(files, paths)
        chunks = {p: fingerprint(data[p]) for p in paths}
    manifest: dict[str, Any] = {"scheme": INTEGRITY_SCHEME, "chunks": chunks}
    sweep = _sweep(url, token) if sweep is None else sweep
    if sweep is not None:
        manifest["bound"] = sweep.binding(index, start, chunks)
    name = exact_name(index) if start is None else sim_name(index, start)
    files.write(f"{MANIFEST_DIR}/{name}", json.dumps(manifest).encode())  # whole or not at all
