"""A plugin game that fails at import does not break `games` or `run` for the
other games; using it is refused in one line naming it and its error."""

from __future__ import annotations

import json

import pytest

from clirun import run_cli
from boardsweep.core import games


@pytest.fixture(autouse=True)
def broken(monkeypatch):
    """The broken plugin, registered for this module's tests only."""
    monkeypatch.setitem(games.GAME_MODULES, "broken", "broken_game")


def test_games_lists_the_others_and_names_the_broken_one(capsys):
    assert run_cli("games", "--format", "json") == 0
    out, err = capsys.readouterr()
    names = {g["name"] for g in json.loads(out)}
    assert {"monopoly", "shut_the_box", "toy"} <= names and "broken" not in names
    assert "game 'broken' cannot be loaded (RuntimeError: this plugin is broken (test))" in err


def test_a_spec_for_the_broken_game_is_refused_in_one_line(write_spec, toy_spec_text, capsys):
    spec = write_spec(toy_spec_text.replace('game = "toy"', 'game = "broken"'))
    assert run_cli("-q", "run", str(spec)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "game: game 'broken' cannot be loaded" in err[0], err


def test_a_plugin_breaking_the_exact_naming_rule_is_refused_in_one_line(monkeypatch, write_spec, toy_spec_text,
                                                                        capsys):
    """Plugins follow the store's naming rule: a Game whose exact variable is
    not named exact_* cannot be defined, and a run of it stops in one line."""
    monkeypatch.setitem(games.GAME_MODULES, "misnamed", "misnamed_game")
    assert run_cli("games", "--format", "json") == 0
    out, err = capsys.readouterr()
    assert "misnamed" not in {g["name"] for g in json.loads(out)}
    assert "exact variable 'expected_value' must be named exact_*" in err
    spec = write_spec(toy_spec_text.replace('game = "toy"', 'game = "misnamed"'))
    assert run_cli("-q", "run", str(spec)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "exact_expected_value" in err[0], err
