"""The report's "Shuffled decks" section (between- and within-deck variance,
the paired deck test) appears where decks are shuffled, and only there: a
sweep of independent decks plays one chain in every replicate, with nothing
between decks to split off."""

from __future__ import annotations

import pytest

from boardsweep.core.games import game_names
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.api import report as write_report

from specs import spec_toml  # tests/support is on sys.path

pytestmark = pytest.mark.skipif("monopoly" not in game_names(), reason="monopoly not registered")


@pytest.mark.slow
def test_no_shuffled_decks_section_for_independent_decks(tmp_path, cluster2):
    """(A grid with shuffled points shows it, decomposition.csv holding only
    those points: tests/pipeline/views/test_report.py.)"""
    policy = "independent"
    text = spec_toml("monopoly", name="decks", seed=8, params={"tally": "per_roll", "deck_policy": policy},
                     grid={"dice_sides": [6]}, run={"replicates": 4, "games": 1, "players": 1, "turns": 400},
                     checkpoints={"count": 4}, tasks={"replicates_per_task": 2})
    store = str(tmp_path / f"{policy}.zarr")
    assert run_sweep(parse_spec(text, "decks.toml"), store, scheduler=cluster2).complete
    out = tmp_path / "report"
    write_report(store, out)
    page = (out / "index.html").read_text()
    assert "Shuffled decks" not in page and "paired deck test" not in page
    assert not (out / "decomposition.csv").exists()
    assert "Every grid point" in page  # the rest of the report is there
    import pandas as pd

    pts = pd.read_csv(out / "points.csv")  # the convergence slope with its interval
    assert (pts["slope_low"] <= pts["slope"]).all() and (pts["slope"] <= pts["slope_high"]).all()
