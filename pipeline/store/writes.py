"""Writing a store's cells: one task's chunk, one chunk's exact answers, done flags, then its checksum record.

Each task writes its own chunks and nothing else (:mod:`.schema`).  Workers
write a task's chunk files directly on a local store
(:mod:`boardsweep.pipeline.store.chunkfiles`: the bytes zarr would write, renamed
into place) and through zarr elsewhere; the data first, then the done flags,
then the checksum record (a *manifest*: :func:`record`).

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

import asyncio
import hashlib
import json
from dataclasses import dataclass
from collections import OrderedDict
from typing import Any, Iterable, Mapping

import fsspec
import numpy as np
import zarr
from zarr.api.asynchronous import open_group

from . import chunkfiles, integers, remote
from ..plan import chunk_bounds
from .chunkfiles import fingerprint
from .layout import store_chunks
from ..errors import LayoutError
from .chunkfiles import LAYOUT_ATTR, PACKED_SEPARATOR, chunk_of
from .storage import ObjectStorage, open_storage
from .zarr_private import chunk_key, quiet, sync

__all__ = ["write_region", "write_exact", "write_whole", "clear_done", "INTEGRITY_SCHEME", "BINDING_SCHEME", "BINDING_ATTR",
           "MANIFEST_DIR", "Sweep", "sweep_of", "sim_name", "exact_name", "chunk_paths", "record", "grid_region"]


#: Arrays a process has opened for writing, per (store, canonical spec hash): a
#: worker opens a store's arrays once, not once per task (opening the group
#: re-reads its consolidated metadata).  The hash keys the entry, so a
#: store replaced by another spec is opened afresh.
_WRITERS: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()


_MAX_WRITERS = 8


def _writer(url: str, token: str | None, names: list[str]) -> dict[str, Any]:
    """The opened async arrays ``names`` of the store at ``url`` (cached by ``token``)."""
    key = (url, token or "")
    arrays = _WRITERS.get(key, {}) if token else {}
    missing = [n for n in names if n not in arrays]
    if missing:
        async def open_arrays() -> dict[str, Any]:
            group = await open_group(store=url, mode="r+")
            return {n: await group.getitem(n) for n in missing}

        with quiet():
            arrays = {**arrays, **sync(open_arrays())}
        if token:
            _WRITERS[key] = arrays
            while len(_WRITERS) > _MAX_WRITERS:
                _WRITERS.popitem(last=False)
    if token:
        _WRITERS.move_to_end(key)
    return arrays


def _write(url: str, token: str | None, region: tuple, values: Mapping[str, np.ndarray],
           flag: str, flags: np.ndarray) -> list[str] | dict[str, list[int]]:
    """Write every variable of one task's ``region`` (one chunk), then its
    ``flag`` array (``done`` / ``exact_done``) with ``flags`` (per cell of
    the region) once the data is on disk; return the chunk paths written.

    A local store's region, one chunk per array, is written straight to its
    chunk files (:func:`chunkfiles.put_chunk`); otherwise the arrays
    (kept open per worker) are written through zarr, concurrently.  On a
    local store and on object storage (the chunks put as objects,
    :func:`write_objects`) the paths come with their sizes and CRC-32s,
    from the bytes written: the record need not read them back.
    """
    written = [chunkfiles.put_chunk(url, name, region, v) for name, v in values.items()]
    if all(written):
        flag_written = chunkfiles.put_chunk(url, flag, region, flags)
        if flag_written:
            return dict([*written, flag_written])  # each with its size and CRC-32, as written
    written = write_objects(url, token, region, values, flag, flags)  # object storage: batched, checksums known
    if written is not None:
        return written
    return _write_zarr(url, token, region, values, flag, flags)


#: Per process: the parsed metadata of a remote store's arrays, per (store, spec hash), so that
#: a worker reads them once, not once per task (None: an array this writer does not handle).
_METAS: dict[tuple[str, str], dict[str, tuple | None]] = {}
_MAX_METAS = 8


def _metas(fs, root: str, url: str, token: str | None, names: list[str]) -> dict[str, tuple | None]:
    key = (url, token or "")
    metas = _METAS.get(key, {}) if token else {}
    missing = [n for n in names if n not in metas]
    if missing:
        raw = fs.cat([f"{root}/{n}/zarr.json" for n in missing])
        raw = {p.rsplit("/", 2)[-2]: v for p, v in raw.items()} if isinstance(raw, dict) else {missing[0]: raw}
        metas = {**metas, **{n: chunkfiles.parse_meta(json.loads(raw[n]), with_codec=True) for n in missing}}
        if token:
            _METAS[key] = metas
            while len(_METAS) > _MAX_METAS:
                _METAS.pop(next(iter(_METAS)))
    return metas


def write_objects(url: str, token: str | None, region: tuple, values: Mapping[str, np.ndarray],
               flag: str, flags: np.ndarray | None = None) -> dict[str, list[int]] | None:
    """Write one task's ``region`` of every array in ``values`` as objects
    (concurrent puts), then its ``flag`` (``done`` / ``exact_done``: the
    ``flags`` of the region's cells, default all set) once they are stored; return each object's store-relative path with its size
    and CRC-32, for the task's checksum record.  ``None`` (nothing written)
    where an array is not in boardsweep's chunk format: zarr writes it.
    ``token`` (a hash of the canonical spec) lets a worker keep the arrays'
    metadata between tasks."""
    objects = ObjectStorage(url)
    fs, root = objects.fs, objects.root
    metas = _metas(fs, root, url, token, [*values, flag])
    if any(meta is None for meta in metas.values()):
        return None
    data = {}
    for name, value in values.items():
        encoded = chunkfiles.encode_region(metas[name], f"array {name} of {url}", region, value)
        if encoded is None:
            return None
        data[f"{name}/{encoded[0]}"] = encoded[1]
    flags = np.ones(1, dtype=bool) if flags is None else flags
    done = chunkfiles.encode_region(metas[flag], f"array {flag} of {url}", region, flags)
    if done is None:
        return None
    # a PUT to a frozen server waits past botocore's read timeout
    fs.pipe({f"{root}/{path}": raw for path, raw in data.items()},
            timeout=remote.write_deadline(fs, sum(len(raw) for raw in data.values())))
    fs.pipe_file(f"{root}/{flag}/{done[0]}", done[1], timeout=remote.write_deadline(fs))  # only once the data is stored
    data[f"{flag}/{done[0]}"] = done[1]
    return {path: chunkfiles.fingerprint(raw) for path, raw in data.items()}


def _write_zarr(url: str, token: str | None, region: tuple, values: Mapping[str, np.ndarray],
                flag: str, flags: np.ndarray) -> list[str]:
    arrays = _writer(url, token, [*values, flag])
    for name in [*values, flag]:
        _require_own_chunk(url, name, arrays[name], region)

    async def write_all() -> None:
        await asyncio.gather(*(arrays[n].setitem(region, _stored(arrays[n], v, f"array {n} of {url}"))
                               for n, v in values.items()))
        await arrays[flag].setitem(region, np.asarray(flags, dtype=bool))

    with quiet():
        sync(write_all())
    return chunk_paths(arrays, [*values, flag], _chunk_coords(region, arrays[flag]))


def _stored(array, values: np.ndarray, what: str) -> np.ndarray:
    """``values`` as ``array`` (an opened zarr array) stores them: a float64
    array of integers takes their integer view (:func:`.integers.stored`)."""
    if integers.declared(array.attrs) is not None:
        return integers.stored(values, what)
    return np.asarray(integers.declared_fill(values, array.metadata.fill_value), dtype=array.dtype)


def _require_own_chunk(url: str, name: str, array, region: tuple) -> None:
    """Raise :class:`LayoutError` unless ``region`` of ``array`` is exactly one
    chunk: a task never writes into a chunk that other cells share."""
    separator = getattr(getattr(array.metadata, "chunk_key_encoding", None), "separator", "/")
    if (LAYOUT_ATTR in array.attrs or separator == PACKED_SEPARATOR
            or chunk_of(region, array.shape, array.chunks) is None):
        raise LayoutError(f"array {name} of {url} is not chunked per task: a task would write into a "
                          "chunk shared with other cells, so nothing was written")


def _chunk_coords(region: tuple, array) -> tuple[int, ...]:
    """Chunk coordinates of the leading dims ``region`` starts at."""
    return tuple((r.start or 0) // c if isinstance(r, slice) else int(r) // c
                 for r, c in zip(region, array.chunks))


def write_region(
    url: str, index: tuple[int, ...], region: tuple[slice, ...], arrays: Mapping[str, np.ndarray],
    done: np.ndarray, token: str | None = None,
) -> None:
    """Write one task's chunk ``region`` (grid axes, then replicates) of every
    simulated array, then its ``done`` flags, then its manifest (``index``:
    the chunk's grid coordinates).  ``token`` (a hash of the canonical spec)
    lets the worker keep a remote store's arrays open between tasks."""
    paths = _write(url, token, region, arrays, "done", done)
    record(url, paths, index, region[-1].start, token)


def clear_done(url: str, blocks: list[tuple[tuple[int, ...], int]], points: list[tuple[int, ...]],
               block: int, chunks: tuple[int, ...] | None = None) -> None:
    """Clear the done flags of damaged task chunks (grid coordinates, first
    replicate) and exact chunks (and their manifests), so that a run
    computes them again; ``chunks``: grid points per task along each axis
    (default one)."""
    fs, root = fsspec.core.url_to_fs(url)
    with quiet():
        group = zarr.open_group(url, mode="r+")
        done, exact_done = group["done"], group["exact_done"]
        for index, start in blocks:
            grid = grid_region(index, chunks, done.shape[:-1])
            done[grid + (slice(start, min(start + block, done.shape[-1])),)] = False
        for index in points:
            exact_done[grid_region(index, chunks, exact_done.shape)] = False
    names = [sim_name(i, s) for i, s in blocks] + [exact_name(i) for i in points]
    for name in names:
        path = f"{root}/{MANIFEST_DIR}/{name}"
        if fs.exists(path):
            fs.rm(path)


def write_exact(url: str, index: tuple[int, ...], region: tuple[slice, ...], arrays: Mapping[str, np.ndarray],
                done: np.ndarray, token: str | None = None) -> None:
    """Write the exact answers of one chunk of grid points (``index``: its
    coordinates; ``region``: its slices), then their ``exact_done`` flags."""
    values = {name: np.asarray(v, dtype=np.float64) for name, v in arrays.items()}
    paths = _write(url, token, region, values, "exact_done", done)
    record(url, paths, index, None, token)


def write_whole(url: str, values: Mapping[str, np.ndarray]) -> None:
    """Rewrite small arrays whole (per-point decisions: the client writes them, lock held)."""
    with quiet():
        group = zarr.open_group(url, mode="r+")
        for name, array in values.items():
            group[name][...] = array


# -- the checksum record of a task (its manifest) --------------------------------

INTEGRITY_SCHEME = "chunk-crc32/1"
MANIFEST_DIR = ".boardsweep/manifests"

#: How a manifest binds its cells to their sweep (root attribute :data:`BINDING_ATTR`).
BINDING_SCHEME = ("sha256 of JSON {sweep: canonical spec without grid and run.replicates, point: {axis: value}, "
                  "start: first replicate or null, chunks}")
BINDING_ATTR = "record_binding"


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
        data = files.read_many(paths, strict=False)
        chunks = {p: fingerprint(data[p]) for p in paths}
    manifest: dict[str, Any] = {"scheme": INTEGRITY_SCHEME, "chunks": chunks}
    sweep = _sweep(url, token) if sweep is None else sweep
    if sweep is not None:
        manifest["bound"] = sweep.binding(index, start, chunks)
    name = exact_name(index) if start is None else sim_name(index, start)
    files.write(f"{MANIFEST_DIR}/{name}", json.dumps(manifest).encode())  # whole or not at all
