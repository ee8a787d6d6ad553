"""The pipeline with the real registered games (skipped where a game is absent)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from boardsweep.core.games import game_names
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.analysis.query import modal_string, rows
from boardsweep.pipeline.store import open_sweep
from boardsweep.pipeline.spec.parse import load_spec, parse_spec

from specs import spec_toml  # tests/support is on sys.path

SWEEPS = Path(__file__).resolve().parents[3] / "sweeps"


def needs(game: str):
    return pytest.mark.skipif(game not in game_names(), reason=f"game {game!r} not registered yet")


@pytest.mark.parametrize("path", sorted(SWEEPS.glob("*.toml")), ids=lambda p: p.name)
def test_shipped_specs_are_valid(path):
    game = __import__("tomllib").loads(path.read_text())["game"]
    if game not in game_names():
        pytest.skip(f"game {game!r} not registered yet")
    spec = load_spec(path)
    assert spec.points()


@needs("monopoly")
def test_stats102a_spec_is_the_assignment():
    spec = load_spec(SWEEPS / "stats102a.toml")
    params = spec.points()[0][1]
    assert params == {"dice_sides": 6, "deck_policy": "independent", "jail_strategy": "long",
                      "chance_deck": "classic15", "tally": "per_landing"}
    assert spec.run_shape == {"games": 1000, "players": 2, "turns": 150} and spec.replicates > 1


@needs("monopoly")
def test_monopoly_sweep_pe84_modal_strings(tmp_path, cluster2):
    text = (SWEEPS / "pe84.toml").read_text()
    text = text.replace("turns = 10000000", "turns = 20000").replace("replicates = 16", "replicates = 2")
    spec = parse_spec(text, "pe84-small.toml")
    url = tmp_path / "pe84.zarr"
    assert run_sweep(spec, str(url), scheduler=cluster2).complete
    ds = open_sweep(url)
    assert ds.sizes["location"] == 41 and str(ds["location"].values[-1]) == "IN_JAIL"
    exact = ds["exact_frequency"].sel(deck_policy="independent")
    assert modal_string(exact.sel(dice_sides=6)) == "102400"
    assert modal_string(exact.sel(dice_sides=4)) == "101524"
    counts = ds["counts"].values
    assert np.array_equal(counts.sum(-1), ds["events"].values)
    assert rows(ds, top=3)


@needs("hk_monopoly")
def test_hk_monopoly_sweep(tmp_path, cluster2):
    # nobody buys and Chance only pays: nobody retires, so the landing reference holds (and is shown)
    text = spec_toml("hk_monopoly", name="hk", seed=4, grid={"dice_sides": [4, 6]},
                     params={"players": 2, "buy_policy": "never", "chance": "uniform:10:200:10"},
                     run={"replicates": 2, "games": 20}, checkpoints={"count": 3})
    url = tmp_path / "hk.zarr"
    assert run_sweep(parse_spec(text, "hk.toml"), str(url), scheduler=cluster2).complete
    ds = open_sweep(url)
    found = rows(ds, "landings", top=2)
    assert len(found) == 4 and all(r["exact"] is not None for r in found)
