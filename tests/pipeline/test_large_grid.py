"""A large grid is planned without a silent wait: the run says at once that
it prepares the store and plans the points, and creating the empty store
builds one dask chunk per array (a graph of one task per grid point and array
took minutes at 10^5 points; see benchmarks/planning.py)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from boardsweep.pipeline import display
from boardsweep.pipeline.spec import parse_spec
from boardsweep.pipeline.store import template


@pytest.fixture(scope="module")
def large_spec():
    from conftest import TOY_SPEC

    sides = ", ".join(str(n) for n in range(2, 2 + display.PLANNING_LINE_POINTS // 2))
    return parse_spec(TOY_SPEC.replace("dice_sides = [2, 3]", f"dice_sides = [{sides}]"), "large.toml")


@pytest.fixture(autouse=True)
def _normal_verbosity(monkeypatch):
    """An earlier in-process ``boardsweep -q`` leaves the module's verbosity quiet."""
    monkeypatch.setattr(display, "_VERBOSITY", 0)


def _banner(spec) -> str:
    out = io.StringIO()
    display.announce(Console(file=out, width=200), spec, "/tmp/large.zarr")
    return out.getvalue()


def test_a_large_grid_says_it_is_being_planned(large_spec):
    points = display.PLANNING_LINE_POINTS
    assert f"preparing the store and planning {points} grid points" in _banner(large_spec)


def test_a_small_grid_says_nothing_more(toy_spec_text):
    assert "planning" not in _banner(parse_spec(toy_spec_text, "toy.toml"))


def test_the_empty_store_is_one_dask_chunk_per_array_and_one_zarr_chunk_per_task(large_spec):
    ds, encoding = template(large_spec, large_spec.game)
    lazy = [name for name, v in ds.data_vars.items() if hasattr(v.data, "npartitions")]
    assert lazy and all(ds[name].data.npartitions == 1 for name in lazy)
    assert encoding["counts"]["chunks"][:3] == (1, 1, large_spec.block)  # grid point x task block
