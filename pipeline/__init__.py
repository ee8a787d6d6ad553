"""The sweep pipeline: spec -> Dask -> zarr -> query.

``boardsweep.pipeline.open_sweep(path)`` (also ``boardsweep.open_sweep``) opens
a sweep store as a lazy xarray Dataset (imported lazily so that the CLI starts
fast).
"""

from __future__ import annotations

from typing import Any

__all__ = ["open_sweep"]


def __getattr__(name: str) -> Any:
    if name == "open_sweep":
        from boardsweep.pipeline.query import open_sweep

        return open_sweep
    raise AttributeError(f"module 'boardsweep.pipeline' has no attribute {name!r}")
