"""The exact movement chain and the CLI's exact/simulate output."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from boardsweep.core.games import get_game
from boardsweep.core.hk_monopoly.board import default_board
from boardsweep.core.hk_monopoly.exact import horizon_frequency, stationary_frequency, transition_matrix
from boardsweep.pipeline.cli.commands import cli

BOARD = default_board()
GAME = get_game("hk_monopoly")


@pytest.mark.parametrize("long_jail", [False, True])
def test_transition_matrix_rows(long_jail):
    P = transition_matrix(BOARD.table, BOARD.jail, 4, long_jail).toarray()
    assert P.shape == (23, 23)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-15)
    # From Go: 2d4 sums 2..8 with weights 1,2,3,4,3,2,1 (/16) onto squares 2..8.
    np.testing.assert_allclose(P[0, 2:9], np.array([1, 2, 3, 4, 3, 2, 1]) / 16)
    # Nothing ever rests on Go To Jail (15); from Shatin (11), a 4 means jail.
    assert P[:, 15].sum() == 0
    assert P[11, 20] == pytest.approx(3 / 16)
    jail_row = P[20]
    if long_jail:
        # doubles (1/4) move by 2, 4, 6 or 8 from the jail square; else one more failed throw
        assert jail_row[21] == pytest.approx(12 / 16)
        assert jail_row[[7, 9, 11, 13]] == pytest.approx([1 / 16] * 4)
        np.testing.assert_allclose(P[22, :20], P[5, :20])  # third turn always moves
    else:
        np.testing.assert_allclose(jail_row, P[5])  # pays and moves like a free token


@pytest.mark.parametrize("long_jail", [False, True])
@pytest.mark.parametrize("sides", [2, 4, 6])
def test_stationary_matches_dense_power_iteration(long_jail, sides):
    freq = stationary_frequency(BOARD.table, BOARD.jail, sides, long_jail)
    P = transition_matrix(BOARD.table, BOARD.jail, sides, long_jail).toarray()
    dist = np.linalg.matrix_power(P, 4096)[0]
    expected = np.concatenate([dist[:20], [dist[20:].sum()]])
    np.testing.assert_allclose(freq, expected, atol=1e-12)
    assert freq.sum() == pytest.approx(1.0, abs=1e-12) and freq[15] == 0


def test_long_jail_keeps_tokens_in_jail_longer():
    short = stationary_frequency(BOARD.table, BOARD.jail, 4, False)
    long = stationary_frequency(BOARD.table, BOARD.jail, 4, True)
    assert long[20] > 2 * short[20]
    # Short jail: every turn in jail follows a landing on Go To Jail, so IN_JAIL
    # has the long-run share of turns that land there.
    P = transition_matrix(BOARD.table, BOARD.jail, 4, False).toarray()
    pi = np.concatenate([short[:20], [short[20], 0, 0]])
    assert short[20] == pytest.approx(pi @ P[:, 20])


def test_horizon_frequency_is_exact_for_one_turn_and_tends_to_stationary():
    one = horizon_frequency(BOARD.table, BOARD.go, BOARD.jail, 4, True, 1)
    np.testing.assert_allclose(one[2:9], np.array([1, 2, 3, 4, 3, 2, 1]) / 16)
    pi = stationary_frequency(BOARD.table, BOARD.jail, 4, True)
    gaps = [np.abs(horizon_frequency(BOARD.table, BOARD.go, BOARD.jail, 4, True, t) - pi).max()
            for t in (100, 1000)]
    assert gaps[1] < gaps[0] / 5 and gaps[1] < 3e-4


def test_exact_through_the_interface_mixes_seats():
    params = GAME.resolve_params({"players": 3, "jail_strategy": "short,long,long"})
    arrays = GAME.exact(params, {"games": 10}, None)
    short = stationary_frequency(BOARD.table, BOARD.jail, 4, False)
    long = stationary_frequency(BOARD.table, BOARD.jail, 4, True)
    np.testing.assert_allclose(arrays["exact_frequency"], (short + 2 * long) / 3)
    assert set(arrays) == set(GAME.exact_variables)


def invoke(args: list[str]) -> dict:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_cli_exact_json():
    out = invoke(["exact", "hk_monopoly", "--set", "jail_strategy=long", "--format", "json"])
    freq = out["frequency"]
    assert list(freq) == list(BOARD.labels())
    assert "IN_JAIL" in freq and "Central" in freq and "Chance (9)" in freq
    assert sum(freq.values()) == pytest.approx(1.0, abs=1e-12)
    long = stationary_frequency(BOARD.table, BOARD.jail, 4, True)
    assert freq["IN_JAIL"] == pytest.approx(long[20])
    assert out["horizon_turns"] == 100
    assert sum(out["horizon_frequency"].values()) == pytest.approx(1.0, abs=1e-12)


def test_cli_simulate_json():
    out = invoke(["simulate", "hk_monopoly", "--set", "players=4", "--set",
                  "buy_policy=always,never,reserve:300,always", "--games", "200", "--seed", "1",
                  "--format", "json"])
    assert out["games"] == 200 and list(out["win_share"]) == ["P1", "P2", "P3", "P4"]
    for seat, share in out["win_share"].items():
        assert out["win_low95"][seat] <= share <= out["win_high95"][seat]
    assert sum(out["win_share"].values()) + sum(out["tie_share"].values()) >= 1 - 1e-12
    assert out["strategy"]["P3"] == "reserve:300/short"
    assert 0 < out["mean_rounds"] <= 100
    assert sum(out["frequency"].values()) == pytest.approx(1.0)
    assert out["mean_properties"]["P2"] == 0
    assert set(out["retirement_share"]) == {"P1", "P2", "P3", "P4"}
