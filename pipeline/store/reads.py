"""Reading a store's arrays: whole or a region, the done masks, the raw Dataset.

Local stores are read straight from their chunk files where
:mod:`boardsweep.pipeline.store.chunkfiles` applies, anything else through zarr.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr
import zarr

from . import chunkfiles, integers
from .. import errors
from .zarr_private import quiet

__all__ = ["unrecorded_only", "READ_CONCURRENCY", "fixed_width", "integer_view", "read_array", "read_done", "read_exact_done", "read_mask", "open_raw",
           "array_names", "read_raw", "coordinate_labels", "many_reads"]


def read_array(url: str, name: str, region: tuple[slice, ...] = (),
               unreadable_as_fill: bool = False) -> np.ndarray:
    """Array ``name`` of the store at ``url`` as written (fill values where no
    task wrote; ``region``: slices of its leading dims), straight from its
    chunk files where :mod:`~boardsweep.pipeline.store.chunkfiles` applies, else
    through zarr.  ``unreadable_as_fill``: a chunk that does not decode reads
    as the fill value (for callers that use only cells found intact)."""
    values = chunkfiles.read(url, name, region, unreadable_as_fill)
    if values is None:
        with quiet():
            array = zarr.open_array(url, path=name, mode="r")
            values = _integer_view(np.asarray(array[tuple(region) or ...]), array.attrs)
    return values


def _integer_view(values: np.ndarray, attrs) -> np.ndarray:
    """``values`` read through zarr in boardsweep's integer view where the
    array is a float64 array of integers (:mod:`.integers`), else as they are."""
    dtype = integers.declared(attrs)
    return values if dtype is None or values.dtype.kind != "f" else integers.integer(values, dtype)


def read_done(url: str) -> np.ndarray:
    """The ``done`` mask, shape ``grid shape + (replicates,)`` (unreadable chunks: not done)."""
    with quiet():
        return read_mask(None, "done", url)[0]


def read_exact_done(url: str) -> np.ndarray:
    """The ``exact_done`` mask, shape ``grid shape``."""
    with quiet():
        return read_mask(None, "exact_done", url)[0]


#: Chunk reads zarr keeps in flight when reading a mask (its default is 10;
#: a mask is thousands of tiny chunks, one per task).
READ_CONCURRENCY = 64


def read_mask(group: zarr.Group | None, name: str, url: str | None = None) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """A boolean mask array read chunk by chunk where a whole read fails.

    With ``url`` (the group's) a local store is read straight from its chunk
    files (:mod:`boardsweep.pipeline.store.chunkfiles`); the group (``None``:
    opened from ``url`` only when needed) is read through zarr.  Returns the mask
    (unreadable chunks read as ``False``) and the chunk coordinates that could
    not be read.
    """
    if url is not None:
        try:
            fast = chunkfiles.read(url, name)
        except errors.ChunkUnreadable:
            fast = None  # a damaged chunk: find which, below
        if fast is not None:
            return fast.astype(bool), []
    if group is None:
        group = zarr.open_group(url, mode="r")
    array = group[name]
    try:
        with zarr.config.set({"async.concurrency": READ_CONCURRENCY}):
            return np.asarray(array[...], dtype=bool), []
    except Exception:  # noqa: BLE001 - a damaged chunk: find which, below
        pass
    mask = np.zeros(array.shape, dtype=bool)
    bad = []
    grid = [range(-(-s // c)) for s, c in zip(array.shape, array.chunks)]
    for coords in np.ndindex(*[len(g) for g in grid]):
        region = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(coords, array.chunks, array.shape))
        try:
            mask[region] = np.asarray(array[region], dtype=bool)
        except Exception:  # noqa: BLE001 - unreadable chunk: not done
            bad.append(coords)
    return mask, bad


def open_raw(url: str, mask_and_scale: bool = False) -> xr.Dataset:
    """The store as xarray reads it, lazily and without dask (``chunks=None``),
    values as stored unless ``mask_and_scale`` (the callers decode and mask);
    text coordinates as fixed-width ``<U`` whatever their zarr data type
    (:func:`fixed_width`; a text data variable, ``exact_note``, is read
    when asked for: one chunk per task); float64 arrays of integers in
    their integer view (:func:`integer_view`)."""
    with quiet():
        ds = xr.open_zarr(url, chunks=None, mask_and_scale=mask_and_scale)
    return fixed_width(ds if mask_and_scale else integer_view(ds), coordinates_only=True)


def integer_view(ds: xr.Dataset) -> xr.Dataset:
    """``ds`` (opened without decoding) with each float64 array of integers
    (store format 6, :mod:`.integers`) as a format-5 store held it: its
    declared dtype, its :func:`integers.mark` where it holds NaN, lazily, and
    that mark as ``_FillValue`` where the store declares one (a store being
    filled, or one whose cells may be missing), as an integer array of the
    store declares it: the same types and decoding, whichever format the
    store has (a format-5 store's ``_FillValue`` is -1, the value -1 reads missing)."""
    from xarray.coding.common import lazy_elemwise_func, unpack_for_decoding

    viewed = {}
    for name, var in ds.data_vars.items():
        dtype = integers.declared(var.attrs)
        if dtype is None or var.dtype.kind != "f":
            continue
        dims, data, attrs, encoding = unpack_for_decoding(var.variable)
        attrs.pop(integers.INTEGER_ATTR)
        if "_FillValue" in attrs:
            attrs["_FillValue"] = integers.mark(dtype)
        encoding["dtype"] = dtype
        viewed[name] = xr.Variable(dims, lazy_elemwise_func(data, _as(dtype), dtype), attrs, encoding)
    return ds.assign(viewed) if viewed else ds


def _as(dtype: np.dtype):
    """:func:`integers.integer` into ``dtype``, as one argument function."""
    return lambda values: integers.integer(values, dtype)


def fixed_width(ds: xr.Dataset, coordinates_only: bool = False) -> xr.Dataset:
    """``ds`` with every text variable (numpy ``StringDType``: zarr's
    variable-length ``string``, store format 5) as fixed-width ``<U``, as
    boardsweep has always read its labels (format 2 to 4 stored them so):
    the same values, the same types, whichever format the store has.
    ``coordinates_only``: the data variables are left as they are (lazy)."""
    texts = [n for n in ds.variables if ds[n].dtype.kind == "T" and (n in ds.coords or not coordinates_only)]
    if not texts:
        return ds
    ds = ds.copy(deep=False)
    for name in texts:
        var = ds[name].variable
        values = _fixed(var.values)
        fixed = xr.Variable(var.dims, values, var.attrs, var.encoding)
        if name in ds.coords:
            ds = ds.assign_coords({name: fixed})
        else:
            ds[name] = fixed
    return ds


def _fixed(values: np.ndarray) -> np.ndarray:
    """A ``StringDType`` array as fixed-width ``<U`` (as wide as its longest
    value, at least 1), cast whole: no Python string per value."""
    width = int(np.strings.str_len(values).max()) if values.size else 1
    return values.astype(f"<U{max(width, 1)}")


def array_names(url: str) -> set[str]:
    """The names of the arrays in the store at ``url``."""
    with quiet():
        return set(zarr.open_group(url, mode="r").array_keys())


def read_raw(url: str, name: str) -> np.ndarray:
    """Array ``name`` as stored, read through zarr, its integers in the
    integer view (:mod:`.integers`): every cell without a value holds
    its type's :func:`integers.mark`, whatever fill value the array declares (format 5
    and older stores: -1, read as missing, as their ``_FillValue`` says)."""
    with quiet():
        array = zarr.open_array(url, path=name, mode="r")
        values = _integer_view(np.asarray(array[...]), array.attrs)
    return integers.marked(values, array.attrs.get("_FillValue"))


def coordinate_labels(url: str, name: str, index: tuple[int, ...]) -> str:
    """Cell ``index`` of array ``name`` by its coordinates: ``dice_sides=6, replicate=3``."""
    with quiet():
        array = zarr.open_array(url, path=name, mode="r")
        dims = list(getattr(array.metadata, "dimension_names", None) or [])
        group = zarr.open_group(url, mode="r")
        keys = set(group.array_keys())
        parts = []
        for axis, (dim, i) in enumerate(zip(dims or [None] * len(index), index)):
            label: Any = i
            if dim is not None and dim in keys and dim != name:
                coord = group[dim]
                if len(coord.shape) == 1 and coord.shape[0] > i:
                    label = coord[i]
                    label = label.item() if hasattr(label, "item") else label
            parts.append(f"{dim or f'axis{axis}'}={label!r}")
    return ", ".join(parts)


def many_reads() -> None:
    """Let zarr keep more chunk reads in flight in this (CLI) process: a
    store holds one small chunk per task and variable."""
    zarr.config.set({"async.concurrency": READ_CONCURRENCY})


#: The reason an integrity check gives a finished task with no checksum record (:data:`.lost_records.LOST`).
UNRECORDED = "no checksum record"


def unrecorded_only(damage) -> bool:
    """Whether every fault of ``damage`` (an :class:`.integrity.Damage`) is
    a finished task without its checksum record: what a read sees of the
    task a live run has just finished (its done flags are written, then its
    record, :mod:`.writes`), not damage."""
    return bool(damage) and not damage.arrays and not damage.labels and all(
        why == UNRECORDED for why in damage.reasons.values())
