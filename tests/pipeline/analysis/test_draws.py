"""Draws worth diagnosing (pipeline/analysis/draws.py), against the truth on
Monopoly's own kernel: 200 sweeps of 8 correct replicates (20,000 turns,
per roll), each run once at the union of its 16 log checkpoints and the
ends of 64 equal batches, as a store's worker runs it.

* R-hat > 1.01 on the old draws (the 8 long log-spaced increments) fires
  on most labels of correct sweeps; on the equal batches far less often;
* ``rhat_high`` (R-hat above its reference for the design's size) fires on
  at most its stated 1% of labels, within a binomial tolerance;
* it fires on most labels of a sweep whose replicate 0 plays another rule
  (a planted disagreement), and ESS reads about the number of draws.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from boardsweep.core.batches import long_batches, with_series
from boardsweep.core.games import get_game
from boardsweep.pipeline.analysis import draws

SWEEPS = 200
REPS = 8
BATCHES = 64
TURNS = 20_000


def _sweep(k: int, seed: int, planted: dict | None = None, named: bool = False):
    """One sweep: (old draws, new draws), each (labels, replicate, batch)
    for the labels with at least 10 counts a replicate; replicate 0 plays
    ``planted`` parameters where given."""
    game = get_game("monopoly")
    params = {p.name: p.default for p in game.params}
    run = {"games": 1, "players": 1, "turns": TURNS}
    log = game.default_checkpoints(run, 16)
    union, at, ends = with_series(log, BATCHES)
    runs = [game.simulate({**params, **(planted if planted and r == 0 else {})},
                          np.random.SeedSequence([seed, k, r]), run, union) for r in range(REPS)]
    counts = np.stack([np.asarray(o["counts"], dtype=float) for o in runs])  # (rep, union, loc)
    events = np.stack([np.asarray(o["events"], dtype=float) for o in runs])
    enough = counts[:, -1].mean(axis=0) >= 10

    def ratios(index):
        a = np.diff(counts[:, index][..., enough], axis=1, prepend=0.0)
        m = np.diff(events[:, index], axis=1, prepend=0.0)
        return np.moveaxis(a / m[..., None], -1, 0), m

    old, m_old = ratios(at[long_batches(log)])
    new, m_new = ratios(ends)
    if named:
        return old, new, m_new.max(), np.asarray(game.coords_for(params)["location"])[enough]
    return old, new, m_new.max()


def _rhat(y):
    from arviz_stats.base import array_stats

    return np.asarray(array_stats.rhat(y, method="rank"))


@pytest.mark.slow
def test_rhat_on_equal_batches_is_read_against_its_reference_and_keeps_its_share():
    """Labels with R-hat > 1.01: most on the old draws, far fewer on 64
    equal batches; above the reference: at most 1% of the labels plus 5
    binomial s.e. (the labels of one sweep are nearly independent)."""
    limit = draws.rhat_reference(REPS, BATCHES)
    old_share, new_share, high, labels, ess = [], [], 0, 0, []
    for k in range(SWEEPS):
        old, new, most = _sweep(k, 5454)
        z = draws.tie_broken(new, 1.0 / most**2)
        r_new = _rhat(z)
        if k < 50:  # the old draws' share, measured on the first 50 sweeps
            old_share.append(np.mean(_rhat(old) > 1.01))
        new_share.append(np.mean(r_new > 1.01))
        high += int((r_new > limit).sum())
        labels += len(r_new)
        if k < 10:
            from arviz_stats.base import array_stats

            ess.append(np.median(array_stats.ess(z, method="bulk")))
    q = draws.RHAT_ALPHA
    assert labels > 30 * SWEEPS
    assert high <= labels * q + 5 * np.sqrt(labels * q * (1 - q)), (high, labels)
    assert np.mean(old_share) > 0.5 > 0.25 > np.mean(new_share), (np.mean(old_share), np.mean(new_share))
    assert 1.0 < limit < 1.05
    assert 0.7 * REPS * BATCHES <= np.median(ess) <= 1.3 * REPS * BATCHES, ess


def test_a_replicate_that_plays_another_rule_is_flagged():
    """Replicate 0 of 8 keeps the long jail strategy (the others the short
    one: the share of turns spent in jail differs): in at least 18 of 20
    sweeps R-hat is above its reference at the label it puts highest, IN_JAIL."""
    limit = draws.rhat_reference(REPS, BATCHES)
    seen = 0
    for k in range(20):
        _, new, most, names = _sweep(k, 777, planted={"jail_strategy": "long"}, named=True)
        r = _rhat(draws.tie_broken(new, 1.0 / most**2))
        seen += int(r.max() > limit and names[int(np.argmax(r))] == "IN_JAIL")
    assert seen >= 18, seen


def test_the_reference_is_the_quantile_of_exchangeable_draws():
    """The reference is the 99% quantile of R-hat of exchangeable draws: on
    2,000 fresh sets of another law (exponential, a continuous skewed one:
    ranks are all that count) it is exceeded about 1% of the time."""
    limit = draws.rhat_reference(4, 32)
    rng = np.random.default_rng(99)
    r = _rhat(rng.exponential(size=(2000, 4, 32)))
    n, q = len(r), draws.RHAT_ALPHA
    assert abs(np.sum(r > limit) - n * q) <= 5 * np.sqrt(n * q * (1 - q)) + 2
    assert draws.rhat_reference(4, 32) == limit  # fixed seed: the same number


@pytest.mark.parametrize("ties", [False, True])
def test_tie_breaking_keeps_the_order_of_distinct_ratios(ties):
    rng = np.random.default_rng(3)
    m = rng.integers(50, 60, size=(5, 4, 16)).astype(float)
    a = rng.integers(0, 3 if ties else 50, size=m.shape).astype(float)
    y = a / m
    z = draws.tie_broken(y, 1.0 / m.max() ** 2)
    flat_y, flat_z = y.ravel(), z.ravel()
    i, j = np.triu_indices(flat_y.size, 1)
    distinct = flat_y[i] != flat_y[j]
    assert np.all(np.sign(flat_y[i] - flat_y[j])[distinct] == np.sign(flat_z[i] - flat_z[j])[distinct])
    assert len(np.unique(z)) == z.size


def test_an_older_store_says_in_one_line_that_it_has_no_series():
    ds = xr.Dataset({"counts": (("replicate", "checkpoint", "location"), np.ones((2, 4, 3)))},
                    coords={"checkpoint": [1, 2, 3, 4]}, attrs={"game": "monopoly", "grid_axes": []})
    found = draws.series_summary(ds)
    assert found["labels"] == 0 and found["text"] == draws.NO_SERIES and "\n" not in found["text"]
    assert "format 7" in found["text"] and "--overwrite" in found["text"]


def test_a_real_store_gives_the_chains_memory_and_quantiles_with_their_mcse(box_store):
    """Shut the Box, 4 replicates x 64 equal batches: per label the
    integrated autocorrelation time and lag-1 autocorrelation (the games are
    independent: tau about 1, lag 1 under its bound on nearly every label),
    ESS beside its reference for 4 x 64; ``autocorr`` lags 0-5 (lag 0 is 1);
    ``quantiles``: the median of the batch means beside its MCSE, which is
    about the MCSE of the mean times sqrt(pi/2) (normal batch means)."""
    from boardsweep.pipeline.analysis import mixing

    found = box_store.boardsweep.diagnostics()
    mean = found["headlines"]["mean_rolls"]
    assert float(mean["acf1_limit"]) == pytest.approx(mixing.acf_limit(4, 64))
    assert (float(mean["ess_ref_low"]), float(mean["ess_ref_high"])) == mixing.ess_reference(4, 64)
    assert 0.6 < float(mean["tau"]) < 1.6 and float(mean["acf1"]) < float(mean["acf1_limit"])
    hist = found["headlines"]["rolls_distribution"]
    tested = hist["acf1"].notnull()
    assert int(tested.sum()) >= 5 and int(hist["acf1_high"].where(tested, 0).sum()) <= 1
    assert "autocorrelation time median" in found["text"] and "(independent draws: " in found["text"]
    acf = box_store.boardsweep.autocorr("mean_rolls", lags=5)
    assert acf.sizes["lag"] == 6 and np.allclose(acf.sel(lag=0), 1.0)
    assert float(acf.sel(lag=1)) == pytest.approx(float(mean["acf1"]))
    q = box_store.boardsweep.quantiles("mean_rolls", prob=0.5)
    assert q.attrs["note"] == draws.LUMPY_NOTE
    assert float(q["batch_counts"]) == pytest.approx(float(box_store["series_rolls_sum"].mean()))
    ratio = float(q["mcse"].sel(prob=0.5)) / float(mean["mcse"])
    assert 0.6 * np.sqrt(np.pi / 2) < ratio < 1.6 * np.sqrt(np.pi / 2), ratio


def test_autocorr_and_quantiles_refuse_bad_input_in_one_line(box_store):
    from pathlib import Path

    from boardsweep.pipeline.errors import NotASweep

    with pytest.raises(NotASweep, match="lags=0"):
        box_store.boardsweep.autocorr(lags=0)
    with pytest.raises(NotASweep, match="prob=1.5"):
        box_store.boardsweep.quantiles(prob=1.5)
    with pytest.raises(KeyError, match="no headline 'nope'"):
        box_store.boardsweep.autocorr("nope")
    from boardsweep.pipeline.store import open_sweep

    old = open_sweep(str(Path(__file__).resolve().parents[2] / "support" / "old_stores"
                         / "format5_hk_monopoly.zarr"))
    with pytest.raises(NotASweep) as err:
        old.boardsweep.autocorr()
    assert str(err.value) == draws.NO_SERIES
