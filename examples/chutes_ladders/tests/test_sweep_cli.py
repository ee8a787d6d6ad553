"""End to end with the real ``boardsweep`` console script and no change to
boardsweep: the shipped sweep runs on a local Dask cluster into a zarr store,
is queried, and a smaller grid of the same spec is reported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from chutes_ladders import exact

def approx(x: float):
    return pytest.approx(x, rel=1e-9)


BOARDSWEEP = str(Path(sys.executable).parent / "boardsweep")
SWEEP = Path(__file__).resolve().parents[1] / "sweep.toml"


def cli(*args: str, timeout: float = 400) -> str:
    proc = subprocess.run([BOARDSWEEP, *args], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_games_lists_the_plugin():
    assert "chutes_ladders" in cli("games").split()
    text = cli("games", "chutes_ladders")
    for word in ("sides", "overshoot", "'stay', 'bounce', 'any'", "players", "board", "exact answer: yes"):
        assert word in text, word


def test_shipped_sweep_runs_is_stored_and_queried(tmp_path):
    store = tmp_path / "cl.zarr"
    out = cli("run", str(SWEEP), "--store", str(store), "--workers", "2")
    assert "store complete" in out
    ds = xr.open_zarr(store)
    assert ds.attrs["game"] == "chutes_ladders"
    assert dict(ds.sizes)["sides"] == 3 and dict(ds.sizes)["players"] == 3
    assert bool(ds["done"].all())
    point = {"sides": 6, "overshoot": "stay", "players": 1}
    assert abs(float(ds["exact_expected_spins"].sel(point)) - 39.225) < 5e-4
    # every game of every replicate counted once in its length histogram
    games = int(ds["checkpoint"].values[-1])
    assert games == 2000 and int(ds["hist"].isel(checkpoint=-1).sel(point).sum()) == 4 * games

    rows = json.loads(cli("query", str(store), "--sel", "sides=6", "--sel", "overshoot=stay",
                          "--sel", "players=1", "--format", "json"))
    by_round = {r["rounds"]: r for r in rows}
    pmf = exact.rounds_pmf("milton_bradley", 6, "stay", 1)
    assert by_round[20]["exact"] == approx(pmf[20])  # bins are numbers in JSON
    assert abs(by_round[20]["estimate"] - pmf[20]) < 5 * np.sqrt(pmf[20] / 8000)


def test_a_smaller_grid_of_the_shipped_sweep_is_reported(tmp_path):
    text = SWEEP.read_text()
    for line, new in (("sides = [4, 6, 8]", "sides = [6]"),
                      ('overshoot = ["stay", "bounce", "any"]', 'overshoot = ["stay", "any"]'),
                      ("players = [1, 2, 4]", "players = [3]"), ("games = 2000", "games = 500")):
        assert line in text
        text = text.replace(line, new)
    spec = tmp_path / "small.toml"
    spec.write_text(text)
    store, report = tmp_path / "small.zarr", tmp_path / "report"
    cli("run", str(spec), "--store", str(store), "--workers", "1")
    assert "report written" in cli("report", str(store), "--out", str(report))
    summary = json.loads((report / "summary.json").read_text())
    point = summary["sides=6,overshoot=any,players=3"]["estimates"]
    shares = exact.win_shares("milton_bradley", 6, "any", 3)
    for i, seat in enumerate(("P1", "P2", "P3")):
        entry = point["win_share"][seat]
        assert entry["exact"] == approx(shares[i])
        assert entry["low"] <= entry["estimate"] <= entry["high"]
    assert point["mean_rounds"]["value"]["exact"] == approx(
        exact.expected_rounds("milton_bradley", 6, "any", 3))
    assert (report / "index.html").stat().st_size > 0
