"""Every power line true for the tests it speaks for (pipeline/analysis/detection.py):
one line per test kind where a headline's labels are tested by several (the
R = 2 line is not set by one t test with 1 df where most labels are
z-tested), and a t test whose true s.e. the game knows (Monopoly's exact CLT
variance) states its exact power, neither the 2.0x of the largest noisy s.e.
nor less: planted in 200 independent sweeps, caught 80-90% of the time.
Monopoly's own kernel, fresh seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from boardsweep.core import stats
from boardsweep.core.games import get_game
from boardsweep.pipeline.analysis import detection
from boardsweep.pipeline.analysis.clt import known_stderr
from boardsweep.pipeline.analysis.family import label_tests

from kernel_sweeps import points, replicates

SWEEPS = 200


def _data(tally: str, turns: int, reps: int, seed: int, jail: str = "long") -> list[dict]:
    game = get_game("monopoly")
    resolved, shape, cps = points("monopoly", {"dice_sides": [4, 6]}, {"games": 1, "players": 1, "turns": turns},
                                  {"tally": tally, "jail_strategy": jail})
    out = []
    for i, p in enumerate(resolved):
        a = replicates(game, p, shape, cps, (SWEEPS + 1) * reps, seed + i)
        a = {k: v.reshape(SWEEPS + 1, reps, *v.shape[1:]) for k, v in a.items()}
        counts = np.asarray(game.exact(p, shape, cps)["exact_counts"], dtype=float)[-1]
        out.append({"a": a, "ref": counts / counts.sum(), "variance": game.extras["asymptotic_variance"](p)["variance"]})
    return out


def _table(data: list[dict], k: int, planted: tuple | None = None) -> pd.DataFrame:
    """Sweep ``k``'s family as the verdict makes it: the z test on the CLT s.e.
    where a label expects enough counts, else the t test across replicates,
    with ``known_se`` (the CLT s.e. at every label) beside it."""
    parts = []
    for i, d in enumerate(data):
        a, ref = d["a"], d["ref"].copy()
        if planted is not None and planted[0] == i:
            ref[planted[1]] += planted[2]
        est, _, se, df = stats.replicate_ratio_stderr(a["counts"][k], a["events"][k], axis=0)
        rolls, events = a["rolls"][k].sum(), a["events"][k].sum()
        clt = known_stderr(d["variance"], rolls, d["ref"], events)
        truth = known_stderr(d["variance"], rolls, d["ref"], events, tested=False)
        se, df = np.where(np.isfinite(clt), clt, se), np.where(np.isfinite(clt), np.inf, df)
        t = label_tests(est, se, df, ref, mean_count=a["counts"][k].mean(axis=0))
        j = np.flatnonzero(t["tested"])
        parts.append(pd.DataFrame({"point": i, "headline": "frequency", "label": j,
                                   "test": np.where(np.isinf(df[j]), "z", "t"), "statistic": t["z"][j],
                                   "df": df[j], "p": t["p"][j], "se": se[j], "se_df": df[j],
                                   "known_se": truth[j]}))
    return pd.concat(parts, ignore_index=True)


def _caught(data: list[dict], k: int, weakest: pd.Series, bias: float) -> bool:
    test = _table(data, k, (int(weakest["point"]), int(weakest["label"]), bias))
    mine = ((test["point"] == weakest["point"]) & (test["label"] == weakest["label"])).to_numpy()
    return bool(mine.any() and stats.holm(test["p"].to_numpy(float))[mine][0] < 0.01)


def test_t_test_power_at_four_replicates_is_80_to_90_percent():
    """Monopoly (short jail) at R = 4, 1,000 turns (nearly every label t-tested: too few counts for
    the z test): sweep k prints the weakest t test's bias, sweep k + 1 is tested
    with that label's reference moved by it (alternating sign), Holm at 1%.
    Catches are Binomial(200, q): at least its 0.1% quantile at q = 80% (142)
    and at most its 99.9% quantile at q = 90%; measured 165 (seed 6100).
    The largest of the noisy estimated s.e.s printed 2.03 times that bias
    (median; 10-90%: 1.73-2.41), the issue's 2.0x (the check can fail)."""
    from boardsweep.core.power import estimated_detectable_bias

    data = _data("per_roll", 1000, 4, 6100, "short")
    caught, ratios = 0, []
    for k in range(SWEEPS):
        table = _table(data, k)
        assert (table["test"] == "t").mean() > 0.9
        found = detection.power(table, 0.01, bounded=frozenset({"frequency"}))
        trows = table[table["test"] == "t"]
        weakest = trows.loc[trows["detectable"].idxmax()]
        line = found["headlines"].get("frequency, t-tested labels", found["headlines"].get("frequency"))
        assert line["largest"] == weakest["detectable"] and line["test"] == "t"
        caught += _caught(data, k + 1, weakest, float(weakest["detectable"]) * (1 if k % 2 else -1))
        old = estimated_detectable_bias(trows["se"], trows["df"], 0.01 / len(table)).max()
        ratios.append(old / weakest["detectable"])
    assert st.binom.ppf(0.001, SWEEPS, 0.8) <= caught <= st.binom.ppf(0.999, SWEEPS, 0.9), caught
    assert np.median(ratios) > 1.25, np.median(ratios)


def test_the_two_replicate_line_speaks_per_test_kind_and_each_is_true():
    """Monopoly at R = 2, 20,000 turns, per turn (most labels z-tested, a few
    t-tested with 1 df): the line has one part per kind; the t part says no
    bias can be seen (true: 1 df at Holm's level needs more than 1), the z
    part states a bias under 0.02 that, planted in the next of 200 sweeps at
    its weakest label, is caught at least 80% of the time (Binomial floor 142;
    measured 163, seed 6300)."""
    data = _data("per_turn", 20_000, 2, 6300)
    caught = 0
    for k in range(SWEEPS):
        table = _table(data, k)
        found = detection.power(table, 0.01, bounded=frozenset({"frequency"}))
        kinds = set(table["test"])
        z = found["headlines"]["frequency, z-tested labels" if len(kinds) > 1 else "frequency"]
        assert z["visible"] and z["largest"] < 0.02 and z["test"] == "z"
        if "t" in kinds:
            t = found["headlines"]["frequency, t-tested labels"]
            assert not t["visible"] and "no bias in frequency, t-tested labels can be seen" in found["text"]
            assert "in frequency, z-tested labels (weakest" in found["text"]
        zrows = table[table["test"] == "z"]
        weakest = zrows.loc[zrows["detectable"].idxmax()]
        caught += _caught(data, k + 1, weakest, float(weakest["detectable"]) * (1 if k % 2 else -1))
    assert caught >= st.binom.ppf(0.001, SWEEPS, 0.8), caught


def test_halls_line_states_each_side():
    """A Hall-tested mean's line names each side's 80% bias; the side above a
    right-skewed mean (a > 0) is the weak one, and the bias printed is it."""
    from boardsweep.pipeline.analysis import skew

    table = pd.DataFrame({"point": [0, 1], "headline": "mean_rolls", "label": "", "test": "skew_t",
                          "statistic": 0.0, "df": [30.0, 30.0], "p": 0.5, "se": [0.1, 0.2], "se_df": 30.0,
                          "skew_a": [0.05, 0.05]})
    found = detection.power(table, 0.01)
    h = found["headlines"]["mean_rolls"]
    above, below = h["sides"]["above"], h["sides"]["below"]
    assert above > below and h["largest"] == pytest.approx(above, rel=1e-5)
    assert above == pytest.approx(float(skew.hall_detectable_bias(0.2, 30.0, 0.05, 0.005, side="above")), rel=1e-9)
    assert f"{above:.2g} above the mean, {below:.2g} below" in found["text"]
