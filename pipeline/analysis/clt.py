"""The stronger test where the mathematics allows: a frequency against its
exact CLT variance.

A game that knows the asymptotic variance of its frequency estimates
(``extras["asymptotic_variance"]``: Monopoly's Markov chain gives
``Var(f_hat) ~ sigma^2 / N``, ``N`` the store variable it names, the rolls)
has a **known** standard error, ``se = sqrt(sigma^2 / N)`` with ``N`` summed
over the finished replicates, so its test is ``z = (estimate - exact) / se``
against the normal: no degrees-of-freedom penalty (the t test across R = 4
replicates needs 32 s.e.s for 80% power at Holm's 1%/80, 44.6 once the s.e.
is known to be estimated; the z test 4.7), and no tie can make its spread 0.
Used at every grid point whose variance the game solves (not for shuffled
decks, NaN there: the t test across replicates stays) where the grid has
at most :data:`CLT_POINTS` points (each is one Markov-chain solve, about
0.3 s); beyond that, the t test, and the estimate's ``test`` attribute says
which.  A label that expects fewer than :data:`CLT_MIN_COUNT` counts over the
replicates keeps its t test (a count's skew shows in the normal's far tail),
and labels under ``MIN_COUNT`` counts a replicate stay out of the family
either way.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from .dataset import game_of, grid_params, grid_size

__all__ = ["CLT_POINTS", "CLT_MIN_COUNT", "TEST_NAMES", "TEST_TEXT", "uses_clt", "known_stderr", "clt_stderr"]

#: The most grid points at which the verdict solves the exact CLT variance.
CLT_POINTS = 64
#: The smallest expected pooled count of a label tested against its CLT
#: variance: below it the count's skew shows in the normal's far tail (at
#: 2,000 turns and 2 replicates, about 150 a label, Monopoly read "disagree"
#: in 1.3% of 4,000 correct sweeps at family-wise 1%; at 500 and more, 0.6-1.1%).
CLT_MIN_COUNT = 500

#: Each test's one name, by its key: the key is an estimate table's ``test_kind``, the verdict's tests
#: table's ``test`` and a plan row's ``test``; the views and the planner print these names.
TEST_NAMES = {
    "t": "t test",
    "z": "z test on the exact CLT s.e.",
    "skew_t": "Hall's skewness-corrected t test",
    "binomial": "exact binomial test",
    "chi2": "chi-square goodness of fit",
}

#: Which test a headline uses, in words (an estimate table's ``test`` attribute; keys of :data:`TEST_NAMES`).
TEST_TEXT = {
    "z": "z = (estimate - exact) / se against the normal, se from the exact CLT variance of the game's Markov "
           "chain (sigma^2 / rolls): known, not estimated, so no df penalty",
    "t": "t = (estimate - exact) / se against Student's t with the table's df (the s.e. is estimated)",
    "binomial": "exact binomial test of games with the outcome (doubled smaller tail)",
    "skew_t": "Hall's test, the interval's own: t = (estimate - exact) / se transformed by the games' skewness, "
              "g(t) = t + a t^2 + a^2 t^3 / 3 + b, against Student's t with se_df (the s.e.'s df from the games' "
              "kurtosis)",
}


def uses_clt(variance: np.ndarray, expected_count: np.ndarray, points: int) -> np.ndarray:
    """Where the verdict tests a label against its exact CLT variance (the one
    place this is decided; the planner asks it too): the variance is known
    and positive, the label expects at least :data:`CLT_MIN_COUNT` counts
    over the replicates (``expected_count``: exact frequency x pooled events)
    and the grid has at most :data:`CLT_POINTS` points."""
    v, c = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (variance, expected_count)))
    with np.errstate(invalid="ignore"):
        return np.isfinite(v) & (v > 0) & (c >= CLT_MIN_COUNT) & (points <= CLT_POINTS)


def known_stderr(variance: np.ndarray, units: np.ndarray, reference: np.ndarray, events: np.ndarray,
                 tested: bool = True) -> np.ndarray:
    """``sqrt(sigma^2 / N)``: the s.e. of a pooled frequency from its exact
    asymptotic variance per unit (``variance``) and the units summed over the
    replicates (``N = units``, e.g. rolls), where the label's expected pooled
    count ``reference x events`` is at least :data:`CLT_MIN_COUNT` (with
    ``tested``; without it, at every count: the truth that a t test's power
    is stated from); NaN elsewhere (its t test stays) and where anything is missing."""
    v, n, ref, e = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (variance, units, reference, events)))
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = (n > 0) & uses_clt(v, np.where(tested, ref * e, np.inf), 0)
        return np.where(ok, np.sqrt(v / np.where(n > 0, n, 1.0)), np.nan)


def clt_stderr(ds: xr.Dataset, cp: int, done: xr.DataArray, like: xr.DataArray, dim: str,
               reference: xr.DataArray, events: xr.DataArray, tested: bool = True) -> xr.DataArray | None:
    """The known standard error ``sqrt(sigma^2 / N)`` of each label's pooled
    frequency at checkpoint index ``cp`` (shaped like ``like``: the grid and
    ``dim``; :func:`known_stderr`, ``reference`` the exact frequency and
    ``events`` the pooled events), NaN where the game has no single answer
    or (with ``tested``) the label expects fewer than :data:`CLT_MIN_COUNT` counts; None where the game has
    no CLT variance, the store lacks its ``per`` variable, or the grid has more
    than :data:`CLT_POINTS` points."""
    game = game_of(ds)
    hook = game.extras.get("asymptotic_variance") if game is not None else None
    if hook is None or not uses_clt(1.0, CLT_MIN_COUNT, grid_size(ds)):  # too many points: t tests
        return None
    axes = list(ds.attrs.get("grid_axes", []))
    rows, per = [], None
    for _, params in grid_params(ds):
        try:
            found = hook(params)
        except Exception:  # noqa: BLE001 - no theory at this point: its t test stays
            rows.append(np.full(ds.sizes[dim], np.nan))
            continue
        per = found.get("per", per)
        variance = np.asarray(found["variance"], dtype=np.float64)
        rows.append(variance if variance.shape == (ds.sizes[dim],) else np.full(ds.sizes[dim], np.nan))
    if per is None or per not in ds:
        return None
    shape = [ds.sizes[a] for a in axes] + [ds.sizes[dim]]
    variance = xr.DataArray(np.asarray(rows).reshape(shape), dims=[*axes, dim],
                            coords={c: ds[c] for c in [*axes, dim] if c in ds.coords})
    units = ds[per].isel(checkpoint=cp).astype(float).where(done).sum("replicate", min_count=1)
    variance, units, reference, events = xr.broadcast(variance, units, reference, events)
    se = variance.copy(data=known_stderr(variance.values, units.values, reference.values, events.values, tested))
    return se.broadcast_like(like).transpose(*like.dims)
