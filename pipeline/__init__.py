"""The sweep pipeline: spec -> plan -> run (Dask) -> store (zarr) -> analysis -> views.

One folder per stage (``docs/how-to/develop.md`` draws them): ``spec/`` the
user's intent, ``plan/`` what to run, ``store/`` the store on disk,
``analysis/`` the answers, ``cluster/`` where tasks run, ``run/`` running a
sweep, ``views/`` what a user sees, ``cli/`` the command; ``api.py`` the
Python API, ``errors.py`` every exception, ``words.py`` every word and number.

``boardsweep.pipeline.open_sweep(path)`` (also ``boardsweep.open_sweep``) opens
a sweep store as a lazy xarray Dataset; ``load_sweep(path)`` reads it into
memory at once, the fastest for a store that fits (both imported lazily so
that the CLI starts fast).
"""

from __future__ import annotations

from typing import Any

__all__ = ["open_sweep", "load_sweep"]


def __getattr__(name: str) -> Any:
    if name in ("open_sweep", "load_sweep"):
        from . import store  # registers ds.boardsweep (boardsweep.xarray_backend)

        return getattr(store, name)
    raise AttributeError(f"module 'boardsweep.pipeline' has no attribute {name!r}")
