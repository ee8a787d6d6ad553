"""boardsweep as xarray sees it: the ``boardsweep`` engine and the ``ds.boardsweep`` accessor.

xarray imports this module (the ``xarray.backends`` entry point in
``pyproject.toml``) when it loads its backends (the first ``xr.open_dataset``
not given one of xarray's own engines), whatever is opened, so it stays light: xarray and the standard library only (nothing of the
pipeline but the accessor's module, which imports xarray and pandas alone; no
numba, dask, zarr or game until a sweep is opened or ``ds.boardsweep`` is first
used).  Importing it:

* registers the ``ds.boardsweep`` accessor on every Dataset, once per process,
  by importing :mod:`boardsweep.pipeline.analysis.accessor`, where xarray's
  decorator registers it (``import boardsweep`` imports this module too, as soon
  as xarray is imported): ``xr.open_zarr(store).boardsweep.verdict()``;
* :class:`SweepBackend`: ``xr.open_dataset(store, engine="boardsweep")`` is
  :func:`boardsweep.open_sweep`: the store checked intact, read lazily,
  unfinished cells as NaN.

Its imports of boardsweep name the package (``boardsweep.pipeline...``), not
relatively: xarray imports this module by that name, and a copy of it loaded
under another (a test runner importing the repository's root as its folder's
name) must register the same accessor.
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from typing import Any, Iterable

import xarray as xr
from xarray.backends import BackendEntrypoint

__all__ = ["SweepBackend", "is_sweep_store"]


importlib.import_module("boardsweep.pipeline.analysis.accessor")  # by name: see above; registers ds.boardsweep


def root_metadata(path: Any) -> dict | None:
    """The root ``zarr.json`` of the local folder ``path`` (a path, or a
    ``file://`` URL), parsed; None for remote URLs (never looked at), other
    objects, and a folder without a readable one."""
    if not isinstance(path, (str, os.PathLike)):
        return None
    text = os.fspath(path)
    if isinstance(text, bytes):
        return None
    text = text.removeprefix("file://")
    if "://" in text:
        return None
    try:
        meta = json.loads((Path(text) / "zarr.json").read_text())
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def records_a_sweep(meta: dict | None) -> bool:
    """Whether root metadata ``meta`` carries a sweep's ``spec_canonical`` attribute."""
    return meta is not None and isinstance(meta.get("attributes"), dict) and "spec_canonical" in meta["attributes"]


def is_sweep_store(path: Any) -> bool:
    """Whether ``path`` is a local folder holding a store boardsweep made: a
    zarr group whose root attributes carry the sweep's ``spec_canonical``
    (as :func:`boardsweep.pipeline.store.identity.inspect` tells it).  Remote
    URLs are not looked at (``engine="boardsweep"`` opens them)."""
    meta = root_metadata(path)
    return records_a_sweep(meta) and meta.get("node_type") == "group"


class SweepBackend(BackendEntrypoint):
    """``xr.open_dataset(store, engine="boardsweep", check=True)``: the Dataset
    :func:`boardsweep.open_sweep` opens (checked intact unless ``check=False``;
    unfinished cells NaN).  xarray wraps a backend's arrays in its own lazy
    arrays: nothing is read until asked; ``boardsweep.open_sweep`` gives the
    same Dataset on its own dask chunks."""

    description = "A boardsweep sweep store, checked intact, unfinished cells as NaN (boardsweep.open_sweep)"
    url = ""
    open_dataset_parameters = ("filename_or_obj", "drop_variables", "check")

    def open_dataset(self, filename_or_obj: Any, *, drop_variables: str | Iterable[str] | None = None,
                     check: bool = True) -> xr.Dataset:
        """The store at ``filename_or_obj`` (a path or URL, or an opened
        :class:`boardsweep.pipeline.store.Store`) as :func:`boardsweep.open_sweep`
        opens it, less ``drop_variables``."""
        from boardsweep.pipeline.store import open_sweep

        url = os.fspath(filename_or_obj) if isinstance(filename_or_obj, os.PathLike) else filename_or_obj
        ds = open_sweep(url, check=check)
        if drop_variables is not None:
            ds = ds.drop_vars([drop_variables] if isinstance(drop_variables, str) else list(drop_variables),
                              errors="ignore")
        return ds

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        """Whether ``filename_or_obj`` is a local sweep store (:func:`is_sweep_store`)."""
        return is_sweep_store(filename_or_obj)
