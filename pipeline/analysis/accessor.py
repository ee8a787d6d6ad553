"""``ds.boardsweep``: the headline estimates where analysis code looks for them.

Any Dataset read from a sweep store has the accessor:
:func:`boardsweep.open_sweep`, :func:`boardsweep.load_sweep`,
``xr.open_dataset(store, engine="boardsweep")`` and plain
``xr.open_zarr(store)`` alike.  :mod:`boardsweep.xarray_backend` registers it,
imported by ``import boardsweep`` (before or after ``import xarray``) and by
xarray whenever it loads its backends (any ``xr.open_dataset`` not given one
of xarray's own engines; recent xarray opens zarr without loading them, so a
script that only calls ``xr.open_zarr`` imports boardsweep first).  This class
is imported on the first use of ``ds.boardsweep``::

    >>> import boardsweep                                      # doctest: +SKIP
    >>> import xarray as xr                                    # doctest: +SKIP
    >>> ds = xr.open_zarr("results/quickstart.zarr")           # doctest: +SKIP
    >>> ds.boardsweep.headlines                                # doctest: +SKIP
    ['frequency']
    >>> ds.boardsweep.estimate("frequency").sel(location="GO")  # doctest: +SKIP
    >>> ds.boardsweep.summary()                                # doctest: +SKIP
    >>> ds.boardsweep.verdict()["text"]                        # doctest: +SKIP
    >>> ds.boardsweep.variance()                               # per label: sd, MCSE, ESS  # doctest: +SKIP

Every number is the one ``run``, ``query`` and the report print: they all
come from :mod:`boardsweep.pipeline.analysis.headlines`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import xarray as xr

__all__ = ["SweepAccessor"]


class SweepAccessor:
    """The game's headline answers on a sweep store's Dataset.

    Each estimate is a ratio of sums over the finished replicates,
    ``sum numerator / sum denominator``, with its standard error (pooled per
    game, or from the replicates' spread), a ``level`` interval (Student's t,
    ``estimate ± t(df) se``; exact binomial for a share or histogram bin)
    and, where an exact answer exists,
    ``z = (estimate - exact) / se`` and its two-sided p.
    """

    def __init__(self, ds: xr.Dataset) -> None:
        self._ds = ds

    @property
    def headlines(self) -> list[str]:
        """The names of the game's headline quantities in this store."""
        from .headlines import estimates

        return list(estimates(self._ds))

    def estimate(self, name: str | None = None, checkpoint: int = -1, level: float | None = None) -> xr.Dataset:
        """One headline (or simulated distribution variable) along the grid.

        Parameters
        ----------
        name : str, optional
            A headline (``ds.boardsweep.headlines``; default: the first) or a
            simulated distribution variable such as ``counts``.
        checkpoint : int
            Index along ``checkpoint`` (default: the last).
        level : float, optional
            The interval's level (default 0.95).

        Returns
        -------
        xarray.Dataset
            ``estimate``, ``se``, ``low``, ``high``, ``df``, ``exact``, ``z``,
            ``p``, ``sd``, ``replicate_sd``, ``replicates`` and ``units`` over the grid axes and
            the headline's own labels (e.g. ``seat``, ``location``).
        """
        from .headlines import LEVEL, estimates, of_variable

        level = LEVEL if level is None else level
        found = estimates(self._ds, checkpoint, level)
        if name is None:
            if not found:
                raise KeyError("this store's game declares no headline quantity")
            return next(iter(found.values()))
        if name in found:
            return found[name]
        if name in self._ds.data_vars:
            return of_variable(self._ds, name, checkpoint, level)
        raise KeyError(f"no headline or simulated variable {name!r}; headlines: {', '.join(found) or '(none)'}")

    def summary(self, checkpoint: int = -1, level: float | None = None) -> pd.DataFrame:
        """One row per grid point, headline and label: the columns ``query
        --summary --all`` and the report's CSV have (``estimate``, ``se``,
        ``low``, ``high``, ``df``, ``exact``, ``z``, ``p``, ...)."""
        from .headlines import LEVEL, summary

        return summary(self._ds, checkpoint, LEVEL if level is None else level)

    def verdict(self, alpha: float | None = None) -> dict[str, Any]:
        """Agreement with the exact answers at family-wise level ``alpha``
        (default 1%, Holm over every test of the sweep): see
        :func:`boardsweep.pipeline.analysis.headlines.verdict`."""
        from .headlines import ALPHA, verdict

        return verdict(self._ds, ALPHA if alpha is None else alpha)

    def variance(self) -> pd.DataFrame:
        """Variance per grid point, headline and label (the report's
        ``variance.csv`` without the deck solves): the replicate s.d., the
        Monte Carlo s.e. and effective sample size (arviz's definitions, on
        the replicates) and, where the game knows it, the exact CLT variance
        with the replicate s.d. it predicts and their ratio; see
        :func:`boardsweep.pipeline.analysis.variance.label_variance`."""
        from . import dataset
        from . import variance
        from .dataset import distribution_variables
        from .headlines import estimates

        ds = dataset._mem(self._ds)
        found = estimates(ds)
        variable = next((e.attrs["numerator"] for e in found.values()
                         if e.attrs["numerator"] in distribution_variables(ds) and e.attrs["basis"] == "replicates"),
                        None)
        theory = variance.theoretical_variance(ds, variable) if variable else None
        ratio = variance.variance_ratio(ds, variable, theory) if theory is not None else None
        return variance.label_variance(ds, found, ratio, None, variable, theory)
