"""The store describes itself (CF attributes), read back with plain xarray only."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from boardsweep.core.games import SERIES_PREFIX, get_game, series_sources
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.store import load_sweep, open_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store.metadata import STORE_FORMAT
from boardsweep.pipeline.store.schema import SERIES_DIM
from boardsweep.pipeline.spec.tables import DEFAULT_BATCHES

from clirun import run_cli  # tests/support is on sys.path
from specs import spec_toml

SPEC = spec_toml(
    "monopoly", name="meta", seed=11,
    description="Dice 4 and 6, both deck policies, the Stats 102A assignment's run shape in miniature",
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
    assert ds.attrs["description"] == "Dice 4 and 6, both deck policies, the Stats 102A assignment's run shape in miniature"
    assert "meta" in ds.attrs["title"] and "Monopoly" in ds.attrs["title"]
    assert (ds.attrs["games"], ds.attrs["players"], ds.attrs["turns"], ds.attrs["replicates"]) == (1, 1, 500, 2)
    assert "created" in ds.attrs["history"] and len(ds.attrs["history"].splitlines()) == 1
    assert "counts.sum('location')" in ds.attrs["comment"]
    # every variable and coordinate: a short long_name, the explanation in description; no unit on
    # counts, shares, dice sides or checkpoints (none of them has one)
    for name in [*ds.data_vars, *ds.coords]:
        assert ds[name].attrs.get("long_name") and ds[name].attrs.get("description"), name
        assert "units" not in ds[name].attrs, name
    assert ds["checkpoint"].attrs["long_name"] == "turns played"
    assert not [n for n in ds.variables if "axis" in ds[n].attrs]  # no CF axis: locations are not longitudes
    assert ds["events"].attrs["long_name"] == "counted events, all locations"
    assert "per_roll: dice rolls" in ds["events"].attrs["description"]
    assert ds["dice_sides"].attrs["long_name"] == "dice sides"
    assert ds["dice_sides"].attrs["description"] == "sides of each of the two dice"
    # the location codes are explained by a square-name coordinate
    names = dict(zip(ds["location"].values, ds["location_name"].values))
    assert names["CC1"] == "Community Chest" and names["G2J"] == "Go to Jail"
    assert names["IN_JAIL"].startswith("In Jail") and names["H2"] == "Boardwalk"
    # exact markers: exists per point, the reason where not
    exists = ds["exact_exists"].to_series()
    assert exists[(4, "independent")] and not exists[(4, "shuffled_cycle")]
    note = str(ds["exact_note"].sel(dice_sides=4, deck_policy="shuffled_cycle").values)
    assert "shuffle" in note and str(ds["exact_note"].sel(dice_sides=4, deck_policy="independent").values) == ""
    # a frequency computed with xarray alone, as the comment says
    c = ds["counts"].sel(dice_sides=4, deck_policy="independent").isel(checkpoint=-1, replicate=0)
    assert int(c.sum()) == int(ds["events"].sel(dice_sides=4, deck_policy="independent")
                               .isel(checkpoint=-1, replicate=0))

    # status: one task of 4 ran; exact answers: stored / none exists, never "yes" for NaN
    assert run_cli(*["status", str(store), "--format", "json"]) == 1  # incomplete: exit 1
    status = json.loads(capsys.readouterr().out)
    states = {(p["dice_sides"], p["deck_policy"]): p["exact"] for p in status["points"]}
    assert states[(4, "independent")] == "stored" and states[(6, "independent")] == "stored"
    assert states[(4, "shuffled_cycle")] == "none"
    assert all("shuffle" in p["exact_note"] for p in status["points"] if p["deck_policy"] == "shuffled_cycle")

    # a resume appends to history
    run_sweep(parse_spec(SPEC, str(path)), str(store), scheduler=cluster2)
    history = xr.open_zarr(store).attrs["history"].splitlines()
    assert len(history) == 2 and "3 simulation tasks and 0 exact tasks missing" in history[1]


def test_status_says_not_computed_yet(tmp_path, write_spec, capsys):
    from boardsweep.pipeline.store import create_store

    path = write_spec(SPEC)
    store = tmp_path / "empty.zarr"
    create_store(str(store), parse_spec(SPEC, str(path)))
    assert run_cli(*["status", str(store), "--format", "json"]) == 1  # incomplete: exit 1
    status = json.loads(capsys.readouterr().out)
    assert {p["exact"] for p in status["points"]} == {"pending"}
    assert run_cli(*["status", str(store)]) == 1
    assert "not yet" in capsys.readouterr().out
    assert np.all(xr.open_zarr(store)["exact_done"].values == 0)


# --- Plain tools on real stores of every game: xarray, matplotlib, netCDF, cf_xarray ------------------------------

GAMES = {
    "monopoly": dict(grid={"dice_sides": [4, 6], "deck_policy": ["independent", "shuffled_cycle"]},
                     run={"replicates": 2, "games": 1, "players": 2, "turns": 300}),
    "shut_the_box": dict(grid={"dice_sides": [2, 3], "policy": ["optimal", "random"]},
                         run={"replicates": 2, "games": 200}),
    "hk_monopoly": dict(grid={"jail_strategy": ["short", "long"], "players": [2, 4]},
                        run={"replicates": 2, "games": 20}),
    "chutes_ladders": dict(grid={"sides": [4, 6], "players": [1, 2]}, run={"replicates": 2, "games": 50}),
}
#: The game's own dim, and whether it is a histogram (numeric bins, an overflow bin).
OWN_DIM = {"monopoly": ("location", False), "shut_the_box": ("rolls", True),
           "hk_monopoly": ("location", False), "chutes_ladders": ("rounds", True)}


SPECS = {game: spec_toml(game, name=f"plain_{game}", seed=5, checkpoints={"count": 3},
                         tasks={"replicates_per_task": 2}, **tables) for game, tables in GAMES.items()}


@pytest.fixture(scope="module")
def stores(tmp_path_factory, cluster2):
    """One small complete store per game (the plugin game included), made by real runs."""
    folder = tmp_path_factory.mktemp("plain")
    out = {}
    for game, text in SPECS.items():
        out[game] = folder / f"{game}.zarr"
        assert run_sweep(parse_spec(text, f"{game}.toml"), str(out[game]), scheduler=cluster2).complete
    return out


def test_summary_headers_and_query_sel_on_real_stores(stores, tmp_path, cluster2, capsys):
    spec = tmp_path / "stb.toml"
    spec.write_text(SPECS["shut_the_box"])
    assert run_cli(*["run", str(spec), "--store", str(stores["shut_the_box"]), "--scheduler", cluster2]) == 0
    out = capsys.readouterr().out
    assert "rollss" not in out  # the summary itself leads with the headlines now (tests/pipeline/analysis/test_headlines.py)
    # several values of one axis, as one option or repeated
    store = str(stores["monopoly"])
    for sels in (["--sel", "dice_sides=6,4"], ["--sel", "dice_sides=6", "--sel", "dice_sides=4"]):
        assert run_cli(*["query", store, *sels, "--sel", "deck_policy=independent", "--format", "json",
                        "--top", "1"]) == 0
        rows = json.loads(capsys.readouterr().out)
        assert [(r["dice_sides"], r["deck_policy"]) for r in rows] == [(6, "independent"), (4, "independent")]


@pytest.mark.parametrize("game", list(GAMES))
def test_plain_xarray_reads_every_game_cleanly(stores, game, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ds = xr.open_zarr(stores[game])
    dim, histogram = OWN_DIM[game]
    # text in zarr's variable-length string type (plain xarray: numpy StringDType; index coordinates: str)
    texts = [n for n in ds.variables if ds[n].dtype.kind not in "biuf"]
    assert texts and all(ds[n].dtype.kind in "TO" for n in texts), {n: ds[n].dtype for n in texts}
    assert ds.attrs["boardsweep_format"] == STORE_FORMAT and "variables" not in ds.attrs
    series = [SERIES_PREFIX + n for n in series_sources(get_game(game))]
    assert series and ds.attrs["simulated_variables"] == [*get_game(game).variables, *series]
    # the equal-batch series (store format 7): each batch's own counts, summing to the last checkpoint's
    total = int(ds["checkpoint"].values[-1])
    batches = min(DEFAULT_BATCHES, total)
    np.testing.assert_array_equal(ds[SERIES_DIM].values, [k * total // batches for k in range(1, batches + 1)])
    for name in series:
        draws, last = ds[name], ds[name[len(SERIES_PREFIX):]].isel(checkpoint=-1)
        axes = tuple(ds.attrs["grid_axes"])
        assert draws.dims == (*axes, "replicate", SERIES_DIM, *last.dims[len(axes) + 1:])
        np.testing.assert_array_equal(draws.sum(SERIES_DIM, skipna=False).values, last.values)
        assert bool((draws.fillna(0) >= 0).all())
    # short long_names (plot labels), the explanation in description, units only where declared
    for name in ds.variables:
        attrs = ds[name].attrs
        assert 0 < len(attrs["long_name"]) <= 60 and "(" not in attrs["long_name"].replace("P(", ""), name
        assert attrs.get("description"), name
        declared = get_game(game).extras.get("units", {}).get(name)  # HKD: a currency, not a UDUNITS unit
        assert (attrs.get("currency"), attrs.get("units")) == ((declared, None) if declared else (None, None)), name
    # plot along the game's own dim (matplotlib, headless)
    counts = ds[_distribution(ds, dim)].isel(checkpoint=-1).sum("replicate")
    point = {a: ds[a].values[0] for a in ds.attrs["grid_axes"]}
    share = (counts / counts.sum(dim)).sel(point)
    if share[dim].dtype.kind == "T":  # xarray plots no StringDType axis (yet): as <U text, as docs/how-to/other-tools.md says
        share = share.assign_coords({dim: share[dim].values.tolist()})
    share.plot.line(x=dim)
    plt.savefig(tmp_path / "plot.png")
    plt.close("all")
    assert (tmp_path / "plot.png").stat().st_size > 1000
    if histogram:  # numeric bins: sel by value, sums over bin values
        bins = ds[dim]
        assert bins.dtype.kind == "i" and bins.values[0] == 0 and np.all(np.diff(bins.values) == 1)
        assert bins.attrs["overflow_bin"] == bins.values[-1]
        hist = ds["hist"].isel(checkpoint=-1)
        assert float(hist.sel({dim: slice(None, bins.values[-1] - 1)}).sum()) == float(hist.sum())  # none overflow
        total = ds[f"{dim}_sum"].isel(checkpoint=-1)
        np.testing.assert_array_equal((hist * hist[dim]).sum(dim).values, total.values)


@pytest.mark.parametrize("game", ["hk_monopoly", "chutes_ladders"])
def test_seats_that_do_not_play_read_as_missing(stores, game):
    ds = xr.open_zarr(stores[game])
    wins = ds["wins"].isel(checkpoint=-1)
    # the seats that do not play are NaN in float64 (store format 6): plain xarray reads NaN there
    assert wins.dtype == np.float64 and ds["wins"].encoding["dtype"] == np.float64 and "valid_min" not in wins.attrs
    assert ds["wins"].attrs["integer_dtype"] == "int64"
    np.testing.assert_array_equal(load_sweep(stores[game])["wins"].isel(checkpoint=-1).values, wins.values)
    np.testing.assert_array_equal(open_sweep(stores[game])["wins"].isel(checkpoint=-1).values, wins.values)
    games = ds["games"].isel(checkpoint=-1) if "games" in ds else None
    if games is not None:  # every game has one winner at most: wins summed over the seats, in plain xarray
        assert bool((wins.sum("seat") <= games).all()) and float(wins.sum("seat").sum()) > 0
    for players in ds["players"].values:
        sub = wins.sel(players=players)
        assert bool(sub.isel(seat=slice(0, players)).notnull().all())
        assert bool(sub.isel(seat=slice(players, None)).isnull().all())
        # .mean("seat") averages the players only
        np.testing.assert_allclose(sub.mean("seat").values, sub.isel(seat=slice(0, players)).mean("seat").values)
    assert "do not play" in ds["wins"].attrs["comment"]
    if game == "chutes_ladders":  # the exact win shares too; the players' shares sum to 1
        share = ds["exact_win_share"].sel(players=2)
        assert bool(share.isel(seat=slice(2, None)).isnull().all())
        np.testing.assert_allclose(share.sum("seat").values, 1.0, rtol=1e-9)


@pytest.mark.parametrize("game", list(GAMES))
def test_netcdf_round_trip_and_cf_xarray(stores, game, tmp_path):
    import cf_xarray  # noqa: F401 - registers the .cf accessor

    ds = xr.open_zarr(stores[game])
    path = tmp_path / "store.nc"
    ds.to_netcdf(path, format="NETCDF4")
    with xr.open_dataset(path) as back:
        xr.testing.assert_identical(back.load(), ds.load())
    # as the README says: netCDF-3 has no string-list attributes (grid_axes) and no 64-bit integers
    with pytest.raises((OSError, ValueError)):
        ds.to_netcdf(tmp_path / "store3.nc", format="NETCDF3_64BIT")
    assert len(ds.to_netcdf()) > 0  # in memory, xarray's default engine
    # no CF axis: a board's locations are not longitudes, checkpoints not times
    assert ds.cf.axes == {} and "time" not in ds.cf.coordinates


@pytest.mark.parametrize("game", list(GAMES))
def test_a_stranger_reads_every_game_without_surprises(stores, game, tmp_path):
    """Plain xarray, warnings as errors: opened consolidated or not and written
    to netCDF without a warning (read into memory first where seats that do
    not play are masked: tests/pipeline/store/test_other_tools.py says why);
    exact answers named exact_*; a complete store's integer counts read as
    integers; none of boardsweep's bookkeeping on a variable (it is in the
    root attributes)."""
    import warnings

    game_def = get_game(game)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for consolidated in (None, False):
            ds = xr.open_zarr(stores[game], consolidated=consolidated)
            masked = any("_FillValue" in ds[n].encoding and ds[n].encoding["dtype"].kind in "iu" for n in ds.variables)
            (ds.load() if masked else ds).to_netcdf(tmp_path / f"{game}.nc")
    exact = list(ds.attrs["exact_variables"])
    assert exact == list(game_def.exact_variables) and all(n.startswith("exact_") for n in exact)
    assert not [n for n in ds.attrs["simulated_variables"] if n.startswith("exact_")]
    assert bool(ds["done"].all())
    for name in ds.attrs["simulated_variables"]:  # integers, or float64 where seats that do not play read NaN
        filled = "_FillValue" in ds[name].encoding
        own = game_def.variables[name.removeprefix(SERIES_PREFIX)]  # a series: its variable's type
        assert ds[name].dtype == (np.float64 if filled else np.dtype(own.dtype)), name
        assert load_sweep(stores[game])[name].dtype == ds[name].dtype, name
    assert not [n for n in ds.variables if any(k.startswith("boardsweep") for k in ds[n].attrs)]
    assert "arrays" in json.loads(ds.attrs["boardsweep_layout"])  # the packed layout, in one place


def test_a_game_breaking_the_naming_rule_is_refused_in_one_line():
    from dataclasses import replace

    from boardsweep.core.games import ParameterError, Variable

    stb = get_game("shut_the_box")
    with pytest.raises(ParameterError, match=r"exact variable 'expected_rolls' must be named exact_\*") as err:
        replace(stb, exact_variables={"expected_rolls": Variable((), "float64")})
    assert "\n" not in str(err.value)
    with pytest.raises(ParameterError, match="must not start with 'exact_'"):
        replace(stb, variables={**stb.variables, "exact_hist": Variable(("checkpoint",), "int64")})


def test_integers_read_as_float_only_where_a_replicate_is_missing(tmp_path, write_spec, cluster2):
    """An unfinished store (one task of four run) reads its counts as float64
    with NaN in the replicates not done; its done replicates hold the integers."""
    path = write_spec(SPEC)
    store = tmp_path / "partial.zarr"
    run_sweep(parse_spec(SPEC, str(path)), str(store), scheduler=cluster2, max_tasks=1)
    for read in (load_sweep, open_sweep):
        ds = read(store).load()
        assert not bool(ds["done"].all())
        counts = ds["counts"]
        assert counts.dtype == np.float64
        assert bool(counts.where(~ds["done"]).isnull().all()) and bool(counts.where(ds["done"]).notnull().any())
    # the store completed: every count an integer again, the same values
    run_sweep(parse_spec(SPEC, str(path)), str(store), scheduler=cluster2)
    for read in (load_sweep, open_sweep):
        done = read(store)
        assert done["counts"].dtype == np.int64
        np.testing.assert_array_equal(done["counts"].where(ds["done"]).values, ds["counts"].where(ds["done"]).values)


def test_a_format_2_store_written_by_the_previous_release_is_read(tmp_path, capsys):
    """tests/support/old_stores/format2_shut_the_box.zarr was written by main at
    d3a62e7 (store format 2: exact variables named expected_rolls and
    variance_rolls, the packed layout recorded on each array): it is read as a
    format-3 store names it, and a run refuses to add to it in one line."""
    import shutil

    old = tmp_path / "old.zarr"
    shutil.copytree(Path(__file__).resolve().parents[2] / "support" / "old_stores" / "format2_shut_the_box.zarr", old)
    raw = xr.open_zarr(old)
    assert raw.attrs["boardsweep_format"] == 2 and "expected_rolls" in raw
    for read in (load_sweep, open_sweep):
        ds = read(old)
        assert ds.attrs["exact_variables"] == ["exact_expected_rolls", "exact_variance_rolls", "exact_pmf"]
        assert "expected_rolls" not in ds and not [n for n in ds.variables if "boardsweep_layout" in ds[n].attrs]
        np.testing.assert_allclose(ds["exact_expected_rolls"].values, raw["expected_rolls"].values, rtol=1e-12)
    assert run_cli(*["status", str(old)]) == 0
    capsys.readouterr()
    assert run_cli(*["query", str(old), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)
    spec = tmp_path / "old.toml"
    spec.write_text(raw.attrs["spec_text"])
    assert run_cli(*["-q", "run", str(spec), "--store", str(old), "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "store format 2" in err[0] and "--overwrite" in err[0]


def _distribution(ds: xr.Dataset, dim: str) -> str:
    return next(n for n in ds.attrs["simulated_variables"] if ds[n].dims[-2:] == ("checkpoint", dim))


def test_an_old_format_store_is_read_but_not_written(stores, tmp_path, capsys):
    import shutil
    import zarr

    old = tmp_path / "old.zarr"
    shutil.copytree(stores["shut_the_box"], old)
    group = zarr.open_group(str(old), mode="r+")
    attrs = dict(group.attrs)
    group.attrs["variables"] = attrs.pop("simulated_variables")  # format 1 named them so
    del group.attrs["simulated_variables"], group.attrs["boardsweep_format"]
    zarr.consolidate_metadata(str(old))
    assert run_cli(*["query", str(old), "--format", "json", "--top", "1"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 4
    spec = tmp_path / "stb.toml"
    spec.write_text(SPECS["shut_the_box"])
    assert run_cli(*["-q", "run", str(spec), "--store", str(old), "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "store format 1" in err[0] and "--overwrite" in err[0]


@pytest.mark.parametrize("older", [3, 4])
def test_a_store_with_fixed_width_text_is_read_but_not_resumed(stores, tmp_path, capsys, older):
    """Formats 3 and 4 kept text in zarr-python's fixed_length_utf32: read as
    before, never resumed or grown by a run writing the current format (one line, what to do)."""
    import shutil
    import zarr

    old = tmp_path / "old.zarr"
    shutil.copytree(stores["shut_the_box"], old)
    group = zarr.open_group(str(old), mode="r+")
    group.attrs["boardsweep_format"] = older
    zarr.consolidate_metadata(str(old))
    assert run_cli(*["query", str(old), "--format", "json", "--top", "1"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 4
    spec = tmp_path / "stb.toml"
    spec.write_text(SPECS["shut_the_box"].replace("replicates = 2", "replicates = 4"))
    for extra in ([], ["--extend"]):
        assert run_cli(*["-q", "run", str(spec), "--store", str(old), "--workers", "1", *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"store format {older}" in err[0] and "--overwrite" in err[0], err


def test_growing_a_text_axis_keeps_its_longer_values_whole(tmp_path, cluster2):
    """A grid value longer than the stored ones ('sticky' after 'plain') is kept whole (variable-length text)."""
    def toy(rules):
        return spec_toml("toy", name="widen", params={"size": 8}, grid={"dice_sides": [2], "rule": rules},
                         run={"replicates": 2, "games": 2, "turns": 30}, checkpoints={"count": 3},
                         tasks={"replicates_per_task": 2})

    store = str(tmp_path / "widen.zarr")
    assert run_sweep(parse_spec(toy(["plain"]), "a.toml"), store, scheduler=cluster2).complete
    assert xr.open_zarr(store)["rule"].values.tolist() == ["plain"]
    assert run_sweep(parse_spec(toy(["plain", "sticky"]), "b.toml"), store, scheduler=cluster2,
                     extend=True).complete
    ds = xr.open_zarr(store)
    assert ds["rule"].values.tolist() == ["plain", "sticky"] and ds["rule"].dtype.kind == "T"
    assert json.loads((Path(store) / "rule" / "zarr.json").read_text())["data_type"] == "string"
    assert ds["rule"].attrs["long_name"] == "rule" and bool(ds["done"].all())


def test_verify_matches_a_format_2_store_and_its_digest_by_the_current_names(tmp_path):
    """verify compares an older store, or a digest recorded before the exact_
    names, with a store of the current format under the current names."""
    import shutil

    from boardsweep.pipeline.run import verify

    old = tmp_path / "old.zarr"
    shutil.copytree(Path(__file__).resolve().parents[2] / "support" / "old_stores" / "format2_shut_the_box.zarr", old)
    now = verify.digest(str(old))
    assert "exact_expected_rolls" in now["variables"] and "expected_rolls" not in now["variables"]
    recorded = dict(now, variables={n.removeprefix("exact_") if n in ("exact_expected_rolls", "exact_variance_rolls")
                                    else n: v for n, v in now["variables"].items()})
    assert "expected_rolls" in recorded["variables"]
    result = verify.compare_with_digest(recorded, str(old))
    assert result.ok and result.variables == len(now["variables"]), result.differences
    assert verify.compare_with_store(str(old), str(old)).ok


def test_the_exact_markers_of_a_game_without_a_reason_hook_are_made_whole(monkeypatch):
    """A store's ``exact_exists`` and ``exact_note`` (one per grid point) for
    a game whose every point has an exact answer: whole arrays, the reason
    asked once, not once per point (10^7 calls for a 10^7-point no-op re-run)."""
    from boardsweep.pipeline.store import metadata, schema

    spec = parse_spec(spec_toml("hk_monopoly", name="markers", params={"rounds": 5},
                                grid={"dice_sides": [4, 6], "buy_policy": [f"reserve:{i}" for i in range(5_000)]},
                                run={"replicates": 1, "games": 1}, checkpoints={"count": 1},
                                tasks={"points_per_task": 1_000}))
    asked = []
    reason = metadata.no_exact_reason
    monkeypatch.setattr(metadata, "no_exact_reason", lambda game, params: asked.append(1) or reason(game, params))
    ds, _ = schema.template(spec, spec.game)
    assert ds["exact_exists"].shape == (2, 5_000) and bool(ds["exact_exists"].values.all())
    assert set(ds["exact_note"].values.ravel().tolist()) == {""}
    assert len(asked) <= 1
