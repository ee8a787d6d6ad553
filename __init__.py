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

``import boardsweep`` gives every xarray Dataset the ``ds.boardsweep``
accessor (``xr.open_zarr(store).boardsweep.verdict()``) without importing
xarray itself: registered now where xarray is already imported, else as soon
as it is (:func:`_register_with_xarray`).
"""

from __future__ import annotations

import functools
import importlib
import sys
from typing import Any

__all__ = ["__version__", "Spec", "run", "Result", "open_sweep", "load_sweep", "plan_run"]


class _AfterXarray:
    """A ``sys.meta_path`` finder that registers ``ds.boardsweep``
    (:mod:`boardsweep.xarray_backend`) right after xarray's own import, then
    leaves (not an ``importlib.abc.MetaPathFinder``: that import costs 25 ms)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "xarray":
            return None
        sys.meta_path.remove(self)
        for finder in sys.meta_path:  # the finders after this one, asked as the import system asks them
            spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None:
                break
        else:
            return None
        if hasattr(spec.loader, "exec_module"):
            execute = spec.loader.exec_module

            def exec_module(module: Any) -> None:
                execute(module)
                importlib.import_module("boardsweep.xarray_backend")  # registers ds.boardsweep

            spec.loader.exec_module = exec_module
        return spec


def _register_with_xarray() -> None:
    """``ds.boardsweep`` on every Dataset, xarray imported or not yet (the
    command starts without it).  xarray also imports
    :mod:`boardsweep.xarray_backend` when it loads its backends (any
    ``xr.open_dataset`` that is not given one of xarray's own engines);
    a module runs once, so the accessor is registered once."""
    if "xarray" in sys.modules:  # the module by its name, as xarray imports it (boardsweep.xarray_backend says why)
        importlib.import_module("boardsweep.xarray_backend")
    elif not any(isinstance(f, _AfterXarray) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterXarray())


_register_with_xarray()


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
        from .pipeline.store import open as reading  # registers ds.boardsweep (boardsweep.xarray_backend)

        return getattr(reading, name)
    if name == "plan_run":  # replicates and turns for a target s.e. or detectable bias
        from .pipeline.analysis.power import plan_run

        return plan_run
    if name in ("Spec", "run", "Result"):
        from .pipeline import api

        return getattr(api, name)
    raise AttributeError(f"module 'boardsweep' has no attribute {name!r}")
