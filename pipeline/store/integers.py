"""Masked integer arrays stored as float64, NaN where a cell holds no value (store format 6).

A simulated integer variable whose finished store can hold cells without a
value (the seats that do not play at a grid point with fewer players; the
replicate slots a precision rule did not need) is stored as float64 with
NaN there, and its declared integer dtype in the attribute
:data:`INTEGER_ATTR`.  Plain xarray reads NaN and writes the array to netCDF
as a float, without the 'endian-ness of dtype and endian kwarg do not match'
warning that a CF-masked zarr integer gives (format 5 stored such arrays as
int64 with ``_FillValue = -1``).  A float64 holds every integer of magnitude
up to :data:`EXACT_LIMIT` exactly; a larger value is refused in one line
(:func:`stored`), nothing written.

boardsweep itself reads such an array in its *integer view* (:func:`integer`):
the declared dtype with the mark :data:`FILL` (int64's least value, which no
output may take: a run refuses it) where the store holds NaN, so that its
readers (the precision rule, a task's kept cells, packing) see integers;
writers take that view back (:func:`stored`).  The mark was -1 until format
6 was settled, and -1 is a value (a sum of money can be -1): format 5 stored
-1 as its fill value, so a format-5 store's -1 reads as missing, value or not.
The digest hashes the view with the mark written as -1 where the array holds
no -1 (:func:`canonical`), as format 5 held it, so digests recorded before are kept.
"""

from __future__ import annotations

import base64
from typing import Any, Mapping

import numpy as np

from ..errors import IntegerTooLarge

__all__ = ["FILL", "INTEGER_ATTR", "EXACT_LIMIT", "mark", "declared", "integer", "stored", "holds_fill",
           "canonical", "declared_fill", "marked",
           "integer_fill", "restore_fill", "NAN_ATTR"]

#: The mark of a cell without a value in an int64 array (the integer view,
#: and the fill value a store declares for its int64 arrays): int64's least
#: value, which no output may take (a run refuses it; :func:`mark` for other types).
FILL = int(np.iinfo(np.int64).min)

#: What a digest hashes the mark as where the array holds no -1: format 5's fill value.
_FORMAT5_FILL = -1


def mark(dtype: Any) -> int:
    """The mark of a cell without a value in an array of integer type
    ``dtype``: its least value (:data:`FILL` for int64), which no output may
    take; an unsigned type, which has no value to spare, :data:`FILL` as before."""
    dtype = np.dtype(dtype)
    return int(np.iinfo(dtype).min) if dtype.kind == "i" else FILL


#: The attribute of a float64 array holding integers: their declared dtype (``"int64"``).
INTEGER_ATTR = "integer_dtype"

#: Every integer of magnitude up to 2**53 is a float64 exactly.
EXACT_LIMIT = 2**53


def declared(attrs: Mapping[str, Any] | None) -> np.dtype | None:
    """The integer dtype a float64 array's attributes (``zarr.json``'s
    ``attributes``, or xarray's ``attrs``) declare, ``None`` for any other array."""
    name = (attrs or {}).get(INTEGER_ATTR)
    if name is None:
        return None
    try:
        dtype = np.dtype(str(name))
    except TypeError:
        return None
    return dtype if dtype.kind in "iu" else None


def integer(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``values`` (float64 as stored) in the integer view: ``dtype``, its :func:`mark` where NaN."""
    values = np.asarray(values)
    out = np.where(np.isnan(values), mark(dtype), values) if values.dtype.kind == "f" else values
    return out.astype(dtype, copy=False)


def stored(values: Any, what: str) -> np.ndarray:
    """``values`` (the integer view, or float64 already) as stored: float64,
    NaN where they hold their type's :func:`mark` or NaN.  Raises
    :class:`IntegerTooLarge` (nothing written) where a value's magnitude
    exceeds :data:`EXACT_LIMIT`: a float64 would not hold it exactly.
    ``what`` names the array."""
    values = np.asarray(values)
    missing = values == mark(values.dtype) if values.dtype.kind == "i" else np.isnan(values)
    if values.dtype.kind in "iu" and values.size:
        biggest = int(np.abs(values[~missing]).max(initial=0)) if values.dtype.kind == "i" else int(values.max())
        if biggest > EXACT_LIMIT:
            raise IntegerTooLarge(f"{what}: the value {biggest} is above 2**53, which float64 (how the store "
                                  "keeps integers that may be missing) does not hold exactly; nothing was written")
    out = values.astype(np.float64)
    out[missing] = np.nan
    return out


def declared_fill(values: Any, fill: Any) -> Any:
    """Integer ``values`` (the integer view) to write into an integer array
    whose fill value is ``fill``: their :func:`mark` as ``fill`` where the
    array declares another (a store made while the mark was -1), else as they are."""
    values = np.asarray(values)
    if values.dtype.kind != "i" or fill is None or isinstance(fill, float) or int(fill) == mark(values.dtype):
        return values
    return np.where(values == mark(values.dtype), fill, values).astype(values.dtype, copy=False)


def marked(values: Any, fill: Any) -> Any:
    """Integer ``values`` read from an integer array whose fill value is
    ``fill``: that fill as their :func:`mark` where the array declares
    another (format 5, or a store made while the mark was -1), else as they
    are; the inverse of :func:`declared_fill`."""
    values = np.asarray(values)
    if values.dtype.kind != "i" or not isinstance(fill, int) or fill == mark(values.dtype):
        return values
    return np.where(values == fill, mark(values.dtype), values).astype(values.dtype, copy=False)


def holds_fill(values: np.ndarray, fill: Any) -> bool:
    """Whether ``values`` hold a cell without a value: NaN (a float64 array
    as stored) or the integer ``fill`` (an integer array's ``_FillValue``,
    or the :func:`mark` in the integer view)."""
    values = np.asarray(values)
    if values.dtype.kind == "f" and bool(np.isnan(values).any()):
        return True
    return isinstance(fill, (int, np.integer)) and not isinstance(fill, bool) and bool((values == fill).any())


def canonical(values: np.ndarray) -> bytes:
    """The bytes a digest hashes for ``values`` (C order; integers in the
    integer view, cells without a value at their :func:`mark`): those cells
    as -1 (format 5's fill value, so a store's digest is what it was before
    the mark was its type's least value) where no cell holds -1; where one
    does (a value of -1), the values as they are followed by ``b"value -1"``,
    a length no array of this shape and type has, so a value of -1 and a
    cell without one never hash alike.  Any other array: its bytes."""
    values = np.ascontiguousarray(values)
    if values.dtype.kind != "i":
        return values.tobytes(order="C")
    if bool((values == _FORMAT5_FILL).any()):
        return values.tobytes(order="C") + b"value -1"
    return np.where(values == mark(values.dtype), _FORMAT5_FILL, values).astype(values.dtype).tobytes(order="C")


def integer_fill(meta: dict[str, Any], data: np.ndarray, complete: bool) -> dict[str, Any]:
    """``meta`` (a packed array's ``zarr.json``) without the ``_FillValue``
    attribute where the array holds integers, every replicate is done
    (``complete``) and no cell is without a value: plain xarray then reads
    it as integers, not float64 (and boardsweep a float64 array of integers,
    :func:`declared`).  Where cells have none (seats that do not play at a
    grid point with fewer players) it stays, so that plain xarray reads them
    as NaN (``ds.wins.sum("seat")`` sums the players), as boardsweep's
    readers do (store formats 5 and 6; format 3 declared them by
    ``valid_min = 0``, which :func:`boardsweep.pipeline.store.open.mask`
    still reads).  ``data``: the array's values, as stored or in the integer view."""
    attrs = meta.get("attributes") or {}
    as_int = declared(attrs)
    if "_FillValue" not in attrs or not complete or not (as_int is not None or data.dtype.kind in "iu"):
        return meta
    if not holds_fill(data, mark(as_int) if as_int is not None else attrs["_FillValue"]):
        del attrs["_FillValue"]
    return meta


#: ``_FillValue = NaN`` as xarray writes it in a zarr v3 array's attributes
#: (the base64 text of its little-endian float64 bytes).
NAN_ATTR = base64.b64encode(np.float64(np.nan).astype("<f8").tobytes()).decode("ascii")


def restore_fill(meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` (an array's ``zarr.json`` back in the task layout) with its
    ``_FillValue`` attribute again where it holds integers (cells no task
    has written read as missing; a float64 array of integers: NaN,
    :data:`NAN_ATTR`), and no ``valid_min``."""
    try:
        kind = np.dtype(meta["data_type"]).kind
    except (KeyError, TypeError):
        return meta
    attrs = meta.setdefault("attributes", {})
    if kind in "iu" or (kind == "f" and declared(attrs) is not None):
        attrs.setdefault("_FillValue", meta.get("fill_value") if kind in "iu" else NAN_ATTR)
        attrs.pop("valid_min", None)
    return meta
