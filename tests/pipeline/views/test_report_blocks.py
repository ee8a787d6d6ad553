"""``boardsweep report`` of a grid of more than one block (issue 44: the report
reads the store block by block): its tables and summary.json hold the same
rows as the report of the grid read at once, its verdict is the one ``query
--summary`` prints, and its comparisons are those of the grid at the points
they read.  The store is the monopoly game with a planted bias (1% more
landings on JAIL: :mod:`biased_games`), so that the verdict flags points and
the Holm-adjusted p-values written block by block are not all 1."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from boardsweep.core import games
from boardsweep.core.games import game_names
from boardsweep.pipeline.api import report as write_report

from clirun import run_cli  # tests/support is on sys.path
from specs import spec_toml

#: 20 x 2 = 40 grid points of the biased monopoly game, each with an exact answer (1,600 t tests).
DICE = list(range(3, 23))
#: Grid points a block reads in the block-by-block report: 4 blocks (5 dice values x 2 each).
BLOCK = 10
#: The tables whose every row is a grid point's (or a test's): the same in both reports.
PER_POINT = ["headlines.csv", "distributions.csv", "tests.csv", "points.csv", "frequencies.csv", "variance.csv"]

pytestmark = [pytest.mark.slow,  # a 40-point run and two reports: about 15 s
              pytest.mark.skipif("monopoly" not in game_names(), reason="monopoly not registered")]

games.register("biased_monopoly", "biased_games:MONOPOLY")


@pytest.fixture(scope="module")
def reports(tmp_path_factory, cluster2):
    folder = tmp_path_factory.mktemp("blocks")
    (folder / "m.toml").write_text(spec_toml(
        "biased_monopoly", name="m", params={"tally": "per_landing", "deck_policy": "independent"},
        grid={"dice_sides": DICE, "jail_strategy": ["short", "long"]},
        run={"replicates": 8, "games": 1, "players": 2, "turns": 400_000}, checkpoints={"count": 1},
        tasks={"points_per_task": 10}))
    store = str(folder / "m.zarr")
    assert run_cli("run", str(folder / "m.toml"), "--store", store, "--scheduler", cluster2, "-q") == 0
    assert run_cli("report", store, "--out", str(folder / "one"), "-q") == 0  # one block: the grid at once
    said: list[str] = []
    assert write_report(store, folder / "blocks", block_points=BLOCK, progress=said.append) is None  # the file only
    assert said[-1] == f"report: {2 * len(DICE)} of {2 * len(DICE)} grid points written"  # told as it goes
    return store, folder / "one", folder / "blocks"


def _csv(path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def test_the_tables_and_summary_of_a_report_in_blocks_are_those_of_the_grid_read_at_once(reports):
    _, one, blocks = reports
    assert sorted(p.name for p in blocks.glob("*.csv")) == sorted(p.name for p in one.glob("*.csv"))
    tests = _csv(blocks / "tests.csv")
    assert len(tests) > 1000 and tests["p"].is_monotonic_increasing  # merged over the blocks, smallest p first
    assert (tests["p_holm"] < 0.01).any()  # the planted bias: Holm-adjusted p over the whole family, not all 1
    assert len(_csv(blocks / "points.csv")) == 2 * len(DICE)
    for name in PER_POINT:
        pd.testing.assert_frame_equal(_csv(blocks / name), _csv(one / name), check_exact=False, rtol=1e-12,
                                      obj=name)
    a, b = (json.loads((f / "summary.json").read_text()) for f in (blocks, one))
    assert list(a) == list(b) and len(a) == 2 * len(DICE)  # every point, in grid order
    _close(a, b)


def _close(a, b) -> None:
    """``a`` equals ``b``, floats to 1e-12 relative, through nested dicts and lists."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b)
        for k in a:
            _close(a[k], b[k])
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
    elif isinstance(a, float):
        assert b == pytest.approx(a, rel=1e-12, nan_ok=True)
    else:
        assert a == b


def test_the_verdict_of_a_report_in_blocks_is_what_query_summary_prints(reports, capsys):
    store, one, blocks = reports
    capsys.readouterr()
    assert run_cli("query", store, "--summary", "--format", "json", "-q") == 0
    told = json.loads(capsys.readouterr().out)["verdict"]
    verdict = json.loads((blocks / "report.json").read_text())["verdict"]
    assert verdict["text"].startswith(told["text"][0].upper() + told["text"][1:] + ".")
    # the run's workers made the verdict the query reads (its blocks read in chunks of their own): the
    # same tests and points, its statistics to 1e-12 (sums in another order: never bit for bit)
    for key in ("tests", "points", "agree", "point_agree", "flagged", "min_p_holm"):
        _close(verdict[key], told[key])
    assert verdict["tests"] > 1000 and verdict["min_p_holm"] < verdict["alpha"]
    assert verdict["flagged"] and {(f["headline"], f["label"]) for f in verdict["flagged"]} == {("frequency", "JAIL")}
    _close(verdict, json.loads((one / "report.json").read_text())["verdict"])


def test_the_comparisons_of_a_report_in_blocks_are_the_grids_at_the_points_they_read(reports):
    _, one, blocks = reports
    keys = ["comparison", "dice_sides", "jail_strategy"]
    part, whole = _csv(blocks / "comparisons.csv"), _csv(one / "comparisons.csv")
    assert 0 < len(part) < len(whole)  # a sub-grid of at most one block: fewer combinations
    joined = part.merge(whole, on=keys, how="left", suffixes=("", "_grid"), indicator=True)
    assert (joined["_merge"] == "both").all() and len(joined) == len(part)
    for column in ("labels_tested", "significant", "min_p_holm", "max_abs_difference", "at_label"):
        pd.testing.assert_series_equal(joined[column], joined[f"{column}_grid"], check_names=False,
                                       check_exact=False, rtol=1e-12)
    notes = json.loads((blocks / "report.json").read_text())["notes"]
    assert any("the figures, the comparisons and the answer read" in n for n in notes)
