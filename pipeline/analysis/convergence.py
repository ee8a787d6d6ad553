"""Convergence of a sweep's frequencies, on the store's xarray Dataset.

Every function takes the Dataset of :func:`boardsweep.pipeline.store.open.open_sweep` (cells
not done are NaN and are skipped, never read as zeros) and keeps the grid
dimensions; the maths is in :mod:`boardsweep.core.stats`.

Frequencies are ``counts / sum(counts)`` per checkpoint (a distribution
variable ``(checkpoint, DIM)``); "steps" is the simulated per-checkpoint
integer variable that equals that denominator (Monopoly: ``events``) or else
the first such variable.  What each is compared with is
:mod:`~boardsweep.pipeline.analysis.reference`'s; the variance beside the
theory is :mod:`~boardsweep.pipeline.analysis.variance`, shuffled decks
:mod:`~boardsweep.pipeline.analysis.decks`, grid axes compared
:mod:`~boardsweep.pipeline.analysis.comparisons`.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ...core.batches import slope_interval
from ..store import simulated_variables
from .dataset import in_memory, distribution_variables, frequencies, increments, z_score
from .reference import batch_reference, exact_reference

__all__ = ["step_variable", "steps", "convergence", "batch_errors", "convergence_rate"]


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


def batch_errors(ds: xr.Dataset, variable: str = "counts") -> xr.Dataset:
    """Per grid point and checkpoint increment (a batch): ``batch_steps``
    (mean over replicates of the observations in it), ``batch_rms_error``
    (RMS over replicates and labels of the batch's frequency minus the exact
    batch frequency, :func:`~boardsweep.pipeline.analysis.reference.batch_reference`;
    NaN without one) and ``batch_sd_rms`` (RMS over labels of the
    across-replicate sd of the batch frequencies).  Batches do not overlap,
    so their errors are independent (unlike nested cumulative checkpoints):
    both fall as ``batch_steps^(-1/2)``."""
    ds = in_memory(ds)
    dim = distribution_variables(ds)[variable]
    inc = increments(ds[variable])
    freq = inc / inc.sum(dim, min_count=1)
    n_steps, _ = steps(ds, variable)
    out = xr.Dataset({"batch_steps": increments(n_steps).astype(float).mean("replicate")})
    exact = batch_reference(ds, variable)
    if exact is None:
        out["batch_rms_error"] = xr.full_like(out["batch_steps"], np.nan)
    else:
        out["batch_rms_error"] = np.sqrt(((freq - exact) ** 2).mean([dim, "replicate"]))
    n = freq.notnull().sum("replicate")
    out["batch_sd_rms"] = np.sqrt(freq.var("replicate", ddof=1).where(n > 1).mean(dim))
    return out


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
    ds = in_memory(ds)
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
    out.update(batch_errors(ds, variable))
    out.attrs.update(variable=variable, dim=dim)
    return out


def convergence_rate(conv: xr.Dataset, upper: float = 0.5) -> xr.Dataset:
    """Fitted convergence rate per grid point: the slope of a log-log line
    through independent batches, with its own uncertainty.

    ``slope``: of log ``batch_rms_error`` on log ``batch_steps`` where the
    exact answer exists (``basis`` "rms_error"); else of log
    ``batch_sd_rms`` (``basis`` "sd"); both fall as ``steps^(-1/2)``.  The
    batches are the increments between checkpoints (:func:`batch_errors`),
    disjoint and so independent: the least-squares s.e. holds (fitted on
    nested cumulative checkpoints it was 1.7x too small).  Only batches in
    the upper ``upper`` fraction of the log batch-size range are used, at
    least the 3 largest (the early ones are dominated by the start transient
    and by discreteness).
    Returns ``slope``, ``slope_stderr``, ``slope_df`` (points - 2),
    ``slope_low`` / ``slope_high`` (95%: slope -+ t_0.975(df) s.e.,
    :func:`boardsweep.core.batches.slope_interval`) and ``basis``.
    """
    if "batch_steps" not in conv:
        raise ValueError("no step variable: cannot fit a convergence rate")

    def fit(steps, err, sd):
        steps = np.asarray(steps, float)
        ok = np.isfinite(steps) & (steps > 0)
        if ok.sum() < 3:
            return np.nan, np.nan, np.nan, np.nan, np.nan, ""
        lo, hi = np.log(steps[ok]).min(), np.log(steps[ok]).max()
        keep = ok & (np.log(np.where(ok, steps, 1.0)) >= hi - upper * (hi - lo))
        if keep.sum() < 3:  # few checkpoints: the 3 largest batches
            keep = ok & (steps >= np.sort(steps[ok])[-3])
        for basis, y in (("rms_error", err), ("sd", sd)):
            found = slope_interval(steps[keep], np.asarray(y, float)[keep])
            if np.isfinite(found[0]):
                return (*found, basis)
        return np.nan, np.nan, np.nan, np.nan, np.nan, ""

    names = ("slope", "slope_stderr", "slope_df", "slope_low", "slope_high", "basis")
    found = xr.apply_ufunc(
        fit, conv["batch_steps"], conv["batch_rms_error"], conv["batch_sd_rms"],
        input_core_dims=[["checkpoint"]] * 3, output_core_dims=[[]] * 6,
        vectorize=True, output_dtypes=[float] * 5 + [object],
    )
    return xr.Dataset(dict(zip(names, found)))
