"""The game commands of the ``boardsweep`` console script, run as a user runs them:
``exact``, ``simulate`` and their errors (one line on stderr, exit code 2)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from boardsweep.core.monopoly.board import LOCATIONS


def boardsweep(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("boardsweep")
    cmd = [exe] if exe else [sys.executable, "-m", "boardsweep"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=300)


def test_exact_monopoly_json():
    out = boardsweep("exact", "monopoly", "--set", "dice_sides=4", "--format", "json")
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert list(answer["frequency"]) == list(LOCATIONS)
    assert sum(answer["frequency"].values()) == pytest.approx(1.0, abs=1e-12)
    assert answer["modal"] == "101524"


def test_exact_monopoly_table_with_long_jail():
    out = boardsweep("exact", "monopoly", "--set", "jail_strategy=long", "--set", "tally=per_landing")
    assert out.returncode == 0, out.stderr
    assert "IN_JAIL" in out.stdout and "modal" in out.stdout


def test_simulate_monopoly_json_is_reproducible():
    args = ("simulate", "monopoly", "--set", "dice_sides=6", "--turns", "20000", "--games", "2",
            "--players", "2", "--seed", "3", "--format", "json")
    first, second = boardsweep(*args), boardsweep(*args)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    run = json.loads(first.stdout)
    assert list(run["counts"]) == list(LOCATIONS)
    assert sum(run["counts"].values()) == run["events"] and run["rolls"] >= 2 * 2 * 20000
    assert sum(run["frequency"].values()) == pytest.approx(1.0)
    assert len(run["modal"]) == 6


@pytest.mark.parametrize("args, words", [
    (("exact", "monopoly", "--set", "dice_sides=1"), ["'dice_sides'", "1", ">= 2"]),
    (("exact", "monopoly", "--set", "deck=x"), ["no parameter 'deck'", "deck_policy"]),
    (("exact", "monopoly", "--set", "jail_strategy=medium"), ["'jail_strategy'", "'short', 'long'"]),
    (("exact", "monopoly", "--set", "dice_sides"), ["NAME=VALUE"]),
    (("exact", "monopoly", "--set", "deck_policy=shuffled_cycle"), ["'deck_policy'", "'independent'"]),
    (("exact", "chess"), ["unknown game 'chess'", "monopoly"]),
    (("simulate", "monopoly", "--games", "0"), ["'games'", ">= 1"]),
    (("simulate", "shut_the_box", "--turns", "5"), ["--turns", "shut_the_box", "--games"]),
    (("simulate", "monopoly", "--seed", "x"), ["--seed"]),
    (("replay", "monopoly", "--dice", "1,2,3"), ["--dice"]),
])
def test_bad_input_is_one_line_and_exit_code_2(args, words):
    out = boardsweep(*args)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("boardsweep: error: ")
    for word in words:
        assert word in lines[0]
