"""Read a sweep store: a lazy Dataset with missing cells as NaN, and helpers.

``open_sweep`` masks every simulated variable with ``done`` and every exact
variable with ``exact_done``: a cell no task has finished reads as NaN, never
as zero.  The helpers work on any game whose simulated variables have the
form ``(checkpoint, DIM)`` (a distribution over DIM, e.g. ``location``).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import numpy as np
import xarray as xr

from ..store import Store, chunkfiles
from .dataset import (  # noqa: F401  (re-exported: the readers' public names)
    MIN_COUNT, _EXACT_TEXT, _named, _py, distribution_variables, frequencies, grid_points, z_score,
)
from ..store.metadata import exact_renames, exact_states, label_text, simulated_variables

__all__ = [
    "open_sweep",
    "load_sweep",
    "distribution_variables",
    "frequencies",
    "estimate",
    "exact_frequencies",
    "compare_exact",
    "z_score",
    "MIN_COUNT",
    "top_k",
    "modal_string",
    "rows",
    "read_chunks",
    "mask",
    "compared",
    "worst_z",
    "table_rows",
]


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
    :class:`~boardsweep.pipeline.store.integrity.StoreDamaged` naming the cells,
    rather than answering with fewer replicates or a decompression error.

    ``url`` may be a :class:`~boardsweep.pipeline.store.Store` a command has
    opened: what it has read of the store is used, not read again.
    """
    st = _opened(url)
    if sel:
        return load_sweep(st, check=check, sel=sel)
    if check:
        st.assert_intact()
    raw = st.open_raw()
    chunks = dict(chunks or read_chunks(raw))
    for name, var in raw.data_vars.items():
        raw[name] = var.copy(data=_lazy(st.url, str(name), var, chunks))
    return mask(_as_current(xr.decode_cf(raw)))


def _opened(url: str | Store) -> Store:
    """The store at ``url``, or ``url`` itself where it is an opened :class:`Store`."""
    return url if isinstance(url, Store) else Store(str(url))


def _lazy(url: str, name: str, var: xr.Variable, chunks: Mapping[str, int]):
    """A dask array of ``var`` whose chunks read the store's chunk files
    directly (:class:`chunkfiles.ChunkFileArray`), or through zarr where
    that reader does not apply."""
    import dask.array as da
    from dask.base import tokenize

    shape = tuple(var.shape)
    wanted = tuple(chunks.get(d, -1) for d in var.dims)
    if not chunkfiles.readable(url, name):
        return var.chunk(dict(zip(var.dims, wanted))).data
    source = chunkfiles.ChunkFileArray(url, name, shape, var.dtype)
    token = tokenize(url, name, shape, wanted, str(var.dtype))
    return da.from_array(source, chunks=wanted, lock=False, asarray=True, name=f"boardsweep-{name}-{token}")


def load_sweep(url: str | Store, check: bool = True, sel: Mapping[str, Any] | None = None) -> xr.Dataset:
    """:func:`open_sweep`, read into memory at once (numpy, no dask): the
    fastest way to read a store that fits in memory.

    The arrays boardsweep wrote are read straight from their chunk files
    (:mod:`boardsweep.pipeline.store.chunkfiles`, about ten times zarr's speed on a
    store of thousands of tiny chunks), then decoded as ``xarray.open_zarr``
    decodes them; ``sel`` ({axis: [values]}) reads only those cells.
    ``url`` may be an opened :class:`~boardsweep.pipeline.store.Store`.
    """
    st = _opened(url)
    if check:
        st.assert_intact()
    raw = st.open_raw()
    axes = [a for a in raw.attrs.get("grid_axes", []) if a in raw.dims]
    picked = {a: raw.get_index(a).get_indexer(_values(v)) for a, v in (sel or {}).items()}
    if any((p < 0).any() for p in picked.values()):
        raise KeyError(f"values not on the grid: {dict(sel or {})}")
    window = {a: slice(int(p.min()), int(p.max()) + 1) for a, p in picked.items()}
    raw = raw.isel(window)
    region = tuple(window.get(a, slice(None)) for a in axes)
    for name, var in raw.data_vars.items():
        data = chunkfiles.read(st.url, str(name), region) if var.dims[:len(axes)] == tuple(axes) else None
        raw[name] = var.copy(data=data if data is not None else var.values)
    raw = raw.isel({a: p - window[a].start for a, p in picked.items()})
    for name in simulated_variables(raw.attrs):  # no cell at the fill value: nothing to decode as NaN
        var = raw[name]
        if "_FillValue" in var.attrs and var.dtype.kind in "iu" and not (var.values == var.attrs["_FillValue"]).any():
            raw[name] = var.copy(data=var.values)
            raw[name].attrs = {k: v for k, v in var.attrs.items() if k != "_FillValue"}
    return mask(_as_current(xr.decode_cf(raw.load())))


def _as_current(ds: xr.Dataset) -> xr.Dataset:
    """``ds`` of an older store (format 1 or 2) as format 3 names it: its
    exact variables under the ``exact_`` prefix (``expected_rolls`` ->
    ``exact_expected_rolls``, :func:`.store.metadata.exact_renames`) and no
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
        return [v.item() if isinstance(v, np.generic) else v]
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
            ds[name] = ds[name].where(ds["done"])
    for name in ds.attrs.get("exact_variables", []):
        ds[name] = ds[name].where(ds["exact_done"])
    return ds


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




def estimate(ds: xr.Dataset, variable: str = "counts", checkpoint: int = -1) -> xr.Dataset:
    """The estimate of each label's frequency at one checkpoint (index), with
    its standard error, interval, exact value, z and p: the game's headline
    estimator (:func:`boardsweep.pipeline.analysis.headlines.of_variable`), the one
    ``run``, ``query``, ``query --summary`` and the report print.

    The estimate is the ratio of sums over the finished replicates,
    ``sum_r c_r / sum_r e_r``; its s.e. is the linearised ratio estimator's
    from the replicates' spread (or pooled per game where the game stores
    sums of squares)."""
    from .headlines import of_variable

    return of_variable(ds, variable, checkpoint)


def exact_frequencies(ds: xr.Dataset, variable: str = "counts", checkpoint: int = -1) -> xr.DataArray | None:
    """The exact counterpart of ``frequencies(ds, variable)`` at one checkpoint.

    An exact variable with the same dims (e.g. exact expected counts per
    checkpoint) is preferred; else one over the variable's own dim only (a
    long-run frequency).  ``None`` when the game has neither.
    """
    dim = distribution_variables(ds)[variable]
    exact = [ds[name] for name in ds.attrs.get("exact_variables", [])]
    for candidate in exact:
        if candidate.dims[-2:] == ("checkpoint", dim):
            value = candidate.isel(checkpoint=checkpoint)
            return _named(value / value.sum(dim, min_count=1), "exact", *_EXACT_TEXT)
    for candidate in exact:
        if candidate.dims[-1] == dim and "checkpoint" not in candidate.dims:
            return _named(candidate / candidate.sum(dim, min_count=1), "exact", *_EXACT_TEXT)
    return None




def compare_exact(ds: xr.Dataset, variable: str = "counts", checkpoint: int = -1) -> xr.Dataset:
    """:func:`estimate` with ``difference`` = estimate - exact beside it."""
    out = estimate(ds, variable, checkpoint)
    out["difference"] = out["estimate"] - out["exact"]
    return out




def top_k(values: xr.DataArray, k: int = 3, dim: str = "location") -> list[tuple[Any, float]]:
    """The ``k`` largest entries of a 1-d array along ``dim`` as (label, value)."""
    data = np.asarray(values.values, dtype=float)
    order = np.argsort(-np.nan_to_num(data, nan=-np.inf), kind="stable")[:k]
    labels = values[dim].values
    return [(labels[i], float(data[i])) for i in order]


def modal_string(
    values: xr.DataArray,
    k: int = 3,
    dim: str = "location",
    merge: Mapping[str, str] | None = None,
) -> str:
    """Project Euler 84's modal string: the ``k`` most frequent squares, two digits each.

    ``merge`` folds labels into others first (default: ``IN_JAIL`` into ``JAIL``,
    since PE84 treats them as one square); a square's number is its position
    along ``dim``.
    """
    merge = {"IN_JAIL": "JAIL"} if merge is None else dict(merge)
    labels = [str(x) for x in values[dim].values]
    data = np.asarray(values.values, dtype=float).copy()
    for src, dst in merge.items():
        if src in labels and dst in labels:
            data[labels.index(dst)] += data[labels.index(src)]
            data[labels.index(src)] = -np.inf
    order = np.argsort(-data, kind="stable")[:k]
    return "".join(f"{i:02d}" for i in order)



def rows(
    ds: xr.Dataset, variable: str = "counts", top: int | None = None, checkpoint: int = -1,
    numeric: bool = False,
) -> list[dict[str, Any]]:
    """Tidy rows (one per grid point and label) of :func:`estimate`
    (``estimate``, ``se``, ``low``, ``high``, ``df``, ``exact``, ``z``, ``p``,
    ``exact_state``, ``replicates``), the ``top`` most frequent labels per grid point when given.  ``exact_state``
    says why ``exact`` may be missing: ``stored``, ``none`` (no single exact
    answer exists) or ``pending`` (not computed yet).  ``numeric``: a
    histogram's bins as numbers (JSON, CSV), with an ``overflow`` column
    (True on the last bin, which counts every value >= its own); else as
    text (``>=N`` on the overflow bin)."""
    return table_rows(ds, compared(ds, variable, checkpoint), variable, top, numeric=numeric)


def compared(ds: xr.Dataset, variable: str = "counts", checkpoint: int = -1) -> xr.Dataset:
    """:func:`compare_exact`, computed (numpy), with its grid axes first."""
    with np.errstate(divide="ignore", invalid="ignore"):
        table = compare_exact(ds, variable, checkpoint).compute()
    axes = list(ds.attrs.get("grid_axes", []))
    return table.broadcast_like(table["estimate"]).transpose(*axes, distribution_variables(ds)[variable])


def worst_z(table: xr.Dataset) -> np.ndarray:
    """Largest |z| over the labels of each grid point of a :func:`compared`
    table (NaN where the point has no exact answer or too few replicates)."""
    z = np.abs(np.asarray(table["z"].values, dtype=float))
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(z).any(-1), np.nanmax(np.where(np.isfinite(z), z, -np.inf), -1), np.nan)


def table_rows(
    ds: xr.Dataset, table: xr.Dataset, variable: str, top: int | None = None,
    points: Iterable[int] | None = None, numeric: bool = False,
) -> list[dict[str, Any]]:
    """:func:`rows` from a :func:`compared` table; ``points`` (flat indices
    in grid order) restricts them to those grid points, in that order."""
    dim = distribution_variables(ds)[variable]
    from .headlines import COLUMNS

    arrays = {k: table[k].values.reshape(-1, table.sizes[dim]) for k in (*COLUMNS, "replicates")}
    number = numeric and table[dim].dtype.kind in "iuf"
    labels = [_py(v) for v in table[dim].values] if number else label_text(table[dim])
    last = table[dim].attrs.get("overflow_bin") if number else None
    keep = top or len(labels)
    every = list(grid_points(ds))
    states = exact_states(ds)[0].ravel() if "exact_done" in ds else np.full(len(every), "pending")
    out = []
    for i in (range(len(every)) if points is None else points):
        cell = {k: v[i] for k, v in arrays.items()}
        order = np.argsort(-np.nan_to_num(cell["estimate"], nan=-np.inf), kind="stable")[:keep]
        for j in order:
            out.append({
                **every[i],
                dim: labels[j],
                **({"overflow": bool(labels[j] == last)} if last is not None else {}),
                **{k: _num(cell[k][j]) for k in COLUMNS},
                "exact_state": str(states[i]),
                "replicates": int(cell["replicates"][j]),
            })
    return out



def _num(value: Any) -> float | None:
    x = float(value)
    return None if np.isnan(x) else x
