"""The chains' memory and the MCSE of quantiles (pipeline/analysis/mixing.py),
against the truth on planted series of the design's size (8 chains of 64
draws, the default batches), fixed seeds, 1,000 sets each:

* independent draws (normal and exponential): the lag-k autocorrelation
  has mean ``-1/B`` (within 5 s.e.), the lag-1 bound is exceeded on at most
  its 1% (binomial tolerance), the bulk ESS falls below / above its 90%
  reference about 5% of the time each;
* AR(1) series: the integrated autocorrelation time is within 10% of the
  exact ``1 + 2 sum_k (1 - k/B) phi^k`` (measured 2-7% low) and the lag-1
  flag fires on every set at ``phi = 0.3``;
* the MCSE of the median matches the spread of the median over the sets
  (within 5 s.e. of the s.d.); at the 5% and 95% quantiles it is not below
  it and overstates it by at most 25% (measured 0-18%).
"""

from __future__ import annotations

import numpy as np
import pytest

from boardsweep.pipeline.analysis import mixing

R, B, SETS = 8, 64, 1000


def _ar1(seed: int, phi: float, sets: int = SETS) -> np.ndarray:
    """``sets`` stationary AR(1) series (sets, R, B), unit innovations."""
    e = np.random.default_rng(seed).standard_normal((sets, R, B))
    x = np.empty_like(e)
    x[..., 0] = e[..., 0] / np.sqrt(1 - phi**2)
    for t in range(1, B):
        x[..., t] = phi * x[..., t - 1] + e[..., t]
    return x


def _iid(seed: int, law: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((SETS, R, B)) if law == "normal" else rng.exponential(size=(SETS, R, B))


def _binomial_ok(k: int, n: int, q: float) -> bool:
    return abs(k - n * q) <= 5 * np.sqrt(n * q * (1 - q))


@pytest.mark.parametrize("law", ["normal", "exponential"])
def test_independent_draws_autocorrelation_and_its_bound(law):
    """Lags 1-10 average ``-1/B`` within 5 s.e.; the 99% bound on lag 1 is
    exceeded on at most 1% of sets plus 5 binomial s.e. (measured 0.9%, 0.8%)."""
    x = _iid(11, law)
    acf = mixing.autocorrelation(x, 10)
    assert acf.shape == (SETS, 11) and np.allclose(acf[:, 0], 1.0)
    se = acf[:, 1:].std(axis=0, ddof=1) / np.sqrt(SETS)
    assert np.all(np.abs(acf[:, 1:].mean(axis=0) + 1.0 / B) <= 5 * se), acf[:, 1:].mean(axis=0)
    above = int((acf[:, 1] > mixing.acf_limit(R, B)).sum())
    assert above <= SETS * mixing.ACF_ALPHA + 5 * np.sqrt(SETS * mixing.ACF_ALPHA * (1 - mixing.ACF_ALPHA)), above
    assert 0.08 < mixing.acf_limit(R, B) < 0.09


@pytest.mark.parametrize("law", ["normal", "exponential"])
def test_the_ess_reference_is_the_range_of_independent_draws(law):
    """Fresh sets (another seed, and a skewed law: the bulk ESS is rank-based)
    fall below its 5% and above its 95% quantile about 5% of the time each."""
    from arviz_stats.base import array_stats

    low, high = mixing.ess_reference(R, B)
    assert low < R * B < high
    ess = np.asarray(array_stats.ess(_iid(12, law), method="bulk"))
    assert _binomial_ok(int((ess < low).sum()), SETS, 0.05) and _binomial_ok(int((ess > high).sum()), SETS, 0.05)
    assert mixing.ess_reference(R, B) == (low, high)  # fixed seed: the same numbers


@pytest.mark.parametrize("phi", [0.0, 0.3, 0.5])
def test_the_integrated_autocorrelation_time_of_an_ar1_series(phi):
    """The mean of tau over 1,000 sets within 10% of the exact finite-length
    IAT, ``B Var(chain mean) / sigma^2 = 1 + 2 sum_k (1 - k/B) phi^k``
    (measured 0.96, 0.94, 0.98 of it); the lag-1 bound fires on every set
    where ``phi >= 0.3`` (lag 1 about 0.27 beside a bound of 0.087)."""
    x = _ar1(int(phi * 10) + 20, phi)
    tau = mixing.integrated_time(x)
    k = np.arange(1, B)
    truth = 1 + 2 * np.sum((1 - k / B) * phi**k)
    assert abs(tau.mean() / truth - 1) <= 0.10, (tau.mean(), truth)
    fired = np.mean(mixing.autocorrelation(x, 1)[:, 1] > mixing.acf_limit(R, B))
    assert fired == 1.0 if phi >= 0.3 else fired <= 0.01 + 5 * np.sqrt(0.01 * 0.99 / SETS)


@pytest.mark.parametrize("phi", [0.0, 0.5])
@pytest.mark.parametrize("prob", [0.05, 0.5, 0.95])
def test_quantile_mcse_against_the_spread_of_the_quantile(phi, prob):
    """ArviZ's MCSE of a quantile (root mean square over the sets) beside the
    s.d. of the quantile estimate over the same 1,000 sets (s.e. of the
    ratio about ``1 / sqrt(2 (SETS - 1))``, 2.2%): at the median within 5
    s.e. (measured 1.04, 1.00); at the 5% and 95% quantiles not below the
    truth by more than 5 s.e. and at most 1.25x it (measured 0.99-1.18)."""
    x = _ar1(40 + int(prob * 100), phi)
    q, se = mixing.quantile_mcse(x, prob)
    assert q.shape == se.shape == (SETS,)
    ratio = np.sqrt(np.mean(se**2)) / q.std(ddof=1)
    tol = 5 / np.sqrt(2 * (SETS - 1))
    if prob == 0.5:
        assert abs(ratio - 1) <= tol, ratio
    else:
        assert 1 - tol <= ratio <= 1.25, ratio


def test_short_or_constant_chains_give_nan_not_an_error():
    y = np.ones((3, 4, 3))
    assert np.isnan(mixing.autocorrelation(y, 5)).all()
    q, se = mixing.quantile_mcse(y, 0.5)
    assert np.isnan(q).all() and np.isnan(se).all()


@pytest.mark.slow
def test_quantile_mcse_on_monopoly_batches_of_many_counts():
    """Monopoly's own kernel (per roll), 200 sweeps of 8 replicates x 64
    batches of 1,600 turns, the labels with at least 40 counts a batch (the
    ratios nearly continuous): over the labels, the median of (RMS MCSE /
    s.d. of the quantile over the sweeps) is within 5 s.e. of 1 at the
    median (measured 1.03, 35 labels) and at the 5% and 95% quantiles not
    below 1 by more than 5 s.e. and at most 1.4 (measured 1.15, 1.11)."""
    from boardsweep.core.batches import with_series
    from boardsweep.core.games import get_game
    from boardsweep.pipeline.analysis import draws

    game = get_game("monopoly")
    params = {p.name: p.default for p in game.params}
    run = {"games": 1, "players": 1, "turns": B * 1600}
    union, _, ends = with_series(game.default_checkpoints(run, 16), B)
    probs, sweeps = (0.05, 0.5, 0.95), 200
    found: dict[float, list] = {p: [] for p in probs}
    for k in range(sweeps):
        runs = [game.simulate(params, np.random.SeedSequence([5454, k, r]), run, union) for r in range(R)]
        a = np.diff(np.stack([np.asarray(o["counts"], dtype=float) for o in runs])[:, ends], axis=1, prepend=0.0)
        m = np.diff(np.stack([np.asarray(o["events"], dtype=float) for o in runs])[:, ends], axis=1, prepend=0.0)
        many = a.mean(axis=(0, 1)) >= 40
        z = draws.tie_broken(np.moveaxis(a / m[..., None], -1, 0), 1.0 / m.max() ** 2)
        for p in probs:
            found[p].append(np.where(many, np.stack(mixing.quantile_mcse(z, p)), np.nan))
    tol = 5 / np.sqrt(2 * (sweeps - 1))
    for p in probs:
        q, se = np.moveaxis(np.stack(found[p]), 1, 0)  # (sweeps, labels) each
        kept = np.isfinite(q).all(axis=0)
        assert kept.sum() >= 30
        ratio = np.median(np.sqrt(np.mean(se[:, kept] ** 2, axis=0)) / q[:, kept].std(axis=0, ddof=1))
        assert (abs(ratio - 1) <= tol) if p == 0.5 else (1 - tol <= ratio <= 1.4), (p, ratio)
