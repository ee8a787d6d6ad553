"""The store describes itself (CF attributes), read back with plain xarray only."""

from __future__ import annotations

import json

import numpy as np
import xarray as xr

from boardsweep.pipeline.cli import main
from boardsweep.pipeline.execute import run_sweep
from boardsweep.pipeline.spec import parse_spec

from conftest import spec_toml  # tests/pipeline is on sys.path

SPEC = spec_toml(
    "monopoly", name="meta", seed=11,
    description="Dice 4 and 6, both deck policies, seed 003's run shape in miniature",
    params={"tally": "per_roll"}, grid={"dice_sides": [4, 6], "deck_policy": ["independent", "shuffled_cycle"]},
    run={"replicates": 2, "games": 1, "players": 1, "turns": 500}, checkpoints={"count": 4},
    tasks={"replicates_per_task": 2},
)


def test_store_metadata_read_with_plain_xarray(tmp_path, write_spec, cluster2, capsys):
    path = write_spec(SPEC)
    store = tmp_path / "meta.zarr"
    run_sweep(parse_spec(SPEC, str(path)), str(store), scheduler=cluster2, max_tasks=1)
    ds = xr.open_zarr(store)
    # global attributes: title, the spec's description, CF, history, run shape as numbers
    assert ds.attrs["Conventions"].startswith("CF-")
    assert ds.attrs["description"] == "Dice 4 and 6, both deck policies, seed 003's run shape in miniature"
    assert "meta" in ds.attrs["title"] and "Monopoly" in ds.attrs["title"]
    assert (ds.attrs["games"], ds.attrs["players"], ds.attrs["turns"], ds.attrs["replicates"]) == (1, 1, 500, 2)
    assert "created" in ds.attrs["history"] and len(ds.attrs["history"].splitlines()) == 1
    assert "counts.sum('location')" in ds.attrs["comment"]
    # every variable and coordinate: long_name; numeric ones: units
    for name in [*ds.data_vars, *ds.coords]:
        assert ds[name].attrs.get("long_name"), name
        if ds[name].dtype.kind in "iuf" and not name.startswith(("done", "exact_done", "exact_exists")):
            assert ds[name].attrs.get("units") == "1", name
    assert "counts" not in ds["checkpoint"].attrs and "turns" in ds["checkpoint"].attrs["long_name"]
    assert "per_roll: dice rolls" in ds["events"].attrs["long_name"]
    # the location codes are explained by a square-name coordinate
    names = dict(zip(ds["location"].values, ds["location_name"].values))
    assert names["CC1"] == "Community Chest" and names["G2J"] == "Go to Jail"
    assert names["IN_JAIL"].startswith("In Jail") and names["H2"] == "Boardwalk"
    # exact markers: exists per point, the reason where not
    exists = ds["exact_exists"].to_series()
    assert exists[(4, "independent")] == 1 and exists[(4, "shuffled_cycle")] == 0
    note = str(ds["exact_note"].sel(dice_sides=4, deck_policy="shuffled_cycle").values)
    assert "shuffle" in note and str(ds["exact_note"].sel(dice_sides=4, deck_policy="independent").values) == ""
    # a frequency computed with xarray alone, as the comment says
    c = ds["counts"].sel(dice_sides=4, deck_policy="independent").isel(checkpoint=-1, replicate=0)
    assert int(c.sum()) == int(ds["events"].sel(dice_sides=4, deck_policy="independent")
                               .isel(checkpoint=-1, replicate=0))

    # status: one task of 4 ran; exact answers: stored / none exists, never "yes" for NaN
    assert main_rc(["status", str(store), "--format", "json"]) == 1  # incomplete: exit 1
    status = json.loads(capsys.readouterr().out)
    states = {(p["dice_sides"], p["deck_policy"]): p["exact"] for p in status["points"]}
    assert states[(4, "independent")] == "stored" and states[(6, "independent")] == "stored"
    assert states[(4, "shuffled_cycle")] == "none"
    assert all("shuffle" in p["exact_note"] for p in status["points"] if p["deck_policy"] == "shuffled_cycle")

    # a resume appends to history
    run_sweep(parse_spec(SPEC, str(path)), str(store), scheduler=cluster2)
    history = xr.open_zarr(store).attrs["history"].splitlines()
    assert len(history) == 2 and "3 simulation tasks and 0 exact answers missing" in history[1]


def test_status_says_not_computed_yet(tmp_path, write_spec, capsys):
    from boardsweep.pipeline.store import create_store

    path = write_spec(SPEC)
    store = tmp_path / "empty.zarr"
    create_store(str(store), parse_spec(SPEC, str(path)))
    assert main_rc(["status", str(store), "--format", "json"]) == 1  # incomplete: exit 1
    status = json.loads(capsys.readouterr().out)
    assert {p["exact"] for p in status["points"]} == {"pending"}
    assert main_rc(["status", str(store)]) == 1
    assert "not yet" in capsys.readouterr().out
    assert np.all(xr.open_zarr(store)["exact_done"].values == 0)


def main_rc(argv) -> int:
    try:
        main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0
