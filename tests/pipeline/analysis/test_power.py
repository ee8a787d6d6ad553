"""Planning (pipeline/analysis/power.py): replicates and turns for a target s.e. or
a detectable bias, from the exact CLT variance where the game has one
(Monopoly), else from a pilot store; real specs, real runs, fixed seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st

from boardsweep.core import power
from boardsweep.core.games import game_names, get_game
from boardsweep.pipeline.analysis import clt, headlines
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.analysis.power import dry_run_lines, plan_run
from boardsweep.pipeline.plan.precision import upper_factor
from boardsweep.pipeline.store import load_sweep
from boardsweep.pipeline.spec.parse import parse_spec

from clirun import run_cli
from specs import spec_toml  # tests/support is on sys.path

MONOPOLY = dict(params={"tally": "per_roll"}, grid={"dice_sides": [4, 6], "jail_strategy": ["short"]},
                run={"replicates": 4, "games": 1, "players": 1, "turns": 20000})


def _spec(game: str, shape: dict, seed: int = 35):
    return parse_spec(spec_toml(game, name=game, seed=seed, checkpoints={"count": 4},
                                tasks={"replicates_per_task": 4}, **shape), f"{game}.toml")


def test_the_plan_uses_the_exact_clt_variance_and_says_so():
    spec = _spec("monopoly", MONOPOLY)
    plan = plan_run(spec, stderr=1e-3, detectable=0.01)
    assert plan["sources"] == ["exact CLT variance"] and "exact CLT variance" in plan["text"][0]
    # the verdict's family: 40 labels a point (per_roll never counts Go To Jail: no test there)
    assert plan["tests"] == 2 * 40 and plan["level"] == pytest.approx(0.01 / 80)
    hook = get_game("monopoly").extras["asymptotic_variance"]
    for row, (_, params) in zip(plan["rows"], spec.points()):
        sd = math.sqrt(np.nanmax(hook(params)["variance"]) / 20000)  # one roll a turn: an upper bound
        assert row["sd"] == pytest.approx(sd, rel=1e-12) and row["se"] == pytest.approx(sd / 2)
        assert row["replicates_for_stderr"] == max(2, math.ceil((sd / 1e-3) ** 2))
        r = row["replicates_rule"]  # the precision rule's 90% upper bound at the expected s.e.
        assert sd**2 / r * float(upper_factor(r - 1)) <= 1e-6 < sd**2 / (r - 1) * float(upper_factor(r - 2))
        assert r >= row["replicates_for_stderr"]
        # every label expects over 500 counts in 4 x 20,000 rolls: the verdict tests it by z on the CLT s.e.
        assert row["test"] == "z" and row["sd_clt"] == pytest.approx(sd, rel=1e-12)
        b = row["replicates_for_bias"]
        seen = [float(power.detectable_bias(sd / math.sqrt(n), math.inf, plan["level"])) for n in (b - 1, b)]
        assert seen[1] <= 0.01 and (b == 2 or 0.01 < seen[0])  # two replicates at least
        assert row["turns_for_stderr"] == math.ceil(20000 * (sd / 2 / 1e-3) ** 2)
        assert row["detectable"] == pytest.approx(float(power.detectable_bias(sd / 2, math.inf, plan["level"])))
        t_test = float(power.detectable_bias(sd / 2, 3, plan["level"]))  # what was planned before: t, df = 3
        assert t_test > 5 * row["detectable"]
    assert clt.TEST_NAMES["z"] in plan["text"][1]


def test_the_plan_uses_the_test_the_verdict_will_use_on_each_label():
    """Few rolls (4 x 500): no label expects 500 counts, so the verdict
    t-tests every label across the replicates and the plan plans that; the
    choice is :func:`clt.uses_clt`'s, the verdict's own."""
    few = {**MONOPOLY, "run": {"replicates": 4, "games": 1, "players": 1, "turns": 500}}
    plan = plan_run(_spec("monopoly", few))
    for row in plan["rows"]:
        assert row["test"] == "t" and math.isnan(row["sd_clt"])
        assert row["detectable"] == pytest.approx(float(power.detectable_bias(row["sd_t"] / math.sqrt(4), 3,
                                                                              plan["level"])))
    assert clt.TEST_NAMES["t"] in plan["text"][1]
    assert not clt.uses_clt(1e-3, 0.1 * 4 * 500, 2) and clt.uses_clt(1e-3, 0.1 * 4 * 20000, 2)
    assert not clt.uses_clt(1e-3, 0.1 * 4 * 20000, clt.CLT_POINTS + 1)  # too many points to solve: t


def test_shuffled_decks_plan_replicates_and_say_turns_do_not_help():
    shape = {**MONOPOLY, "params": {"tally": "per_roll", "deck_policy": "shuffled_cycle"}}
    plan = plan_run(_spec("monopoly", shape), stderr=1e-3)
    assert {r["source"] for r in plan["rows"]} == {"shuffled decks"}
    assert all(r["turns_for_stderr"] is None for r in plan["rows"])
    assert any("more turns do not shrink the error" in line for line in plan["text"])
    assert dry_run_lines(_spec("monopoly", shape)) == [
        "shuffled decks: more replicates shrink the deck-to-deck error, more turns do not"]


def test_the_planned_standard_error_is_what_a_run_reaches(tmp_path, cluster2):
    """16 replicates of 20,000 turns at one point: the worst label's measured
    replicate variance over the plan's (rescaled from one roll a turn to the
    rolls the run made) is chi2(15)/15, inside its 99.9% range."""
    shape = dict(params={"tally": "per_roll", "dice_sides": 6}, grid={"jail_strategy": ["long"]},
                 run={"replicates": 16, "games": 1, "players": 1, "turns": 20000})
    spec = _spec("monopoly", shape)
    plan = plan_run(spec, stderr=1e-3)
    url = str(tmp_path / "m.zarr")
    assert run_sweep(spec, url, scheduler=cluster2).complete
    ds = load_sweep(url, check=False)
    variance = get_game("monopoly").extras["asymptotic_variance"](spec.points()[0][1])["variance"]
    worst = int(np.nanargmax(variance))
    est = headlines.estimates(ds)["frequency"].isel(jail_strategy=0, location=worst)
    rolls = float(ds["rolls"].isel(checkpoint=-1).mean())
    planned = plan["rows"][0]["se"] ** 2 * 20000 / rolls
    ratio = float(est["se"]) ** 2 / planned
    assert st.chi2.ppf(0.0005, 15) / 15 < ratio < st.chi2.ppf(0.9995, 15) / 15, ratio
    assert rolls > 20000  # so the plan (one roll a turn) is an upper bound


@pytest.mark.skipif("chutes_ladders" not in game_names(), reason="the example plugin game is not installed")
def test_a_pilot_store_plans_a_game_without_clt_variance(tmp_path, cluster2):
    pilot_shape = dict(grid={"players": [2]}, run={"replicates": 4, "games": 500})
    url = str(tmp_path / "pilot.zarr")
    assert run_sweep(_spec("chutes_ladders", pilot_shape), url, scheduler=cluster2).complete
    assert plan_run(_spec("chutes_ladders", pilot_shape))["text"][0].startswith("no plan: chutes_ladders has no")
    pilot = load_sweep(url, check=False)
    spec = _spec("chutes_ladders", dict(grid={"players": [2]}, run={"replicates": 4, "games": 2000}))
    plan = plan_run(spec, stderr=0.002, pilot=pilot)
    assert plan["sources"] == ["pilot"] and "pilot store" in plan["text"][0]
    found = headlines.estimates(pilot)
    row = next(r for r in plan["rows"] if r["headline"] == "mean_rounds")
    per_game = float(found["mean_rounds"]["sd"].max())
    assert row["se"] == pytest.approx(per_game / math.sqrt(4 * 2000))  # games are the unit: 8,000 of them
    assert row["replicates_for_stderr"] == math.ceil((per_game / math.sqrt(2000) / 0.002) ** 2)
    assert row["turns_for_stderr"] == math.ceil(2000 * (row["se"] / 0.002) ** 2)  # games a replicate
    # one name per test: the win shares' exact binomial test is "binomial" in the verdict's table and the plan
    table = headlines.verdict(pilot)["p_holm"]
    for r in plan["rows"]:
        assert {r["test"]} == set(table.loc[table["headline"] == r["headline"], "test"]), r["headline"]
    assert next(r for r in plan["rows"] if r["headline"] == "win_share")["test"] == "binomial"


def test_dry_run_prints_the_plan_for_monopoly(tmp_path, write_spec, capsys):
    text = spec_toml("monopoly", name="m", seed=1, **MONOPOLY)
    assert run_cli("run", str(write_spec(text)), "--store", str(tmp_path / "m.zarr"), "--dry-run",
                   "--workers", "1") == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("  planning:")]
    assert len(lines) == 1 and "80% power to see a bias of" in lines[0] and "Holm's 1%/80" in lines[0]
    assert "from the exact CLT variance" in out and not (tmp_path / "m.zarr").exists()


def test_a_skewed_mean_is_planned_with_hall_s_test_the_verdict_s_own(tmp_path, cluster2):
    """A Shut the Box pilot (2 points, 4 x 10 games): the verdict tests its
    mean rolls by Hall's test (``skew.hall_moments``, the verdict's rule, which
    the planner asks too), so the plan of a 4 x 40-game run predicts that
    test's power: from the pilot's pooled games' moments at 160 games, the s.e.
    taken as known (``skew.hall_detectable_bias``); the old plan (a t test
    with 159 df) said less."""
    from boardsweep.pipeline.analysis import skew

    shape = dict(grid={"dice_sides": [3, 4], "policy": ["optimal"]}, run={"replicates": 4, "games": 10})
    url = str(tmp_path / "pilot.zarr")
    assert run_sweep(_spec("shut_the_box", shape), url, scheduler=cluster2).complete
    pilot = load_sweep(url, check=False)
    table = headlines.verdict(pilot)["p_holm"]
    assert set(table.loc[table["headline"] == "mean_rolls", "test"]) == {"skew_t"}
    spec = _spec("shut_the_box", {**shape, "run": {"replicates": 4, "games": 40}})
    plan = plan_run(spec, pilot=pilot)
    for r in plan["rows"]:  # every headline: the test the verdict used on the pilot, by its one name
        assert {r["test"]} == set(table.loc[table["headline"] == r["headline"], "test"]), r["headline"]
    row = next(r for r in plan["rows"] if r["headline"] == "mean_rolls")
    assert row["test"] == "skew_t" and clt.TEST_NAMES["skew_t"] in " ".join(plan["text"])
    hist = pilot["hist"].isel(checkpoint=-1).sum("replicate").transpose("dice_sides", "policy", ...)
    m = skew.hist_moments(hist.values.reshape(2, -1), pilot[hist.dims[-1]].values)  # every game's rolls
    n = 160.0
    se = np.sqrt(m["m2"] * m["n"] / (m["n"] - 1) / n)
    nu = skew.se_df(n - 1, n, m["m2"], m["m4"])
    want = skew.hall_detectable_bias(se, nu, skew.hall_a(n, m["m2"], m["m3"]), plan["level"], estimated=False)
    assert row["detectable"] == pytest.approx(want.max(), rel=1e-9)
    up, down = skew.hall_power(want / se, nu, skew.hall_a(n, m["m2"], m["m3"]), plan["level"], estimated=False)
    assert np.allclose(np.minimum(up, down), 0.8, atol=1e-5) and (up < down).all()  # above: the weak side
    assert row["detectable"] > 1.05 * float(power.detectable_bias(se.max(), n - 1, plan["level"]))
    # the replicates and games for half that bias: Hall's own power at R x 40 games, not the t factor
    target = row["detectable"] / 2
    half = next(r for r in plan_run(spec, pilot=pilot, detectable=target)["rows"] if r["headline"] == "mean_rolls")

    def hall_at(games):
        se = np.sqrt(m["m2"] * m["n"] / (m["n"] - 1) / games)
        nu, a = skew.se_df(games - 1, games, m["m2"], m["m4"]), skew.hall_a(games, m["m2"], m["m3"])
        return skew.hall_detectable_bias(se, nu, a, plan["level"], estimated=False).max()

    reps, games = half["replicates_for_bias"], half["turns_for_bias"]
    assert hall_at(40.0 * reps) <= target < hall_at(40.0 * (reps - 1))
    assert hall_at(4.0 * games) <= target < hall_at(4.0 * (games - 1))
