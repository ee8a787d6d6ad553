"""Fixtures shared by the analysis tests."""

from __future__ import annotations

import pytest

from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import open_sweep

from specs import spec_toml  # tests/support is on sys.path


@pytest.fixture(scope="session")
def box_store(tmp_path_factory, cluster2):
    """A real Shut the Box store (3 sides, 4 replicates of 4096 games, 16
    checkpoints), loaded: its histograms are replaced by exact-law draws
    (tests/support/lawdraws.py)."""
    text = spec_toml("shut_the_box", params={"dice_sides": 3, "policy": "optimal"}, seed=5,
                     run={"replicates": 4, "games": 4096}, checkpoints={"count": 16})
    url = str(tmp_path_factory.mktemp("box") / "box.zarr")
    assert run_sweep(parse_spec(text, "box.toml"), url, scheduler=cluster2).complete
    return open_sweep(url).load()
