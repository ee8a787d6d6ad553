"""The game's headline answers on a sweep store: estimates, intervals, tests, verdict.

Each :class:`~boardsweep.core.games.Headline` of the game (mean rolls, win
share per seat, frequency per location, ...) is estimated per grid point as a
ratio of sums over the finished replicates, with

* its standard error: pooled per unit (game) where the game stores sums of
  squares (``df = N - 1``), else from the spread of the R replicates
  (``df = R - 1``);
* a ``level`` interval ``estimate ± t(df) s.e.`` (:func:`boardsweep.core.stats.t_interval`),
  except for a 0/1 outcome per game (a win share, a histogram bin): the exact
  binomial interval (:func:`boardsweep.core.stats.proportion_interval`), which
  holds for small counts and is never a single point at 0 or 1;
* ``z = (estimate - exact) / s.e.`` and its two-sided p-value from Student's
  t with the same df (a share that every game or none had: the exact
  binomial tail, :func:`boardsweep.core.stats.proportion_test`);
* for a distribution over independent units (games by length), Pearson's
  chi-square of the pooled counts, bins merged to expected counts >= 5.

:func:`verdict` collects every test of every grid point (the headline
quantities first: a mean, a share, each location of a frequency table, one
goodness of fit per histogram) and adjusts their p-values by Holm over the
whole sweep, so that the chance that a correct simulator shows even one
disagreement anywhere is at most ``alpha`` (family-wise error rate).

:func:`summary` is the ``az.summary``-style table: one row per grid point,
headline and label with mean, sd, se, interval, exact, z and p.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from ...core import power as tpower
from ...core import stats
from ...core.games import Headline, headlines_of
from ..words import count, python_value
from .dataset import in_memory, game_of, grid_points_at, grid_size, label_values, point_params
from .family import UNTESTABLE_TEXT, label_tests
from .intervals import INTERVAL_TEXT, frequency_interval, interval_kinds, test_spread, z_rows
from . import detection, skew
from .clt import TEST_TEXT, clt_stderr, uses_clt
from .reference import headline_exact, variable_headline, voided
from ..store import recorded_spec

__all__ = ["LEVEL", "ALPHA", "COLUMNS", "INTERVAL_TEXT", "TEST_COLUMNS", "HOLM_TEXT", "estimates", "of_variable",
           "summary", "tests", "verdict", "agreement_per_point", "power", "label_values"]

#: Level of every interval boardsweep prints.
LEVEL = 0.95
#: Family-wise false-alarm rate of the verdict.
ALPHA = 0.01
#: The columns every estimate table has, under these names everywhere
#: (``run``, ``query``, ``query --summary``, the report's CSV, JSON, the accessor).
COLUMNS = ("estimate", "se", "low", "high", "df", "exact", "z", "p")

#: long_name and description of each array of an estimate table.
DESCRIPTIONS = {
    "estimate": ("estimate", "ratio of sums over the finished replicates: sum numerator / sum denominator"),
    "se": ("standard error", "standard error of the estimate (see the table's basis_text)"),
    "low": ("interval low", "lower end of the two-sided interval at the table's level (see its interval attribute)"),
    "high": ("interval high", "upper end of the two-sided interval at the table's level (see its interval "
                              "attribute)"),
    "df": ("degrees of freedom", "degrees of freedom of the t interval and test"),
    "exact": ("exact value", "the exact answer (NaN where none exists or it is not computed yet)"),
    "z": ("z", "(estimate - exact) / test_se"),
    "p": ("p", "two-sided p of z from Student's t with test_df, of Hall's g(z) for a skewed mean (see the "
               "table's test attribute; not adjusted for multiple tests)"),
    "test_se": ("test standard error", "the s.e. the test divides by: se, or the exact CLT s.e. where the game "
                                       "knows it (see the table's test attribute)"),
    "se_df": ("s.e. degrees of freedom", "df of the s.e.'s own spread, chi2(se_df)/se_df: df, or less where the "
                                         "games' kurtosis makes the pooled s.e. noisier (the power statement's)"),
    "known_se": ("known standard error", "the s.e. from the game's exact CLT variance, sqrt(sigma^2 / rolls), at "
                                         "every label (the z test's s.e.; beside a t test, the truth its power "
                                         "is stated from); absent where the game has none"),
    "test_df": ("test degrees of freedom", "df of the test: df, se_df for Hall's test of a skewed mean, or inf "
                                           "where the s.e. is known (exact CLT)"),
    "sd": ("standard deviation", "per game where the basis is units, of one replicate's ratio where replicates"),
    "replicate_sd": ("replicate s.d.", "standard deviation of the replicates' own ratios (ddof 1)"),
    "replicates": ("replicates", "finished replicates behind the estimate"),
    "units": ("units", "the summed denominator: games, events or turns"),
}


def _axes(ds: xr.Dataset) -> list[str]:
    return list(ds.attrs.get("grid_axes", []))


def _label_dim(ds: xr.Dataset, name: str) -> str | None:
    dims = [d for d in ds[name].dims if d not in (*_axes(ds), "replicate", "checkpoint")]
    return dims[0] if dims else None


def _denominator(ds, h: Headline, num: xr.DataArray, done: xr.DataArray, cp: int, dim) -> xr.DataArray:
    if h.denominator is None:  # the labels' sum: a seat that does not play (NaN) adds nothing; no label, no sum
        return num.sum(dim, min_count=1)
    if h.denominator == "checkpoint":
        return xr.full_like(done, float(ds["checkpoint"].values[cp]), dtype=float).where(done)
    return ds[h.denominator].isel(checkpoint=cp).astype(float).where(done)


def _seats_in_play(ds: xr.Dataset, da: xr.DataArray) -> xr.DataArray:
    """``da`` with NaN on seats beyond each point's ``players`` (they do not play).

    ``players`` is a grid axis or one of the spec's fixed parameters (as the
    store's canonical spec records them, resolved): read from there, not by
    resolving every grid point's parameters (a file-reading game's
    validation per point made a 10^4-point summary take minutes)."""
    if "seat" not in da.dims:
        return da
    axes, n = _axes(ds), ds.sizes["seat"]
    if "players" in axes:
        players = ds["players"]
    else:
        fixed = point_params(ds, {}) if not axes else _fixed_players(ds)
        players = fixed.get("players") if isinstance(fixed, dict) else fixed
        if not isinstance(players, (int, np.integer)):
            return da
        players = xr.DataArray(int(players))
    seats = xr.DataArray(np.arange(n), dims="seat", coords={"seat": ds["seat"]})
    return da.where(seats < players)


def _fixed_players(ds: xr.Dataset) -> Any:
    """The spec's fixed ``players`` (its resolved parameters, as the store records them)."""
    return recorded_spec(ds.attrs).get("params", {}).get("players")


def _stderr(ds, h: Headline, num, den, total, units, cp: int):
    """The estimate, per-unit (or per-replicate) sd, its s.e. and df, and the basis."""
    if h.squares is not None and h.squares in ds:
        squares = ds[h.squares].isel(checkpoint=cp).astype(float).where(ds["done"].astype(bool))
        squares = squares.sum("replicate", min_count=1)
        estimate = total / units
        sd, se, df = (estimate.copy(data=a) for a in stats.pooled_unit_stderr(
            total.values, squares.broadcast_like(total).values, units.broadcast_like(total).values))
        return estimate, sd, se, df, "units"
    order = ["replicate", *[d for d in num.dims if d != "replicate"]]
    n_ = num.transpose(*order)
    d_ = den.transpose("replicate", *[d for d in den.dims if d != "replicate"])
    est, sd_, se_, df_ = stats.replicate_ratio_stderr(n_.values, d_.values, axis=0)
    like = n_.isel(replicate=0, drop=True)
    return (*(like.copy(data=a) for a in (est, sd_, se_, df_)), "replicates")


def _one(ds: xr.Dataset, h: Headline, cp: int, level: float, others: tuple = (),
         intervals: bool = True) -> xr.Dataset | None:
    """One headline's estimate table (``others``: the game's headlines, where a
    mean's histogram of per-game values is found, :mod:`.skew`)."""
    if h.numerator not in ds:
        return None
    dim = _label_dim(ds, h.numerator)
    done = ds["done"].astype(bool)
    num = ds[h.numerator].isel(checkpoint=cp).astype(float).where(done)
    den = _denominator(ds, h, num, done, cp, dim)
    reps = done.sum("replicate")
    total, units = num.sum("replicate", min_count=1), den.sum("replicate", min_count=1)
    estimate, sd, se, df, basis = _stderr(ds, h, num, den, total, units, cp)
    own = (num / den.where(den > 0)).where(reps >= 2)  # each replicate's own ratio
    out = xr.Dataset({"estimate": estimate, "sd": sd, "se": se, "df": df,
                      "replicate_sd": own.std("replicate", ddof=1), "replicates": reps, "units": units})
    out = out.map(lambda v: _seats_in_play(ds, v) if "seat" in v.dims else v)
    share = basis == "units" and h.squares == h.numerator  # a 0/1 outcome per game: a share, a histogram bin
    k, n = (a.broadcast_like(out["estimate"]).where(out["estimate"].notnull()).values for a in (total, units))
    per_replicate = h.kind == "distribution" and basis == "replicates"
    mean_count = total / reps.where(reps > 0) if per_replicate else None
    moments = skew.hall_moments(ds, h, others, cp, done, basis)
    exact = _with_exact(ds, h, cp, dim, done, out)
    truth = (clt_stderr(ds, cp, done, out["estimate"], dim, out["exact"], out["units"], tested=False)
             if per_replicate and exact is not None else None)  # the true s.e. at every count
    known = None if truth is None else truth.copy(data=np.where(  # the z test's: where the count is high enough
        uses_clt(truth.values, (out["exact"] * out["units"]).broadcast_like(truth).transpose(*truth.dims).values,
                 0), truth.values, np.nan))
    if truth is not None:
        out["known_se"] = truth
    (_interval if intervals else test_spread)(out, share, per_replicate, k, n, mean_count, level, moments, known)
    _test(out, share, k, n, mean_count, known)
    if moments is not None:  # the interval's own test: Hall's, at se_df
        skew.retest(out, moments)
        out.attrs["test"] = TEST_TEXT["skew_t"]
    if h.kind == "distribution" and basis == "units" and dim is not None:
        out = out.merge(_gof(total, out["exact"], dim), compat="override")
    for name, (long_name, description) in DESCRIPTIONS.items():
        if name in out:
            out[name].attrs = {"long_name": long_name, "description": description}
    out.attrs.update(name=h.name, description=h.description, kind=h.kind, basis=basis, numerator=h.numerator,
                     basis_text=h.basis_text, level=level, dim=dim or "",
                     has_exact=exact is not None)
    return out


def _interval(out: xr.Dataset, share: bool, per_replicate: bool, k, n, mean_count, level: float,
              moments: xr.Dataset | None = None, known: xr.DataArray | None = None) -> None:
    """Adds ``low``, ``high`` and ``se_df`` to ``out``, and the interval used
    to its attrs (``interval``: in words; ``interval_kind``,
    ``interval_count_rows`` and ``interval_z_rows``:
    :func:`boardsweep.pipeline.analysis.intervals.interval_kinds`).  Each
    row's interval is its test's own: exact binomial with the binomial test,
    Hall's with Hall's, z (``known``: the exact CLT s.e.) with the z test,
    t with t."""
    est, se, df = (out[c].broadcast_like(out["estimate"]).values for c in ("estimate", "se", "df"))
    out["se_df"] = out["estimate"].copy(data=df)
    counted = None
    clt = known.broadcast_like(out["estimate"]).values if known is not None else None
    if share:  # exact binomial: never [1, 1] where every game won, never [0, 0] in an empty bin
        low, high = stats.proportion_interval(k, n, level)
    elif per_replicate:  # t, or count-based where counts are few or replicates tie; inside [0, 1]
        low, high, counted = frequency_interval(est, se, df, k, n,
                                                mean_count.broadcast_like(out["estimate"]).values, level,
                                                which=True, known=clt)
    elif moments is not None:  # a mean with every game's value in its histogram: skewness-corrected
        m = {c: moments[c].broadcast_like(out["estimate"]).values for c in ("n", "m2", "m3", "m4")}
        low, high, nu = skew.skew_interval(est, se, df, m, level)
        out["se_df"] = out["estimate"].copy(data=nu)
    else:
        low, high = stats.t_interval(est, se, df, level)
    out["low"], out["high"] = out["estimate"].copy(data=low), out["estimate"].copy(data=high)
    kind = "share" if share else "frequency" if per_replicate else "skew_t" if moments is not None else "t"
    out.attrs.update(interval=INTERVAL_TEXT[kind], **interval_kinds(kind, counted, np.isfinite(est),
                                                                    z_rows(clt, est.shape)))


def _with_exact(ds, h: Headline, cp: int, dim, done, out: xr.Dataset) -> xr.DataArray | None:
    """Adds ``exact`` to ``out``: the reference (NaN where none, or where
    ``h.exact_unless`` voids it, counted in ``attrs["exact_void"]``); returns
    the game's exact variable (None where it has none)."""
    exact = headline_exact(ds, h, cp, dim)
    out["exact"] = (exact.broadcast_like(out["estimate"]) if exact is not None
                    else xr.full_like(out["estimate"], np.nan))
    void = voided(ds, h, cp, done) if exact is not None else None
    if void is not None:
        out["exact"] = out["exact"].where(~void)
        out.attrs["exact_void"] = int(void.sum())
        out.attrs["exact_void_text"] = (f"{h.name} is not tested where {h.exact_unless} > 0: its exact answer "
                                        f"holds only where that never happens")
    return exact


def _test(out: xr.Dataset, share: bool, k, n, mean_count, known: xr.DataArray | None = None) -> None:
    """Adds ``z``, ``p``, ``test_se`` and ``test_df`` to ``out`` (NaN where the
    family does not test, :func:`boardsweep.pipeline.analysis.family.label_tests`;
    ``mean_count``: per replicate, for a distribution estimated per replicate,
    else None; ``known``: the exact CLT s.e., which replaces the estimated one
    with ``df = inf`` where it is finite, :mod:`boardsweep.pipeline.analysis.clt`)."""
    est = out["estimate"].values
    se, df, ex = (out[c].broadcast_like(out["estimate"]).values for c in ("se", "df", "exact"))
    kind = "binomial" if share else "t"
    if known is not None and np.isfinite(known.values).any():
        use = np.isfinite(known.values) & (known.values > 0)
        se, df, kind = np.where(use, known.values, se), np.where(use, np.inf, df), "z"
    counts = mean_count.broadcast_like(out["estimate"]).values if mean_count is not None else None
    found = label_tests(est, se, df, ex, share, k, n, counts)
    like = out["estimate"]
    out["z"], out["p"] = like.copy(data=found["z"]), like.copy(data=found["p"])
    out["test_se"], out["test_df"] = like.copy(data=se), like.copy(data=df)
    out.attrs["untestable"] = int(found["untestable"].sum())
    out.attrs["test"], out.attrs["test_kind"] = TEST_TEXT[kind], kind


def _gof(total: xr.DataArray, exact: xr.DataArray, dim: str) -> xr.Dataset:
    """Chi-square goodness of fit per grid point of pooled counts over ``dim``."""
    counts = total.transpose(..., dim)
    probs = exact.broadcast_like(counts).transpose(..., dim)
    shape = counts.shape[:-1]
    stat, df, p = (np.full(shape, np.nan) for _ in range(3))
    c, q = counts.values, probs.values
    for idx in np.ndindex(*shape):
        if np.isfinite(q[idx]).all() and np.isfinite(c[idx]).all():
            stat[idx], df[idx], p[idx] = stats.chi2_gof(c[idx], q[idx])
    like = counts.isel({dim: 0}, drop=True)
    return xr.Dataset({"gof_chi2": like.copy(data=stat), "gof_df": like.copy(data=df),
                       "gof_p": like.copy(data=p)})


def estimates(ds: xr.Dataset, checkpoint: int = -1, level: float = LEVEL,
              intervals: bool = True) -> dict[str, xr.Dataset]:
    """Every headline of the store's game at one checkpoint (index).

    Returns name -> Dataset over the grid dims (and the headline's own label
    dim, e.g. ``seat`` or ``location``) with ``estimate`` (ratio of sums over
    the finished replicates), ``sd`` (per game where ``basis`` is "units";
    of one replicate's ratio where it is "replicates"), ``se`` (its standard
    error), ``df``, ``low``/``high`` (the ``level`` interval: t, or exact
    binomial for a share or histogram bin, skewness-corrected for a mean
    of skewed games, see ``attrs["interval"]`` and ``attrs["interval_kind"]``),
    ``exact``, ``z`` =
    (estimate - exact) / se, ``p`` (two-sided, t with ``df``),
    ``replicate_sd`` (of the replicates' own ratios), ``replicates``,
    ``units`` (the summed denominator: games, events, turns), ``se_df``
    (the df of the s.e.'s own spread: ``df``, or less from the games'
    kurtosis, :func:`boardsweep.pipeline.analysis.skew.se_df`);
    distributions over games add ``gof_chi2``, ``gof_df``, ``gof_p``.  Seats
    that do not play at a point are NaN.  ``attrs``: name, description,
    kind, basis, basis_text, level, dim, interval (how low/high are computed),
    numerator.  ``intervals=False``: no ``low``/``high`` (what the tests read only).
    """
    game = game_of(ds)
    if game is None:
        return {}
    ds = in_memory(ds)
    with np.errstate(divide="ignore", invalid="ignore"):
        every = headlines_of(game)
        found = {h.name: _one(ds, h, checkpoint, level, every, intervals) for h in every}
    return {k: v for k, v in found.items() if v is not None}


def of_variable(ds: xr.Dataset, variable: str, checkpoint: int = -1, level: float = LEVEL) -> xr.Dataset:
    """The estimates of a simulated distribution variable (e.g. Monopoly's
    location counts), by the headline that has it as numerator, else as a
    distribution over its own labels (``variable / variable.sum(DIM)``): the
    same estimator, standard error and test as :func:`estimates`."""
    h = variable_headline(ds, variable)
    if variable in ds.data_vars and h.denominator is None and _label_dim(ds, variable) is None:
        raise KeyError(f"{variable!r} has no labels to be a distribution over (its dims: "
                       f"{', '.join(map(str, ds[variable].dims))}) and no headline of the game estimates it")
    game = game_of(ds)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = _one(in_memory(ds), h, checkpoint, level, headlines_of(game) if game is not None else ())
    if out is None:
        raise KeyError(f"no simulated variable {variable!r} in the store")
    return out


def _rows(ds: xr.Dataset, est: xr.Dataset) -> pd.DataFrame:
    """:func:`summary`'s rows of one headline, column by column (no object per row)."""
    axes, dim = _axes(ds), est.attrs["dim"]
    cols = list(COLUMNS) + ["sd"]
    dims = [*axes, *([dim] if dim else [])]
    labels = label_values(ds, dim) if dim else [""]
    reps = (est["replicates"].transpose(*axes).values if axes else est["replicates"].values).reshape(-1)
    arrays = {c: est[c].broadcast_like(est["estimate"]).transpose(*dims).values.astype(float).reshape(len(reps), -1)
              for c in cols}
    keep = np.isfinite(arrays["estimate"]) if dim == "seat" else np.ones(arrays["estimate"].shape, bool)
    point, label = np.nonzero(keep)  # a seat that does not play here: no row
    where = np.unravel_index(point, [ds.sizes[a] for a in axes]) if axes else ()
    return pd.DataFrame({**{a: _shared(ds[a].values)[w] for a, w in zip(axes, where)}, "headline": est.attrs["name"],
                         "label": np.asarray(labels, dtype=object)[label], **{c: arrays[c][keep] for c in cols},
                         "level": est.attrs["level"], "se_basis": est.attrs["basis"],
                         "replicates": reps[point].astype(np.int64)})


def _shared(values: np.ndarray) -> np.ndarray:
    """A coordinate's values to index rows with: text as one Python object per value (not one per row)."""
    return values if values.dtype.kind in "biuf" else np.array([python_value(v) for v in values], dtype=object)


def summary(ds: xr.Dataset, checkpoint: int = -1, level: float = LEVEL,
            found: dict[str, xr.Dataset] | None = None) -> pd.DataFrame:
    """An ``az.summary``-style table of the headline answers: one row per grid
    point, headline and label (``label`` empty for a scalar) with the
    :data:`COLUMNS` (``estimate``, ``se``, ``low``/``high``: the ``level``
    interval (t; exact binomial for a share or histogram bin), ``df``,
    ``exact``, ``z``, ``p``), then ``sd``, ``level``, ``se_basis`` ("units": pooled per-game s.e.; "replicates": across
    replicates) and ``replicates``.

    ``found``: :func:`estimates` already computed.
    """
    found = estimates(ds, checkpoint, level) if found is None else found
    columns = [*_axes(ds), "headline", "label", *COLUMNS, "sd", "level", "se_basis", "replicates"]
    frames = [f for f in (_rows(ds, est) for est in found.values()) if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)  # _rows' columns


def tests(ds: xr.Dataset, found: dict[str, xr.Dataset] | None = None, spread: bool = False,
          known: bool = False) -> pd.DataFrame:
    """Every test against an exact value, one row each: ``point`` (flat index
    in grid order), ``headline``, ``label`` (empty for a goodness of fit),
    ``test`` ("t": Student's t with ``df``; "z": the CLT z test, a known
    s.e., ``df`` inf; "skew_t": Hall's test of a skewed mean,
    :func:`boardsweep.pipeline.analysis.skew.hall_test`, ``df`` its se_df;
    "binomial": the exact binomial test of a share; "chi2": one name per
    test, :data:`boardsweep.pipeline.analysis.clt.TEST_NAMES`), ``statistic``, ``df``, ``p`` (raw, two-sided)
    and ``se`` (the t test's standard error; NaN for a chi-square); with
    ``spread``, ``se_df``, ``skew_a`` and ``known_se`` too (Hall's ``a`` of a skewed
    mean's test, NaN elsewhere; and the df of the s.e.'s own spread); with
    ``known``, ``known_se`` (the s.e. from the exact CLT variance where the
    game knows it, NaN elsewhere): what the power statement reads."""
    found = estimates(ds) if found is None else found
    axes = _axes(ds)
    parts = []  # one table per headline, in grid order: made from the arrays, not a dict per test
    for name, est in found.items():
        dim = est.attrs["dim"]
        if "gof_p" in est:
            p = (est["gof_p"].transpose(*axes).values if axes else est["gof_p"].values).ravel()
            stat = (est["gof_chi2"].transpose(*axes).values if axes else est["gof_chi2"].values).ravel()
            df = (est["gof_df"].transpose(*axes).values if axes else est["gof_df"].values).ravel()
            i = np.flatnonzero(np.isfinite(p))
            parts.append({"point": i, "headline": name, "label": [""] * len(i), "test": "chi2",
                          "statistic": stat[i], "df": df[i], "p": p[i], "se": np.full(len(i), np.nan),
                          "se_df": df[i], "skew_a": np.full(len(i), np.nan), "known_se": np.full(len(i), np.nan)})
            continue
        dims = [*axes, *([dim] if dim else [])]
        p = est["p"].transpose(*dims).values if dims else est["p"].values
        z = est["z"].transpose(*dims).values if dims else est["z"].values
        df = est["test_df"].broadcast_like(est["p"]).transpose(*dims).values if dims else est["test_df"].values
        se = est["test_se"].broadcast_like(est["p"]).transpose(*dims).values if dims else est["test_se"].values
        sdf = _spread_df(est, dims)
        ska, kse = (est[c].broadcast_like(est["p"]).transpose(*dims).values if c in est
                    else np.full(p.shape, np.nan) for c in ("skew_a", "known_se"))
        labels = label_values(ds, dim) if dim else [""]
        p2, z2, df2, se2, sdf2, ska2, kse2 = (a.reshape(-1, len(labels)) for a in (p, z, df, se, sdf, ska, kse))
        i, j = np.nonzero(np.isfinite(p2))
        kind = est.attrs.get("test_kind", "t")  # one name per test: clt.TEST_NAMES's keys
        kinds = np.where(np.isinf(df2[i, j]), "z", kind)  # z: against the normal, a known s.e.
        if kind == "skew_t":  # Hall's test only where the point's games' moments are known (its a)
            kinds = np.where(np.isfinite(ska2[i, j]), kinds, "t")
        parts.append({"point": i, "headline": name, "label": [labels[k] for k in j.tolist()], "test": kinds,
                      "statistic": z2[i, j], "df": df2[i, j], "p": p2[i, j], "se": se2[i, j],
                      "se_df": sdf2[i, j], "skew_a": ska2[i, j], "known_se": kse2[i, j]})
    columns = [*TEST_COLUMNS, *(["se_df", "skew_a"] if spread else []), *(["known_se"] if known else [])]
    rows = [pd.DataFrame({"point": np.asarray(part["point"], dtype=np.int64), "headline": part["headline"],
                          "label": part["label"],
                          "test": part["test"], **{k: np.asarray(part[k], dtype=np.float64)
                                                   for k in ("statistic", "df", "p", "se", "se_df", "skew_a",
                                                             "known_se")}},
                         columns=columns)
            for part in parts if len(part["point"])]
    if not rows:
        return pd.DataFrame([], columns=columns)
    return pd.concat(rows, ignore_index=True) if len(rows) > 1 else rows[0]


def _spread_df(est: xr.Dataset, dims: list[str]) -> np.ndarray:
    """The df of each test's s.e. spread: ``se_df`` where the test divides by
    the estimated s.e. (``test_df`` is ``df``), else ``test_df`` (a known s.e.)."""
    test_df = est["test_df"].broadcast_like(est["p"])
    se_df = est["se_df"].broadcast_like(est["p"]) if "se_df" in est else test_df
    found = se_df.where(test_df == est["df"].broadcast_like(est["p"]), test_df)
    return found.transpose(*dims).values if dims else found.values


#: The columns of :func:`tests`.
TEST_COLUMNS = ["point", "headline", "label", "test", "statistic", "df", "p", "se"]


def agreement_per_point(points: int, table: pd.DataFrame, alpha: float) -> list[bool | None]:
    """Per grid point (``table``'s ``point``: flat indices below ``points``): True
    where every test's ``p_holm`` is at least ``alpha``, False where one is
    below, None where none tests it (one pass over the table)."""
    per_point: list[bool | None] = [None] * points
    if len(table):
        passed = (table["p_holm"] >= alpha).groupby(table["point"]).all()
        for i, ok in zip(passed.index.tolist(), passed.tolist()):
            per_point[i] = bool(ok)
    return per_point


def verdict(ds: xr.Dataset, alpha: float = ALPHA, found: dict[str, xr.Dataset] | None = None) -> dict[str, Any]:
    """Agreement with the exact answers at family-wise false-alarm rate ``alpha``.

    Every test of :func:`tests` (all headlines, labels and grid points) gets
    a Holm-adjusted p-value over the whole family; a grid point agrees when
    none of its adjusted p-values is below ``alpha``.  Under a correct
    simulator the chance that any point reads "disagree" is at most
    ``alpha``.  Returns ``alpha``, ``tests`` (how many), ``points``,
    ``tested_points``, ``agree``, ``min_p_holm`` (and ``at``: its point,
    headline and label), ``flagged`` (point keys that disagree, worst first,
    with the test that flags them), ``point_agree`` (per grid point: True,
    False, or None where nothing was tested), ``p_holm`` (the table of
    tests with a ``p_holm`` column and, per t test, ``detectable``: the bias
    it detects with 80% power, see :func:`power`), ``power`` (:func:`power`),
    ``untestable`` (labels with an exact answer left out because their
    spread is exactly 0: :func:`boardsweep.pipeline.analysis.family.untestable`,
    said in the text), ``test_of`` (headline -> which test it uses, in words:
    :data:`boardsweep.pipeline.analysis.clt.TEST_TEXT`) and ``text``: the sentence to print.

    The family is the store's own: every test of :func:`tests`, the same
    hypotheses whoever asks (``run``, ``query``, the accessor, the report).
    """
    found = estimates(ds) if found is None else found
    table = tests(ds, found, spread=True, known=True)
    points = grid_size(ds)
    table["p_holm"] = stats.holm(table["p"].to_numpy()) if len(table) else []
    out: dict[str, Any] = {"alpha": alpha, "tests": int(len(table)), "points": points}
    tested_points = sorted(set(table["point"])) if len(table) else []
    per_point = agreement_per_point(points, table, alpha)
    out.update(tested_points=len(tested_points), agree=sum(bool(a) for a in per_point if a is not None),
               point_agree=per_point, p_holm=table)
    out["power"] = power(table, alpha, found=found, ds=ds)
    out["p_holm"] = table = table.drop(columns=["se_df", "skew_a", "known_se"])
    out["untestable"] = sum(int(est.attrs.get("untestable", 0)) for est in found.values())
    out["test_of"] = {name: est.attrs["test"] for name, est in found.items() if "test" in est.attrs}
    with_exact = points_with_exact(ds, found)
    if not tested_points:
        out.update(min_p_holm=None, min_p=None, at=None, flagged=[], flagged_points=[],
                   text="nothing to test: " + (no_se_text(len(with_exact), points) if with_exact else
                                               f"no grid point has an exact answer ({count(points, 'point')})")
                   + _void_text(found) + _untestable_text(out["untestable"]))
        return out
    _worst_and_flagged(ds, table, alpha, out)
    out["text"] = verdict_text(out, table, alpha) + _untested_text(with_exact, tested_points, points) \
        + _void_text(found) + _untestable_text(out["untestable"])
    return out


def _untestable_text(n: int) -> str:
    """The labels left out of the family because their spread is 0 (:func:`.family.untestable`)."""
    return f"; {count(n, 'label')} {UNTESTABLE_TEXT}" if n else ""


def _worst_and_flagged(ds: xr.Dataset, table: pd.DataFrame, alpha: float, out: dict[str, Any]) -> None:
    """Adds the smallest p (``min_p_holm``, ``min_p``, ``at``) and the
    points that disagree, worst first (``flagged_points``, ``flagged``)."""
    worst = table.loc[table["p"].idxmin()]  # Holm keeps the order of the p-values
    where = where_text(grid_points_at(ds, [int(worst["point"])])[0])
    out["min_p_holm"], out["min_p"] = float(worst["p_holm"]), float(worst["p"])
    out["at"] = {"point": where, "headline": worst["headline"], "label": worst["label"]}
    bad = table[table["p_holm"] < alpha].sort_values("p_holm", kind="stable").drop_duplicates("point")
    out["flagged_points"] = [int(r.point) for r in bad.itertuples()]
    out["flagged"] = [{"point": where_text(point), "headline": r.headline, "label": r.label,
                       "test": r.test, "statistic": r.statistic, "p_holm": r.p_holm}
                      for r, point in zip(bad.itertuples(), grid_points_at(ds, out["flagged_points"]))]


def verdict_text(out: dict[str, Any], table: pd.DataFrame, alpha: float) -> str:
    """The verdict's sentence: AGREE with the smallest p, or DISAGREE with the worst test."""
    level = f"family-wise {alpha:.0%} (Holm)"
    tested_points = out["tested_points"]
    at = out["at"]
    what = f"{at['headline']}{' ' + str(at['label']) if at['label'] else ''} at {at['point']}"
    tests_text = count(len(table), "test")
    if not out["flagged"]:
        return (f"AGREE at {level}: {out['agree']} of {count(tested_points, 'point')} with an exact answer "
                f"({tests_text}); smallest Holm-adjusted p = {out['min_p_holm']:.2g} "
                f"(raw p = {out['min_p']:.2g}, {what})")
    f = out["flagged"][0]
    first = f"{f['headline']}{' ' + str(f['label']) if f['label'] else ''} at {f['point']}"
    return (f"DISAGREE at {level}: {tested_points - out['agree']} of {count(tested_points, 'point')} "
            f"with an exact answer differ from it ({tests_text}); worst: {first}, "
            f"{'chi2' if f['test'] == 'chi2' else 'z'} = {f['statistic']:.3g}, "
            f"Holm-adjusted p = {f['p_holm']:.2g}")


def _untested_text(with_exact: set[int], tested_points: list[int], points: int) -> str:
    """The points not tested, and why: no standard error, or no exact answer."""
    text = ""
    no_se = len(with_exact - set(tested_points))
    if no_se:
        text += "; " + no_se_text(no_se, points)
    untested = points - len(tested_points) - no_se
    if untested:
        text += f"; {count(untested, 'point')} not tested (no exact answer applies)"
    return text


def points_with_exact(ds: xr.Dataset, found: dict[str, xr.Dataset]) -> set[int]:
    """Flat indices (grid order) of the points where some headline has a finite exact value."""
    axes = _axes(ds)
    points: set[int] = set()
    for est in found.values():
        if "exact" not in est:
            continue
        finite = np.isfinite(est["exact"])
        finite = finite.any([d for d in finite.dims if d not in axes]) if set(finite.dims) - set(axes) else finite
        flat = (finite.transpose(*axes).values if axes else finite.values).ravel()
        points.update(int(i) for i in np.flatnonzero(flat))
    return points


def no_se_text(n: int, total: int) -> str:
    """Why points with an exact answer were not tested: no standard error to test with."""
    return (f"{n} of {count(total, 'point')} {'has' if n == 1 else 'have'} an exact answer but no "
            "standard error to test it with (it needs two replicates, or two games where they are pooled)")


def _void_text(found: dict[str, xr.Dataset]) -> str:
    """Why points a headline could test are not (its ``exact_unless``)."""
    notes = [f"{est.attrs['exact_void_text']} ({count(est.attrs['exact_void'], 'point')})"
             for est in found.values() if est.attrs.get("exact_void")]
    return "".join(f"; {n}" for n in notes)


def power(table: pd.DataFrame, alpha: float = ALPHA, target: float = tpower.POWER,
          found: dict[str, xr.Dataset] | None = None, ds: xr.Dataset | None = None) -> dict[str, Any]:
    """What the verdict could have missed: :func:`boardsweep.pipeline.analysis.detection.power`
    (per headline, the bias its weakest t test detects with probability ``target``),
    frequencies and shares bounded by 1 (from ``found``), the weakest test's
    point named from ``ds``."""
    bounded = frozenset(name for name, est in (found or {}).items()
                        if est.attrs.get("kind") == "distribution" or est.attrs.get("interval") == INTERVAL_TEXT["share"])
    where = (lambda i: where_text(grid_points_at(ds, [i])[0])) if ds is not None else None
    return detection.power(table, alpha, target, bounded, where)


#: What a Holm-adjusted p is, said wherever one is printed.
HOLM_TEXT = ("Holm-adjusted p: the k-th smallest raw p times (tests - k + 1), never below the one before, "
             "capped at 1")


def where_text(point: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items()) or "the single point"
