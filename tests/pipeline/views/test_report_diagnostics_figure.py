"""``diagnostics.png`` (pipeline/views/report/diagnostics_figure.py): ArviZ's
rank, ESS and MCSE evolution and autocorrelation plots of the few worst
labels, on a real Monopoly store (2 grid points x 4 replicates x 64 equal
batches): a planted disagreement is drawn first, the caption names what is
drawn, the figure is bounded, and a store without series draws none."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import open_sweep
from boardsweep.pipeline.views.report import diagnostics_figure as figure

from specs import spec_toml


@pytest.fixture(scope="module")
def store(tmp_path_factory, cluster2):
    text = spec_toml("monopoly", grid={"dice_sides": [4, 6]}, params={"tally": "per_roll"}, seed=54,
                     run={"replicates": 4, "games": 1, "players": 1, "turns": 3000}, checkpoints={"count": 8})
    url = str(tmp_path_factory.mktemp("diag") / "diag.zarr")
    assert run_sweep(parse_spec(text, "diag.toml"), url, scheduler=cluster2).complete
    return open_sweep(url).load()


def _planted(ds: xr.Dataset) -> xr.Dataset:
    """Replicate 0 lands on IN_JAIL 60% more in every batch at dice_sides=6 (its R-hat far above its reference)."""
    series = ds["series_counts"].copy()
    at = dict(dice_sides=1, replicate=0, location=int(np.flatnonzero(ds["location"].values == "IN_JAIL")[0]))
    series[at] = np.round(series[at].values * 1.6)
    return ds.assign(series_counts=series)


def test_the_worst_label_is_drawn_first_and_the_caption_names_what_is_drawn(store, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    found = figure.diagnostics_figure(_planted(store), "frequency", tmp_path)
    (name, caption), = found.items()
    assert name == "diagnostics.png" and (tmp_path / name).stat().st_size > 10_000
    assert (tmp_path / "diagnostics.svg").exists()
    assert caption.startswith(f"Convergence diagnostics of frequency on the equal-batch series, {figure.DIAG_LABELS} "
                              "labels with the highest R-hat beside its reference (4 replicates x 64 batches)")
    assert "among 2 grid points." in caption and "rank plot" in caption and "autocorrelation at lags 0-10" in caption
    drawn = caption.split("Drawn: ")[1].rstrip(".").split("; ")
    assert len(drawn) == figure.DIAG_LABELS and drawn[0] == "dice_sides=6, IN_JAIL", drawn


def test_worst_labels_puts_those_above_their_reference_first():
    rhat = np.array([[1.02, 1.05, np.nan], [1.04, 1.01, 1.03]])
    limit = np.full_like(rhat, 1.03)
    diag = xr.Dataset({"rhat": (("g", "label"), rhat), "rhat_limit": (("g", "label"), limit),
                       "rhat_high": (("g", "label"), np.where(np.isfinite(rhat), rhat > limit, np.nan))})
    picks = figure.worst_labels(diag, 4)
    assert [(int(p["g"]), int(p["label"])) for p in picks] == [(0, 1), (1, 0), (1, 2), (0, 0)]


def test_the_search_is_bounded_and_says_so(store, tmp_path, monkeypatch):
    """With room for one grid point the figure searches an evenly spaced sub-grid of one, and says of how many."""
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.setattr(figure, "DIAG_POINTS", 1)
    (caption,) = figure.diagnostics_figure(store, None, tmp_path).values()
    assert "among 1 grid point (evenly spaced, of 2)." in caption


def test_a_store_without_series_draws_none(tmp_path):
    old = open_sweep(str(Path(__file__).resolve().parents[2] / "support" / "old_stores"
                         / "format5_hk_monopoly.zarr")).load()
    assert figure.diagnostics_figure(old, None, tmp_path) == {}
    assert not list(tmp_path.iterdir())
