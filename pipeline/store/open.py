"""A sweep store opened as an xarray Dataset: lazily (:func:`open_sweep`)
or in memory (:func:`load_sweep`), checked intact, unfinished cells as NaN.

:func:`open_sweep` masks every simulated variable with ``done`` and every
exact variable with ``exact_done`` (:func:`mask`): a cell no task has
finished reads as NaN, never as zero.  ``xr.open_dataset(store,
engine="boardsweep")`` calls :func:`open_sweep` (:mod:`boardsweep.xarray_backend`).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Callable, Mapping

import fsspec
import numpy as np
import xarray as xr
import zarr

from ... import xarray_backend  # noqa: F401  (registers ds.boardsweep, once)
from . import chunkfiles
from .reads import fixed_width, unrecorded_only
from .metadata import exact_renames, simulated_variables
from .creation import creating_line, creation_record
from .chunkfiles import LAYOUT_ATTR
from .layout import GROWING, marked
from .identity import lock_only_line, rootless_line
from .integrity import assert_intact
from .owner import Store
from .layout import GENERATION_ATTR, JOURNAL
from .lock import StoreLock, run_holds
from ..errors import ArgumentTypeError, ArraysMissing, NoSweepStore, StoreBeingRewritten, StoreDamaged, expect_flag
from ..words import python_value

__all__ = ["READ_CHUNK_BYTES", "being_created", "open_sweep", "load_sweep", "mask", "chunked_like", "native", "read_chunks",
           "layout_stamp", "held_still", "unrecorded_line"]


#: Largest dask chunk :func:`open_sweep` makes (bytes, uncompressed).
READ_CHUNK_BYTES = 128 * 2**20


def open_sweep(
    url: str | Store,
    check: bool = True,
    chunks: Mapping[str, int] | None = None,
    sel: Mapping[str, Any] | None = None,
) -> xr.Dataset:
    """Open the store at ``url`` lazily; unfinished cells read as NaN.

    The store holds one small zarr chunk per task and variable.  Its dask
    chunks span many of them (whole along every dim but the first grid axis,
    at most :data:`READ_CHUNK_BYTES` each, see :func:`read_chunks`), and each
    reads its chunk files directly (:mod:`boardsweep.pipeline.store.chunkfiles`;
    through zarr where that reader does not apply), decoded as
    ``xarray.open_zarr`` decodes them.  ``chunks`` ({dim: size}, -1 whole)
    overrides the split.  ``sel`` ({axis: value or [values]}) reads just those cells,
    at once (:func:`load_sweep`).

    With ``check`` (the default) the store's finished cells are verified
    first (:mod:`boardsweep.pipeline.store.integrity`: raw chunk bytes against the
    checksums their tasks recorded); a damaged store raises
    :class:`~boardsweep.pipeline.errors.StoreDamaged` naming the cells,
    rather than answering with fewer replicates or a decompression error.

    ``url`` may be a :class:`~boardsweep.pipeline.store.Store` a command has
    opened: what it has read of the store is used, not read again.
    """
    _check_arguments(url, check, sel, chunks)
    st = _opened(url)
    if sel:
        return load_sweep(st, check=check, sel=sel)
    first = _first_stamp(url, st)
    if check:
        _assert_intact(st)
    return _steadily(st, lambda before: _open(st, chunks, before), first)


def _first_stamp(url: str | Store, st: Store) -> tuple[bool, bytes | None] | None:
    """The layout stamp a read of ``st`` begins from, taken before anything
    but its kind is read (and kept: the check's raw read is the data read's
    too): a run that changes the store after it is seen by the read's end;
    ``None`` for a :class:`Store` the caller opened, read at a time unknown."""
    return None if isinstance(url, Store) else _layout_stamp(st.url)


def _open(st: Store, chunks: Mapping[str, int] | None, opened: tuple[bool, bytes | None]) -> xr.Dataset:
    """:func:`open_sweep`'s one opening of the store: the done masks read now, the data when computed;
    ``opened``: the layout stamp taken before ``st`` read its metadata (the one every lazy chunk read checks)."""
    raw = _whole(st.open_raw(), st.url)
    chunks = dict(chunks or read_chunks(raw))
    data = {}
    for name in _masks_first(raw):  # the masks read now, the data when computed: after them
        var = raw[name]
        if name in ("done", "exact_done"):
            data[name] = chunkfiles.read(st.url, name)
            data[name] = data[name] if data[name] is not None else var.values
        else:
            data[name] = _lazy(st.url, name, var, chunks, opened)
    raw = raw.copy(data=data)  # every variable's data at once: its coordinates not aligned once a variable
    return _text_as_objects(native(mask(_as_current(xr.decode_cf(raw)))))


def _text_as_objects(ds: xr.Dataset) -> xr.Dataset:
    """``ds`` (lazy) with its text data variables (``exact_note``, numpy
    ``StringDType`` as zarr-python reads zarr's ``string``) as Python strings
    when computed: numpy's object dtype, whose width a lazy array need not know."""
    for var in ds.data_vars.values():
        if var.dtype.kind == "T":
            data = var.variable.data
            var.variable.data = data.map_blocks(_objects, dtype=object) if hasattr(data, "map_blocks") else _objects(data)
    return ds


def _objects(block: np.ndarray) -> np.ndarray:
    """``block`` of text as an object array of Python strings."""
    return np.asarray(block).astype(object)


def native(ds: xr.Dataset) -> xr.Dataset:
    """``ds`` with every number in the machine's own byte order, declared so
    (``=``, not zarr-python's explicit ``<``; no copy), in its data and in
    the ``dtype`` it would be written back as: ``to_netcdf`` then gives no
    warning that the 'endian-ness of dtype and endian kwarg do not match'.
    Integers read as float64 with NaN where missing are written back so
    (``to_zarr`` and ``to_netcdf`` with no cast of NaN to an integer)."""
    for name, var in ds.variables.items():
        stored = var.encoding.get("dtype")
        if stored is not None and var.dtype.kind == "f" and np.dtype(stored).kind in "iu":
            # integers that may be missing, read as float64 with NaN: written back as they read (float64,
            # NaN), as store format 6 holds them; as integers, to_zarr cast NaN to the fill ("invalid value")
            var.encoding.pop("dtype")
            var.encoding.pop("_FillValue", None)
            stored = None
        if stored is not None and _explicit(np.dtype(stored)):
            var.encoding["dtype"] = np.dtype(stored).newbyteorder("=")
        if _explicit(var.dtype) and name not in ds.indexes:
            var.data = var.data.view(var.dtype.newbyteorder("="))
    return ds


def _explicit(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is a number in this machine's byte order declared as ``<`` or ``>``."""
    return dtype.kind in "biufc" and dtype.byteorder in "<>" and dtype.isnative


def _check_arguments(url: Any, check: Any, sel: Any, chunks: Any = None) -> None:
    """Refuse arguments not of their kind in one line (:class:`ArgumentTypeError`), before anything is read."""
    if not isinstance(url, (str, os.PathLike, Store)):
        raise ArgumentTypeError(f"store: expected a path or URL of a sweep store (a str or a Path), got "
                                f"{type(url).__name__}")
    expect_flag(check, "check")
    for name, value in (("sel", sel), ("chunks", chunks)):
        if value is not None and not isinstance(value, Mapping):
            example = "{'dice_sides': 2}" if name == "sel" else "{'replicate': 4}"
            raise ArgumentTypeError(f"{name}={value!r}: expected a mapping of dimension to "
                                    f"{'value(s)' if name == 'sel' else 'chunk size'}, e.g. {example}")


def _opened(url: str | Store) -> Store:
    """The store at ``url``, or ``url`` itself where it is an opened :class:`Store`;
    :class:`StoreBeingRewritten` (one line, :func:`.creation.creating_line`,
    :func:`.identity.lock_only_line`) where a run is creating it or was
    interrupted while it did, or holds only a run's lock."""
    st = url if isinstance(url, Store) else Store(str(url))
    if st.kind == "creating":
        raise StoreBeingRewritten(creating_line(st.url))
    if st.kind == "empty" and (told := being_created(st.url)) is not None:  # a run making it, or killed before
        raise told
    if st.kind in ("absent", "empty"):
        raise NoSweepStore(f"store {st.url}: no sweep store there")
    if st.kind == "rootless":
        raise StoreDamaged(rootless_line(st.url))
    if st.kind in ("file", "folder", "zarr-array"):  # nothing a run makes looks like these, even half made
        raise NoSweepStore(f"store {st.url}: not a boardsweep sweep store")
    return st


def _lazy(url: str, name: str, var: xr.Variable, chunks: Mapping[str, int], opened: tuple[bool, bytes | None]):
    """A dask array of ``var`` whose chunks read the store's chunk files
    directly (:class:`chunkfiles.ChunkFileArray`), or through zarr where
    that reader does not apply; ``opened``: the store's :func:`_layout_stamp`
    when it was opened, which every chunk read checks."""
    import dask.array as da
    from dask.base import tokenize

    shape = tuple(var.shape)
    wanted = tuple(chunks.get(d, -1) for d in var.dims)
    token = tokenize(url, name, shape, wanted, str(var.dtype))  # named by what it reads: its values never hashed
    if chunkfiles.readable(url, name):
        source = _SteadyChunks(chunkfiles.ChunkFileArray(url, name, shape, var.dtype), url, opened)
    elif var.dtype.kind in "biuf":  # through zarr (object storage, a layout the direct reader does not read)
        source = _SteadyChunks(_VariableChunks(var), url, opened)
    else:
        return var.chunk(dict(zip(var.dims, wanted)), token=token).data
    return da.from_array(source, chunks=wanted, lock=False, asarray=True, name=f"boardsweep-{name}-{token}")


class _SteadyChunks:
    """A chunk source (:class:`chunkfiles.ChunkFileArray`, or :class:`_VariableChunks`
    where that reader does not apply) whose every read is checked as
    :func:`load_sweep`'s are: a read while a run packs, unpacks or grows the
    store (an array moved away reads as its fill value, so a cell could read
    done without its data; or is not found: a ``KeyError``) raises
    :class:`StoreBeingRewritten` instead; so does a read after the store's
    layout changed since it was opened (``opened``, its :func:`_layout_stamp`
    then): the chunks it would read are no longer where, or what, they were."""

    def __init__(self, source, url: str, opened: tuple[bool, bytes | None]) -> None:
        self.source, self.url, self.opened = source, url, _layout_of(opened)
        self.shape, self.dtype, self.ndim = source.shape, source.dtype, source.ndim

    def __getitem__(self, key) -> np.ndarray:
        before = _layout_stamp(self.url)
        if _layout_of(before) != self.opened:
            raise StoreBeingRewritten(f"store {self.url} changed layout since it was opened (a run packed, unpacked "
                                      "or grew it): open it and read it again")
        try:
            data = self.source[key]
        except Exception as exc:
            if _steady(self.url, before):
                raise  # the store held still: the error is its own
            raise _rewritten(self.url) from exc
        if not _steady(self.url, before):
            raise _rewritten(self.url)
        return data


class _VariableChunks:
    """The values of a lazily opened variable (read through zarr), region by
    region, as a chunk source for :class:`_SteadyChunks`."""

    def __init__(self, var: xr.DataArray | xr.Variable) -> None:
        self.var = getattr(var, "variable", var)
        self.shape, self.dtype, self.ndim = tuple(var.shape), var.dtype, var.ndim

    def __getitem__(self, key) -> np.ndarray:
        return np.asarray(self.var[key].values)


def _rewritten(url: str) -> StoreBeingRewritten:
    """The one line for a read that a layout change (packing, unpacking, growth) crossed."""
    return StoreBeingRewritten(f"store {url} changed while it was read (a run is packing, unpacking or growing "
                               "it): read it again once the run ends")


def load_sweep(url: str | Store, check: bool = True, sel: Mapping[str, Any] | None = None) -> xr.Dataset:
    """:func:`open_sweep`, read into memory at once (numpy, no dask): the
    fastest way to read a store that fits in memory.

    The arrays boardsweep wrote are read straight from their chunk files
    (:mod:`boardsweep.pipeline.store.chunkfiles`, about ten times zarr's speed on a
    store of thousands of tiny chunks), then decoded as ``xarray.open_zarr``
    decodes them; ``sel`` ({axis: [values]}) reads only those cells.
    ``url`` may be an opened :class:`~boardsweep.pipeline.store.Store`.
    """
    _check_arguments(url, check, sel)
    st = _opened(url)
    first = _first_stamp(url, st)
    if check:
        _assert_intact(st)
    return _steadily(st, lambda _: _load(st, sel), first)


def _assert_intact(st: Store) -> None:
    """:func:`.integrity.assert_intact` of :meth:`Store.check`'s findings, whose "damaged" is believed only where
    the store held still through the check: a check across a run's packing,
    unpacking or growth (an array moved away reads as missing) raises
    :class:`StoreBeingRewritten`, and one of a store a run began creating
    says so (:func:`.creation.creating_line`)."""
    before = _layout_stamp(st.url)
    try:
        assert_intact(st.url, st.check(), st.attrs)
    except (StoreDamaged, FileNotFoundError, zarr.errors.GroupNotFoundError, KeyError, ValueError, TypeError,
            OSError) as exc:
        if (told := being_created(st.url)) is not None:
            raise told from None
        if (told := _growth_interrupted(st.url)) is not None:
            raise told from None
        if not _steady(st.url, before):
            raise _rewritten(st.url) from None
        if not isinstance(exc, (StoreDamaged, FileNotFoundError, zarr.errors.GroupNotFoundError)):
            raise  # the store held still: the error is its own
        if unrecorded_only(st.check()) and StoreLock(st.url).holder() is not None:  # a run's newest task
            raise StoreBeingRewritten(unrecorded_line(st.url, run_holds(st.url))) from None
        if _layout_stamp(st.url)[0]:  # its journal, no run holding the store: interrupted, not damaged
            raise StoreBeingRewritten(f"store {st.url}: a run was interrupted while it packed or unpacked it; rerun "
                                      f"`boardsweep run SPEC --store {st.url}` with its spec to finish that") from None
        raise


def unrecorded_line(url: str, live: bool, who: str = "") -> str:
    """What a read says of a store whose only fault is a task without its
    checksum record, a run's lock there: a ``live`` run (``who``) writing
    it, the record next; or a run killed as it finished the task (``run`` keeps it)."""
    if live:
        return (f"store {url}: a run{f' ({who})' if who else ''} is writing it, a task it finished has its checksum "
                "record still to come; read it again")
    return (f"store {url}: a run was interrupted as it finished a task (its lock is left, the task's checksum "
            f"record not written); rerun `boardsweep run SPEC --store {url}` with its spec to finish (the task is "
            "kept), then read it again")


def being_created(url: str) -> StoreBeingRewritten | None:
    """The one line for a store a run began creating, or a folder that holds
    only a run's lock (a run making the store, or killed before): what a read
    that failed says of it; ``None`` for anything else.  The lock alone is
    asked first: a run that takes the lock writes its creation record next."""
    if (line := lock_only_line(url)) is not None:
        return StoreBeingRewritten(line)
    return StoreBeingRewritten(creating_line(url)) if creation_record(url) is not None else None


def _steadily(st: Store, read: Callable[[tuple[bool, bytes | None]], xr.Dataset],
              first: tuple[bool, bytes | None] | None = None) -> xr.Dataset:
    """``read(before)`` of the store ``st`` done while its layout held still
    (:func:`_steady`) since ``before``, its stamp: read again after a short
    wait where a run packed, unpacked or grew it meanwhile (a variable moved
    away is missing from the read, or reads as its fill value), and
    :class:`StoreBeingRewritten` where it never held still.

    ``first``: the stamp taken before ``st`` read what it keeps (its
    metadata, the raw Dataset its check read): a store grown after ``st``
    read its raw Dataset reads arrays of the new shape into the old one's
    variables (a raw ``ValueError``), which is a change, not the store's
    error.  Without it (a :class:`Store` read at a time unknown) an error is
    believed the store's own only where a fresh read repeats it."""
    fresh = first is not None
    for wait in (*_REREAD_WAITS_S, None):
        before = _layout_stamp(st.url) if first is None else first
        first = None
        try:
            ds = read(before)
        except (KeyError, ValueError, OSError, TypeError, zarr.errors.GroupNotFoundError) as exc:
            if (told := being_created(st.url)) is not None:  # a run began creating it meanwhile
                raise told from None
            if (told := _growth_interrupted(st.url)) is not None:
                raise told from None
            if _steady(st.url, before) and not _being_made(exc, st.url) and fresh:
                raise  # the store did not change under the read: the error is the store's own
            fresh = True  # what st kept is read again below: an error that comes again is believed
        else:
            if _steady(st.url, before):
                return ds
        if wait is None:
            raise StoreBeingRewritten(
                f"store {st.url} changed while it was read, {len(_REREAD_WAITS_S) + 1} times (a run is packing, "
                "unpacking or growing it): read it again once the run ends")
        st.changed()  # its metadata read again
        time.sleep(wait)
    raise AssertionError("unreachable")


#: Waits (seconds) before reading a store again that changed layout while
#: :func:`load_sweep` read it (a run packing it as it completes, unpacking
#: or growing it as it starts): about 5 s in all.
_REREAD_WAITS_S = (0.05, 0.1, 0.2, 0.4, 0.8, 1.2, 1.2, 1.2)


def _whole(raw: xr.Dataset, url: str) -> xr.Dataset:
    """``raw`` where it holds every array its root metadata names, else
    :class:`ArraysMissing` naming them (a store read while a run creates
    it, its arrays one by one, or moves them as it packs: never a Dataset
    with ``done`` and without ``counts``)."""
    if "spec_canonical" not in raw.attrs:  # its attributes are written once its arrays are made
        raise ArraysMissing(f"store {url}: its root metadata does not describe a sweep yet (a run creating it, "
                            "or not a boardsweep store)")
    names = ["done", *simulated_variables(raw.attrs), *raw.attrs.get("exact_variables", [])]
    missing = [n for n in names if n not in raw.variables]
    if missing:
        raise ArraysMissing(f"store {url}: arrays {', '.join(map(repr, missing))} named by its root metadata "
                            "are missing (a run creating or packing it, or damage)")
    return raw


def _growth_interrupted(url: str) -> StoreBeingRewritten | None:
    """The one line for a store whose growth a run began and no live run finishes
    (killed: its root still marks the growth, its arrays half grown); None otherwise."""
    if not marked(_layout_stamp(url)[1]) or run_holds(url):
        return None
    return StoreBeingRewritten(f"store {url}: growing it to a larger spec was interrupted; rerun "
                               f"`boardsweep run SPEC --store {url} --extend` with that spec to finish")


def _being_made(exc: BaseException, url: str) -> bool:
    """Whether ``exc`` is arrays missing from a store a live run holds (creating it: read again)."""
    return isinstance(exc, ArraysMissing) and run_holds(url)


def _layout_stamp(url: str) -> tuple[bool, bytes | None]:
    """What says how the store at ``url`` is laid out: whether its layout
    journal is there (while a run packs or unpacks it) and its root
    metadata (rewritten as a layout change starts and ends, and by growth)."""
    fs, root = fsspec.core.url_to_fs(url)
    found = []
    for path in (f"{root}/{JOURNAL}", f"{root}/zarr.json"):
        try:
            found.append(fs.cat_file(path))
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            found.append(None)
    return found[0] is not None, found[1]


#: Root attributes that say where a store's chunks are and how many: the packed
#: arrays' records, the count of layout changes, a growth under way and the grid's size.
_LAYOUT_ATTRS = (LAYOUT_ATTR, GENERATION_ATTR, GROWING, "grid_points", "replicates")


def _layout_of(stamp: tuple[bool, bytes | None]) -> tuple:
    """The part of a :func:`_layout_stamp` that says where the chunks are:
    whether a layout change is under way and the root's layout attributes
    (:data:`_LAYOUT_ATTRS`); not its history, which a run's start rewrites."""
    try:
        attrs = json.loads(stamp[1] or b"{}").get("attributes", {})
    except (ValueError, AttributeError):
        return stamp
    return (stamp[0], *(json.dumps(attrs.get(key), sort_keys=True) for key in _LAYOUT_ATTRS))


def _steady(url: str, before: tuple[bool, bytes | None]) -> bool:
    """Whether the store kept one layout through a read that started at
    ``before``: the same root metadata after it, and no layout change under
    way (a journal, or a growth marked in the root metadata, left by a run
    that is gone is no change under way)."""
    after = _layout_stamp(url)
    if after != before:
        return False
    return not (after[0] or marked(after[1])) or not run_holds(url)  # a live run's packing or growth: not still


def layout_stamp(url: str) -> tuple[bool, bytes | None]:
    """:func:`_layout_stamp`: taken before a command's read (:mod:`boardsweep.pipeline.views.store_access`)."""
    return _layout_stamp(url)


def held_still(url: str, before: tuple[bool, bytes | None]) -> bool:
    """:func:`_steady`: whether the store kept one layout through a command's read begun at ``before``."""
    return _steady(url, before)


def _load(st: Store, sel: Mapping[str, Any] | None) -> xr.Dataset:
    """:func:`load_sweep`'s one read of the store, done masks first."""
    raw = _whole(st.open_raw(), st.url)
    axes = [a for a in raw.attrs.get("grid_axes", []) if a in raw.dims]
    picked = {a: raw.get_index(a).get_indexer(_values(v)) for a, v in (sel or {}).items()}
    if any((p < 0).any() for p in picked.values()):
        raise KeyError(f"values not on the grid: {dict(sel or {})}")
    window = {a: slice(int(p.min()), int(p.max()) + 1) for a, p in picked.items()}
    raw = raw.isel(window)
    region = tuple(window.get(a, slice(None)) for a in axes)
    for name in _masks_first(raw):  # a cell read as done has its data written: a run may be writing
        var = raw[name]
        data = chunkfiles.read(st.url, str(name), region) if var.dims[:len(axes)] == tuple(axes) else None
        raw[name] = var.copy(data=data if data is not None else var.values)
    raw = raw.isel({a: p - window[a].start for a, p in picked.items()})
    for name in simulated_variables(raw.attrs):  # no cell at the fill value: nothing to decode as NaN
        var = raw[name]
        if "_FillValue" in var.attrs and var.dtype.kind in "iu" and not (var.values == var.attrs["_FillValue"]).any():
            raw[name] = var.copy(data=var.values)
            raw[name].attrs = {k: v for k, v in var.attrs.items() if k != "_FillValue"}
    return fixed_width(native(mask(_as_current(xr.decode_cf(raw.load())))))


def _masks_first(raw: xr.Dataset) -> list[str]:
    """The data variables of ``raw`` in the order :func:`load_sweep` reads
    them: the done masks first, the data after.  A task writes its data,
    then its done flags (:mod:`.writes`); so a cell read as done while a run
    writes has its data on disk before its data is read.  (Read the other
    way round, a task finishing between the two reads left cells done whose
    values read as NaN.)"""
    masks = [n for n in ("done", "exact_done") if n in raw.data_vars]
    return masks + [str(n) for n in raw.data_vars if n not in masks]


def _as_current(ds: xr.Dataset) -> xr.Dataset:
    """``ds`` of an older store (format 1 or 2) as format 3 names it: its
    exact variables under the ``exact_`` prefix (``expected_rolls`` ->
    ``exact_expected_rolls``, :func:`.metadata.exact_renames`) and no
    packed-layout record on any variable.  A format-3 store is returned as it is."""
    renames = {old: new for old, new in exact_renames(ds.attrs).items() if old in ds.variables}
    stale = [n for n in ds.variables if chunkfiles.LAYOUT_ATTR in ds[n].attrs]
    if not renames and not stale:
        return ds
    ds = ds.rename_vars(renames)
    for name in stale:
        ds[renames.get(str(name), name)].attrs.pop(chunkfiles.LAYOUT_ATTR, None)
    ds.attrs = dict(ds.attrs, exact_variables=[renames.get(n, n) for n in ds.attrs.get("exact_variables", [])])
    return ds


def _values(v: Any) -> list:
    """A ``sel`` value as a list: a scalar (``4``, ``"long"``) selects that one
    value, a list or array every value in it.  The axis keeps its dimension
    (length 1 for a scalar), so the result is still a sweep every function
    here reads."""
    if isinstance(v, (str, bytes)) or np.ndim(v) == 0:
        return [python_value(v)]
    return list(v)


def mask(ds: xr.Dataset) -> xr.Dataset:
    """``ds`` with simulated variables NaN where ``done`` is false and exact
    variables NaN where ``exact_done`` is false.

    Where every replicate is done nothing is masked, so integer counts stay
    integers (int64); only a store with a replicate not done turns its
    simulated variables into float64 with NaN there.  A variable with cells
    that hold no value (the seats that do not play at a grid point with
    fewer players: the fill value, or below ``valid_min`` in a complete
    packed store) reads as float64 with NaN in those cells, done or not.
    :func:`load_sweep` reads a variable with no such cell as integers;
    :func:`open_sweep`, which reads nothing until asked, goes by the store's
    metadata (integers once a complete store is packed, as every run that
    completes it does)."""
    from dask.threaded import get as threads

    ds = ds.copy()
    # read here with threads: the mask is small, and dask looking for a current distributed
    # client imports distributed (0.2 s of every open_sweep that never computes anything else)
    complete = bool(ds["done"].all().compute(scheduler=threads))
    for name in simulated_variables(ds.attrs):
        if "valid_min" in ds[name].attrs:  # a complete store's seats that do not play (below valid_min)
            ds[name] = ds[name].where(ds[name] >= ds[name].attrs["valid_min"])
        if not complete:
            ds[name] = ds[name].where(chunked_like(ds["done"], ds[name]))
    for name in ds.attrs.get("exact_variables", []):
        ds[name] = ds[name].where(chunked_like(ds["exact_done"], ds[name]))
    return ds


def chunked_like(flag: xr.DataArray, var: xr.DataArray) -> xr.DataArray:
    """``flag`` (a mask in memory) split into the dask chunks of ``var``
    along the dims they share, as it is where ``var`` is in memory: a
    ``where`` against it then pairs chunk with chunk.  (Against the whole
    mask, dask rechunks it for each variable, and deciding how imports
    ``distributed``: 0.2 s of every ``open_sweep``.)"""
    import dask.array as da

    if var.chunks is None or flag.chunks is not None:
        return flag
    sizes = var.chunksizes
    chunks = tuple(sizes.get(d, -1) for d in flag.dims)
    return flag.copy(data=da.from_array(np.asarray(flag.data), chunks=chunks, name=False))  # its values not hashed


def read_chunks(ds: xr.Dataset, limit: int = READ_CHUNK_BYTES) -> dict[str, int]:
    """Dask chunks for reading ``ds``: whole along every dim except the first
    grid axis, which is split so that no variable's chunk exceeds ``limit`` bytes."""
    chunks = {str(dim): -1 for dim in ds.dims}
    axes = list(ds.attrs.get("grid_axes", []))
    if not axes:
        return chunks
    first = axes[0]
    widest = max((v.nbytes // max(v.sizes[first], 1) for v in ds.data_vars.values()
                  if first in v.dims), default=0)
    chunks[first] = max(1, int(limit // max(widest, 1)))
    return chunks
