"""A large grid is planned without a silent wait: the run says at once that
it prepares the store and plans the points, and creating the empty store
builds one dask chunk per array (a graph of one task per grid point and array
took minutes at 10^5 points; see benchmarks/planning.py)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from boardsweep.pipeline.views import terminal
from boardsweep.pipeline.views import display
from boardsweep.pipeline.analysis import planned_work, select
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import template


@pytest.fixture(scope="module")
def large_spec():
    from specs import TOY_SPEC  # tests/support is on sys.path

    sides = ", ".join(str(n) for n in range(2, 2 + display.PLANNING_LINE_POINTS // 2))
    return parse_spec(TOY_SPEC.replace("dice_sides = [2, 3]", f"dice_sides = [{sides}]"), "large.toml")


@pytest.fixture(autouse=True)
def _normal_verbosity(monkeypatch):
    """An earlier in-process ``boardsweep -q`` leaves the module's verbosity quiet."""
    monkeypatch.setattr(terminal, "_VERBOSITY", 0)


def _banner(spec) -> str:
    out = io.StringIO()
    display.announce(Console(file=out, width=200), spec, "/tmp/large.zarr", planned_work(spec))
    return out.getvalue()


def test_a_large_grid_says_it_is_being_planned(large_spec):
    points = display.PLANNING_LINE_POINTS
    assert f"preparing the store and planning {points} grid points" in _banner(large_spec)


def test_a_small_grid_says_nothing_more(toy_spec_text):
    assert "planning" not in _banner(parse_spec(toy_spec_text, "toy.toml"))


def test_the_empty_store_is_one_dask_chunk_per_array_and_one_zarr_chunk_per_task(large_spec):
    ds, encoding = template(large_spec, large_spec.game)
    lazy = [name for name, v in ds.data_vars.items() if hasattr(v.data, "npartitions")]
    assert lazy and all(ds[name].data.npartitions == 1 for name in lazy)
    assert encoding["counts"]["chunks"][:3] == (1, 1, large_spec.block)  # grid point x task block


# Nothing quadratic on one long axis (issue 34): 10^5 grid points on one axis,
# each guard counting the work done, never timing it.

LONG_AXIS = 100_000


class Label:
    """A grid value that counts how often it is turned into text (``str``),
    and stops the test once that passes ``Label.most`` (a quadratic lookup
    would take hours, not fail)."""

    made, most = 0, 0

    def __init__(self, n: int) -> None:
        self.n = n

    def __str__(self) -> str:
        Label.made += 1
        assert Label.made <= Label.most, f"more than {Label.most} values turned into text"
        return f"v{self.n}"


def _long_axis(values):
    import numpy as np
    import xarray as xr

    return xr.Dataset(coords={"axis": np.array(values, dtype=object)}, attrs={"grid_axes": ["axis"]})


def test_selecting_every_value_of_a_long_axis_reads_the_axis_once():
    """``--sel axis=v0,v1,...`` of all 10^5 values: each value of the axis is
    turned into text once (the lookup compared every value given with every
    value of the axis: 10^10 comparisons), and the values come back in order."""
    values = [Label(n) for n in range(LONG_AXIS)]
    ds = _long_axis(values)
    wanted = ",".join(f"v{n}" for n in reversed(range(LONG_AXIS)))
    Label.made, Label.most = 0, 2 * LONG_AXIS
    picked = select(ds, (f"axis={wanted}",), ValueError)
    assert [v.n for v in picked["axis"]] == list(reversed(range(LONG_AXIS)))


def test_a_value_not_on_a_long_axis_is_named_in_one_short_line():
    ds = _long_axis([f"reserve:{10 * n}" for n in range(LONG_AXIS)])
    with pytest.raises(ValueError) as caught:
        select(ds, ("axis=reserve:5",), ValueError)
    line = str(caught.value)
    assert "'reserve:5' is not on axis 'axis'" in line and "(99980 more)" in line
    assert "reserve:0, reserve:10," in line and line.endswith("reserve:999990") and len(line) < 600


@pytest.mark.slow
def test_the_seats_of_a_long_axis_are_found_with_one_reading_of_the_spec(monkeypatch):
    """The money game's seats in play at 10^5 grid points: the spec (which
    holds the grid) is parsed and the game looked up at most once, not once
    per point (quadratic, and a lookup scans the installed entry points)."""
    import json

    import numpy as np
    import xarray as xr

    from boardsweep.pipeline.analysis import dataset, headlines

    reserves = [f"reserve:{10 * n}" for n in range(LONG_AXIS)]
    seats = ["P1", "P2", "P3", "P4", "P5", "P6"]
    ds = xr.Dataset(coords={"buy_policy": np.array(reserves, dtype=object), "seat": seats},
                    attrs={"game": "hk_monopoly", "grid_axes": ["buy_policy"],
                           "spec_canonical": json.dumps({"params": {"players": 3}, "grid": {"buy_policy": reserves}})})
    calls = []

    def counted(name, real):
        def call(ds):
            calls.append(name)
            assert len(calls) <= 2, f"{name} called again: once per grid point?"  # stops a quadratic loop at once
            return real(ds)
        return call

    for module, name in ((dataset, "canonical_spec"), (dataset, "game_of"), (headlines, "game_of"),
                         (headlines, "recorded_spec")):  # each reading of the spec, where headlines makes it
        monkeypatch.setattr(module, name, counted(name, getattr(module, name)))
    wins = xr.DataArray(np.ones((LONG_AXIS, len(seats))), dims=("buy_policy", "seat"))
    out = headlines._seats_in_play(ds, wins).values
    assert 1 <= len(calls) <= 2, calls
    assert (out[:, :3] == 1).all() and np.isnan(out[:, 3:]).all()


def test_a_long_grid_is_validated_per_value_and_checked_per_combination(monkeypatch):
    """The money game's spec at 10^5 grid points (dice_sides 10 x rounds 10^4):
    each distinct value is validated once, and the game's cross-parameter
    check and labels run once per combination of the parameters they read
    (one combination here), not once per grid point; every point still
    resolves as the game resolves it alone."""
    from collections import Counter

    from boardsweep.core import games
    from boardsweep.core.hk_monopoly import game as money

    calls: Counter = Counter()

    def counted(name, real):
        def call(*args):
            calls[name] += 1
            return real(*args)
        return call

    monkeypatch.setattr(games.Param, "validate", counted("validate", games.Param.validate))
    monkeypatch.setattr(money, "parse_buy_policy", counted("check", money.parse_buy_policy))  # _check_params's
    monkeypatch.setattr(money, "load_board", counted("labels", money.load_board))  # _coords' (and the board's check)
    dice, rounds = list(range(2, 12)), list(range(1, LONG_AXIS // 10 + 1))
    spec = parse_spec(f'name = "long"\ngame = "hk_monopoly"\nseed = 1\n[grid]\ndice_sides = {dice}\n'
                      f'rounds = {rounds}\n[run]\nreplicates = 1\ngames = 1\n', "long.toml")
    points = spec.resolved_points()
    assert len(points) == LONG_AXIS
    assert calls["validate"] <= 2 * (len(dice) + len(rounds) + len(money.GAME.params)), calls  # was 7 per point
    assert calls["check"] <= 2 and calls["labels"] <= 4, calls  # was one each per point
    game = spec.game
    for i in (0, 12_345, LONG_AXIS - 1):
        index, params = points[i]
        assert index == (i // len(rounds), i % len(rounds))
        assert params == game.resolve_params({"dice_sides": dice[index[0]], "rounds": rounds[index[1]]})


def test_the_verdict_of_a_long_axis_is_one_pass_over_its_tests(monkeypatch):
    """The verdict over 10^5 tested grid points: every point's agreement
    comes from one pass over the table of tests (it was one comparison of
    the whole table per tested point: 10^10), and only the points it names
    are turned into text."""
    import numpy as np
    import pandas as pd
    import xarray as xr

    from boardsweep.pipeline.analysis import headlines

    ds = _long_axis([Label(n) for n in range(LONG_AXIS)])
    p = np.full(LONG_AXIS, 0.5)
    p[[3, 70_000]] = 1e-12
    est = xr.Dataset({"p": ("axis", p), "z": ("axis", np.where(p < 0.1, 9.0, 0.7)), "df": ((), 7.0),
                      "se": ((), 0.01), "test_df": ((), 7.0), "test_se": ((), 0.01),
                      "exact": ("axis", np.zeros(LONG_AXIS))}, attrs={"dim": ""})
    compared = []
    equal = pd.Series.__eq__

    def counted(self, other):
        compared.append(1)
        assert len(compared) <= 10, "the whole table compared again: once per tested point?"  # stops at once
        return equal(self, other)

    monkeypatch.setattr(pd.Series, "__eq__", counted)
    Label.made, Label.most = 0, 10
    out = headlines.verdict(ds, found={"mean": est})
    assert out["tests"] == out["points"] == out["tested_points"] == LONG_AXIS
    assert out["flagged_points"] == [3, 70_000] and out["agree"] == LONG_AXIS - 2
    assert [i for i, a in enumerate(out["point_agree"]) if not a] == [3, 70_000]
    assert out["flagged"][1]["point"] == "axis=v70000" and Label.made <= 4
