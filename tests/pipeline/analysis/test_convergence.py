"""boardsweep.pipeline.analysis.convergence on small stores built by the real pipeline.

Every metric is recomputed here independently, with numpy/scipy, from the raw
zarr arrays (fill value -1, ``done`` mask), not through open_sweep.
"""

from __future__ import annotations

import numpy as np
import pytest
import zarr
from scipy import stats as st

from boardsweep.core.games import game_names, get_game
from boardsweep.pipeline.analysis import convergence as analysis
from boardsweep.pipeline.analysis import comparisons
from boardsweep.pipeline.analysis import dataset
from boardsweep.pipeline.analysis import decks
from boardsweep.pipeline.analysis import variance
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.plan.tasks import replicate_seed
from boardsweep.pipeline.store import open_sweep
from boardsweep.pipeline.spec.parse import parse_spec

from specs import spec_toml  # tests/support is on sys.path

MONO = spec_toml(
    "monopoly", name="mono", seed=11,
    params={"chance_deck": "standard", "tally": "per_landing", "jail_strategy": "long"},
    grid={"dice_sides": [4, 6], "deck_policy": ["independent", "shuffled_cycle"]},
    run={"replicates": 4, "games": 1, "players": 2, "turns": 5000}, checkpoints={"count": 8},
    tasks={"replicates_per_task": 2},
)

pytestmark = pytest.mark.skipif("monopoly" not in game_names(), reason="monopoly not registered")


@pytest.fixture(scope="module")
def mono(tmp_path_factory, cluster2):
    url = str(tmp_path_factory.mktemp("analysis") / "mono.zarr")
    assert run_sweep(parse_spec(MONO, "mono.toml"), url, scheduler=cluster2).complete
    return url


@pytest.fixture(scope="module")
def mono_partial(tmp_path_factory, cluster2):
    """The same sweep interrupted after 5 of its 8 tasks."""
    url = str(tmp_path_factory.mktemp("analysis") / "partial.zarr")
    report = run_sweep(parse_spec(MONO, "mono.toml"), url, scheduler=cluster2, max_tasks=5)
    assert not report.complete
    return url


def raw(url):
    """Raw arrays: frequencies (dice, deck, rep, cp, loc) with NaN where not done."""
    g = zarr.open_group(url, mode="r")
    counts = g["counts"][...].astype(float)
    done = g["done"][...]
    counts[~done] = np.nan
    assert np.all(counts[done] >= 0)
    freq = counts / counts.sum(-1, keepdims=True)
    return g, freq, done


def test_convergence_matches_hand_computation(mono):
    ds = open_sweep(mono)
    conv = analysis.convergence(ds).transpose("dice_sides", "deck_policy", "checkpoint", "location")
    g, freq, done = raw(mono)
    mean = freq.mean(axis=2)
    sd = freq.std(axis=2, ddof=1)
    np.testing.assert_allclose(conv["mean"].values, mean, rtol=1e-12)
    np.testing.assert_allclose(conv["sd"].values, sd, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(conv["stderr"].values, sd / 2.0, rtol=1e-10, atol=1e-15)
    assert conv.attrs["steps"] == "events"
    np.testing.assert_allclose(conv["steps"].values, g["events"][...].mean(axis=2))
    # exact: finite-horizon expected counts, normalised; NaN for shuffled decks
    ec = g["exact_counts"][...]
    exact = ec / ec.sum(-1, keepdims=True)
    err = mean - exact
    np.testing.assert_allclose(conv["error"].values, err, rtol=1e-9, atol=1e-15)
    counts = g["counts"][...].astype(float).mean(axis=2)  # every replicate is done here
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where((sd > 0) & (counts >= dataset.MIN_COUNT), err / (sd / 2.0), np.nan)
    np.testing.assert_allclose(conv["z"].values, z, rtol=1e-9)
    assert np.isfinite(z[:, 0, -1]).sum() >= 2 * 39  # independent decks, last checkpoint: nearly every label judged
    np.testing.assert_allclose(conv["max_abs_error"].values, np.abs(err).max(-1), rtol=1e-9)
    np.testing.assert_allclose(conv["total_variation"].values, 0.5 * np.abs(err).sum(-1), rtol=1e-9)
    rms = np.sqrt(((freq - exact[:, :, None]) ** 2).mean(axis=(2, 4)))
    np.testing.assert_allclose(conv["rms_error"].values, rms, rtol=1e-9)
    assert np.isnan(conv["max_abs_error"].sel(deck_policy="shuffled_cycle")).all()


def test_convergence_rate_is_the_loglog_fit_on_increments(mono):
    """The slope is fitted on the increments between checkpoints (batches),
    recomputed here from the raw counts: batch frequency against the
    increments of the finite-horizon exact counts, or across-replicate sd."""
    ds = open_sweep(mono)
    conv = analysis.convergence(ds)
    rate = analysis.convergence_rate(conv)
    g, _, _ = raw(mono)
    counts = g["counts"][...].astype(float)  # (dice, deck, rep, cp, loc)
    inc = np.concatenate([counts[:, :, :, :1], np.diff(counts, axis=3)], axis=3)
    freq = inc / inc.sum(-1, keepdims=True)
    ec = g["exact_counts"][...]
    einc = np.concatenate([ec[:, :, :1], np.diff(ec, axis=2)], axis=2)
    exact = einc / einc.sum(-1, keepdims=True)
    ev = g["events"][...].astype(float)
    steps_all = np.concatenate([ev[..., :1], np.diff(ev, axis=-1)], axis=-1).mean(axis=2)
    for i, dice in enumerate((4, 6)):
        for j, (deck, basis) in enumerate((("independent", "rms_error"), ("shuffled_cycle", "sd"))):
            steps = steps_all[i, j]
            y = (np.sqrt(((freq[i, j] - exact[i, j][None]) ** 2).mean(axis=(0, 2))) if basis == "rms_error"
                 else np.sqrt(freq[i, j].var(axis=0, ddof=1).mean(-1)))
            keep = np.log(steps) >= np.log(steps).max() - 0.5 * (np.log(steps).max() - np.log(steps).min())
            fit = st.linregress(np.log(steps[keep]), np.log(y[keep]))
            r = rate.sel(dice_sides=dice, deck_policy=deck)
            assert str(r["basis"].values) == basis
            assert float(r["slope"]) == pytest.approx(fit.slope, rel=1e-9)
            assert float(r["slope_stderr"]) == pytest.approx(fit.stderr, rel=1e-9)
            half = st.t.ppf(0.975, keep.sum() - 2) * fit.stderr
            assert float(r["slope_low"]) == pytest.approx(fit.slope - half, rel=1e-9)


def test_variance_ratio_matches_hand_computation(mono):
    ds = open_sweep(mono)
    vr = variance.variance_ratio(ds)
    assert vr.attrs["per"] == "rolls"
    vr = vr.transpose("dice_sides", "deck_policy", "checkpoint", "location")
    g, freq, done = raw(mono)
    game = get_game("monopoly")
    rolls = g["rolls"][...].astype(float)
    for i, dice in enumerate((4, 6)):
        params = game.resolve_params({"dice_sides": dice, "chance_deck": "standard",
                                      "tally": "per_landing", "jail_strategy": "long"})
        sigma2 = game.extras["asymptotic_variance"](params)["variance"]
        predicted = (sigma2[None, None, :] / rolls[i, 0][:, :, None]).mean(0)
        measured = freq[i, 0].var(axis=0, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            expected = np.where(predicted > 0, measured / predicted, np.nan)
        np.testing.assert_allclose(vr["ratio"].values[i, 0], expected, rtol=1e-9)
        # its 95% interval: the measured variance has 4 - 1 degrees of freedom
        np.testing.assert_allclose(vr["ratio_low"].values[i, 0], expected * 3 / st.chi2.ppf(0.975, 3), rtol=1e-9)
        np.testing.assert_allclose(vr["ratio_high"].values[i, 0], expected * 3 / st.chi2.ppf(0.025, 3), rtol=1e-9)
    assert np.isnan(vr["ratio"].sel(deck_policy="shuffled_cycle")).all()


def test_batch_means_matches_hand_computation(mono):
    ds = open_sweep(mono)
    bm = variance.batch_means(ds)
    g, _, _ = raw(mono)
    counts = g["counts"][...].astype(float)[1, 0, 2]  # dice 6, independent, replicate 2
    c = np.diff(counts, axis=0, prepend=0)
    e = c.sum(1)
    n = e.sum()
    R = c.sum(0) / n
    s2 = ((c - R * e[:, None]) ** 2).sum(0) / (n - (e**2).sum() / n)
    got = bm["variance"].sel(dice_sides=6, deck_policy="independent", replicate=2).values
    np.testing.assert_allclose(got, s2 / n, rtol=1e-9)
    assert float(bm["batches_effective"].sel(dice_sides=6, deck_policy="independent", replicate=2)) == \
        pytest.approx(n**2 / (e**2).sum())


def test_shuffle_decomposition_matches_hand_computation(mono):
    ds = open_sweep(mono)
    dec = decks.shuffle_decomposition(ds)
    assert dec is not None
    game = get_game("monopoly")
    _, freq, _ = raw(mono)
    params = game.resolve_params({"dice_sides": 4, "deck_policy": "shuffled_cycle",
                                  "chance_deck": "standard", "tally": "per_landing",
                                  "jail_strategy": "long"})
    shape = {"games": 1, "players": 2, "turns": 5000}
    exact = np.array([game.extras["replicate_exact"](params, replicate_seed(11, params, r), shape)
                      ["exact_frequency"] for r in range(4)])
    x = freq[0, 1, :, -1]
    d = dec.sel(dice_sides=4, deck_policy="shuffled_cycle")
    np.testing.assert_allclose(d["replicate_exact"].transpose("replicate", "location").values, exact)
    np.testing.assert_allclose(d["total"].values, x.var(0, ddof=1), rtol=1e-9)
    np.testing.assert_allclose(d["between"].values, exact.var(0, ddof=1), rtol=1e-9, atol=1e-30)
    np.testing.assert_allclose(d["sampling"].values, ((x - exact) ** 2).mean(0), rtol=1e-9)
    assert exact.var(0).max() > 0  # four different shuffles
    indep = dec.sel(deck_policy="independent")
    assert float(abs(indep["between"]).max()) < 1e-25  # one exact answer for every replicate


def test_compare_axis_is_welch_with_holm(mono):
    ds = open_sweep(mono)
    res = comparisons.compare_axis(ds, "deck_policy", "independent", "shuffled_cycle")
    _, freq, _ = raw(mono)
    a, b = freq[1, 0, :, -1], freq[1, 1, :, -1]  # dice 6
    ok = a.std(0) > 0
    ref = st.ttest_ind(a[:, ok], b[:, ok], axis=0, equal_var=False)
    r = res.sel(dice_sides=6)
    np.testing.assert_allclose(r["t"].values[ok], ref.statistic, rtol=1e-9)
    np.testing.assert_allclose(r["p"].values[ok], ref.pvalue, rtol=1e-8)
    p = ref.pvalue
    order = np.argsort(p)
    m = p.size
    adj = np.maximum.accumulate(np.minimum(1, (m - np.arange(m)) * p[order]))
    holm = np.empty(m)
    holm[order] = adj
    np.testing.assert_allclose(r["p_holm"].values[ok], holm, rtol=1e-9)
    assert set(comparisons.axis_comparisons(ds)) == {("dice_sides", 4, 6),
                                                  ("deck_policy", "independent", "shuffled_cycle")}


def test_missing_cells_are_skipped_not_zero(mono_partial):
    ds = open_sweep(mono_partial)
    conv = analysis.convergence(ds).transpose("dice_sides", "deck_policy", "checkpoint", "location")
    _, freq, done = raw(mono_partial)
    assert 0 < done.sum() < done.size
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning) if (~done.any(-1)).any() else _null():
        mean = np.nanmean(freq, axis=2)
    np.testing.assert_allclose(conv["mean"].values, mean, rtol=1e-12)
    n = done.sum(-1)
    np.testing.assert_array_equal(conv["replicates"].isel(checkpoint=0).values, n)
    assert np.isnan(conv["mean"].values[n == 0]).all()
    rate = analysis.convergence_rate(conv)
    assert np.isnan(rate["slope"].values[n < 2]).all()
    vr = variance.variance_ratio(ds)
    assert np.isnan(vr["ratio"].values[n < 2]).all()


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def test_toy_game_without_theory(tmp_path, cluster2, toy_spec_text):
    url = str(tmp_path / "toy.zarr")
    assert run_sweep(parse_spec(toy_spec_text, "toy.toml"), url, scheduler=cluster2).complete
    ds = open_sweep(url)
    assert variance.theoretical_variance(ds) is None and variance.variance_ratio(ds) is None
    conv = analysis.convergence(ds)
    rate = analysis.convergence_rate(conv)
    assert (rate["basis"].sel(rule="plain") == "rms_error").all()
    assert (rate["basis"].sel(rule="sticky") == "sd").all()  # no exact answer
    assert decks.shuffle_decomposition(ds) is None
