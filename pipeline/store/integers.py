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
the declared dtype with the fill value :data:`FILL` where the store holds
NaN, so that its readers (the digest, the precision rule, a task's kept
cells, packing) see what a format-5 store held, bit for bit; writers take
that view back (:func:`stored`).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..errors import IntegerTooLarge

__all__ = ["FILL", "INTEGER_ATTR", "EXACT_LIMIT", "declared", "integer", "stored", "holds_fill"]

#: Fill value of integer simulation arrays (the integer view): never a valid count.
FILL = -1

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
    """``values`` (float64 as stored) in the integer view: ``dtype``, :data:`FILL` where NaN."""
    values = np.asarray(values)
    out = np.where(np.isnan(values), FILL, values) if values.dtype.kind == "f" else values
    return out.astype(dtype, copy=False)


def stored(values: Any, what: str) -> np.ndarray:
    """``values`` (the integer view, or float64 already) as stored: float64,
    NaN where they hold :data:`FILL` or NaN.  Raises :class:`IntegerTooLarge`
    (nothing written) where a value's magnitude exceeds :data:`EXACT_LIMIT`:
    a float64 would not hold it exactly.  ``what`` names the array."""
    values = np.asarray(values)
    if values.dtype.kind in "iu" and values.size:
        biggest = int(np.abs(values).max()) if values.dtype.kind == "i" else int(values.max())
        if biggest > EXACT_LIMIT:
            raise IntegerTooLarge(f"{what}: the value {biggest} is above 2**53, which float64 (how the store "
                                  "keeps integers that may be missing) does not hold exactly; nothing was written")
    out = values.astype(np.float64)
    out[out == FILL] = np.nan
    return out


def holds_fill(values: np.ndarray, fill: Any) -> bool:
    """Whether ``values`` hold a cell without a value: NaN (a float64 array
    as stored) or the integer ``fill`` (an integer array's ``_FillValue``,
    or :data:`FILL` in the integer view)."""
    values = np.asarray(values)
    if values.dtype.kind == "f" and bool(np.isnan(values).any()):
        return True
    return isinstance(fill, (int, np.integer)) and not isinstance(fill, bool) and bool((values == fill).any())
