"""Strategies head to head (:mod:`boardsweep.pipeline.analysis.headtohead`) on a real
money-game store: the difference of win shares against the truth of an exact
symmetry, the counts against the raw store, and the summary that prints it."""

from __future__ import annotations

import io

import numpy as np
import pytest
import zarr

from clirun import run_cli
from specs import spec_toml

from boardsweep.core.games import game_names
from boardsweep.pipeline.analysis.headtohead import head_to_head
from boardsweep.pipeline.store import load_sweep

pytestmark = pytest.mark.skipif("hk_monopoly" not in game_names(), reason="hk_monopoly not registered")

#: "reserve:0" buys whenever she can pay: the same policy as "always" under another name, so the
#: pair's true difference is exactly 0; "never" vs "always" differs; the last line-up has no
#: partner in the other seat order (unbalanced: left out).
LINEUPS = ["always,reserve:0", "reserve:0,always", "always,never", "never,always", "never,reserve:300"]
SPEC = spec_toml("hk_monopoly", name="versus", seed=53, params={"players": 2, "rounds": 100},
                 grid={"buy_policy": LINEUPS}, run={"replicates": 4, "games": 500},
                 checkpoints={"count": 3}) + (
    '\n[answer]\nquestion = "Which buying policy wins?"\nheadline = "win_share"\naxis = "buy_policy"\n')


@pytest.fixture(scope="module")
def store(tmp_path_factory, cluster2):
    folder = tmp_path_factory.mktemp("versus")
    (folder / "versus.toml").write_text(SPEC)
    url = str(folder / "versus.zarr")
    assert run_cli("run", str(folder / "versus.toml"), "--store", url, "--scheduler", cluster2, "-q") == 0
    return url


def test_identical_policies_differ_by_nothing_within_five_standard_errors(store):
    """The exact symmetry: a policy against itself (seat order balanced) has
    difference 0; the estimate is within 5 s.e. of it, and the s.e. is the
    size the per-game variance says (a win share near 1/2 over 4,000 games)."""
    table = head_to_head(load_sweep(store))
    same = table[(table["a"] == "always") & (table["b"] == "reserve:0")].iloc[0]
    assert abs(same["difference"]) < 5 * same["se"]
    assert same["games"] == 2 * 4 * 500
    assert 0.5 * np.sqrt(0.9 / 4000) < same["se"] < 2 * np.sqrt(1.0 / 4000)
    assert same["low"] < 0 < same["high"]


def test_the_counts_are_the_stores_and_an_unbalanced_pair_is_left_out(store):
    """Shares, difference and capped share from the raw zarr arrays: wins of
    the seat playing each policy, pooled over both seat orders; a two-seat
    game ended early exactly when a seat retired."""
    table = head_to_head(load_sweep(store))
    assert table.attrs["unbalanced"] == ["never vs reserve:300"]
    assert len(table) == 2 and table.attrs["axis"] == "buy_policy" and set(table["cap"]) == {100}
    wins = zarr.open_array(store, path="wins", mode="r")[...][:, :, -1, :2].sum(axis=1)
    games = zarr.open_array(store, path="games", mode="r")[...][:, :, -1].sum(axis=1)
    retired = zarr.open_array(store, path="retired", mode="r")[...][:, :, -1, :2].sum(axis=(1, 2))
    row = table[table["a"] == "always"].set_index("b").loc["never"]
    always = (wins[2, 0] / games[2] + wins[3, 1] / games[3]) / 2
    never = (wins[2, 1] / games[2] + wins[3, 0] / games[3]) / 2
    assert row["share_a"] == pytest.approx(always) and row["share_b"] == pytest.approx(never)
    assert row["difference"] == pytest.approx(always - never)
    assert row["capped_share"] == pytest.approx(1 - (retired[2] + retired[3]) / (games[2] + games[3]))
    assert row["p_holm"] == pytest.approx(min(1.0, 2 * row["p"]))  # two pairs in the Holm family, the smaller p
    assert row["p_holm"] < 0.01  # buying and never buying differ at 100 rounds (measured: by about 0.27)


def test_the_summary_answers_with_the_difference_and_its_interval(store, monkeypatch):
    """``query --summary`` prints, under the question, each pair's difference
    with its 95% interval and Holm p, the capped share, and the answer in words."""
    monkeypatch.setenv("COLUMNS", "100")
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    assert run_cli("query", store, "--summary") == 0
    text = out.getvalue()
    lines = text.splitlines()
    assert lines[0] == "Which buying policy wins?"
    assert "A - B [95%]" in lines[1] and "capped" in lines[1]
    assert any(line.startswith(("always vs reserve:0", "reserve:0 vs always")) for line in lines[3:5])
    said = " ".join(text.split("\nverdict: ")[0].split())  # as read, not as wrapped
    answers = ["answer: " + part for part in said.split(" answer: ")[1:]]
    assert len(answers) == 2
    assert any("no difference found" in line and "95% interval" in line for line in answers)
    assert any(line.startswith("answer: never beats always") or line.startswith("answer: always beats never")
               for line in answers)
    assert all("of its games ended at the 100-round cap" in line for line in answers)
    assert text.index("answer: ") < text.index("verdict: ")


def test_the_pairs_fit_80_columns(store, monkeypatch):
    """At 80 columns (a log file, a small terminal) every pair's row is whole:
    no cell cut with an ellipsis, no line wider than 80."""
    monkeypatch.setenv("COLUMNS", "80")
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    assert run_cli("query", store, "--summary") == 0
    lines = out.getvalue().splitlines()
    rows = lines[1:5]  # header, rule, the two pairs
    assert all(len(line) <= 80 and "…" not in line for line in rows), rows
    assert "A - B [95%]" in rows[0]


def test_the_accessor_and_the_report_give_the_same_table(store, tmp_path):
    """``ds.boardsweep.head_to_head()`` is the analysis table; the report
    writes it whole to head_to_head.csv and draws the pairs as its answer figure."""
    import json

    import pandas as pd

    from boardsweep.pipeline.api import report as write_report

    ds = load_sweep(store)
    table = ds.boardsweep.head_to_head()
    pd.testing.assert_frame_equal(table, head_to_head(ds))
    write_report(store, tmp_path / "r")
    written = pd.read_csv(tmp_path / "r" / "head_to_head.csv")
    np.testing.assert_allclose(written["difference"], table["difference"], rtol=1e-12)
    caption = json.loads((tmp_path / "r" / "report.json").read_text())["figures"]["answer.png"]
    assert "head to head" in caption and "95% t interval" in caption
