"""Exact answers: the published one-player expectation, analytic small boards,
two independent computations of the same quantity, and board-file errors."""

from __future__ import annotations

import numpy as np
import pytest

from boardsweep.core.games import ParameterError
from chutes_ladders import exact
from chutes_ladders.board import load_board, move_table

MB = "milton_bradley"


def test_althoen_king_schilling_1993_one_player_exact_landing():
    """About 39.2 spins for one player on the Milton Bradley board (exact landing)."""
    assert round(exact.expected_spins(MB, 6, "stay"), 1) == 39.2
    assert abs(exact.expected_spins(MB, 6, "stay") - 39.225) < 5e-4


@pytest.mark.parametrize("overshoot", ["stay", "bounce", "any"])
def test_linear_solve_equals_sum_of_survival_and_pmf_mean(overshoot):
    e = exact.expected_spins(MB, 6, overshoot)
    S, f = exact.survival(MB, 6, overshoot), exact.spins_pmf(MB, 6, overshoot)
    assert S[-1] < exact.TAIL and abs(f.sum() - 1) < 1e-12
    np.testing.assert_allclose(S.sum(), e, rtol=1e-9)
    np.testing.assert_allclose((np.arange(f.size) * f).sum(), e, rtol=1e-9)
    assert f[:7].tolist() == [0.0] * 7  # at least 7 spins: 1->38, 38->..->100 needs 6 more


def test_finishing_on_any_spin_is_fastest_and_bouncing_slowest():
    stay, bounce, anyway = (exact.expected_spins(MB, 6, o) for o in ("stay", "bounce", "any"))
    assert anyway < stay < bounce


@pytest.mark.parametrize("players", [1, 2, 3, 5])
def test_several_players_pmf_win_shares_and_mean_agree(players):
    pmf = exact.rounds_pmf(MB, 6, "bounce", players)
    shares = exact.win_shares(MB, 6, "bounce", players)
    assert abs(pmf.sum() - 1) < 1e-12 and abs(shares.sum() - 1) < 1e-12
    assert np.all(np.diff(shares) < 0)  # spinning earlier is an advantage
    np.testing.assert_allclose((np.arange(pmf.size) * pmf).sum(),
                               exact.expected_rounds(MB, 6, "bounce", players), rtol=1e-9)


def write_board(tmp_path, text: str) -> str:
    path = tmp_path / "board.toml"
    path.write_text(text)
    return str(path)


def test_a_replaced_board_file_gives_the_hand_computed_answers(tmp_path):
    # three squares, no jumps, spinner 1..2; E solved by hand from the last square back
    board = write_board(tmp_path, "squares = 3\n")
    assert exact.expected_spins(board, 2, "any") == pytest.approx(2.25, rel=1e-12)
    assert exact.expected_spins(board, 2, "stay") == pytest.approx(3.0, rel=1e-12)
    assert exact.expected_spins(board, 2, "bounce") == pytest.approx(3.0, rel=1e-12)
    two = write_board(tmp_path, "squares = 2\n")
    # T = 1 or 2 with probability 1/2 each: P1 wins unless T1 = 2 and T2 = 1
    np.testing.assert_allclose(exact.win_shares(two, 2, "any", 2), [0.75, 0.25], rtol=1e-12)


def test_jumps_are_taken_after_the_spin(tmp_path):
    board = load_board(write_board(tmp_path, "squares = 10\n[ladders]\n2 = 9\n[chutes]\n8 = 1\n"))
    table = move_table(board, 3, "bounce")
    assert table[0].tolist() == [1, 9, 3]
    assert table[9].tolist() == [10, 9, 1]  # 11 bounces to 9; 12 bounces to 8, a chute to 1
    assert move_table(board, 3, "stay")[9].tolist() == [10, 9, 9]
    assert move_table(board, 3, "any")[9].tolist() == [10, 10, 10]


@pytest.mark.parametrize("text, key", [
    ("squares = 10\n[ladders]\n5 = 3\n", "ladders.5"),
    ("squares = 10\n[chutes]\n5 = 7\n", "chutes.5"),
    ("squares = 10\n[ladders]\n2 = 11\n", "ladders.2"),
    ("squares = 10\n[ladders]\n2 = 5\n5 = 8\n", "ladders.2"),
    ("squares = 1\n", "squares"),
    ("squares = 10\nsnakes = 3\n", "snakes"),
])
def test_a_faulty_board_file_is_named_with_its_key(tmp_path, text, key):
    path = write_board(tmp_path, text)
    with pytest.raises(ParameterError, match=f"board file {path}: key '{key}': expected"):
        load_board(path)


def test_a_missing_board_file_is_one_clear_error(tmp_path):
    with pytest.raises(ParameterError, match="parameter 'board': cannot read board file .*nope.toml"):
        load_board(str(tmp_path / "nope.toml"))


def test_the_game_declares_its_headline_answers():
    """Expected rounds (spins for one player), win share per seat and the length
    distribution, each from stored integer outputs, with its exact variable."""
    from boardsweep.core.games import get_game, headlines_of

    game = get_game("chutes_ladders")
    found = {h.name: h for h in headlines_of(game)}
    assert list(found) == ["mean_rounds", "win_share", "length_distribution"]
    for h in found.values():
        assert h.numerator in game.variables and h.exact in game.exact_variables
        assert h.squares in game.variables and h.basis == "units"  # pooled per-game standard errors
    assert found["mean_rounds"].squares == "rounds_sq_sum" and found["length_distribution"].kind == "distribution"
