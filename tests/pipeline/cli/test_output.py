"""What the console script prints: help on a bare ``boardsweep``, ``simulate``'s
tables (one per set of labels, standard errors to two significant digits),
plural words, and product text that names sources by their own titles."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from boardsweep.pipeline.words import fmt_significant, plural

ROOT = Path(__file__).resolve().parents[3]


def boardsweep(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("boardsweep")
    cmd = [exe] if exe else [sys.executable, "-m", "boardsweep"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=300)


def test_bare_boardsweep_prints_its_help_and_succeeds():
    out = boardsweep()
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout.startswith("Usage: boardsweep") and "Commands:" in out.stdout and "simulate" in out.stdout


def _label_sets(summary: dict) -> dict[tuple, list[str]]:
    sets: dict[tuple, list[str]] = {}
    for key, value in summary.items():
        if isinstance(value, dict) and all(not isinstance(v, (dict, list)) for v in value.values()):
            sets.setdefault(tuple(value), []).append(key)
    return sets


@pytest.mark.parametrize("players", [4, 6])
def test_simulate_prints_one_table_per_set_of_labels(players):
    args = ("simulate", "hk_monopoly", "--set", f"players={players}", "--games", "100", "--seed", "1")
    table, raw = boardsweep(*args), boardsweep(*args, "--format", "json")
    assert table.returncode == 0 and raw.returncode == 0, table.stderr + raw.stderr
    seats = tuple(f"P{i}" for i in range(1, players + 1))
    sets = _label_sets(json.loads(raw.stdout))
    assert len(sets) == 2 and len(sets[seats]) >= 5  # seats: win share, interval, money, ...
    lines = table.stdout.splitlines()
    assert max(map(len, lines)) <= 80  # piped: 80 columns, nothing cut or wrapped
    if players == 4:
        assert table.stdout.count("┏") == len(sets)  # one table each, not one per result
    else:  # too wide for 80 columns either way: the seat table is split by results, never per seat
        assert table.stdout.count("┏") == len(sets) + 1 and not any(x.startswith("seat=") for x in lines)
    for names in sets.values():
        for name in names:
            assert any(name in x.split() for x in lines), name
    assert all(any(seat in x for x in lines) for seat in seats)
    assert "location" in table.stdout and "seat" in table.stdout  # label columns named by the game's dims


def test_simulate_prints_standard_errors_to_two_significant_digits():
    args = ("simulate", "shut_the_box", "--set", "dice_sides=4", "--games", "3000", "--seed", "2")
    table, raw = boardsweep(*args), boardsweep(*args, "--format", "json")
    assert table.returncode == 0, table.stderr
    se = json.loads(raw.stdout)["std_error"]
    line = next(x for x in table.stdout.splitlines() if x.startswith("std_error:"))
    shown = line.split(":", 1)[1].strip()
    assert shown == f"{se:.2g}" and len(re.sub(r"^[0.]+|\.|e.*$", "", shown)) <= 2
    assert float(shown) == pytest.approx(se, rel=0.05)


@pytest.mark.parametrize("word, count, expected", [
    ("location", 3, "locations"), ("location", 1, "location"), ("rolls", 3, "rolls"),
    ("rounds", 3, "rounds"), ("seat", 2, "seats"), ("policy", 2, "policies"), ("day", 2, "days"),
])
def test_plural(word, count, expected):
    assert plural(word, count) == expected


def test_significant_digits():
    assert fmt_significant(0.7568350514792334, 2) == "0.76"
    assert fmt_significant(3.4449e-05, 2) == "3.4e-05"
    assert fmt_significant(float("nan"), 2) == "-"


def test_product_text_names_sources_by_their_own_titles():
    """'seed 003' and the like name this repository's source documents, which users never see."""
    found = []
    for folder in ("core", "pipeline", "sweeps", "docker", "examples", "benchmarks"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in {".py", ".toml", ".md", ".j2", ".html", ".yaml", ".yml"} and "tests" not in path.parts:
                text = path.read_text(errors="replace")
                found += [f"{path.relative_to(ROOT)}: {m.group(0)}"
                          for m in re.finditer(r"(?i)\bseeds? 0\d\d", text)]
    found += [f"README.md: {m.group(0)}" for m in re.finditer(r"(?i)\bseeds? 0\d\d", (ROOT / "README.md").read_text())]
    assert found == []
