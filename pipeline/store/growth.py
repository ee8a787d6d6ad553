"""Growing a store in place, on disk: the three crash-safe steps.

:mod:`boardsweep.pipeline.run.growth` decides what a growth is (it compares specs);
this module changes the store, lock held, in an order that a kill at any
point leaves a store that the same command completes:

1. :func:`mark`: the root attribute :data:`.layout.GROWING` is set to the new spec's
   canonical JSON (and a ``history`` line says so);
2. :func:`resize`: every array with a grown dimension is resized (zarr
   rewrites only its ``zarr.json``; chunks already written stay, new cells
   read as the fill value, i.e. not done); coordinates and per-point markers
   are rewritten whole;
3. :func:`finish`: the spec attributes become the new spec's, ``growing``
   goes, a ``history`` line records the growth, and the metadata is
   re-consolidated.

Each step is idempotent.
"""

from __future__ import annotations


import numpy as np
import zarr

from . import metadata
from .layout import GROWING, interrupted
from .schema import provenance, template
from .zarr_private import quiet
from ..spec import Spec

__all__ = ["mark", "resize", "finish"]

def mark(url: str, spec: Spec, described: str, source: str) -> None:
    """Step 1: record the target spec in ``growing`` (once) and say so in ``history``."""
    target = spec.canonical_json()
    with quiet():
        group = zarr.open_group(url, mode="r+", use_consolidated=False)
        if interrupted(dict(group.attrs)) == target:
            return
        group.attrs[GROWING] = target
        zarr.consolidate_metadata(url)
    metadata.append_history(url, f"growing to {source}: {described} (started)")


def resize(url: str, spec: Spec) -> None:
    """Step 2: every array to ``spec``'s shape; coordinates and per-point
    markers rewritten whole (idempotent)."""
    ds, _ = template(spec, spec.game)
    with quiet():
        group = zarr.open_group(url, mode="r+", use_consolidated=False)
        for name in ds.variables:
            _resize(group, str(name), ds[name])
        zarr.consolidate_metadata(url)


def finish(url: str, spec: Spec, described: str, source: str) -> None:
    """Step 3: the spec attributes become ``spec``'s, ``growing`` goes, ``history`` says it."""
    attrs = {k: v for k, v in provenance(spec).items() if k.startswith("spec_")}
    attrs.update({k: metadata.global_attrs(spec, spec.game)[k] for k in ("grid_points", "replicates")})
    with quiet():
        group = zarr.open_group(url, mode="r+", use_consolidated=False)
        group.attrs.update(attrs)
        if GROWING in group.attrs:
            del group.attrs[GROWING]
        zarr.consolidate_metadata(url)
    metadata.append_history(url, f"grown in place to {source}: {described}; old cells kept")


def _resize(group, name: str, var) -> None:
    """Resize array ``name`` to ``var``'s shape; an in-memory ``var`` (a
    coordinate or per-point marker) is written whole, simulated and exact
    arrays (lazy in the template) keep their chunks."""
    if name not in group:
        return  # recreated from the spec by the run (store.ensure_arrays)
    array = group[name]
    if tuple(array.shape) != tuple(var.shape):
        array.resize(var.shape)
    if not hasattr(var.data, "dask") and var.ndim and array.ndim == var.ndim:
        values = np.asarray(var.values)
        if values.dtype.kind == "U" and array.dtype.kind == "U" and array.dtype.itemsize < values.dtype.itemsize:
            array = _widened(group, name, array, values.dtype)  # fixed-width text: longer new values
        array[...] = values.astype(object) if values.dtype.kind == "O" else values


def _widened(group, name: str, array, dtype: np.dtype):
    """Array ``name`` recreated with the wider fixed-width string ``dtype``
    (same shape, chunks and attributes; its values are rewritten next)."""
    return group.create_array(name, shape=array.shape, dtype=dtype, chunks=array.chunks,
                              attributes=dict(array.attrs), fill_value="", overwrite=True,
                              dimension_names=array.metadata.dimension_names)
