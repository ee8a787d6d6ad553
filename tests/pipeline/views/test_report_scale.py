"""``boardsweep report`` of a grid of many points: every figure draws at most
MAX_PANELS panels and says what it left out, the page shows a bounded number
of rows of each table and every row is in its CSV (issue 44: the report reads
what it draws)."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from boardsweep.core.games import game_names
from boardsweep.pipeline.analysis.figures import MAX_PANELS
from boardsweep.pipeline.views.report.parts import MAX_COMPARED

from clirun import run_cli  # tests/support is on sys.path
from specs import spec_toml

pytestmark = pytest.mark.slow  # a 2,000-point run and its report: about 15 s

#: The money game's benchmark grid, small: 2 x 2 x 500 = 2,000 points of one game of 5 rounds each.
RESERVES = [f"reserve:{10 * k}" for k in range(500)]
POINTS = 2 * 2 * len(RESERVES)


@pytest.fixture(scope="module")
def wide(tmp_path_factory, cluster2):
    folder = tmp_path_factory.mktemp("wide")
    (folder / "wide.toml").write_text(spec_toml(
        "hk_monopoly", name="wide", seed=5, params={"rounds": 5},
        grid={"dice_sides": [4, 6], "jail_strategy": ["short", "long"], "buy_policy": RESERVES},
        run={"replicates": 1, "games": 1}, checkpoints={"count": 1}, tasks={"points_per_task": 1000}))
    store = str(folder / "wide.zarr")
    assert run_cli("run", str(folder / "wide.toml"), "--store", store, "--scheduler", cluster2, "-q") == 0
    # --all: every point's rows (by default a grid of more than 1,000 points writes a sample's: test_report_sample)
    assert run_cli("report", store, "--out", str(folder / "report"), "--all", "-q") == 0
    return folder / "report"


@pytest.mark.skipif("hk_monopoly" not in game_names(), reason="hk_monopoly not registered")
def test_plot_answer_of_a_large_grid_draws_a_bounded_number_of_panels(wide):
    import matplotlib.pyplot as plt

    from boardsweep.pipeline.store import load_sweep

    fig = load_sweep(str(wide.parent / "wide.zarr")).boardsweep.plot_answer()
    assert fig.boardsweep_panels == (MAX_PANELS, POINTS // 2)  # drawn, and every jail_strategy x buy_policy
    assert sum(ax.get_visible() for ax in fig.axes) == MAX_PANELS
    plt.close(fig)


def _section(page: str, name: str) -> str:
    """The page's section ``name``: from its heading to the next."""
    start = page.index(f'<h2 id="{name}">')
    return page[start:page.index("<h2", start + 1)]


@pytest.mark.skipif("hk_monopoly" not in game_names(), reason="hk_monopoly not registered")
def test_the_figures_of_a_large_grid_draw_a_bounded_number_of_panels_and_say_so(wide):
    meta = json.loads((wide / "report.json").read_text())
    combinations = POINTS // 2  # one panel per jail_strategy x buy_policy: dice_sides along x
    assert meta["layout"] == {"x": "dice_sides", "facets": ["jail_strategy", "buy_policy"],
                              "panels_per_figure": MAX_PANELS, "panels_total": combinations}
    answer = (wide / "answer.svg").read_text()
    assert answer.count('id="axes_') == MAX_PANELS  # drawn panels only (the grid's unused ones are hidden)
    assert "buy policy: reserve:0" in answer and "buy policy: reserve:4990" in answer  # spread: first and last
    assert f"{MAX_PANELS} panels of the {combinations:,} combinations" in meta["figures"]["answer.png"]
    assert "every grid point is in headlines.csv" in meta["figures"]["answer.png"]
    for name in ("frequency_heatmap.png", "convergence.png"):
        if name in meta["figures"]:
            assert f"{MAX_PANELS} of the {combinations:,} panels drawn" in meta["figures"][name], name
    heat = (wide / "frequency_heatmap.svg").read_text()
    assert heat.count('id="axes_') == MAX_PANELS + 1  # and the colour bar
    page = (wide / "index.html").read_text()
    assert f"of {combinations} combinations: the rest left out" in page


@pytest.mark.skipif("hk_monopoly" not in game_names(), reason="hk_monopoly not registered")
def test_the_page_shows_a_bounded_number_of_rows_and_the_csv_holds_every_row(wide):
    meta = json.loads((wide / "report.json").read_text())
    page = (wide / "index.html").read_text()
    points = pd.read_csv(wide / "points.csv")
    assert len(points) == POINTS and len(points.drop_duplicates(["dice_sides", "jail_strategy", "buy_policy"])) == POINTS
    assert len(json.loads((wide / "summary.json").read_text())) == POINTS
    # each axis's first value against each other one (of a long axis, MAX_COMPARED of them, the notes say),
    # at every combination of the other axes
    compared = pd.read_csv(wide / "comparisons.csv")
    assert len(compared) == 1000 + 1000 + MAX_COMPARED * 4
    assert "buy_policy: reserve:0 vs reserve:4990" in set(compared["comparison"])  # the last among them
    assert f"comparisons of buy_policy: its first value reserve:0 against {MAX_COMPARED} of its 499 other " \
           "values" in " ".join(meta["notes"])
    for name in ("points", "comparisons"):
        rows = len(pd.read_csv(wide / meta["tables"][name]["csv"]))
        section = _section(page, name)
        assert f"{rows} rows; 200 shown here" in section, name
        assert len(re.findall(r"<tr", section)) == 200 + 1, name  # the rows and the header
