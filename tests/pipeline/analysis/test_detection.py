"""The power the verdict prints is true (pipeline/analysis/detection.py): a
reference off by exactly the printed bias of a headline's weakest test is
caught at least 80% of the time, over 200 independent sweeps of each game
(its own kernel, fresh seeds), the bias printed by one sweep and planted in
the next."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from boardsweep.core import stats
from boardsweep.core.games import game_names, get_game
from boardsweep.pipeline.analysis import detection, skew
from boardsweep.pipeline.analysis.family import label_tests

from kernel_sweeps import points, replicates

SWEEPS = 200
GAMES = {  # (grid, run, params, replicates a sweep)
    "monopoly": ({"dice_sides": [4, 6]}, {"games": 1, "players": 1, "turns": 1000}, {"tally": "per_roll"}, 4),
    "monopoly-16": ({"dice_sides": [4, 6]}, {"games": 1, "players": 1, "turns": 400}, {"tally": "per_roll"}, 16),
    "hk_monopoly": ({"players": [2, 4]}, {"games": 60}, {"buy_policy": "never", "chance": "uniform:10:200:10"}, 4),
    "shut_the_box": ({"dice_sides": [3, 4, 5], "policy": ["optimal"]}, {"games": 40}, None, 4),
    "chutes_ladders": ({"players": [2, 3]}, {"games": 40}, None, 4),  # the example plugin game
}
#: Per-game means (pooled t): headline -> (sum, sum of squares, exact); their histograms' chi-square.
MEANS = {"shut_the_box": ("mean_rolls", "rolls_sum", "rolls_sq_sum", "exact_expected_rolls", "exact_pmf"),
         "chutes_ladders": ("mean_rounds", "rounds_sum", "rounds_sq_sum", "exact_expected_rounds",
                            "exact_length_pmf")}


def _data(name: str, seed: int) -> list[dict]:
    """Per grid point: arrays (sweep, replicate, ...) and the exact answers."""
    grid, run, params, reps = GAMES[name]
    game = get_game(name.split("-")[0])
    found, (resolved, shape, cps) = [], points(game.name, grid, run, params)
    for i, p in enumerate(resolved):
        arrays = replicates(game, p, shape, cps, (SWEEPS + 1) * reps, seed + i)
        arrays = {k: v.reshape(SWEEPS + 1, reps, *v.shape[1:]) for k, v in arrays.items()}
        exact = {k: np.asarray(v, dtype=float) for k, v in game.exact(p, shape, cps).items()}
        found.append({"arrays": arrays, "exact": exact})
    return found


def _frequency_rows(point: int, a: dict, k: int, num: str, den: str, ref: np.ndarray) -> list[dict]:
    est, _, se, df = stats.replicate_ratio_stderr(a[num][k], a[den][k], axis=0)
    t = label_tests(est, se, df, ref, mean_count=a[num][k].mean(axis=0))
    return [{"point": point, "headline": "frequency", "label": j, "test": "t", "statistic": t["z"][j],
             "df": df[j], "p": t["p"][j], "se": se[j]} for j in np.flatnonzero(t["tested"])]


def _mean_rows(name: str, point: int, a: dict, k: int, exact: dict, planted: tuple | None) -> list[dict]:
    """A per-game mean's pooled t test and its histogram's chi-square; the plugin's win shares (exact binomial)."""
    headline, total, squares, mean_exact, pmf = MEANS[name]
    games = a["hist"][k].sum()
    shift = planted[2] if planted is not None and planted[1] == "" else 0.0
    _, se, df = stats.pooled_unit_stderr(a[total][k].sum(), a[squares][k].sum(), games)
    t = label_tests(a[total][k].sum() / games, se, df, exact[mean_exact] + shift)
    _, gdf, gp = stats.chi2_gof(a["hist"][k].sum(axis=0), exact[pmf])
    m = skew.hist_moments(a["hist"][k].sum(axis=0), np.arange(a["hist"].shape[-1]))  # every game's length
    assert m["mean"] == pytest.approx(a[total][k].sum() / games, rel=1e-12)
    # the verdict's test of such a mean: Hall's, the interval's own, at the s.e.'s df from the kurtosis
    nu = float(skew.se_df(df, m["n"], m["m2"], m["m4"]))
    p = float(skew.hall_test(m["mean"], se, nu, m["n"], m["m2"], m["m3"], exact[mean_exact] + shift))
    rows = [{"point": point, "headline": headline, "label": "", "test": "skew_t", "statistic": float(t["z"]),
             "df": nu, "p": p, "se": float(se), "se_df": nu, "skew_a": float(skew.hall_a(m["n"], m["m2"], m["m3"]))},
            {"point": point, "headline": "length", "label": "", "test": "chi2", "statistic": np.nan,
             "df": gdf, "p": gp, "se": np.nan, "se_df": gdf}]
    if "wins" in a:
        seats = np.flatnonzero(exact["exact_win_share"] > 0)
        wins = a["wins"][k].sum(axis=0)[seats]
        ref = exact["exact_win_share"][seats].copy()
        if planted is not None and planted[1] != "":
            ref[int(planted[1])] += planted[2]
        _, se, df = np.broadcast_arrays(*stats.pooled_unit_stderr(wins, wins, games))
        t = label_tests(wins / games, se, df, ref, share=True, successes=wins, units=games)
        rows += [{"point": point, "headline": "win_share", "label": j, "test": "binomial", "statistic": t["z"][j],
                  "df": df[j], "p": t["p"][j], "se": se[j], "se_df": df[j]} for j in range(len(seats))]
    return rows


def _table(name: str, data: list[dict], k: int, planted: tuple | None = None) -> pd.DataFrame:
    """Sweep ``k``'s family of tests, the reference of ``planted = (point, label, bias)`` moved by the bias."""
    rows = []
    for i, d in enumerate(data):
        a, ex = d["arrays"], d["exact"]
        mine = planted if planted is not None and planted[0] == i else None
        if name in MEANS:
            rows += _mean_rows(name, i, a, k, ex, mine)
            continue
        shift = mine[2] if mine is not None else 0.0
        if name.startswith("monopoly"):
            ref, num, den = ex["exact_counts"][-1] / ex["exact_counts"][-1].sum(), "counts", "events"
        else:
            ref, num, den = ex["exact_horizon_frequency"].copy(), "landings", "turns"
        ref = ref.copy()
        if shift:
            ref[planted[1]] += shift
        rows += _frequency_rows(i, a, k, num, den, ref)
    return pd.DataFrame(rows)


def _caught(name: str, data: list[dict], k: int, weakest: pd.Series, bias: float) -> bool:
    """Is sweep ``k``'s test of ``weakest``'s label, its reference moved by ``bias``, flagged (Holm, 1%)?"""
    test = _table(name, data, k, (int(weakest["point"]), weakest["label"], bias))
    mine = ((test["point"] == weakest["point"]) & (test["label"] == weakest["label"])
            & test["test"].isin(detection.SE_TESTS)).to_numpy()
    p = stats.holm(test["p"].to_numpy(float))
    return bool(mine.any() and p[mine][0] < 0.01)


@pytest.mark.parametrize("name", [pytest.param(g, marks=pytest.mark.skipif(
    g == "chutes_ladders" and g not in game_names(), reason="the example plugin game is not installed"))
    for g in sorted(GAMES)])
def test_the_printed_bias_of_the_weakest_test_is_caught_80_percent_of_the_time(name):
    """Sweep k prints, per headline, its weakest test's bias (detection.power;
    Monopoly at 4 replicates of 1,000 turns and 16 of 400);
    sweep k + 1, independent, is tested with that label's reference moved by
    it (alternating sign) through Holm at family-wise 1%.  The catches are
    Binomial(200, q); q >= 80% allows no fewer than its 0.1% quantile (142).
    What was printed before (the headline's median over tests, the observed
    s.e. taken as the truth) is caught far less often (measured 113, 108,
    103, 45 and 117 of 200 for the money game, Monopoly at 4 and 16
    replicates, Shut the Box and the plugin's mean rounds; now 200, 200,
    198, 170 and 173, the plugin's win share 173).  The per-game means'
    printed bias reads the s.e.'s spread from the games' kurtosis
    (``se_df``, pipeline/analysis/skew.py): with the chi-square of 159 df
    it was caught 155 and 156 times.  Their test is Hall's (the interval's
    own), which needs a reference above a right-skewed mean to be farther
    off than one below: the printed bias is Hall's test's own on its weak
    side (``skew.hall_detectable_bias``; the t test's bias: 143 and 150);
    each side apart is tested below."""
    from boardsweep.core.power import detectable_bias

    data = _data(name, 9000)
    caught: dict[str, int] = {}
    before: dict[str, int] = {}
    for k in range(SWEEPS):
        table = _table(name, data, k)
        assert detection.power(table, 0.01, bounded=frozenset({"frequency", "win_share"}))["headlines"]
        sign = 1 if k % 2 else -1
        for headline, rows in table[table["test"].isin(detection.SE_TESTS)].groupby("headline"):
            weakest = rows.loc[rows["detectable"].idxmax()]
            hit = _caught(name, data, k + 1, weakest, sign * float(weakest["detectable"]))
            caught[headline] = caught.get(headline, 0) + hit
            median = float(np.median(detectable_bias(rows["se"], rows["df"], 0.01 / len(table))))
            before[headline] = before.get(headline, 0) + _caught(name, data, k + 1, weakest, sign * median)
    floor = st.binom.ppf(0.001, SWEEPS, 0.8)
    assert all(c >= floor for c in caught.values()), (caught, before)
    assert min(before.values()) < floor, (caught, before)


def test_a_frequency_bias_over_one_is_said_to_be_unseeable_with_what_would_see_one():
    """Two replicates (df = 1) at Holm's 1%/40: 80% power needs over 10^4
    estimated s.e.s, more than a frequency can be off; the line says no bias
    can be seen and how many replicates would see one of 0.01 (the fewest
    whose t test has 80% power there, at the replicates' own spread)."""
    from boardsweep.core.power import detectable_bias

    se = np.full(40, 0.002)
    se[7] = 0.004
    table = pd.DataFrame({"point": 0, "headline": "frequency", "label": np.arange(40), "test": "t",
                          "statistic": 0.0, "df": 1.0, "p": 0.5, "se": se})
    found = detection.power(table, 0.01, bounded=frozenset({"frequency"}), where=lambda i: "dice_sides=6")
    h = found["headlines"]["frequency"]
    assert not h["visible"] and h["largest"] > 1 and h["weakest"] == "7 at dice_sides=6"
    reps = int(h["would"].split()[0])
    sd = 0.004 * np.sqrt(2)
    level = 0.01 / 40
    assert detectable_bias(sd / np.sqrt(reps), reps - 1, level) <= 0.01 < detectable_bias(
        sd / np.sqrt(reps - 1), reps - 2, level)
    assert found["text"].startswith("power: no bias in frequency can be seen at this size (80% power needs ")
    assert f"{reps} replicates would see 0.01" in found["text"]
    unbounded = detection.power(table, 0.01)["headlines"]["frequency"]  # a mean: no bound, so it is said
    assert unbounded["visible"] and unbounded["largest"] == h["largest"]


#: Skewed per-game means (Hall's test): game -> (grid, replicates, games a replicate, sum, exact mean, pmf).
SKEWED = {"shut_the_box": ({"dice_sides": [4, 5, 6], "policy": ["optimal", "greedy"]}, 8, 5, "rolls_sum",
                           "exact_expected_rolls", "exact_pmf"),
          "chutes_ladders": ({"players": [2, 3, 4]}, 8, 5, "rounds_sum", "exact_expected_rounds",
                             "exact_length_pmf")}
#: Independent (printing, testing) pairs of sweeps, each side planted in each pair's testing sweep.
PAIRS = 400


def _skewed_sweeps(name: str, seed: int) -> list[dict]:
    """Per grid point, ``2 PAIRS`` sweeps of the spec's games at once: one
    kernel call, a checkpoint at each sweep's games, the increments (pooled
    over the replicates: the mean's test pools its games) independent."""
    grid, reps, games, total, mean, pmf = SKEWED[name]
    game = get_game(name)
    n = reps * games
    found = []
    for i, p in enumerate(points(name, grid, {"games": games})[0]):
        sim = game.simulate(p, np.random.SeedSequence([seed, i]), game.resolve_run_shape({"games": n * 2 * PAIRS}),
                            np.arange(n, n * 2 * PAIRS + 1, n))
        step = {k: np.diff(np.asarray(v, dtype=np.float64), axis=0, prepend=0.0) for k, v in sim.items()}
        assert step.get("capped", np.zeros(1)).sum() == 0  # every game finished: its exact answers hold
        ex = game.exact(p, game.resolve_run_shape({"games": n}), np.array([n]))
        m = skew.hist_moments(step["hist"], np.arange(step["hist"].shape[1]))
        assert np.allclose(m["mean"], step[total] / n, rtol=1e-12)  # the histogram holds every game
        _, se, df = stats.pooled_unit_stderr(step[total], n * m["m2"] + step[total] ** 2 / n, np.full(2 * PAIRS, n))
        nu = skew.se_df(df, m["n"], m["m2"], m["m4"])
        found.append({"m": m, "se": se, "nu": nu, "a": skew.hall_a(m["n"], m["m2"], m["m3"]), "n": n,
                      "mu": float(np.ravel(ex[mean])[0]), "wins": step.get("wins"), "hist": step["hist"],
                      "pmf": np.ravel(ex[pmf]), "share": np.ravel(ex["exact_win_share"]) if "wins" in step else None})
    return found


def _others(d: dict, k: int) -> list[tuple[str, float, float]]:
    """Sweep ``k``'s other tests at a point: its histogram's chi-square, its win shares' exact binomial tests."""
    found = [("chi2", float(stats.chi2_gof(d["hist"][k], d["pmf"])[2]), np.nan)]
    if d["wins"] is not None:
        seats = np.flatnonzero(d["share"] > 0)
        wins = d["wins"][k][seats]
        _, se, df = np.broadcast_arrays(*stats.pooled_unit_stderr(wins, wins, d["n"]))
        t = label_tests(wins / d["n"], se, df, d["share"][seats], share=True, successes=wins, units=d["n"])
        found += [("binomial", float(p), float(s)) for p, s in zip(t["p"], se)]
    return found


def _family(data: list[dict], k: int) -> pd.DataFrame:
    """Sweep ``k``'s family: per point Hall's test of the mean and the point's other tests."""
    rows = []
    for i, d in enumerate(data):
        p = skew.hall_test(d["m"]["mean"][k], d["se"][k], d["nu"][k], d["m"]["n"][k], d["m"]["m2"][k],
                           d["m"]["m3"][k], d["mu"])
        rows.append({"point": i, "headline": "mean", "test": "skew_t", "p": float(p), "se": d["se"][k],
                     "df": d["nu"][k], "se_df": d["nu"][k], "skew_a": d["a"][k]})
        rows += [{"point": i, "headline": test, "test": test, "p": q, "se": se, "df": np.nan, "se_df": np.nan,
                  "skew_a": np.nan} for test, q, se in _others(d, k)]
    return pd.DataFrame(rows).assign(label="")


def _caught_at(data: list[dict], k: int, family: pd.DataFrame, point: int, bias: float) -> bool:
    """Is sweep ``k``'s Hall test at ``point``, its reference moved by ``bias``, flagged (Holm, 1%)?"""
    d, p = data[point], family["p"].to_numpy(float).copy()
    row = int(np.flatnonzero(family["test"].to_numpy() == "skew_t")[point])
    p[row] = skew.hall_test(d["m"]["mean"][k], d["se"][k], d["nu"][k], d["m"]["n"][k], d["m"]["m2"][k],
                            d["m"]["m3"][k], d["mu"] + bias)
    return bool(stats.holm(p)[row] < 0.01)


@pytest.mark.slow
@pytest.mark.parametrize("name", [pytest.param(g, marks=pytest.mark.skipif(
    g not in game_names(), reason=f"{g} is not installed")) for g in sorted(SKEWED)])
def test_the_printed_bias_of_a_skewed_mean_is_caught_on_its_weak_side_and_its_strong_side(name):
    """Shut the Box (6 points, 8 replicates x 5 games) and the plugin's mean
    rounds (3 points): in each of 400 independent pairs of sweeps the first
    prints its weakest mean test's bias (detection.power: Hall's test's own
    power, skew.hall_detectable_bias), and the second is tested with that
    point's reference moved by it above the mean (the weak side of these
    right-skewed games: high estimates come with high s.e.s) and, apart, below
    it, each through Holm at family-wise 1%.  The catches of each side are
    Binomial(400, q); q >= 80% allows no fewer than 80% less 1.645 binomial
    s.e.s (307: it fails at 76%).  Measured (seed 4200): above 373 and 323,
    below 400 and 396 (Shut the Box, the plugin); at 8 x 20 games 343 and 319;
    Shut the Box's dice 3-5 at 4 x 40 games (the sizes of the test above) 313.
    The bias printed before (the t test's times Hall's far edge over t's,
    ``weak_side``) was within 3% of it and caught 376 and 324 above: the
    73-76 of 100 measured with it were Binomial noise about 78-81%."""
    data = _skewed_sweeps(name, 4200)
    caught = {"above": 0, "below": 0}
    for j in range(PAIRS):
        table = _family(data, 2 * j)
        detection.power(table, 0.01)
        means = table[table["test"] == "skew_t"]
        weakest = means.loc[means["detectable"].idxmax()]
        tested = _family(data, 2 * j + 1)
        for side, sign in (("above", 1.0), ("below", -1.0)):
            caught[side] += _caught_at(data, 2 * j + 1, tested, int(weakest["point"]),
                                       sign * float(weakest["detectable"]))
    floor = PAIRS * 0.8 - 1.645 * np.sqrt(PAIRS * 0.8 * 0.2)
    assert min(caught.values()) >= floor, caught
