"""Read and write a local store's zarr arrays straight from their chunk files.

A sweep store holds one small chunk file per task and variable: thousands of
them.  zarr-python reads each through its async machinery at about 0.3 ms a
chunk; this reader opens the files one after the other and decodes them with
the same codec (numcodecs' Zstd) at about 35 microseconds each (a thread pool
was slower: the work per file is Python, not waiting).  It handles only the
layout boardsweep writes (local files, a regular chunk grid, ``bytes`` then
``zstd`` codecs, little-endian or single-byte types); for anything else
:func:`read` returns ``None`` and the caller reads through zarr.  A chunk file
that is absent reads as the fill value, as in zarr; one that does not decode
raises :class:`ChunkUnreadable` (the integrity check names it).  A float64
array of integers (store format 6, :mod:`.integers`) reads in its integer
view: its declared dtype, :data:`.integers.FILL` where the store holds NaN.

:func:`write_chunk` is the other direction, for a task's region when it is
exactly one chunk (as every boardsweep task's is): the chunk is encoded as
zarr encodes it (``bytes`` then ``zstd`` with the array's level and checksum
settings, the region padded with the fill value) and written to a temporary
file that is renamed into place, so a reader never sees half a chunk.  zarr
spends about 1.3 ms per chunk write; this takes a few tens of microseconds.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
import zlib
from pathlib import Path

import fsspec
import numpy as np
from numcodecs.zstd import Zstd, decompress

from . import integers
from ..errors import ChunkUnreadable, LayoutError
from .storage import local_root, write_file

__all__ = ["LAYOUT_ATTR", "PACKED_SEPARATOR", "read", "write_chunk", "put_chunk", "fingerprint", "readable",
           "ChunkFileArray",
           "encode_chunks", "encode_region", "parse_meta"]

#: The root attribute recording the packed arrays (JSON text: per array, its
#: packed and task chunk shapes and its chunk files' sizes and CRC-32s), see
#: :mod:`boardsweep.pipeline.store.packing`.  Tasks never write a packed
#: array.  Store format 2 kept each array's record in its own attributes
#: under this name; that is still read.
LAYOUT_ATTR = "boardsweep_layout"

#: The chunk key separator of an array packed in place on object storage
#: (:mod:`.packing_inplace`; the task layout's is ``/``).
PACKED_SEPARATOR = "."






def read(url: str | os.PathLike, name: str, region: tuple[slice, ...] = (),
         unreadable_as_fill: bool = False, held: dict | None = None) -> np.ndarray | None:
    """The array ``name`` of the store at ``url`` (``region``: slices of its
    leading dims, default everything), or ``None`` where this reader does not
    apply (not a local path, other codecs, a missing or odd ``zarr.json``).
    A chunk that does not decode raises :class:`ChunkUnreadable`, or with
    ``unreadable_as_fill`` reads as the fill value (for a caller that uses
    only cells the integrity check found intact).

    ``held`` (a local store): decoded chunks kept from an earlier read, by
    file and its identity (inode, size, modification time: a file replaced
    is read again); on return it holds the chunks this read used, and only
    those: reading a large packed chunk block by block decodes it once."""
    root = _array_root(url, name)
    if root is None:
        return _read_remote(os.fspath(url), name, region, unreadable_as_fill)
    described = _meta_json(root)
    meta = parse_meta(described) if described is not None else None
    if meta is None:
        return None
    shape, chunks, dtype, fill, sep = meta
    out, bounds, coords = _region(meta, region)
    kept, used = held or {}, {}
    for coord in coords:
        path = os.path.join(root, chunk_file_key(coord, sep))
        try:
            if held is None:
                with open(path, "rb") as f:
                    _place(out, bounds, chunks, coord, f.read(), dtype, path, unreadable_as_fill)
                continue
            with open(path, "rb") as f:
                found = os.fstat(f.fileno())
                stamp = (path, found.st_ino, found.st_size, found.st_mtime_ns)
                chunk = kept[stamp] if stamp in kept else _decoded(f.read(), dtype, chunks, path, unreadable_as_fill)
        except FileNotFoundError:
            continue
        used[stamp] = chunk
        if chunk is not None:
            _copy(out, bounds, chunks, coord, chunk)
    if held is not None:
        held.clear()
        held.update(used)
    return _integer_view(out, described)


def _integer_view(values: np.ndarray, meta: dict) -> np.ndarray:
    """``values`` of an array whose ``zarr.json`` is ``meta`` as boardsweep
    reads them: a float64 array of integers (:mod:`.integers`) in its integer view."""
    dtype = integers.declared(meta.get("attributes"))
    return values if dtype is None or values.dtype.kind != "f" else integers.integer(values, dtype)


def _region(meta: tuple, region: tuple) -> tuple[np.ndarray, list[tuple[int, int]], list[tuple[int, ...]]]:
    """The output array of ``region`` (filled), its bounds, and the chunks it needs."""
    shape, chunks, dtype, fill = meta[:4]
    region = tuple(region) + (slice(None),) * (len(shape) - len(region))
    bounds = [s.indices(n)[:2] for s, n in zip(region, shape)]
    out = np.full([hi - lo for lo, hi in bounds], fill, dtype=dtype)
    ranges = [range(lo // c, -(-hi // c)) for (lo, hi), c in zip(bounds, chunks)]
    return out, bounds, list(itertools.product(*ranges))


def _place(out: np.ndarray, bounds, chunks, coord, raw: bytes, dtype, path: str, unreadable_as_fill: bool) -> None:
    """Decode chunk ``coord`` and copy its part inside the region into ``out``."""
    chunk = _decoded(raw, dtype, chunks, path, unreadable_as_fill)
    if chunk is not None:
        _copy(out, bounds, chunks, coord, chunk)


def _decoded(raw: bytes, dtype, chunks, path: str, unreadable_as_fill: bool) -> np.ndarray | None:
    """:func:`_decode`; ``None`` for a chunk that does not decode where ``unreadable_as_fill``."""
    try:
        return _decode(raw, dtype, chunks, path)
    except ChunkUnreadable:
        if not unreadable_as_fill:
            raise
        return None


def _copy(out: np.ndarray, bounds, chunks, coord, chunk: np.ndarray) -> None:
    """Copy the part of chunk ``coord`` inside the region (``bounds``) into ``out``."""
    src, dst = [], []
    for i, c, (lo, hi) in zip(coord, chunks, bounds):
        start, stop = max(i * c, lo), min((i + 1) * c, hi)
        src.append(slice(start - i * c, stop - i * c))
        dst.append(slice(start - lo, stop - lo))
    out[tuple(dst)] = chunk[tuple(src)]


#: Above this many chunks, a remote read lists the array's objects first and
#: fetches only those that exist (a missing chunk costs no request).
LIST_FIRST = 64


def _read_remote(url: str, name: str, region: tuple, unreadable_as_fill: bool) -> np.ndarray | None:
    """:func:`read` of a store behind an fsspec URL: the chunk objects fetched
    concurrently (one request each), missing ones not asked for when many."""
    fs, root = fsspec.core.url_to_fs(url)
    base = f"{root.rstrip('/')}/{name}"
    try:
        described = json.loads(fs.cat_file(f"{base}/zarr.json"))
    except (FileNotFoundError, ValueError):
        return None
    meta = parse_meta(described) if isinstance(described, dict) else None
    if meta is None:
        return None
    shape, chunks, dtype, fill, sep = meta
    out, bounds, coords = _region(meta, region)
    keys = {f"{base}/{chunk_file_key(coord, sep)}": coord for coord in coords}
    wanted = list(keys)
    if len(wanted) > LIST_FIRST:
        fs.invalidate_cache(base)  # another process writes: never a cached listing
        present = set(fs.find(base))
        wanted = [k for k in wanted if k in present]
    found = fs.cat(wanted, on_error="return") if wanted else {}
    for key in wanted:
        raw = found.get(key)
        if isinstance(raw, FileNotFoundError) or raw is None:
            continue
        if isinstance(raw, BaseException):
            raise raw
        _place(out, bounds, chunks, keys[key], raw, dtype, key, unreadable_as_fill)
    return _integer_view(out, described)


def readable(url: str | os.PathLike, name: str) -> bool:
    """Whether :func:`read` applies to the array ``name`` of ``url``."""
    root = _array_root(url, name)
    return root is not None and plain_meta(root) is not None


class ChunkFileArray:
    """An array-like over :func:`read` for ``dask.array.from_array``: each
    dask chunk reads its region's chunk files when computed, and the chunks
    the last read decoded are held for the next (:func:`read`'s ``held``):
    dask chunks smaller than the store's (a packed store read block by
    block) decode each chunk once, not once per dask chunk."""

    def __init__(self, url: str, name: str, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.url, self.name, self.shape, self.dtype = os.fspath(url), name, tuple(shape), np.dtype(dtype)
        self.ndim = len(self.shape)
        self._held: dict = {}
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("_held", "_lock")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _held={}, _lock=threading.Lock())

    def __getitem__(self, key) -> np.ndarray:
        key = key if isinstance(key, tuple) else (key,)
        if all(isinstance(k, slice) and k.step in (None, 1) for k in key):
            with self._lock:
                held = dict(self._held)
            data = read(self.url, self.name, key, held=held)
            if data is not None:
                with self._lock:
                    self._held = held
                return data
        whole = read(self.url, self.name)
        return whole[key]


def write_chunk(url: str | os.PathLike, name: str, region: tuple[slice | int, ...],
                values: np.ndarray, packed: bool = False) -> str | None:
    """Write ``values`` as the one chunk that ``region`` (integers and slices
    of the leading dims; the rest whole) covers; return the chunk's path
    relative to the store, or ``None`` (nothing written) where this writer
    does not apply: not a local store, other codecs.

    Raises :class:`LayoutError` (nothing written) where ``region`` is not
    exactly one chunk or the array is packed (in place: its chunk keys use
    :data:`PACKED_SEPARATOR`; a format-2 store: :data:`LAYOUT_ATTR`), unless
    ``packed`` (the packing itself writes a packed array's chunks): a
    task's cells never share a chunk with other cells.
    """
    written = put_chunk(url, name, region, values, packed)
    return None if written is None else written[0]


def put_chunk(url: str | os.PathLike, name: str, region: tuple[slice | int, ...],
              values: np.ndarray, packed: bool = False) -> tuple[str, list[int]] | None:
    """:func:`write_chunk`, returning (the chunk's path relative to the
    store, [its size in bytes, its CRC-32]): the checksum record's entry,
    from the bytes written (:mod:`.writes`), or ``None``."""
    root = _array_root(url, name)
    described = _kept_meta_json(root) if root is not None else None
    meta = parse_meta(described, with_codec=True) if described is not None else None
    if meta is None:
        return None
    encoded = encode_region(meta, f"array {name} of {url}", region, values, packed)
    if encoded is None:
        return None
    key, raw = encoded
    write_file(root / key, raw)
    return f"{name}/{key}", fingerprint(raw)


def fingerprint(data: bytes | None) -> list[int] | None:
    """A chunk file's size and CRC-32, what the checksum records hold
    (:mod:`.writes`, the packed layout's records; ``None`` where there is no file)."""
    return None if data is None else [len(data), zlib.crc32(data)]


def encode_region(meta: tuple, what: str, region: tuple[slice | int, ...], values: np.ndarray,
                  packed: bool = False) -> tuple[str, bytes] | None:
    """The chunk key (under its array) and the bytes of the one chunk that
    ``region`` covers, holding ``values``; ``None`` where ``values`` does not
    fit.  ``meta``: :func:`parse_meta` ``with_codec``; ``what`` names the
    array in errors.  Raises :class:`LayoutError` as :func:`write_chunk`."""
    shape, chunks, sep, is_packed = meta[0], meta[1], meta[4], meta[7]
    coord = chunk_of(region, shape, chunks)
    if (coord is None or is_packed) and not packed:
        raise LayoutError(f"{what} is {'packed' if is_packed else 'not chunked per task'}: "
                          "a task would write into a chunk shared with other cells, so nothing was "
                          "written (a run unpacks the store first)")
    if coord is None:
        return None
    if meta[8] is not None:  # integers kept as float64: NaN where none
        values = integers.stored(values, what)
    else:
        values = integers.declared_fill(values, meta[3])
    raw = _encode(meta, coord, values)
    return None if raw is None else (chunk_file_key(coord, sep), raw)


def _encode(meta: tuple, coord: tuple[int, ...], values: np.ndarray) -> bytes | None:
    """The bytes zarr writes for the chunk at ``coord`` holding ``values`` (its
    part inside the array, or one value for all of it), padded with the fill
    value; ``None`` where ``values`` does not fit the chunk.  ``meta``: what
    :func:`parse_meta` returns ``with_codec``."""
    shape, chunks, dtype, fill, _, level, checksum = meta[:7]
    inside = [min(c, n - i * c) for i, c, n in zip(coord, chunks, shape)]  # the chunk's part in the array
    values = np.asarray(values, dtype=dtype)
    if values.size not in (1, int(np.prod(inside))):
        return None
    chunk = np.full(chunks, fill, dtype=dtype)
    chunk[tuple(slice(0, k) for k in inside)] = values.reshape(inside) if values.size > 1 else values.item()
    return Zstd(level=level, checksum=checksum).encode(np.ascontiguousarray(chunk).tobytes())


def encode_chunks(meta: dict, values: np.ndarray) -> dict[str, bytes] | None:
    """Every chunk of an array whose ``zarr.json`` (parsed) is ``meta`` and
    whose whole data is ``values``, encoded as zarr writes them: chunk key
    (``c/0/1`` or ``c.0.1``, as ``meta`` says) to bytes; ``None`` where
    ``meta`` is not boardsweep's layout (:func:`parse_meta`)."""
    parsed = parse_meta(meta, with_codec=True)
    if parsed is None:
        return None
    shape, chunks, sep = parsed[0], parsed[1], parsed[4]
    if parsed[8] is not None:  # integers kept as float64: NaN where none
        values = integers.stored(values, "a packed array")
    out = {}
    for coord in itertools.product(*[range(-(-n // c)) for n, c in zip(shape, chunks)]):
        region = tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(coord, chunks, shape))
        out[chunk_file_key(coord, sep)] = _encode(parsed, coord, values[region])
    return out


def _array_root(url: str | os.PathLike, name: str) -> Path | None:
    """The folder of array ``name`` in a local store (``None`` for a remote URL)."""
    root = local_root(url)
    return None if root is None else root / name


def chunk_file_key(coord: tuple[int, ...], sep: str) -> str:
    """zarr v3's default chunk key, relative to the array: ``c/0/1/2``, ``c.0.1.2`` (``c`` for 0-d)."""
    return "c" + sep + sep.join(map(str, coord)) if coord else "c"


def chunk_of(region, shape, chunks) -> tuple[int, ...] | None:
    """The coordinates of the one chunk ``region`` covers exactly, else ``None``."""
    region = tuple(region) + (slice(None),) * (len(shape) - len(region))
    coord = []
    for r, n, c in zip(region, shape, chunks):
        lo, hi = (r, r + 1) if isinstance(r, (int, np.integer)) else r.indices(n)[:2]
        if lo % c or hi != min(lo + c, n):
            return None
        coord.append(lo // c)
    return tuple(coord)


def _decode(raw: bytes, dtype: np.dtype, chunks: tuple[int, ...], path: str) -> np.ndarray:
    try:
        data = decompress(raw)
        return np.frombuffer(data, dtype=dtype).reshape(chunks)
    except Exception as exc:  # noqa: BLE001 - any decoding failure is a damaged chunk
        raise ChunkUnreadable(f"chunk file {path} does not decode: {exc}") from None


def plain_meta(root: Path, with_codec: bool = False):
    """(shape, chunks, dtype, fill value, key separator) of a zarr v3 array
    written with boardsweep's codecs, else ``None``; ``with_codec`` adds the
    zstd level, its checksum flag, whether the array is packed and the
    integer dtype a float64 array of integers declares (:mod:`.integers`;
    ``None`` for any other array).  :func:`read` returns such an array in
    its integer view; :func:`write_chunk` takes that view."""
    meta = _meta_json(root)
    return None if meta is None else parse_meta(meta, with_codec)


#: Parsed ``zarr.json`` files a writer read, per (path, inode, modification
#: time, size): a worker writes many chunks of each array, and one ``stat``
#: costs fewer system calls than a read (the file replaced or rewritten is read again).
_WRITER_METAS: dict[tuple, dict] = {}
_WRITER_METAS_MAX = 256
#: A ``zarr.json`` is kept only once its modification time is this much in the past
#: (nanoseconds): a rewrite in place, at the same size, within the same tick of the
#: file system's clock would otherwise keep its identity and be read stale (git's
#: "racy clean" rule); a rewrite after it changes the modification time.
_SETTLED_NS = 2_000_000_000


def _kept_meta_json(root: Path) -> dict | None:
    """:func:`_meta_json`, kept per file identity for :func:`put_chunk`."""
    try:
        st = os.stat(root / "zarr.json")
    except OSError:
        return None
    key = (str(root), st.st_ino, st.st_mtime_ns, st.st_size)
    meta = _WRITER_METAS.get(key)
    if meta is None:
        meta = _meta_json(root)
        if meta is not None and time.time_ns() - st.st_mtime_ns > _SETTLED_NS:
            if len(_WRITER_METAS) >= _WRITER_METAS_MAX:
                _WRITER_METAS.clear()
            _WRITER_METAS[key] = meta
    return meta


def _meta_json(root: Path) -> dict | None:
    """The parsed ``zarr.json`` of the array at ``root``, ``None`` where it is not readable JSON of an object."""
    try:
        meta = json.loads((root / "zarr.json").read_text())
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def parse_meta(meta: dict, with_codec: bool = False):
    """:func:`plain_meta` of an array's ``zarr.json`` already parsed."""
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
        found = (tuple(meta["shape"]), tuple(grid["configuration"]["chunk_shape"]), dtype, fill, sep)
        if with_codec:
            zstd = meta["codecs"][1].get("configuration", {})
            found += (int(zstd.get("level", 0)), bool(zstd.get("checksum", False)),
                      LAYOUT_ATTR in (meta.get("attributes") or {}) or sep == PACKED_SEPARATOR,
                      integers.declared(meta.get("attributes")) if dtype.kind == "f" else None)
        return found
    except (KeyError, TypeError, ValueError):
        return None
