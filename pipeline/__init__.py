"""The sweep pipeline: spec -> Dask -> zarr -> query.

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
        from .analysis import accessor, query  # noqa: F401  (accessor: registers ds.boardsweep)

        return getattr(query, name)
    raise AttributeError(f"module 'boardsweep.pipeline' has no attribute {name!r}")
