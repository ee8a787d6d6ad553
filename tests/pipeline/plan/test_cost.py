"""The dry run's cost model (``plan/cost.py`` and its shipped ``costs.json``):
the table's lookup, the schedule, the forecast's sums, and the model against
the real kernels on a grid whose points differ in cost by two orders of
magnitude (Shut the Box: the random policy on 6-sided dice against the
optimal one on 2-sided dice)."""

from __future__ import annotations

import time
import tomllib
from pathlib import Path

import pytest

from specs import spec_toml

from boardsweep.pipeline.plan import cost
from boardsweep.pipeline.plan.task_layout import given
from boardsweep.pipeline.spec.parse import parse_spec

ROOT = Path(__file__).resolve().parents[3]

MODEL = cost.CostModel(units=("games", "turns"), keys=("policy", "sides"),
                       rows=(("a", 2, 1.0), ("a", 4, 3.0), ("b", 2, 5.0), ("b", 4, 7.0)))


def test_a_tabulated_point_is_its_row_times_its_work():
    assert cost.replicate_seconds(MODEL, {"policy": "a", "sides": 4}, {"games": 2, "turns": 10}) == 3.0 * 20


def test_a_replicate_costs_its_call_and_its_checkpoints_per_unit_too():
    model = cost.CostModel(units=("games", "turns"), keys=(), rows=((2.0,),), call_s=0.5, checkpoint_s=0.25,
                           checkpoint_units=("games",))
    assert cost.replicate_seconds(model, {}, {"games": 3, "turns": 10}, checkpoints=4) == 0.5 + 2.0 * 30 + 0.25 * 4 * 3


def test_a_checkpoint_costs_its_keys_row_where_the_model_has_checkpoint_keys():
    """A checkpoint's cost looked up at its keys (Monopoly: the tally, whose histogram
    it adds, and the games, interpolated), per unit of ``checkpoint_units``."""
    model = cost.CostModel(units=("games", "turns"), keys=(), rows=((2.0,),), checkpoint_s=9.0,
                           checkpoint_units=("games",), checkpoint_keys=("tally", "games"),
                           checkpoint_rows=(("roll", 1, 0.1), ("roll", 32, 0.2), ("landing", 1, 0.3), ("landing", 32, 0.5)))
    assert cost.checkpoint_seconds(model, {"tally": "landing", "games": 32}) == pytest.approx(0.5 * 32)
    assert cost.checkpoint_seconds(model, {"tally": "roll", "games": 1000}) == pytest.approx(0.2 * 1000)  # the nearest
    assert cost.replicate_seconds(model, {"tally": "roll"}, {"games": 1, "turns": 10}, checkpoints=3) == pytest.approx(
        2.0 * 10 + 0.1 * 3)


def test_a_number_between_rows_is_interpolated_and_an_unknown_choice_averaged():
    assert cost.replicate_seconds(MODEL, {"policy": "a", "sides": 3}, {"games": 1}) == 2.0
    assert cost.replicate_seconds(MODEL, {"policy": "a", "sides": 6}, {"games": 1}) == 3.0  # outside: the nearest
    assert cost.replicate_seconds(MODEL, {"policy": "c", "sides": 2}, {"games": 1}) == 3.0  # mean of a and b


def test_a_value_per_seat_costs_the_mean_of_its_seats():
    """Mixed seats ("a,b": the money game's head to head) cost the mean of each seat's policy at that point."""
    assert cost.replicate_seconds(MODEL, {"policy": "a,b", "sides": 4}, {"games": 1}) == (3.0 + 7.0) / 2
    assert cost.replicate_seconds(MODEL, {"policy": "b,a,a", "sides": 2}, {"games": 1}) == (5.0 + 1.0 + 1.0) / 3


def test_a_number_is_interpolated_between_the_rows_on_either_side_not_the_two_nearest():
    """4 lies between 2 and 32: the line through 1 and 2 (the two nearest) went below zero (nightly's 4 games)."""
    model = cost.CostModel(units=(), keys=("games",), rows=((1, 12.0), (2, 6.0), (32, 3.0)))
    assert cost.replicate_seconds(model, {}, {"games": 4}) == pytest.approx(6.0 - 3.0 * 2 / 30)


def test_tasks_go_to_the_worker_free_first():
    assert cost.makespan([3.0, 1.0, 1.0, 1.0], 2) == 3.0
    assert cost.makespan([1.0, 1.0, 1.0, 3.0], 2) == 4.0
    assert cost.makespan([2.0] * 5, 1) == 10.0


SPEC = spec_toml("shut_the_box", name="uneven", grid={"dice_sides": [2, 3, 6], "policy": ["optimal", "random"]},
                 run={"replicates": 4, "games": 1500}, checkpoints={"count": 3})


def test_the_forecast_sums_every_replicate_and_adds_the_pipelines_costs():
    spec = parse_spec(SPEC)  # 6 points, 4 replicates, one replicate a task
    seconds = {i: 0.1 * (i + 1) for i in range(6)}
    costs = cost.Overheads(task_s=0.01, point_s=0.0, startup_s=2.0)
    timed = cost.forecast(spec, given(spec), seconds, 2, "model", exact_solves=4, exact_s=0.5, costs=costs)
    assert timed.kernel_s == pytest.approx(4 * 2.1 + 4 * 0.5)  # the exact solves too
    assert timed.overhead_s == pytest.approx(24 * 0.01)
    assert timed.slowest == pytest.approx(0.6)  # the first, middle and last: 0, 3, 5
    assert timed.wall_s == pytest.approx(2.0 + cost.makespan([0.1 * (i + 1) + 0.01 for i in range(6)] * 4, 2)
                                         + 4 * 0.5 / 2)
    assert cost.forecast(spec, given(spec), seconds, None, "model", costs=costs).wall_s is None


def test_a_large_grid_is_priced_at_a_sample_holding_its_first_middle_and_last():
    many = cost.sampled_indices(100_001, most=16)
    assert len(many) <= 17 and {0, 50_000, 100_000} <= set(many)
    assert cost.sampled_indices(6) == list(range(6))


def _true_seconds(spec) -> dict[int, float]:
    """CPU seconds of each grid point's replicates, simulated in this thread (warm)."""
    from boardsweep.pipeline.plan.tasks import replicate_seed

    out = {}
    for i, (_, params) in enumerate(spec.resolved_points()):
        spec.game.simulate(params, 99, spec.run_shape, spec.checkpoints)  # the kernel loaded, the policy solved
        t0 = time.thread_time()
        for r in range(spec.replicates):
            spec.game.simulate(params, replicate_seed(spec.seed, params, r), spec.run_shape, spec.checkpoints)
        out[i] = time.thread_time() - t0
    return out


def test_the_model_prices_each_point_as_the_kernel_takes_it():
    """Each point's share of the sweep's kernel time within 1.5x of the
    truth, for the points holding 1% of it or more (a replicate of a few
    hundred microseconds is mostly its call); a share, so that a CPU faster
    or slower than the one the model was fitted on does not matter (the
    benchmark, benchmarks/dry_run.py, compares the seconds themselves)."""
    spec = parse_spec(SPEC.replace("[2, 3, 6]", "[3, 4, 6]"))
    model = cost.model_for("shut_the_box")
    priced, truth = cost.priced_points(spec, model), _true_seconds(spec)
    total, whole = sum(truth.values()), sum(priced.values())
    shares = {i: (priced[i] / whole) / (truth[i] / total) for i in truth if truth[i] >= 0.01 * total}
    assert len(shares) >= 3 and all(1 / 1.5 <= s <= 1.5 for s in shares.values()), shares
    assert max(truth.values()) > 30 * min(truth.values())  # the grid is as uneven as it says


def test_every_shipped_sweep_has_a_model_tabulating_its_grid():
    """A shipped sweep is priced from measured rows: every choice (a policy, a
    tally) is tabulated, never averaged, and every number lies within the
    tabulated ones (interpolated), or above the largest (the largest's: a
    kernel playing more games side by side costs no more per turn)."""
    for path in sorted((ROOT / "sweeps").glob("*.toml")):
        data = tomllib.loads(path.read_text())
        model = cost.model_for(data["game"])
        assert model is not None, path.name
        for i, key in enumerate(model.keys):
            values = data.get("grid", {}).get(key) or [data.get("params", {}).get(key, data.get("run", {}).get(key))]
            tabulated = {row[i] for row in model.rows}
            numbers = all(isinstance(t, (int, float)) for t in tabulated)
            for value in values:
                seats = set(value.split(",")) if isinstance(value, str) else {value}  # a policy per seat
                assert value is None or seats <= tabulated or numbers and value >= min(tabulated), (path.name, key)
