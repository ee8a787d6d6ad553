"""Scripted replay: seed 003's 20-turn trace, through the API and the CLI."""

import json
import subprocess
import sys

import pytest

from boardsweep.core.games import ParameterError
from boardsweep.core.monopoly.replay import replay

SEED_003_DICE = [6, 4, 5, 3, 3, 5, 6, 2, 5, 4, 4, 1, 2, 6, 4, 4, 4, 4, 2, 2, 4, 3, 4, 4, 1, 4,
                 3, 4, 1, 2, 3, 6, 5, 4, 5, 5, 1, 2, 5, 4, 3, 3, 1, 1, 2, 1, 1, 3]
SEED_003_TALLY = [int(x) for x in
                  "0 1 0 1 0 0 0 1 1 0 7 0 1 0 0 1 1 0 2 1 0 0 0 1 1 0 1 0 0 1 0 0 2 0 1 0 0 0 0 0"
                  .split()]
SEED_003_PARAMS = {"chance_deck": "classic15", "jail_strategy": "long", "tally": "per_landing"}


def test_seed_003_trace_reproduces_its_tally():
    out = replay(SEED_003_PARAMS, SEED_003_DICE, ["JAIL"], turns=20)
    assert out["squares"] == SEED_003_TALLY
    assert out["turns"] == 20 and out["rolls"] == 23
    assert out["counts"]["IN_JAIL"] == 6 and out["counts"]["JAIL"] == 1  # 1 visit, 6 in jail
    assert out["counts"]["G2J"] == 0


def test_seed_003_trace_through_the_cli():
    cmd = [sys.executable, "-m", "boardsweep", "replay", "monopoly",
           "--dice", ",".join(map(str, SEED_003_DICE)), "--cards", "JAIL", "--turns", "20",
           "--set", "chance_deck=classic15", "--set", "jail_strategy=long",
           "--set", "tally=per_landing", "--format", "json"]
    out = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    assert out["squares"] == SEED_003_TALLY


def test_back_three_from_ch3_resolves_community_chest():
    """GO -6+5-> C1.  6+6 -> E2 (double), 6+5 -> G3.  1+1 -> CH3 (double): BACK3 ->
    CC3, whose card GO moves the token to GO; the double earns 1+2 -> A2."""
    out = replay({"tally": "per_landing"}, [6, 5, 6, 6, 6, 5, 1, 1, 1, 2], ["BACK3", "GO"])
    counted = {k: v for k, v in out["counts"].items() if v}
    assert counted == {"C1": 1, "E2": 1, "G3": 1, "CH3": 1, "CC3": 1, "GO": 1, "A2": 1}
    assert out["turns"] == 3 and out["rolls"] == 5 and out["stopped"] == "completed"
    per_roll = replay({"tally": "per_roll"}, [6, 5, 6, 6, 6, 5, 1, 1, 1, 2], ["BACK3", "GO"])
    assert {k: v for k, v in per_roll["counts"].items() if v} == {
        "C1": 1, "E2": 1, "G3": 1, "GO": 1, "A2": 1}


def test_replay_names_its_real_stop_and_what_it_did_not_use():
    """3+4 lands on CH1, which needs a card: without one the turn is dropped."""
    out = replay({}, [3, 4, 1, 1], [])
    assert out["stopped"] == "the card draws ran out mid-turn: turn 1 was dropped"
    assert out["turns"] == 0 and out["unused_dice"] == [3, 4, 1, 1] and out["unused_cards"] == []
    # 1+2 -> A2, 3+4 -> JAIL (visiting), 5+1 -> 16, then 2+2 3+3 doubles need a third roll
    out = replay({}, [1, 2, 3, 4, 5, 1, 2, 2, 3, 3], ["JAIL", "GO"])
    assert out["stopped"] == "the dice ran out mid-turn: turn 4 was dropped"
    assert out["turns"] == 3 and out["unused_dice"] == [2, 2, 3, 3]
    assert out["unused_cards"] == ["JAIL", "GO"]  # no card square was reached
    # the BACK3 script: both cards used; an extra one is reported, not ignored
    out = replay({"tally": "per_landing"}, [6, 5, 6, 6, 6, 5, 1, 1, 1, 2], ["BACK3", "GO", "STAY"])
    assert out["stopped"] == "completed" and out["unused_cards"] == ["STAY"] and out["unused_dice"] == []


def test_script_errors_are_clear():
    with pytest.raises(ParameterError, match="--dice"):
        replay({}, [1, 2, 3], [])
    with pytest.raises(ParameterError, match="--dice"):
        replay({"dice_sides": 6}, [7, 1], [])
    with pytest.raises(ParameterError, match="unknown card"):
        replay({}, [1, 2], ["FREE"])
    with pytest.raises(ParameterError, match="card draws ran out"):
        replay({}, [3, 4, 1, 1], [], turns=2)  # 3+4 lands on CH1 and needs a card
