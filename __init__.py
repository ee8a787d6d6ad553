"""boardsweep: exact and Monte Carlo odds of dice-driven board games, swept
over rule variants with Dask and stored as zarr.

The repository's ``core/`` and ``pipeline/`` folders are installed as
``boardsweep.core`` (games: rules, simulators, exact solvers) and
``boardsweep.pipeline`` (specs, Dask execution, zarr stores, analysis, CLI).

>>> import boardsweep
>>> result = boardsweep.run("sweeps/quickstart.toml")     # doctest: +SKIP
>>> ds = result.open()                                    # doctest: +SKIP
>>> spec = boardsweep.Spec.from_dict({"name": "mine", "game": "monopoly", "seed": 1,
...                                   "grid": {"dice_sides": [4, 6]}})  # doctest: +SKIP
>>> ds = boardsweep.open_sweep("results/quickstart.zarr")  # doctest: +SKIP
>>> ds = boardsweep.load_sweep("results/quickstart.zarr")  # in memory  # doctest: +SKIP
>>> ds.boardsweep.estimate("frequency")                    # the headline, along the grid  # doctest: +SKIP
>>> ds.boardsweep.verdict()["text"]                        # doctest: +SKIP
>>> boardsweep.plan_run("sweeps/quickstart.toml", stderr=1e-3)["text"]  # replicates, turns  # doctest: +SKIP
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["__version__", "Spec", "run", "Result", "open_sweep", "load_sweep", "plan_run"]


@functools.lru_cache(maxsize=None)
def _numba_cache_one_can_write() -> None:
    """numba caches the games' kernels where this user can write (beside the
    sources, ``~/.cache/numba``, else a private temporary folder): before the
    Python API imports any kernel, as the command does at its start
    (:func:`boardsweep.pipeline.cli.entry.command_line`).  Not on ``import
    boardsweep`` itself: that stays instant (a Ctrl-C as ``python -m
    boardsweep`` starts finds the command's own handler in place)."""
    from .pipeline.run.numba_cache import writable_numba_cache

    writable_numba_cache()


def __dir__() -> list[str]:
    """The public API (loaded on first use, so that ``import boardsweep`` stays fast)."""
    return sorted(set(__all__) | {"core", "pipeline"})


def __getattr__(name: str) -> Any:
    if name == "__version__":  # read on first use: importlib.metadata costs 0.1 s at every command's start
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("boardsweep")
        except PackageNotFoundError:  # pragma: no cover - running from an unbuilt tree
            found = "unknown"
        globals()["__version__"] = found
        return found
    if name in ("open_sweep", "load_sweep", "plan_run", "Spec", "run", "Result"):
        _numba_cache_one_can_write()
    if name in ("open_sweep", "load_sweep"):
        from .pipeline.analysis import accessor, query  # noqa: F401  (accessor: registers ds.boardsweep)

        return getattr(query, name)
    if name == "plan_run":  # replicates and turns for a target s.e. or detectable bias
        from .pipeline.plan.power import plan_run

        return plan_run
    if name in ("Spec", "run", "Result"):
        from .pipeline import api

        return getattr(api, name)
    raise AttributeError(f"module 'boardsweep' has no attribute {name!r}")
