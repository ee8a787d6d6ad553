"""Convergence and variance of a sweep, on the store's xarray Dataset.

Every function takes the Dataset of :func:`boardsweep.pipeline.analysis.query.open_sweep` (cells
not done are NaN and are skipped, never read as zeros) and keeps the grid
dimensions; the maths is in :mod:`boardsweep.core.stats`.  Games are reached only through
:mod:`boardsweep.core.games`: the optional ``extras["asymptotic_variance"]`` (CLT theory)
and ``extras["replicate_exact"]`` (exact answer of the environment a replicate
played, e.g. its deck shuffles).  What a game does not provide comes back as
``None`` or NaN.

Frequencies are ``counts / sum(counts)`` per checkpoint (a distribution
variable ``(checkpoint, DIM)``); "steps" is the simulated per-checkpoint
integer variable that equals that denominator (Monopoly: ``events``) or else
the first such variable.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

if TYPE_CHECKING:
    import pandas as pd

from ...core import stats
from ...core.games import Game, get_game
from ..plan.tasks import replicate_seed
from ..store.metadata import simulated_variables
from .dataset import distribution_variables, frequencies, grid_points, z_score

__all__ = [
    "game_of",
    "point_params",
    "label_values",
    "run_shape_of",
    "step_variable",
    "steps",
    "grid_params",
    "exact_reference",
    "convergence",
    "convergence_rate",
    "theoretical_variance",
    "variance_ratio",
    "batch_means",
    "shuffle_decomposition",
    "deck_pairs",
    "VARIANCE_COLUMNS",
    "BETWEEN_DOMINATES",
    "label_variance",
    "compare_axis",
    "axis_comparisons",
    "ratio_estimates",
]


# --- store metadata -----------------------------------------------------------


#: Games found by :func:`game_of`, per name: finding one scans the installed
#: entry points (milliseconds), and a summary asks once per grid point.
_GAMES: dict[str, Game | None] = {}


def game_of(ds: xr.Dataset) -> Game | None:
    """The registered game that made the store (None if not registered here)."""
    name = ds.attrs.get("game")
    if not isinstance(name, str):
        return None
    if name not in _GAMES:
        try:
            _GAMES[name] = get_game(name)
        except Exception:
            return None
    return _GAMES[name]


def _canonical(ds: xr.Dataset) -> dict:
    try:
        return json.loads(ds.attrs["spec_canonical"])
    except (KeyError, TypeError, ValueError):
        return {}


def point_params(ds: xr.Dataset, point: dict[str, Any]) -> dict[str, Any]:
    """Full game parameters of a grid point (the spec's fixed ones + the point)."""
    params = {**_canonical(ds).get("params", {}), **point}
    game = game_of(ds)
    return game.resolve_params(params) if game is not None else params


def label_values(ds: xr.Dataset, dim: str) -> list[str]:
    """The labels of a game dimension as text (the one place that reads them:
    a numeric histogram coordinate reads the same way)."""
    return [str(v.item() if isinstance(v, np.generic) else v) for v in ds[dim].values]


def run_shape_of(ds: xr.Dataset) -> dict[str, int]:
    """The run shape of every replicate (without ``replicates``)."""
    run = dict(_canonical(ds).get("run", {}))
    run.pop("replicates", None)
    return run


def grid_params(ds: xr.Dataset) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Every grid point (store order) with its full game parameters, as
    :func:`point_params` gives them; the spec is parsed and the game looked
    up once, not once per point (the spec holds the grid: parsing it per
    point is quadratic, and a game lookup reads the installed entry points)."""
    fixed, game = _canonical(ds).get("params", {}), game_of(ds)
    resolve = game.resolve_params if game is not None else dict
    return [(point, resolve({**fixed, **point})) for point in grid_points(ds)]


def _mem(ds: xr.Dataset) -> xr.Dataset:
    """The Dataset in memory (a store opened lazily is read once here)."""
    return ds.compute() if any(v.chunks for v in ds.variables.values()) else ds


def _grid(ds: xr.Dataset) -> list[str]:
    return list(ds.attrs.get("grid_axes", []))


def _sel(obj, point: dict):
    return obj.sel(point) if point else obj


def step_variable(ds: xr.Dataset, variable: str = "counts") -> str | None:
    """The per-checkpoint integer variable counting the observations behind ``variable``.

    The one equal to ``variable`` summed over its own dim (the frequency
    denominator, e.g. Monopoly's ``events``); None when no variable counts
    them (e.g. Shut the Box's ``hist``, whose observations are games: see
    :func:`steps`).  Another variable is never taken in its place: plotting
    a histogram's convergence against ``rolls_sum`` would mislabel its axis.
    """
    dim = distribution_variables(ds)[variable]
    total = ds[variable].sum(dim, min_count=1)
    candidates = [
        name for name in simulated_variables(ds.attrs)
        if name != variable and ds[name].dims[-1:] == ("checkpoint",) and "replicate" in ds[name].dims
    ]
    for name in candidates:
        same = (ds[name] == total) | total.isnull()
        if bool(same.all()):
            return name
    return None


def steps(ds: xr.Dataset, variable: str = "counts") -> tuple[xr.DataArray, str]:
    """Observations behind ``variable`` per replicate and checkpoint, and their name.

    n(checkpoint) = :func:`step_variable` where one counts them, else
    ``variable`` summed over its own dim (a histogram's entries: for Shut the
    Box, games).  The name says which, for axis labels.
    """
    name = step_variable(ds, variable)
    if name is not None:
        return ds[name], name
    dim = distribution_variables(ds)[variable]
    unit = ds.attrs.get("checkpoint_of", "observations")
    return ds[variable].sum(dim, min_count=1), f"{unit} (counted in {variable})"


def exact_reference(ds: xr.Dataset, variable: str = "counts") -> xr.DataArray | None:
    """The exact frequency that ``frequencies(ds, variable)`` estimates, with a
    ``checkpoint`` dim: the finite-horizon exact (an exact variable shaped
    ``(checkpoint, DIM)``, normalised) where the game has one, else the
    long-run one broadcast over checkpoints.  None when there is neither."""
    dim = distribution_variables(ds)[variable]
    exact = [ds[name] for name in ds.attrs.get("exact_variables", [])]
    for candidate in exact:
        if candidate.dims[-2:] == ("checkpoint", dim):
            return candidate / candidate.sum(dim, min_count=1)
    for candidate in exact:
        if candidate.dims[-1:] == (dim,) and "checkpoint" not in candidate.dims:
            ref = candidate / candidate.sum(dim, min_count=1)
            return ref.expand_dims(checkpoint=ds["checkpoint"]).transpose(..., "checkpoint", dim)
    return None


# --- convergence ----------------------------------------------------------------


def convergence(ds: xr.Dataset, variable: str = "counts") -> xr.Dataset:
    """Per grid point and checkpoint: replicate mean, sd and standard error of
    the frequencies, and their error against the exact answer.

    Variables (grid dims kept):

    * ``mean``, ``sd`` (ddof 1), ``stderr`` = sd / sqrt(n), ``replicates`` n
      (finished replicates), over ``(checkpoint, DIM)``;
    * ``steps``: mean over replicates of :func:`steps` ``(checkpoint)``;
    * ``exact`` (:func:`exact_reference`), ``error`` = mean - exact and
      ``z`` = error / stderr per label (:func:`query.z_score`: missing where
      the s.e. is 0 or the label's mean count is below ``MIN_COUNT``);
    * ``max_abs_error`` = max |error|, ``total_variation`` = sum |error| / 2,
      ``rms_error`` = sqrt(mean over replicates and labels of
      (frequency - exact)^2) per checkpoint (the error of ONE replicate).
    """
    ds = _mem(ds)
    dim = distribution_variables(ds)[variable]
    freq = frequencies(ds, variable)
    n = freq.notnull().sum("replicate")
    out = xr.Dataset()
    out["mean"] = freq.mean("replicate")
    out["sd"] = freq.std("replicate", ddof=1).where(n > 1)
    out["stderr"] = out["sd"] / np.sqrt(n.where(n > 1))
    out["replicates"] = n.isel({dim: 0}, drop=True)
    n_steps, steps_name = steps(ds, variable)
    out["steps"] = n_steps.astype(float).mean("replicate")
    out.attrs["steps"] = steps_name
    exact = exact_reference(ds, variable)
    if exact is None:
        exact = xr.full_like(out["mean"], np.nan)
    out["exact"] = exact
    out["error"] = out["mean"] - exact
    out["z"] = z_score(out["error"], out["stderr"], ds[variable].mean("replicate"))
    has = out["error"].notnull().any(dim)
    out["max_abs_error"] = abs(out["error"]).max(dim).where(has)
    out["total_variation"] = (0.5 * abs(out["error"]).sum(dim)).where(has)
    sq = ((freq - exact) ** 2).mean(dim)
    out["rms_error"] = np.sqrt(sq.mean("replicate"))
    out.attrs.update(variable=variable, dim=dim)
    return out


def convergence_rate(conv: xr.Dataset, upper: float = 0.5) -> xr.Dataset:
    """Fitted convergence rate per grid point (slope of a log-log line).

    ``slope``: of log ``rms_error`` on log ``steps`` where the exact answer
    exists (``basis`` "rms_error"); else of log(RMS over labels of the
    across-replicate ``sd``) (``basis`` "sd"), which has the same -1/2 rate
    without a reference.  Only checkpoints in the upper ``upper`` fraction of
    the log-step range are used (the early ones are dominated by the start
    transient and by discreteness).  Returns ``slope``, ``slope_stderr`` and
    ``basis`` (grid dims only).
    """
    if "steps" not in conv:
        raise ValueError("no step variable: cannot fit a convergence rate")
    dim = conv.attrs["dim"]
    sd_rms = np.sqrt((conv["sd"] ** 2).mean(dim))

    def fit(steps, err, sd):
        steps = np.asarray(steps, float)
        ok = np.isfinite(steps) & (steps > 0)
        if ok.sum() < 3:
            return np.nan, np.nan, ""
        lo, hi = np.log(steps[ok]).min(), np.log(steps[ok]).max()
        keep = ok & (np.log(np.where(ok, steps, 1.0)) >= hi - upper * (hi - lo))
        for basis, y in (("rms_error", err), ("sd", sd)):
            slope, se = stats.loglog_slope(steps[keep], np.asarray(y, float)[keep])
            if np.isfinite(slope):
                return slope, se, basis
        return np.nan, np.nan, ""

    slope, se, basis = xr.apply_ufunc(
        fit, conv["steps"], conv["rms_error"], sd_rms,
        input_core_dims=[["checkpoint"]] * 3, output_core_dims=[[], [], []],
        vectorize=True, output_dtypes=[float, float, object],
    )
    return xr.Dataset({"slope": slope, "slope_stderr": se, "basis": basis})


# --- theory beside measurement -------------------------------------------------------


def theoretical_variance(ds: xr.Dataset, variable: str = "counts") -> xr.DataArray | None:
    """CLT variance per unit of the game's ``extras["asymptotic_variance"]``,
    dims (grid..., DIM), with ``attrs["per"]`` naming the store variable ``N``
    in ``Var(f_hat) ~ variance / N``.  NaN where the game has no theory for a
    point; None when the game has no such hook at all (or its unit is not in
    the store)."""
    game = game_of(ds)
    hook = None if game is None else game.extras.get("asymptotic_variance")
    if hook is None:
        return None
    dim = distribution_variables(ds)[variable]
    axes = _grid(ds)
    out = xr.DataArray(
        np.full([ds.sizes[a] for a in axes] + [ds.sizes[dim]], np.nan),
        dims=(*axes, dim), coords={**{a: ds[a] for a in axes}, dim: ds[dim]},
    )
    per = None
    for point, params in grid_params(ds):
        try:
            res = hook(params)
        except Exception:  # no theory for this point: stays NaN
            continue
        per = res.get("per", per)
        values = np.asarray(res["variance"], dtype=float)
        if values.shape == (ds.sizes[dim],):
            out.loc[point] = values
    if per is None or per not in ds:
        return None
    out.attrs["per"] = per
    return out


def variance_ratio(ds: xr.Dataset, variable: str = "counts", theory: xr.DataArray | None = None
                   ) -> xr.Dataset | None:
    """Measured across-replicate variance over the CLT prediction, per
    (grid..., checkpoint, DIM); it should approach 1 as steps grow.

    The prediction for replicate ``r`` is ``sigma^2 / N_r``; the ratio uses
    their mean over finished replicates.  Also ``measured`` and ``predicted``.
    None when the game has no theory.  ``theory``: a :func:`theoretical_variance`
    already computed (it is computed here otherwise).
    """
    ds = _mem(ds)
    theory = theoretical_variance(ds, variable) if theory is None else theory
    if theory is None:
        return None
    freq = frequencies(ds, variable)
    n_steps = ds[theory.attrs["per"]].astype(float).where(ds[theory.attrs["per"]] > 0)
    done = freq.notnull().all(distribution_variables(ds)[variable])
    predicted = (theory / n_steps).where(done).mean("replicate")
    measured = freq.var("replicate", ddof=1).where(freq.notnull().sum("replicate") > 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (measured / predicted).where(predicted > 0)
    return xr.Dataset({"measured": measured, "predicted": predicted, "ratio": ratio},
                      attrs={"per": theory.attrs["per"]})


def batch_means(ds: xr.Dataset, variable: str = "counts", theory: xr.DataArray | None = None
                ) -> xr.Dataset:
    """Within-replicate variance of each replicate's final frequency from its own
    checkpoint increments as (unequal) batches (:func:`boardsweep.core.stats.ratio_batch_variance`).

    Returns ``variance`` (grid..., replicate, DIM), ``stderr`` its square root,
    ``batches_effective`` = n^2 / sum n_j^2 (log-spaced checkpoints leave only
    a few effective batches, so each estimate is noisy; compare medians), and,
    where the game has a theory, ``ratio`` = variance / (sigma^2 / N_r).
    """
    ds = _mem(ds)
    dim = distribution_variables(ds)[variable]
    counts = ds[variable].astype(float)
    total = counts.sum(dim, min_count=1)
    inc = counts.diff("checkpoint", label="upper")
    first = counts.isel(checkpoint=[0])
    c = xr.concat([first, inc], "checkpoint").transpose(..., "checkpoint", dim)
    e_inc = xr.concat([total.isel(checkpoint=[0]), total.diff("checkpoint", label="upper")], "checkpoint")
    e = e_inc.transpose(..., "checkpoint")
    var = xr.apply_ufunc(
        lambda cc, ee: stats.ratio_batch_variance(cc, ee[..., None], axis=-2),
        c, e, input_core_dims=[["checkpoint", dim], ["checkpoint"]], output_core_dims=[[dim]],
    )
    n = e.sum("checkpoint", skipna=False)
    eff = n**2 / (e**2).sum("checkpoint", skipna=False)
    out = xr.Dataset({"variance": var, "stderr": np.sqrt(var), "batches_effective": eff})
    theory = theoretical_variance(ds, variable) if theory is None else theory
    if theory is not None:
        N = ds[theory.attrs["per"]].isel(checkpoint=-1).astype(float)
        out["ratio"] = (var / (theory / N)).where(theory > 0)
    return out


# --- deck policies / random environments -----------------------------------------------


def shuffle_decomposition(
    ds: xr.Dataset, variable: str = "counts", checkpoint: int = -1, max_solves: int = 256
) -> xr.Dataset | None:
    """Split the replicate variance into between-environment and sampling parts.

    Needs the game's ``extras["replicate_exact"]``: the exact answer of the
    environment (e.g. the deck shuffles) each replicate played, found from the
    replicate's seed (:func:`boardsweep.pipeline.plan.tasks.replicate_seed`).  Computed for
    grid points where it is informative (the per-replicate answers differ)
    and feasible; ``None`` when the game has no hook, an error was raised
    (e.g. too many games per replicate) or it would need more than
    ``max_solves`` calls.  Returns (grid..., DIM): ``total``, ``between``,
    ``sampling``, ``between_share``, and ``replicate_exact`` (grid...,
    replicate, DIM).
    """
    ds = _mem(ds)
    game = game_of(ds)
    hook = None if game is None else game.extras.get("replicate_exact")
    if hook is None:
        return None
    dim = distribution_variables(ds)[variable]
    done = ds["done"].values
    if int(done.sum()) > max_solves:
        return None
    root = int(_canonical(ds).get("seed", 0))
    run_shape = run_shape_of(ds)
    freq = frequencies(ds, variable).isel(checkpoint=checkpoint)
    exact = xr.full_like(freq, np.nan).load()
    axes = _grid(ds)
    for point, params in grid_params(ds):
        for r in ds["replicate"].values:
            if not bool(_sel(ds["done"], point).sel(replicate=r)):
                continue
            try:
                res = hook(params, replicate_seed(root, params, int(r)), run_shape)
            except Exception:
                return None
            values = next(iter(res.values()))
            exact.loc[{**point, "replicate": r}] = np.asarray(values, float)
    parts = xr.apply_ufunc(
        lambda x, m: tuple(stats.variance_decomposition(x, m, axis=-1)[k]
                           for k in ("total", "between", "sampling", "between_share")),
        freq.transpose(..., dim, "replicate"), exact.transpose(..., dim, "replicate"),
        input_core_dims=[["replicate"], ["replicate"]], output_core_dims=[[], [], [], []],
    )
    out = xr.Dataset(dict(zip(("total", "between", "sampling", "between_share"), parts)))
    out["replicate_exact"] = exact
    out.attrs["grid_axes"] = axes
    return out


def deck_pairs(ds: xr.Dataset, decomp: xr.Dataset, variable: str = "counts", checkpoint: int = -1) -> xr.Dataset:
    """The paired deck test per grid point and label: each replicate's
    frequency against the exact answer of the deck orders it played
    (:func:`boardsweep.core.stats.paired_test` along ``replicate``):
    ``difference``, ``sd`` (of the paired differences), ``stderr``, ``t``,
    ``df``, ``p``.  NaN where a point has no deck answers."""
    freq = frequencies(ds, variable).isel(checkpoint=checkpoint)
    exact = decomp["replicate_exact"]
    dim = distribution_variables(ds)[variable]
    keys = ("difference", "sd", "stderr", "t", "df", "p")
    parts = xr.apply_ufunc(
        lambda x, m: tuple(stats.paired_test(x, m, axis=-1)[k] for k in keys),
        freq.transpose(..., dim, "replicate"), exact.transpose(..., dim, "replicate"),
        input_core_dims=[["replicate"], ["replicate"]], output_core_dims=[[]] * len(keys),
    )
    return xr.Dataset(dict(zip(keys, parts)))


#: A label whose between-deck share of the replicate variance is at least this
#: is one where more turns will not shrink the error (only more replicates will).
BETWEEN_DOMINATES = 0.5

#: The columns of :func:`label_variance` after the grid axes, headline and label.
VARIANCE_COLUMNS = ("estimate", "replicates", "units", "replicate_sd", "mcse", "se", "ess", "ess_per_unit",
                    "clt_variance", "clt_sd", "variance_ratio", "between_var", "within_var", "between_share",
                    "deck_difference", "deck_sd", "deck_t", "deck_df", "deck_p", "more_turns")


class _Flat:
    """Arrays as (grid points in grid order, labels), broadcast like one estimate."""

    def __init__(self, like: xr.DataArray, dims: list[str], shape: tuple[int, int]) -> None:
        self.like, self.dims, self.shape = like, dims, shape

    def of(self, da: xr.DataArray) -> np.ndarray:
        da = da.broadcast_like(self.like)
        values = da.transpose(*self.dims).values if self.dims else da.values
        return np.asarray(values, dtype=float).reshape(self.shape)


def label_variance(ds: xr.Dataset, found: dict[str, xr.Dataset], ratio: xr.Dataset | None = None,
                   decomp: xr.Dataset | None = None, variable: str | None = None,
                   theory: xr.DataArray | None = None) -> "pd.DataFrame":
    """Variance per grid point, headline and label, and where it comes from.

    Parameters
    ----------
    ds : xarray.Dataset
        The store.
    found : dict
        :func:`boardsweep.pipeline.analysis.headlines.estimates` of ``ds``.
    ratio : xarray.Dataset, optional
        :func:`variance_ratio` of ``variable`` (the exact CLT variance).
    decomp : xarray.Dataset, optional
        :func:`shuffle_decomposition` of ``variable`` (shuffled decks).
    variable : str, optional
        The distribution variable ``ratio`` and ``decomp`` are of.
    theory : xarray.DataArray, optional
        :func:`theoretical_variance` of ``variable`` (``sigma^2`` per unit).

    Returns
    -------
    pandas.DataFrame
        One row per grid point, headline and label with :data:`VARIANCE_COLUMNS`:
        ``replicate_sd`` (of the replicates' own ratios), ``mcse`` (arviz's
        Monte Carlo s.e. on the replicates, ``replicate_sd / sqrt(R)``),
        ``se`` (the headline's: pooled per game where the store has sums of
        squares), ``ess`` (arviz's effective sample size ``N / tau`` =
        ``unit variance / mcse^2``, the unit variance ``f (1 - f)`` of a
        frequency per event, ``sd^2`` per game; NaN for a mean with no
        per-unit variance), ``ess_per_unit`` (``1 / tau``), ``clt_variance``
        (the exact ``sigma^2`` per unit) with ``clt_sd`` (the replicate s.d.
        it predicts) and ``variance_ratio`` (``replicate_sd^2 / clt_sd^2``),
        and for shuffled decks ``between_var``, ``within_var``,
        ``between_share`` and the paired deck test (``deck_*``: the
        replicates against their own decks, the s.d. of the differences);
        ``more_turns``: "shrink it", or "will not shrink it (between deck
        orders)" where the between share is at least :data:`BETWEEN_DOMINATES`,
        empty where a game with deck orders was given no ``decomp``.
    """
    import pandas as pd

    axes = _grid(ds)
    pairs = deck_pairs(ds, decomp, variable) if decomp is not None and variable else None
    game = game_of(ds)
    # decks a replicate keeps for all its turns can only be assessed with their exact answers
    assessed = decomp is not None or game is None or "replicate_exact" not in game.extras
    with np.errstate(divide="ignore", invalid="ignore"):
        rows = _variance_rows(ds, found, ratio, decomp, variable, theory, pairs, assessed)
    return pd.DataFrame(rows, columns=[*axes, "headline", "label", *VARIANCE_COLUMNS])


def _variance_rows(ds, found, ratio, decomp, variable, theory, pairs, assessed) -> list[dict[str, Any]]:
    """The rows of :func:`label_variance`."""
    axes = _grid(ds)
    points = list(grid_points(ds))
    rows = []
    for name, est in found.items():
        dim = est.attrs["dim"] or None
        labels = label_values(ds, dim) if dim else [""]
        at = _Flat(est["estimate"], [*axes, *([dim] if dim else [])], (len(points), len(labels)))
        flat = at.of
        f = {k: flat(est[k]) for k in ("estimate", "replicates", "units", "replicate_sd", "se", "sd")}
        mcse = f["replicate_sd"] / np.sqrt(np.where(f["replicates"] > 0, f["replicates"], np.nan))
        if est.attrs["basis"] == "units":
            unit_var = f["sd"] ** 2
        elif est.attrs["kind"] == "distribution":
            unit_var = f["estimate"] * (1.0 - f["estimate"])
        else:
            unit_var = np.full_like(mcse, np.nan)
        ess = stats.effective_sample_size(unit_var, mcse)
        mine = variable is not None and est.attrs.get("numerator") == variable
        extra: dict[str, np.ndarray] = {}
        if mine and ratio is not None:
            predicted = ratio["predicted"].isel(checkpoint=-1)
            extra["clt_sd"] = np.sqrt(flat(predicted))
            extra["variance_ratio"] = f["replicate_sd"] ** 2 / flat(predicted)
            if theory is not None:
                extra["clt_variance"] = flat(theory)
        if mine and decomp is not None:
            between = flat(decomp["between"])
            # only where replicates play different decks (independent draws: one chain, nothing to split)
            shuffled = (np.nan_to_num(between, nan=0.0) > 0).any(axis=1, keepdims=True)
            parts = {"between_var": between, "within_var": flat(decomp["sampling"]),
                     "between_share": flat(decomp["between_share"]),
                     **{f"deck_{k}": flat(pairs[k]) for k in ("difference", "sd", "t", "df", "p")}}
            extra.update({k: np.where(shuffled, v, np.nan) for k, v in parts.items()})
        for i, point in enumerate(points):
            for j, label in enumerate(labels):
                if not np.isfinite(f["estimate"][i, j]):
                    continue  # a seat that does not play here
                share = extra.get("between_share", np.full_like(mcse, np.nan))[i, j]
                turns = ("will not shrink it (between deck orders)" if share >= BETWEEN_DOMINATES
                         else "shrink it" if assessed else "")
                row = {**point, "headline": name, "label": label, "estimate": f["estimate"][i, j],
                       "replicates": int(f["replicates"][i, j]), "units": f["units"][i, j],
                       "replicate_sd": f["replicate_sd"][i, j], "mcse": mcse[i, j], "se": f["se"][i, j],
                       "ess": ess[i, j], "ess_per_unit": ess[i, j] / f["units"][i, j] if f["units"][i, j] else np.nan,
                       **{k: v[i, j] for k, v in extra.items()},
                       "more_turns": turns}
                rows.append(row)
    return rows


def compare_axis(
    ds: xr.Dataset, axis: str, a: Any, b: Any, variable: str = "counts",
    checkpoint: int = -1, alpha: float = 0.05,
) -> xr.Dataset:
    """Do grid points with ``axis = a`` and ``axis = b`` (all else equal) differ?

    Welch's t-test per label of the replicate means at ``checkpoint``:
    ``difference`` (a - b), ``stderr``, ``t``, ``df``, ``p``; ``p_holm``
    adjusts p over the labels of each point (Holm-Bonferroni: with 41
    locations, about two would pass an unadjusted 5% test by chance alone);
    ``significant`` = p_holm < alpha.  Dims: the other grid axes and DIM.
    """
    ds = _mem(ds)
    dim = distribution_variables(ds)[variable]
    freq = frequencies(ds, variable).isel(checkpoint=checkpoint)
    sides = []
    for value in (a, b):
        f = freq.sel({axis: value})
        sides.append((f.mean("replicate"), f.var("replicate", ddof=1), f.notnull().sum("replicate")))
    (m1, v1, n1), (m2, v2, n2) = sides
    res = stats.welch_test(m1.values, v1.values, n1.values, m2.values, v2.values, n2.values)
    out = xr.Dataset({k: (m1.dims, v) for k, v in res.items()}, coords=m1.coords)
    d = out["p"].get_axis_num(dim)
    out["p_holm"] = (out["p"].dims, stats.holm(out["p"].values, axis=d))
    out["significant"] = out["p_holm"] < alpha
    out.attrs.update(axis=axis, a=str(a), b=str(b), alpha=alpha,
                     note=f"Holm-Bonferroni over the {ds.sizes[dim]} labels of each point")
    return out


def axis_comparisons(ds: xr.Dataset, variable: str = "counts", checkpoint: int = -1) -> dict:
    """:func:`compare_axis` of every grid axis's first value against each other value."""
    out = {}
    for axis in _grid(ds):
        values = list(ds[axis].values)
        for other in values[1:]:
            out[(axis, _py(values[0]), _py(other))] = compare_axis(
                ds, axis, values[0], other, variable, checkpoint)
    return out


def _py(value):
    return value.item() if isinstance(value, np.generic) else value


# --- ratios with intervals (win shares, mean rolls) --------------------------------


def ratio_estimates(ds: xr.Dataset, checkpoint: int = -1) -> dict[str, xr.Dataset]:
    """Every ratio the game declares (``Game.ratios``), at one checkpoint.

    For each: ``estimate`` = sum over done replicates of the numerator / the
    same sum of the denominator; a 95% interval ``low``/``high`` (exact
    binomial, Clopper-Pearson, on the pooled counts for shares, ``estimate -+ t(0.975, R - 1) sd / sqrt(R)`` of
    the replicates' own ratios for means: Student's t, since with R = 4-8
    replicates the normal 1.96 covers only 85-91%); ``exact`` where the game
    has one; and ``replicates``.  Grid dimensions and the ratio's own (e.g.
    ``seat``) are kept.  :mod:`boardsweep.pipeline.analysis.headlines` gives the
    headline answers with pooled per-game standard errors where they exist.
    """
    from ...core.stats import proportion_interval, t_interval

    game = game_of(ds)
    out: dict[str, xr.Dataset] = {}
    for name, ratio in (game.ratios.items() if game is not None else ()):
        if ratio.numerator not in ds:
            continue
        num = ds[ratio.numerator].isel(checkpoint=checkpoint).astype(float)
        if ratio.denominator == "checkpoint":
            den = xr.full_like(num, float(ds["checkpoint"].values[checkpoint]))
        else:
            den = ds[ratio.denominator].isel(checkpoint=checkpoint).astype(float)
        done = ds["done"].astype(bool)
        num = num.where(done)
        den = den.where(done).broadcast_like(num)
        total, trials = num.sum("replicate", min_count=1), den.sum("replicate", min_count=1)
        estimate = total / trials
        replicates = done.sum("replicate")
        if ratio.kind == "share":
            low, high = proportion_interval(total.values, trials.values)
            low, high = estimate.copy(data=low), estimate.copy(data=high)
        else:
            spread = (num / den).std("replicate", ddof=1) / np.sqrt(replicates)
            lo, hi = t_interval(estimate.values, spread.broadcast_like(estimate).values,
                                (replicates - 1).broadcast_like(estimate).values)
            low, high = estimate.copy(data=lo), estimate.copy(data=hi)
        parts = {"estimate": estimate, "low": low, "high": high, "replicates": replicates}
        if ratio.exact and ratio.exact in ds:
            parts["exact"] = ds[ratio.exact]
        out[name] = xr.Dataset(parts, attrs={"kind": ratio.kind, "numerator": ratio.numerator,
                                             "denominator": ratio.denominator})
    return out
