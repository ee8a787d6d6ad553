"""A value of -1 is a value: the store's mark of a cell without one is
int64's least value (:data:`boardsweep.pipeline.store.integers.FILL`), not -1.

The ledger game (tests/support/ledger_game.py) writes -1 in some cells of a
seated variable (stored float64, NaN where a seat does not play) and in every
cell of one without seats (stored int64), run through the CLI on a real Dask
cluster; every reader must give -1 there and missing only where a seat does
not play.  On the code before, each -1 read as missing.
"""

from __future__ import annotations

import hashlib
import json
import shutil

import numpy as np
import pytest
import xarray as xr

import boardsweep  # noqa: F401 - registers the ``boardsweep`` accessor
from boardsweep.core import games
from boardsweep.pipeline.errors import TasksFailed
from boardsweep.pipeline.plan import precision
from boardsweep.pipeline.run import verify
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import integers, load_sweep, open_sweep, read_raw

from clirun import run_cli  # tests/support is on sys.path
from specs import spec_toml

games.register("ledger_marked", "ledger_game:MARKED")
games.register("ledger", "ledger_game")  # workers import it by name: tests/support is on their path

SPEC = spec_toml("ledger", name="ledger", seed=4, grid={"players": [2, 3]}, run={"replicates": 4, "games": 4},
                 checkpoints={"count": 2}, tasks={"replicates_per_task": 2})


@pytest.fixture(scope="module")
def ledger(tmp_path_factory, cluster2):
    """The ledger sweep's store, run by ``boardsweep run`` on the shared cluster."""
    folder = tmp_path_factory.mktemp("ledger")
    (folder / "ledger.toml").write_text(SPEC)
    url = folder / "ledger.zarr"
    assert run_cli("-q", "run", str(folder / "ledger.toml"), "--store", str(url), "--scheduler", cluster2) == 0
    return url


def _check(ds: xr.Dataset, how: str) -> None:
    """``ds``'s ledger values: each -1 a value, the seat that does not play missing."""
    balance = ds["balance"].transpose("players", "replicate", "checkpoint", "seat").values
    assert balance.shape == (2, 4, 2, 3), how
    assert (balance[:, :, :, 0] == -1).all(), how  # the first seat's -1 at both grid points
    assert (balance[1, :, :, 2] == -1).all(), how  # the third seat plays at players = 3
    assert np.isnan(balance[0, :, :, 2]).all(), how  # and does not at players = 2
    assert (balance[:, :, :, 1] == 3).all(), how
    shortfall = ds["shortfall"].values
    assert shortfall.dtype == np.int64 and (shortfall == -1).all(), how  # nothing missing: integers


def test_every_reader_gives_minus_one_as_a_value_and_a_seat_that_does_not_play_as_missing(ledger):
    _check(load_sweep(ledger), "load_sweep")
    _check(open_sweep(ledger).compute(), "open_sweep")
    _check(load_sweep(ledger, sel={"players": [2, 3]}), "load_sweep, selected")
    _check(xr.open_zarr(ledger).compute(), "xr.open_zarr")
    meta = json.loads((ledger / "shortfall" / "zarr.json").read_text())
    assert meta["fill_value"] == integers.FILL and "_FillValue" not in meta["attributes"]


def test_query_and_the_accessor_count_the_minus_ones(ledger, capsys):
    """Every replicate alike: at players = 3 the seats' balance shares are
    -1, 3 and -1 over their sum 1 (the first and third seats' -1 lost, the
    second's share would be 1 or none)."""
    want = {"seat 1": -1.0, "seat 2": 3.0, "seat 3": -1.0}
    assert run_cli("query", str(ledger), "--sel", "players=3", "--variable", "balance", "--format", "json") == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["seat"]: r["estimate"] for r in rows} == pytest.approx(want, rel=1e-12)
    shares = load_sweep(ledger).boardsweep.estimate("balance")["estimate"].sel(players=3)
    assert {s: float(shares.sel(seat=s)) for s in want} == pytest.approx(want, rel=1e-12)


def test_a_share_over_seats_counts_the_seats_that_play(ledger, capsys):
    """At players = 2 the third seat does not play: the two seats' shares are
    -1/2 and 3/2 of their sum, and the third has none (the sum over seats
    once took its NaN and left every seat's share blank)."""
    shares = load_sweep(ledger).boardsweep.estimate("balance")["estimate"].sel(players=2)
    assert float(shares.sel(seat="seat 1")) == pytest.approx(-0.5, rel=1e-12)
    assert float(shares.sel(seat="seat 2")) == pytest.approx(1.5, rel=1e-12)
    assert np.isnan(float(shares.sel(seat="seat 3")))
    assert run_cli("query", str(ledger), "--sel", "players=2", "--variable", "balance", "--format", "json") == 0
    rows = {r["seat"]: r["estimate"] for r in json.loads(capsys.readouterr().out)}
    assert rows.pop("seat 3") is None
    assert rows == pytest.approx({"seat 1": -0.5, "seat 2": 1.5}, rel=1e-12)


def test_the_digest_tells_a_minus_one_from_a_cell_without_a_value(ledger, tmp_path):
    """The digest hashes the mark as -1 where an array holds no -1 (the bytes
    digests were recorded of, so they still verify), and otherwise the values
    with ``value -1`` after them: a store whose -1 were lost differs."""
    values = read_raw(str(ledger), "balance")
    assert (values == -1).any() and (values == integers.FILL).any()
    assert integers.canonical(values) == values.tobytes() + b"value -1"
    lost = np.where(values == -1, integers.FILL, values)
    assert integers.canonical(lost) == np.where(lost == integers.FILL, -1, lost).tobytes()
    assert integers.canonical(lost) != integers.canonical(values)
    copy = tmp_path / "copy.zarr"
    shutil.copytree(ledger, copy)
    recorded = verify.digest(str(ledger))
    assert verify.compare_with_digest(recorded, str(copy)).ok and verify.compare_with_store(str(ledger), str(copy)).ok
    assert recorded["variables"]["balance"]["sha256"] != hashlib.sha256(integers.canonical(lost)).hexdigest()


def test_a_run_refuses_an_output_equal_to_the_mark_of_no_value(tmp_path, cluster2):
    """An output of int64's least value would read as missing: its task
    fails in one line naming the game, the output and the grid point, and
    stores nothing; the other grid point's cells (the mark where a seat
    does not play) are stored as a good run's."""
    url = tmp_path / "marked.zarr"
    with pytest.raises(TasksFailed) as caught:
        run_sweep(parse_spec(SPEC.replace('game = "ledger"', 'game = "ledger_marked"'), "m.toml"), str(url),
                  scheduler=cluster2)
    message = str(caught.value)
    assert "\n" not in message and "'ledger_marked'" in message and "output 'balance'" in message, message
    assert str(integers.FILL) in message and "players=3" in message, message
    done = read_raw(str(url), "done")
    assert not done[1].any() and done[0].all()
    balance = read_raw(str(url), "balance")
    assert (balance[1] == integers.FILL).all() and (balance[0, :, :, :2] == [-1, 3]).all()


def test_the_precision_rule_counts_a_seat_that_does_not_play_as_nothing():
    """The precision rule reads the integer view: the mark (int64's least
    value) at the seats that do not play counts as 0 in its sums, so the
    decision is that of the same counts with 0 there (met at 4 replicates;
    summed as they are, the marks give a bound near 1e34: capped)."""
    text = spec_toml("hk_monopoly", name="p", seed=2, grid={"players": [2]}, checkpoints={"count": 2},
                     tasks={"replicates_per_task": 2}, run={"replicates": 4, "games": 20},
                     precision={"stderr": 0.1, "max_replicates": 8})
    spec = parse_spec(text, "p.toml")
    rng = np.random.default_rng(3)
    batch = np.diff(np.r_[0, spec.checkpoints])  # games per checkpoint batch
    first = rng.binomial(batch, 0.5, (8, 2))  # the first seat's wins, the second's the rest
    wins = np.zeros((1, 8, 2, 6), np.int64)  # players, replicate, checkpoint, seat
    wins[0, :, :, 0], wins[0, :, :, 1] = first.cumsum(1), (batch - first).cumsum(1)
    landings = rng.multinomial(60, np.full(21, 1 / 21), (8, 2)) * batch[None, :, None]
    arrays = {"games": np.broadcast_to(spec.checkpoints, (1, 8, 2)), "rounds": np.broadcast_to(30 * spec.checkpoints, (1, 8, 2)),
              "landings": landings.cumsum(1)[None], "turns": landings.sum(2).cumsum(1)[None]}
    done = np.ones((1, 8), bool)
    decided = [precision.plan(spec, dict(arrays, wins=np.where(np.arange(6) < 2, wins, mark)).__getitem__, done)[0]
               for mark in (0, integers.FILL)]
    assert decided[0] == decided[1] and [d.state for d in decided[0].values()] == ["met"]


def test_a_variable_without_labels_is_refused_by_name_not_as_a_distribution_over_checkpoints(ledger):
    """``shortfall`` has no label dimension and no headline: the accessor
    says so (it once took ``checkpoint`` for its labels and failed with
    "'replicate' not found in array dimensions ()")."""
    with pytest.raises(KeyError, match="'shortfall' has no labels to be a distribution over"):
        load_sweep(ledger).boardsweep.estimate("shortfall")
