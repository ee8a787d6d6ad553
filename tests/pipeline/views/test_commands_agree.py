"""``run``, ``query`` and ``report`` on one money-game store say the same
thing (issue 41): the exact work has one name per quantity in the run's
banner, its last lines and the report, and ``query`` and ``report`` show the
same variable by default."""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest

from clirun import run_cli
from specs import spec_toml  # tests/support is on sys.path

from boardsweep.core.games import game_names

pytestmark = pytest.mark.skipif("hk_monopoly" not in game_names(), reason="hk_monopoly not registered")

#: 8 grid points; the exact answer depends on players and jail_strategy (not buy_policy): 4 solves.
SPEC = spec_toml("hk_monopoly", name="hk", seed=5, params={"dice_sides": 4, "rounds": 30},
                 grid={"jail_strategy": ["short", "long"], "buy_policy": ["always", "never"], "players": [2, 3]},
                 run={"replicates": 2, "games": 6}, checkpoints={"count": 2})


def _cli(*args: str) -> str:
    """The CLI's standard output for ``args`` (exit code 0), whitespace collapsed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert run_cli(*args) == 0
    return " ".join(out.getvalue().split())


@pytest.fixture(scope="module")
def hk(tmp_path_factory, cluster2):
    """The store, what ``run`` printed, and the report's record and page."""
    folder = tmp_path_factory.mktemp("hk")
    (folder / "hk.toml").write_text(SPEC)
    store = str(folder / "hk.zarr")
    printed = _cli("run", str(folder / "hk.toml"), "--store", store, "--scheduler", cluster2)
    _cli("report", store, "--out", str(folder / "report"))
    meta = json.loads((folder / "report" / "report.json").read_text())
    return store, printed, meta, (folder / "report" / "index.html").read_text()


def test_exact_work_has_one_name_in_the_run_and_the_report(hk):
    """Exact tasks (one per grid point here), exact solves (one per distinct
    exact answer), exact answers stored and the points the verdict tests:
    the banner, the progress line, the last lines and the report agree."""
    from boardsweep.pipeline.plan import exact_solves, exact_tasks
    from boardsweep.pipeline.spec.parse import parse_spec

    _, printed, meta, page = hk
    spec = parse_spec(SPEC, "hk.toml")
    assert (exact_tasks(spec), exact_solves(spec)) == (8, 4)
    banner = re.search(r"(\d+) simulation tasks of 1 replicate \+ (\d+) exact tasks \((\d+) exact solves\)", printed)
    bar = re.search(r"tasks to run: (\d+) \((\d+) simulation, (\d+) exact\)", printed)
    ran = re.search(r"this run: (\d+) tasks \((\d+) simulation, (\d+) exact(?:, (\d+) exact solves)?\)", printed)
    stored = re.search(r"and (\d+) of (\d+) exact answers done", printed)
    tested = re.search(r"(\d+) of (\d+) points? with an exact answer", printed)
    assert banner and bar and ran and stored and tested, printed
    assert int(banner[2]) == int(bar[3]) == int(ran[3]) == exact_tasks(spec)  # exact tasks
    assert int(banner[3]) == exact_solves(spec) <= int(ran[4] or ran[3])  # each worker process solves once
    verdict = meta["verdict"]
    assert int(stored[1]) == int(stored[2]) == verdict["exact_stored"] + verdict["exact_none"] == 8
    assert int(tested[2]) == verdict["with_reference"]  # the points the verdict tests
    assert (f"{verdict['exact_stored']} stored ({verdict['with_reference']} tested by the verdict), "
            f"{verdict['exact_none']} none exists, 0 not computed yet") in page


def test_query_and_report_show_the_same_variable_by_default(hk):
    """hk_monopoly has six distribution variables: ``query`` showed the first
    (wins, by seat), ``report`` the one over location (landings)."""
    from boardsweep.pipeline.store import load_sweep
    from boardsweep.pipeline.views.variable import pick_variable

    store, _, meta, _ = hk
    rows = json.loads(_cli("query", store, "--format", "json"))
    assert meta["variable"] == pick_variable(load_sweep(store)) == "landings"
    assert {meta["dim"]} == {k for k in rows[0] if k not in ("jail_strategy", "buy_policy", "players")} & {
        "location", "seat"} == {"location"}
