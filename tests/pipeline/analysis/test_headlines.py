"""The verdict: correct simulators agree, slightly biased ones are flagged.

Real sweeps on a real Dask cluster, every game (the plugin included), fixed
seeds.  The verdict's family-wise false-alarm rate is 1%, so each "agree"
assertion below could fail by chance with probability at most 1% (the seeds
are fixed: it either holds or it does not).  The biased simulators
(:mod:`biased_games`) differ from the real ones by 1% on one square's
frequency or 0.5-0.6% on a mean; their runs are sized so that the bias is
about 8 standard errors.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st
from scipy.optimize import brentq

from boardsweep.core import games
from boardsweep.core.games import game_names
from boardsweep.pipeline.analysis import detection, headlines
from boardsweep.pipeline.analysis.clt import TEST_NAMES
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.store import load_sweep
from boardsweep.pipeline.spec.parse import parse_spec

from specs import spec_toml  # tests/support is on sys.path

pytestmark = pytest.mark.skipif("chutes_ladders" not in game_names(),
                                reason="the example plugin game is not installed")

for _name in ("monopoly", "hk_monopoly", "shut_the_box", "chutes_ladders"):
    games.register(f"biased_{_name}", f"biased_games:{_name.upper()}")

#: Small correct sweeps with R = 4 replicates, one per game.
SMALL = {
    "monopoly": dict(params={"tally": "per_roll"}, grid={"dice_sides": [4, 6], "jail_strategy": ["short", "long"]},
                     run={"replicates": 4, "games": 2, "players": 1, "turns": 20000}),
    "shut_the_box": dict(grid={"dice_sides": [2, 3, 4], "policy": ["optimal", "greedy", "random"]},
                         run={"replicates": 4, "games": 2000}),
    # nobody buys and Chance only pays, so nobody retires: the landing reference holds (see the
    # money-game test below)
    "hk_monopoly": dict(params={"buy_policy": "never", "chance": "uniform:10:200:10"}, grid={"players": [2, 4], "jail_strategy": ["short", "long"]},
                        run={"replicates": 4, "games": 200}),
    "chutes_ladders": dict(grid={"sides": [4, 6], "players": [1, 2]}, run={"replicates": 4, "games": 2000}),
}

#: One grid point per game, sized so that the stated bias is ~8 standard errors.
BIASED = {
    "monopoly": dict(params={"tally": "per_roll", "dice_sides": 6}, grid={"jail_strategy": ["short"]},
                     run={"replicates": 16, "games": 1, "players": 1, "turns": 4_000_000}),
    "hk_monopoly": dict(params={"buy_policy": "never", "chance": "uniform:10:200:10"}, grid={"players": [4]},
                        run={"replicates": 16, "games": 2000}),
    "shut_the_box": dict(params={"policy": "optimal"}, grid={"dice_sides": [3]},
                         run={"replicates": 4, "games": 200_000}),
    "chutes_ladders": dict(grid={"sides": [6]}, run={"replicates": 4, "games": 200_000}),
}


def run(tmp_path, cluster, game: str, shape: dict, seed: int) -> str:
    url = str(tmp_path / f"{game}.zarr")
    block = min(4, shape["run"]["replicates"])
    text = spec_toml(game, name=game, seed=seed, checkpoints={"count": 4}, tasks={"replicates_per_task": block},
                     **shape)
    assert run_sweep(parse_spec(text, f"{game}.toml"), url, scheduler=cluster).complete
    return url


@pytest.mark.parametrize("game", sorted(SMALL))
def test_correct_simulators_agree_with_four_replicates(tmp_path, cluster2, game):
    ds = load_sweep(run(tmp_path, cluster2, game, SMALL[game], seed=22), check=False)
    v = headlines.verdict(ds)
    points = int(np.prod([len(x) for x in SMALL[game]["grid"].values()]))
    assert v["tested_points"] == points and v["tests"] >= points
    assert v["flagged"] == [] and v["agree"] == points, v["text"]
    assert v["text"].startswith(f"AGREE at family-wise 1% (Holm): {points} of {points} points with an exact answer")
    for name, est in headlines.estimates(ds).items():  # the store says how each headline's s.e. is made
        numerator = next(h.numerator for h in games.headlines_of(games.get_game(game)) if h.name == name)
        named = set(v["p_holm"].loc[v["p_holm"]["headline"] == name, "test"])  # one name per test everywhere
        kind = est.attrs["test_kind"]
        # Hall's test where a point's histogram holds every game, its t test (named t) where not
        allowed = {"chi2"} if "gof_p" in est else {"z", "t"} if kind == "z" else {"skew_t", "t"} if kind == "skew_t" \
            else {kind}
        assert named <= allowed, (name, named)
        if kind == "skew_t":
            assert (int((v["p_holm"]["test"] == "skew_t").sum()) ==
                    int((np.isfinite(est["skew_a"]) & np.isfinite(est["p"])).sum())), name
        assert named <= set(TEST_NAMES) and (kind != "binomial" or est.attrs["interval_kind"] == "share")
        assert ds[numerator].attrs["headline"] == name
        dof = "games - 1" if est.attrs["basis"] == "units" else "replicates - 1"
        assert ds[numerator].attrs["standard_error"].endswith(f"df = {dof}")
    if game == "hk_monopoly":  # the rules' document counts money in Hong Kong dollars
        assert ds["money"].attrs["currency"] == "HKD" and "units" not in ds["money"].attrs and "units" not in ds["wins"].attrs
    # the verdict says what it could have missed: per t-tested headline, the bias seen with 80% power
    power = v["power"]
    assert power["tests"] == v["tests"] and power["level"] == pytest.approx(0.01 / v["tests"])
    assert power["text"].startswith("power: 80% to see a bias of ")
    for name, found in power["headlines"].items():
        assert 0 < found["median"] <= found["largest"] and f" in {name}" in power["text"]
    t_rows = v["p_holm"][v["p_holm"]["test"].isin(list(detection.SE_TESTS))]
    exact = t_rows["se"] == 0  # a share every game had (one player wins): the exact binomial test, no t power
    assert (t_rows.loc[exact, "p"] == 1.0).all() and t_rows.loc[exact, "detectable"].isna().all()
    t_rows = t_rows[~exact]
    assert np.isfinite(t_rows["detectable"]).all() and (t_rows["detectable"] > 2 * t_rows["se"]).all()
    if (t_rows["df"] == 3).any():  # four replicates: warned
        assert power["few_replicates"] == 4 and "; weak: 4 replicates" in power["text"]


def test_points_without_a_standard_error_are_said_so_not_without_an_exact_answer(tmp_path, cluster2):
    """One replicate of one game has an exact answer but no standard error: the verdict says
    that (it said "no grid point has an exact answer"); a point beyond the exact solver is
    still said to have none."""
    shape = dict(grid={"dice_sides": [2, 3, 9], "policy": ["greedy"]}, run={"replicates": 1, "games": 1})
    v = headlines.verdict(load_sweep(run(tmp_path, cluster2, "shut_the_box", shape, seed=3), check=False))
    assert v["tested_points"] == 0
    assert v["text"].startswith("nothing to test: 2 of 3 points have an exact answer but no standard error"), v["text"]
    shape["run"] = {"replicates": 2, "games": 50}
    v = headlines.verdict(load_sweep(run(tmp_path / "two", cluster2, "shut_the_box", shape, seed=3), check=False))
    assert v["tested_points"] == 2 and "no standard error" not in v["text"], v["text"]
    assert v["text"].endswith("; 1 point not tested (no exact answer applies)"), v["text"]


def test_the_stated_power_is_what_a_planted_bias_meets(tmp_path, cluster2):
    """The detectable bias the verdict states for a Monopoly frequency tested
    against its exact CLT s.e., planted in synthetic estimates with that
    spread (fixed seed), is flagged by the same test at least 80% of the time."""
    from boardsweep.core.stats import t_test

    ds = load_sweep(run(tmp_path, cluster2, "monopoly", SMALL["monopoly"], seed=22), check=False)
    v = headlines.verdict(ds)
    rows = v["p_holm"][v["p_holm"]["test"].isin(["t", "z"])]
    # most labels: the z test on the exact CLT s.e. (known: df = inf), named so (it read "t" with df inf)
    assert (rows["test"] == "z").mean() > 0.5 and (np.isinf(rows["df"]) == (rows["test"] == "z")).all()
    row = rows[rows["test"] == "z"].iloc[0]
    level, bias, se = v["power"]["level"], row["detectable"], row["se"]
    sweeps = 3000
    x = np.random.default_rng(3).normal(bias, se, sweeps)
    _, p = t_test(x, se, np.inf, 0.0)
    lo = st.binom.ppf(0.0005, sweeps, 0.8)
    assert lo <= (p < level).sum()  # at least 80% where the store's s.e. is the truth (more: it allows for
    # the s.e. being estimated, tests/pipeline/analysis/test_detection.py plants it where it is)


def test_money_game_landings_are_tested_only_where_nobody_retires(tmp_path, cluster2):
    """hk_monopoly's landing reference (the movement chain over every round)
    assumes nobody retires; with ``buy_policy=always`` players do, and a
    correct simulator at 10^6 games a point reads "disagree" against it.
    Such points are not tested (the verdict says why); where nobody buys
    and Chance only pays, nobody retires, and the same budget agrees.  (With
    the default Chance, losses of up to HKD 300, 14 in 10^6 never-buy games
    still end in a retirement: the point is then not tested either.)"""
    from boardsweep.core import stats

    losing, paying = "uniform:-300:200:10", "uniform:10:200:10"
    shape = dict(grid={"buy_policy": ["always", "never"], "chance": [losing, paying]}, params={"players": 2},
                 run={"replicates": 64, "games": 15_625})
    ds = load_sweep(run(tmp_path, cluster2, "hk_monopoly", shape, seed=35), check=False)
    assert (ds["games"].isel(checkpoint=-1).sum("replicate") == 10 ** 6).all()
    retired = ds["retired"].isel(checkpoint=-1).sum(["replicate", "seat"]).transpose("buy_policy", "chance")
    assert (retired.values > 0).tolist() == [[True, True], [True, False]]
    v = headlines.verdict(ds)
    assert v["flagged"] == [] and v["point_agree"] == [None, None, None, True], v["text"]
    assert "landing_frequency is not tested where retired > 0" in v["text"] and "(3 points)" in v["text"]
    # what it read before: the stored reference against the estimates where players buy
    at = {"buy_policy": "always", "chance": losing}
    est = headlines.estimates(ds)["landing_frequency"].sel(at)
    _, p = stats.t_test(est["estimate"].values, est["se"].values, est["df"].values,
                        ds["exact_horizon_frequency"].sel(at).values)
    assert np.nanmin(stats.holm(p)) < 1e-4  # a false "disagree", now not read


@pytest.mark.parametrize("game, headline, label", [
    ("monopoly", "frequency", "JAIL"),
    ("hk_monopoly", "landing_frequency", None),
    ("shut_the_box", "mean_rolls", ""),
    ("chutes_ladders", "mean_rounds", ""),
])
def test_a_small_bias_is_flagged(tmp_path, cluster2, game, headline, label):
    biased = load_sweep(run(tmp_path, cluster2, f"biased_{game}", BIASED[game], seed=23), check=False)
    v = headlines.verdict(biased)
    assert v["flagged"] and v["agree"] == 0, v["text"]
    assert v["text"].startswith("DISAGREE at family-wise 1% (Holm)")
    table = v["p_holm"]
    hit = table[(table["headline"] == headline) & (table["p_holm"] < v["alpha"])]
    if label is not None:
        hit = hit[hit["label"] == label]
    assert len(hit), table.sort_values("p").head()
    # the same run of the real simulator agrees: the bias, not the run size, is what is seen
    real = load_sweep(run(tmp_path, cluster2, game, BIASED[game], seed=23), check=False)
    assert headlines.verdict(real)["flagged"] == []


@pytest.fixture(scope="module")
def stb(tmp_path_factory, cluster2):
    url = run(tmp_path_factory.mktemp("stb"), cluster2, "shut_the_box",
              dict(grid={"dice_sides": [2, 3], "policy": ["optimal", "random"]},
                   run={"replicates": 4, "games": 500}), seed=5)
    return load_sweep(url, check=False)


def test_estimates_are_ratios_of_sums_with_pooled_per_game_errors(stb):
    est = headlines.estimates(stb)["mean_rolls"]
    assert est.attrs["basis"] == "units" and est.attrs["level"] == 0.95
    p = {"dice_sides": 3, "policy": "random"}
    total = stb["rolls_sum"].isel(checkpoint=-1).sel(p).values
    squares = stb["rolls_sq_sum"].isel(checkpoint=-1).sel(p).values
    n = 4 * 500
    mean = total.sum() / n
    sd = np.sqrt((squares.sum() - total.sum() ** 2 / n) / (n - 1))
    one = est.sel(p)
    assert np.isclose(one["estimate"], mean) and np.isclose(one["sd"], sd)
    assert np.isclose(one["se"], sd / np.sqrt(n)) and one["df"] == n - 1
    # every game's rolls are in the histogram: Hall's skewness-corrected t interval, solved here by root finding
    hist = stb["hist"].isel(checkpoint=-1).sel(p).sum("replicate")
    games = np.repeat(stb[hist.dims[-1]].values, hist.values.astype(np.int64))
    assert games.sum() == total.sum() and (games ** 2).sum() == squares.sum()
    a = st.skew(games, bias=False) / (3 * np.sqrt(n))
    # at the s.e.'s own df from the games' kurtosis (se_df), not n - 1
    se_df = min(n - 1, 2 / (2 / (n - 1) + max(st.kurtosis(games, bias=False), 0) / n))
    assert float(one["se_df"]) == pytest.approx(se_df, rel=1e-9) and se_df < n - 1
    q = st.t.ppf(0.975, se_df)
    ends = [float(mean - sd / np.sqrt(n) * brentq(lambda t, u=u: t + a * t * t + a * a * t ** 3 / 3 + a / 2 - u, -50, 50))
            for u in (q, -q)]
    assert np.allclose([one["low"], one["high"]], ends, rtol=1e-9)
    assert one["high"] - one["estimate"] > q * sd / np.sqrt(n) > one["estimate"] - one["low"]  # skewed right
    assert est.attrs["interval_kind"] == "skew_t"
    exact = float(stb["exact_expected_rolls"].sel(p))
    assert np.isclose(one["z"], (mean - exact) / (sd / np.sqrt(n)))
    # its test is the interval's: Hall's g(z) against t(se_df), by hand
    z = float(one["z"])
    g = z + a * z * z + a * a * z ** 3 / 3 + a / 2
    assert float(one["p"]) == pytest.approx(2 * st.t.sf(abs(g), se_df), rel=1e-9)
    assert float(one["test_df"]) == pytest.approx(se_df, rel=1e-12)


def test_histogram_is_tested_by_chi_square_on_merged_bins(stb):
    from boardsweep.core.stats import chi2_gof

    est = headlines.estimates(stb)["rolls_distribution"]
    p = {"dice_sides": 2, "policy": "optimal"}
    counts = stb["hist"].isel(checkpoint=-1).sel(p).sum("replicate").values
    stat, df, pv = chi2_gof(counts, stb["exact_pmf"].sel(p).values)
    assert np.isclose(est["gof_chi2"].sel(p), stat) and est["gof_df"].sel(p) == df
    assert 2 <= df < 40  # 1024 bins, most of them empty, merged to expected counts >= 5
    tests = headlines.tests(stb)
    # one mean (Hall's test: the histogram holds every game), one histogram per point
    assert set(tests["test"]) == {"skew_t", "chi2"} and len(tests) == 2 * 4


def test_summary_table_has_one_row_per_point_headline_and_label(stb):
    table = headlines.summary(stb)
    assert list(table.columns[:2]) == ["dice_sides", "policy"]
    for column in ("estimate", "se", "low", "high", "df", "exact", "z", "p", "sd", "level", "se_basis", "replicates"):
        assert column in table.columns
    means = table[table["headline"] == "mean_rolls"]
    assert len(means) == 4 and (means["low"] < means["estimate"]).all() and (means["estimate"] < means["high"]).all()
    assert len(table[table["headline"] == "rolls_distribution"]) == 4 * stb.sizes["rolls"]


def test_seats_that_do_not_play_are_left_out(tmp_path, cluster2):
    url = run(tmp_path, cluster2, "chutes_ladders", dict(grid={"players": [1, 3]}, run={"replicates": 4, "games": 300}),
              seed=9)
    table = headlines.summary(load_sweep(url, check=False))
    shares = table[table["headline"] == "win_share"]
    assert sorted(shares.groupby("players").size().items()) == [(1, 1), (3, 3)]
    assert np.isclose(shares[shares["players"] == 1]["estimate"], 1.0).all()


def test_a_share_every_game_won_has_an_exact_interval_and_is_not_flagged(tmp_path, cluster2):
    """One player wins every game: its share's interval is the exact binomial
    [0.025^(1/N), 1], never [1, 1]; its exact value 0.9999999999999973 reads as
    1 within a few ulps, so the test is made (exact binomial, p = 1) and agrees.
    The other shares (two players) keep an exact interval around the estimate."""
    from boardsweep.core.stats import same_value

    url = run(tmp_path, cluster2, "chutes_ladders", dict(grid={"players": [1, 2]}, run={"replicates": 4, "games": 300}),
              seed=35)
    ds = load_sweep(url, check=False)
    est = headlines.estimates(ds)["win_share"]
    assert est.attrs["interval"].startswith("exact binomial")
    one = est.sel(players=1).isel(seat=0)
    games = float(one["units"])
    assert float(one["estimate"]) == 1.0 and float(one["high"]) == 1.0
    assert float(one["low"]) == pytest.approx(0.025 ** (1 / games), rel=1e-9) and float(one["low"]) < 1.0
    assert float(one["exact"]) < 1.0 and same_value(float(one["exact"]), 1.0)
    two = est.sel(players=2).isel(seat=[0, 1])
    assert ((two["low"] < two["estimate"]) & (two["estimate"] < two["high"])).all()
    v = headlines.verdict(ds)
    mine = v["p_holm"][(v["p_holm"]["point"] == 0) & (v["p_holm"]["headline"] == "win_share")]
    assert list(mine["p"]) == [1.0] and mine["detectable"].isna().all()
    assert v["flagged"] == [] and v["agree"] == 2, v["text"]


def test_replicate_basis_uses_t_with_r_minus_1_df(tmp_path, cluster2):
    url = run(tmp_path, cluster2, "monopoly", dict(params={"tally": "per_roll"}, grid={"dice_sides": [6]},
                                                   run={"replicates": 4, "games": 1, "players": 1, "turns": 5000}),
              seed=3)
    ds = load_sweep(url, check=False)
    est = headlines.estimates(ds)["frequency"]
    assert est.attrs["basis"] == "replicates"
    assert (est["df"] == 3).all()
    counts = ds["counts"].isel(checkpoint=-1).sel(dice_sides=6).values
    events = ds["events"].isel(checkpoint=-1).sel(dice_sides=6).values
    jail = list(ds["location"].values).index("JAIL")
    r = counts[:, jail].sum() / events.sum()
    se = np.sqrt(((counts[:, jail] - r * events) ** 2).sum() / 12) / events.mean()
    one = est.sel(dice_sides=6, location="JAIL")
    assert np.isclose(one["estimate"], r) and np.isclose(one["se"], se)
    # its test: z on the exact CLT s.e., sqrt(sigma^2 / rolls) over the 4 replicates (known: df = inf)
    from boardsweep.core.games import get_game
    from boardsweep.pipeline.analysis.clt import TEST_TEXT

    variance = get_game("monopoly").extras["asymptotic_variance"](
        {"tally": "per_roll", "dice_sides": 6, "deck_policy": "independent", "jail_strategy": "short",
         "chance_deck": "standard"})["variance"]
    rolls = ds["rolls"].isel(checkpoint=-1).sel(dice_sides=6).values.sum()
    assert est.attrs["test"] == TEST_TEXT["z"] and np.isinf(one["test_df"])
    assert np.isclose(one["test_se"], np.sqrt(variance[jail] / rolls), rtol=1e-12)
    assert np.isclose(one["z"], (one["estimate"] - one["exact"]) / one["test_se"], rtol=1e-12)
    # and its interval is the z test's own (one procedure per row): estimate -+ z(0.975) se_CLT
    assert np.isclose(one["high"] - one["estimate"], st.norm.ppf(0.975) * one["test_se"], rtol=1e-9)
    assert est.attrs["interval_kind"] in ("z", "mixed_z") and est.attrs["interval_z_rows"] > 0
    assert headlines.verdict(ds)["test_of"] == {"frequency": TEST_TEXT["z"]}


def test_query_summary_cli_prints_the_table_and_the_verdict(tmp_path, cluster2, capsys):
    import io
    import json

    import pandas as pd

    from boardsweep.pipeline.cli.commands import main

    url = run(tmp_path, cluster2, "shut_the_box", dict(grid={"dice_sides": [2, 3]},
                                                       run={"replicates": 4, "games": 400}), seed=8)
    capsys.readouterr()
    main(["query", url, "--summary", "--format", "csv"])
    text = capsys.readouterr().out
    table = pd.read_csv(io.StringIO(text))
    means = table[table["headline"] == "mean_rolls"]
    assert list(means["dice_sides"]) == [2, 3] and (means["se_basis"] == "units").all()
    bins = table[table["headline"] == "rolls_distribution"]["label"]
    assert list(bins[:3]) == [0, 1, 2] and ",rolls_distribution,7," in text  # histogram bins are numbers
    main(["query", url, "--summary", "--format", "json"])
    found = json.loads(capsys.readouterr().out)
    assert found["verdict"]["alpha"] == 0.01 and found["verdict"]["points"] == 2 and found["rows"]
    assert set(found["verdict"]["power"]["headlines"]) == {"mean_rolls"}  # the chi-square has no bias in one unit
    labels = {r["headline"]: r["label"] for r in found["rows"]}
    assert labels["mean_rolls"] is None and labels["rolls_distribution"] == 1023
    main(["query", url, "--format", "json"])
    rows = json.loads(capsys.readouterr().out)
    assert all(isinstance(r["rolls"], int) for r in rows)
    assert [r["rolls"] for r in rows if r["overflow"]] == [1023, 1023]
    main(["query", url, "--format", "csv"])
    rows = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert rows["rolls"].dtype.kind == "i" and rows["overflow"].sum() == 2
    main(["query", url, "--summary"])
    text = " ".join(capsys.readouterr().out.split())  # as read, not as wrapped
    assert "mean_rolls ± 95%" in text and "95% skew-corrected t interval" in text and "verdict: " in text
    assert "family-wise 1%" in text and "Holm-adjusted p: " in text
    assert "power: 80% to see a bias of " in text and " in mean_rolls (weakest: " in text \
        and "Holm's 1%/4, over the estimated s.e.'s spread" in text
    assert "rolls_distribution: " in text and "chi2 / df" in text
    main(["query", url, "--summary", "--all"])
    text = capsys.readouterr().out
    assert "power: 80% to see a bias of " in text and "before the Holm adjustment" in " ".join(text.split())
    assert "headline answers" in text and "estimate" in text and " ± " in text and "-+" not in text


def test_tied_replicates_are_said_not_testable_not_dropped_unsaid(tmp_path, cluster2):
    """Two Monopoly replicates of 500 turns (about 12 counts a label, too few
    for the CLT test: the t test across replicates): labels whose two counts
    are equal have a spread of exactly 0; the verdict counts them as not
    testable at this size, says so, and never reads them as a huge z."""
    shape = dict(params={"tally": "per_turn"}, grid={"dice_sides": [6], "jail_strategy": ["short", "long"]},
                 run={"replicates": 2, "games": 1, "players": 1, "turns": 500})
    ds = load_sweep(run(tmp_path, cluster2, "monopoly", shape, seed=61), check=False)
    v = headlines.verdict(ds)
    est = headlines.estimates(ds)["frequency"]
    tied = (est["se"] == 0) & (est["replicates"] == 2) & (est["units"] / 2 * est["exact"] >= 10)
    assert v["untestable"] >= 1 and v["untestable"] == est.attrs["untestable"], v["text"]
    assert f"; {v['untestable']} label{'s' if v['untestable'] > 1 else ''} not testable at this size" in v["text"]
    assert int(tied.sum()) >= 1 and np.isnan(est["z"].where(est["se"] == 0)).all()
    assert v["p_holm"]["statistic"].abs().max() < 1e4


def test_a_point_whose_histogram_misses_games_keeps_the_t_interval(stb):
    """The skewness correction reads every game from the histogram only where
    its sums equal the stored ones, in integers: a game moved to another bin
    at one point (as an overflow bin would) leaves that point's t interval."""
    ds = stb.copy(deep=True)
    p = {"dice_sides": 2, "policy": "optimal"}
    hist = ds["hist"].sel(p).isel(replicate=0, checkpoint=-1)
    j = int(np.flatnonzero(hist.values > 0)[0])
    moved = ds["hist"].values.copy()
    at = [list(ds[d].values).index(p[d]) if d in p else slice(None) for d in ds["hist"].dims]
    at[ds["hist"].dims.index("replicate")] = 0
    at[ds["hist"].dims.index("checkpoint")] = ds.sizes["checkpoint"] - 1
    at[-1] = j
    moved[tuple(at)] -= 1
    at[-1] = j + 1
    moved[tuple(at)] += 1
    ds["hist"].values = moved
    est = headlines.estimates(ds)["mean_rolls"]
    one = est.sel(p)
    q = st.t.ppf(0.975, float(one["df"]))
    assert np.allclose([one["low"], one["high"]], [one["estimate"] - q * one["se"], one["estimate"] + q * one["se"]],
                       rtol=1e-12)
    assert one["se_df"] == one["df"]
    other = est.sel(dice_sides=3, policy="optimal")  # every game still in its histogram: corrected
    assert other["high"] - other["estimate"] > other["estimate"] - other["low"]


def test_the_printed_bias_of_a_skewed_mean_reads_the_kurtosis_of_its_games(stb):
    """The verdict's power line for mean rolls: the weakest test's bias is
    Hall's test's own (``skew.hall_detectable_bias`` at the test's df, se_df
    from the games' kurtosis, below ``df``, and its ``a``), larger than the t
    test's with N - 1 df; the weak side (a reference above these right-skewed
    means) sets it; the verdict's table keeps its columns."""
    from boardsweep.core.power import estimated_detectable_bias
    from boardsweep.pipeline.analysis.dataset import grid_points
    from boardsweep.pipeline.analysis.skew import hall_detectable_bias, hall_power

    found = headlines.estimates(stb)
    v = headlines.verdict(stb, found=found)
    est = found["mean_rolls"]
    assert (est["se_df"] < est["df"]).all() and (est["se_df"] > 1).all()
    rows = v["p_holm"][v["p_holm"]["headline"] == "mean_rolls"]
    assert list(v["p_holm"].columns) == [*headlines.TEST_COLUMNS, "p_holm", "detectable"]
    level = 0.01 / v["tests"]
    flat = est["se_df"].transpose("dice_sides", "policy").values.ravel()[rows["point"].to_numpy()]
    a = est["skew_a"].transpose("dice_sides", "policy").values.ravel()[rows["point"].to_numpy()]
    hist = stb["hist"].isel(checkpoint=-1).sel(list(grid_points(stb))[int(rows["point"].iloc[0])]).sum("replicate")
    games = np.repeat(stb[hist.dims[-1]].values, hist.values.astype(np.int64))
    assert a[0] == pytest.approx(st.skew(games, bias=False) / (3 * np.sqrt(games.size)), rel=1e-9)  # G1 / (3 sqrt N)
    want = hall_detectable_bias(rows["se"].to_numpy(), flat, a, level)
    np.testing.assert_allclose(rows["detectable"].to_numpy(), want, rtol=1e-12)
    assert v["power"]["headlines"]["mean_rolls"]["largest"] == pytest.approx(want.max(), rel=1e-12)
    np.testing.assert_allclose(rows["df"].to_numpy(), flat, rtol=1e-12)  # Hall's test is at se_df
    up, down = hall_power(want / rows["se"].to_numpy(), flat, a, level)
    assert (a > 0).all() and np.allclose(up, 0.8, atol=1e-5) and (down > up).all()  # above: the weak side
    n_1 = est["df"].transpose("dice_sides", "policy").values.ravel()[rows["point"].to_numpy()]
    plain = estimated_detectable_bias(rows["se"].to_numpy(), n_1, level)
    assert (want > plain).all()
