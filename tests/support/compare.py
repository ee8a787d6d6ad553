"""Stores compared as a user would: by value once aligned on coordinates,
file by file, and the toy sweep's spec used to grow them."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import xarray as xr

TOY = dict(params={"size": 8}, run={"games": 2, "turns": 60}, checkpoints={"count": 5})


def toy(make_spec, dice=(2, 3), rules=("plain", "sticky"), replicates=4, block=2, seed=7, **changes) -> str:
    """The toy sweep's spec; ``changes`` update its tables (``tasks`` replaces)."""
    tables = {**TOY, "grid": {"dice_sides": list(dice), "rule": list(rules)},
              "tasks": {"replicates_per_task": block}}
    tables["run"] = {"replicates": replicates, **TOY["run"]}
    for key, value in changes.items():
        tables[key] = value if key == "tasks" else {**tables.get(key, {}), **value}
    return make_spec("toy", seed=seed, **tables)


def raw(url) -> xr.Dataset:
    """The store as written: integers with their fill value, no masking."""
    return xr.open_zarr(url, chunks=None, mask_and_scale=False).load()


def assert_same_by_value(a, b) -> None:
    """Every data variable of stores ``a`` and ``b`` equal cell by cell once
    ``b`` is aligned on ``a``'s coordinate values (integers exactly)."""
    x, y = raw(a), raw(b)
    axes = x.attrs["grid_axes"]
    assert y.attrs["grid_axes"] == axes
    for axis in axes:
        assert sorted(x[axis].values.tolist()) == sorted(y[axis].values.tolist()), axis
    y = y.sel({axis: x[axis].values for axis in axes})
    assert x.sizes == y.sizes
    assert sorted(x.data_vars) == sorted(y.data_vars)
    for name in x.data_vars:
        u, v = x[name].values, y[name].transpose(*x[name].dims).values
        assert u.dtype == v.dtype, name
        if u.dtype.kind == "f":
            assert np.array_equal(u, v, equal_nan=True), name
        else:
            assert np.array_equal(u, v), name


def files(url) -> dict[str, tuple[int, int, bytes]]:
    """Every file and folder under ``url``: (size, mtime in ns, bytes)."""
    out = {}
    for root, dirs, names in os.walk(url):
        for name in [*dirs, *names]:
            path = Path(root, name)
            st = path.stat()
            out[str(path.relative_to(url))] = (st.st_size, st.st_mtime_ns,
                                               path.read_bytes() if path.is_file() else b"")
    st = Path(url).stat()
    out["."] = (st.st_size, st.st_mtime_ns, b"")
    return out
