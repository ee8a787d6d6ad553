"""``ds.boardsweep``: the headline estimates where analysis code looks for them.

Any Dataset read from a sweep store has the accessor:
:func:`boardsweep.open_sweep`, :func:`boardsweep.load_sweep`,
``xr.open_dataset(store, engine="boardsweep")`` and plain
``xr.open_zarr(store)`` alike.  This module registers it with xarray's
decorator; :mod:`boardsweep.xarray_backend` imports this module, and is itself
imported by ``import boardsweep`` (before or after ``import xarray``) and by
xarray whenever it loads its backends (any ``xr.open_dataset`` not given one
of xarray's own engines; recent xarray opens zarr without loading them, so a
script that only calls ``xr.open_zarr`` imports boardsweep first).  The module
is light (xarray and pandas; every statistic imported on first use)::

    >>> import boardsweep                                      # doctest: +SKIP
    >>> import xarray as xr                                    # doctest: +SKIP
    >>> ds = xr.open_zarr("results/quickstart.zarr")           # doctest: +SKIP
    >>> ds.boardsweep.headlines                                # doctest: +SKIP
    ['frequency']
    >>> ds.boardsweep.estimate("frequency").sel(location="GO")  # doctest: +SKIP
    >>> ds.boardsweep.summary()                                # doctest: +SKIP
    >>> ds.boardsweep.verdict()["text"]                        # doctest: +SKIP
    >>> ds.boardsweep.variance()                               # per label: sd, MCSE, ESS  # doctest: +SKIP
    >>> ds.boardsweep.diagnostics()["text"]                    # R-hat, ESS on the equal batches  # doctest: +SKIP
    >>> ds.boardsweep.autocorr("frequency", lags=10)           # autocorrelation of the batches  # doctest: +SKIP
    >>> ds.boardsweep.quantiles("frequency", prob=0.5)         # median of the batches, its MCSE  # doctest: +SKIP
    >>> ds.boardsweep.plot_answer()                            # the answer figure  # doctest: +SKIP
    >>> ds.boardsweep.plot("frequency", axis="dice_sides", label="IN_JAIL")  # doctest: +SKIP

Every number is the one ``run``, ``query`` and the report print: they all
come from :mod:`boardsweep.pipeline.analysis.headlines`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import xarray as xr

__all__ = ["SweepAccessor"]


def _once(cls: type) -> type:
    """xarray's ``register_dataset_accessor("boardsweep")``, once per process: a
    second copy of this module (the repository imported under its folder's
    name by a test runner) finds the accessor there and leaves it."""
    return cls if hasattr(xr.Dataset, "boardsweep") else xr.register_dataset_accessor("boardsweep")(cls)


@_once
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
        self._given = ds

    @property
    def _ds(self) -> xr.Dataset:
        """The Dataset, refused in one line (:class:`NotASweep`) unless it is
        a sweep's; a grid axis a scalar ``sel`` made a coordinate is its
        length-1 axis again (``ds.sel(dice_sides=6)`` answers as ``[6]``)."""
        from ..errors import NotASweep

        ds = self._given
        if "spec_canonical" not in ds.attrs:
            raise NotASweep("not a boardsweep sweep: the Dataset has no spec_canonical attribute (open a sweep "
                            "store with boardsweep.open_sweep or xr.open_zarr; keep its attributes)")
        if "done" not in ds.data_vars:
            raise NotASweep("the Dataset lacks the variable done (which replicates are finished), needed by "
                            "every estimate; keep it when selecting variables")
        scalar = [a for a in ds.attrs.get("grid_axes", []) if a in ds.coords and a not in ds.dims]
        if scalar:
            ds = ds.expand_dims(scalar).transpose(*ds.attrs["grid_axes"], ..., missing_dims="ignore")
        return ds

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

        level = _fraction(LEVEL if level is None else level, "level")
        found = estimates(self._ds, checkpoint, level)
        if name is None:
            if not found:
                raise _nothing_to_estimate(self._ds)
            return next(iter(found.values()))
        if name in found:
            return found[name]
        if name in self._ds.data_vars:
            return of_variable(self._ds, name, checkpoint, level)
        raise KeyError(f"no headline or simulated variable {name!r}; headlines: {', '.join(found) or '(none)'}")

    def plot_answer(self):
        """The figure that answers the spec's question (its ``[answer]``
        table): the headline against the studied axis with its 95% band and the
        exact curve, one panel per combination of the other axes (at most
        ``figures.MAX_PANELS``, the asked
        points first, the caption says how many were left out); the report's
        first figure (:func:`boardsweep.pipeline.analysis.figures.answer_figure`).

        Returns
        -------
        matplotlib.figure.Figure or None
            None where the headline cannot be estimated from this Dataset.
        """
        from .figures import answer_figure

        return answer_figure(self._ds)

    def plot(self, name: str | None = None, axis: str | None = None, label: str | None = None,
             at: dict[str, Any] | None = None):
        """Headline ``name`` (default: the spec's answer's) against grid axis
        ``axis`` (default: the first) with its 95% band and the exact curve,
        one panel per combination of the other axes (at most ``MAX_PANELS``); ``label``: one label of
        the headline (e.g. ``"IN_JAIL"``); ``at``: grid axis -> value(s) to
        keep (``{"players": 4}``).  Returns a matplotlib Figure."""
        from .answer import answer_of
        from .figures import headline_figure

        answer = answer_of(self._ds)
        name = name or (answer.headline if answer is not None else None) or self.headlines[0]
        kept = {k: tuple(v) if isinstance(v, (list, tuple)) else (v,) for k, v in (at or {}).items()}
        fig = headline_figure(self._ds, name, axis, label, kept)
        if fig is None:
            raise KeyError(f"no headline {name!r}; headlines: {', '.join(self.headlines) or '(none)'}")
        return fig

    def head_to_head(self, axis: str | None = None, level: float | None = None) -> pd.DataFrame | None:
        """Strategies of a per-seat grid axis head to head (the money game's
        buying policies): one row per pair, both seat orders pooled, with the
        difference of win shares, its interval, p (raw and Holm) and the share
        of games the rounds cap ended; None where the game compares none
        (:func:`boardsweep.pipeline.analysis.headtohead.head_to_head`)."""
        from .headlines import LEVEL
        from .headtohead import head_to_head

        return head_to_head(self._ds, axis, _fraction(LEVEL if level is None else level, "level"))

    def summary(self, checkpoint: int = -1, level: float | None = None,
                block_points: int | None = None) -> pd.DataFrame:
        """One row per grid point, headline and label: the columns ``query
        --summary --all`` and the report's CSV have (``estimate``, ``se``,
        ``low``, ``high``, ``df``, ``exact``, ``z``, ``p``, ...).  A grid of
        more than ``block_points`` points (default
        :data:`boardsweep.pipeline.analysis.blocks.BLOCK_POINTS`) is read and
        estimated block by block: the memory of one block and the table."""
        from .blocks import BLOCK_POINTS, block_rows
        from .headlines import LEVEL

        level = _fraction(LEVEL if level is None else level, "level")
        return block_rows(self._ds, checkpoint, level, BLOCK_POINTS if block_points is None else int(block_points))

    def verdict(self, alpha: float | None = None, block_points: int | None = None) -> dict[str, Any]:
        """Agreement with the exact answers at family-wise level ``alpha``
        (default 1%, Holm over every test of the sweep): see
        :func:`boardsweep.pipeline.analysis.headlines.verdict`.  A grid of
        more than ``block_points`` points (default
        :data:`boardsweep.pipeline.analysis.blocks.BLOCK_POINTS`, as ``run`` and
        ``query`` do) is read and tested block by block, in the memory of one
        block and a few floats per test (:func:`~.blocks.block_verdict`: the
        same verdict, without the per-point ``point_agree`` and ``p_holm``)."""
        from .blocks import BLOCK_POINTS, block_verdict
        from .dataset import grid_size
        from .headlines import ALPHA, verdict

        alpha = _fraction(ALPHA if alpha is None else alpha, "alpha")
        most = BLOCK_POINTS if block_points is None else int(block_points)
        ds = self._ds
        return block_verdict(ds, alpha, most) if grid_size(ds) > most else verdict(ds, alpha)

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

        ds = dataset.in_memory(self._ds)
        found = estimates(ds)
        variable = next((e.attrs["numerator"] for e in found.values()
                         if e.attrs["numerator"] in distribution_variables(ds) and e.attrs["basis"] == "replicates"),
                        None)
        theory = variance.theoretical_variance(ds, variable) if variable else None
        ratio = variance.variance_ratio(ds, variable, theory) if theory is not None else None
        return variance.label_variance(ds, found, ratio, None, variable, theory)


    def replicate_agreement(self, alpha: float | None = None) -> dict[str, Any]:
        """Do the replicates estimate one frequency?  The replicate-disagreement
        flag: the heterogeneity F test across replicates per label, Holm over
        every label and grid point at family-wise ``alpha`` (default 1%), in one
        line (``text``) with the labels tested and flagged; see
        :func:`boardsweep.pipeline.analysis.variance.replicate_agreement`."""
        from . import variance
        from .dataset import distribution_variables
        from .headlines import estimates

        alpha = _fraction(variance.DISAGREE_ALPHA if alpha is None else alpha, "alpha")
        variable = next((e.attrs["numerator"] for e in estimates(self._ds).values()
                         if e.attrs["numerator"] in distribution_variables(self._ds)
                         and e.attrs["basis"] == "replicates"), "")
        return variance.replicate_agreement(self._ds, variable, alpha)


    def diagnostics(self, alpha: float | None = None) -> dict[str, Any]:
        """ArviZ's R-hat (rank-normalised, beside its reference for the
        design's size), ESS bulk (beside the 90% range of independent
        draws') and tail, MCSE, the integrated autocorrelation time and the
        lag-1 autocorrelation (beside its bound) of each headline, per
        grid point and label, on the store's equal-batch series: ``{"text":
        one line, "headlines": {name: Dataset}}``; a store without series
        (older than format 7) says so in ``text``, with no headlines.  See
        :mod:`boardsweep.pipeline.analysis.draws`."""
        from . import draws

        alpha = _fraction(draws.RHAT_ALPHA if alpha is None else alpha, "alpha")
        return {"text": draws.series_summary(self._ds, alpha)["text"],
                "headlines": draws.diagnostics(self._ds, alpha)}


    def autocorr(self, name: str | None = None, lags: int = 10) -> xr.DataArray:
        """ArviZ's autocorrelation of headline ``name``'s equal-batch draws
        (default: the first headline), lags ``0..lags``, mean over the
        replicates (chains): per (grid..., label, lag); ``diagnostics()``
        holds lag 1 (``acf1``) with its bound and the integrated
        autocorrelation time (``tau``).  See
        :func:`boardsweep.pipeline.analysis.draws.headline_autocorr`."""
        from . import draws
        from ..errors import NotASweep

        if isinstance(lags, bool) or not isinstance(lags, int) or lags < 1:
            raise NotASweep(f"lags={lags!r}: expected a whole number of at least 1")
        found = draws.headline_autocorr(self._ds, self._series_headline(name), lags)
        if found is None:
            raise NotASweep(draws.NO_SERIES)
        return found

    def quantiles(self, name: str | None = None, prob: tuple[float, ...] | float = (0.05, 0.5, 0.95)
                  ) -> xr.Dataset:
        """Quantiles of headline ``name``'s equal-batch draws (default: the
        first headline; the batch ratios pooled over replicates) with ArviZ's
        MCSE of each (``mcse(method="quantile", prob=...)``): ``quantile`` and
        ``mcse`` per (grid..., label, prob).  See
        :func:`boardsweep.pipeline.analysis.draws.headline_quantiles`."""
        from . import draws
        from ..errors import NotASweep

        probs = tuple(_fraction(p, "prob") for p in (prob if isinstance(prob, (list, tuple)) else (prob,)))
        found = draws.headline_quantiles(self._ds, self._series_headline(name), probs)
        if found is None:
            raise NotASweep(draws.NO_SERIES)
        return found

    def _series_headline(self, name: str | None):
        """The game's headline ``name`` (default: the first), refused in one line."""
        from ...core.games import headlines_of
        from ..errors import NotASweep
        from . import draws
        from .dataset import game_of

        ds = self._ds
        game = game_of(ds)
        if game is None:
            raise _nothing_to_estimate(ds)
        if not draws.has_series(ds):
            raise NotASweep(draws.NO_SERIES)
        heads = {h.name: h for h in headlines_of(game)}
        if name is None and heads:
            return next(iter(heads.values()))
        if name not in heads:
            raise KeyError(f"no headline {name!r}; headlines: {', '.join(heads) or '(none)'}")
        return heads[name]


def _fraction(value: Any, name: str) -> float:
    """``value`` where it is a number strictly between 0 and 1; else one line naming the accepted range."""
    from numbers import Real

    from ..errors import NotASweep

    if isinstance(value, bool) or not isinstance(value, Real) or not 0 < float(value) < 1:
        raise NotASweep(f"{name}={value!r}: expected a number strictly between 0 and 1 (e.g. 0.95 for a level, "
                        "0.01 for alpha)")
    return float(value)


def _nothing_to_estimate(ds: xr.Dataset) -> Exception:
    """The one line for a sweep Dataset with no headline to estimate: its game
    not registered here, or the variables its headlines need dropped."""
    from ...core.games import headlines_of
    from ..errors import NotASweep
    from .dataset import game_of

    game = game_of(ds)
    if game is None:
        return NotASweep(f"the game {ds.attrs.get('game')!r} of this sweep is not registered here: import or "
                         "install its plugin to estimate its headlines")
    missing = sorted({h.numerator for h in headlines_of(game)} - set(ds.data_vars))
    if missing:
        return NotASweep(f"no headline can be estimated: the Dataset lacks {', '.join(missing)} (what the "
                         f"headlines of {game.name} count); keep them when selecting variables")
    return NotASweep(f"the game {game.name} declares no headline quantity")
