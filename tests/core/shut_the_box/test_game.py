"""Shut the Box through the game interface and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from boardsweep.core.games import ParameterError, get_game
from boardsweep.pipeline.cli.commands import main

GAME = get_game("shut_the_box")


def test_declared_shapes():
    assert GAME.checkpoint_of == "games"
    assert GAME.run_shape == {"games": 10000}
    assert len(GAME.coords["rolls"]) == 1024
    for var in GAME.variables.values():
        assert var.dims[0] == "checkpoint"
        assert all(d in GAME.coords for d in var.dims[1:])
    for var in GAME.exact_variables.values():
        assert all(d in GAME.coords for d in var.dims)


def test_simulate_and_exact_match_declarations():
    params = GAME.resolve_params({"dice_sides": 4, "policy": "greedy"})
    run_shape = GAME.resolve_run_shape({"games": 300})
    cps = GAME.default_checkpoints(run_shape)
    sim = GAME.simulate(params, 9, run_shape, cps)
    assert set(sim) == set(GAME.variables)
    for name, var in GAME.variables.items():
        assert sim[name].dtype == np.dtype(var.dtype)
        assert sim[name].shape == (cps.size,) + tuple(len(GAME.coords[d]) for d in var.dims[1:])
    ex = GAME.exact(params, run_shape, cps)
    assert set(ex) == set(GAME.exact_variables)
    assert ex["exact_expected_rolls"].shape == ()
    assert ex["exact_pmf"].shape == (1024,)
    assert ex["exact_pmf"].sum() == pytest.approx(1.0, abs=1e-12)
    summary = GAME.summarize(params, sim, run_shape)
    assert summary["games"] == 300
    assert summary["mean_rolls"] == sim["rolls_sum"][-1] / 300


def test_exact_is_nan_beyond_the_limit():
    params = GAME.resolve_params({"dice_sides": 9, "policy": "random"})
    ex = GAME.exact(params, {"games": 1}, np.array([1]))
    assert np.isnan(ex["exact_expected_rolls"]) and np.isnan(ex["exact_pmf"]).all()


@pytest.mark.parametrize(
    "given, name",
    [
        ({"dice_sides": 1}, "dice_sides"),
        ({"dice_sides": 11}, "dice_sides"),
        ({"dice_sides": "6"}, "dice_sides"),
        ({"dice_sides": True}, "dice_sides"),
        ({"policy": "smart"}, "policy"),
        ({"dice_sides": 9, "policy": "optimal"}, "dice_sides"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_invalid_parameters_name_the_parameter(given, name):
    with pytest.raises(ParameterError, match=name):
        GAME.resolve_params(given)


def test_summarize_exact_refuses_beyond_limit():
    with pytest.raises(ParameterError, match="dice_sides"):
        GAME.summarize_exact({"dice_sides": 9, "policy": "greedy"})


def _cli(capsys, *argv):
    try:
        main(list(argv))
        code = 0
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_exact_and_simulate(capsys):
    code, out, err = _cli(capsys, "exact", "shut_the_box", "--set", "dice_sides=6", "--format", "json")
    assert code == 0, err
    summary = json.loads(out)
    assert round(summary["expected_rolls"], 6) == 50.317928
    assert summary["quantiles"]["0.5"] is not None
    code, out, err = _cli(capsys, "simulate", "shut_the_box", "--set", "dice_sides=3", "--set",
                          "policy=random", "--games", "500", "--seed", "4", "--format", "json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["games"] == 500 and summary["std_error"] > 0


def test_cli_rejects_bad_policy(capsys):
    code, _, err = _cli(capsys, "exact", "shut_the_box", "--set", "policy=best")
    assert code == 2 and "'policy'" in err
