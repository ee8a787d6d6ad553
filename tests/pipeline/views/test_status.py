"""What ``status`` prints (:mod:`boardsweep.pipeline.views.status`)."""

from __future__ import annotations

from boardsweep.pipeline.views import status

#: Points of the long axis: 10^5 (moved with the code it tests from tests/pipeline/plan/test_large_grid.py).
LONG_AXIS = 100_000


def test_status_of_a_long_axis_makes_entries_only_for_the_points_it_shows(monkeypatch, capsys):
    """``status`` of 10^5 grid points (a table, no precision target) counts
    them in numpy and makes a {axis: value} entry only for the few points it
    lists: the first unfinished ones."""
    import numpy as np
    import xarray as xr

    done = np.ones((LONG_AXIS, 2), dtype=bool)
    done[[7, 70_000], 1] = False  # two points partly done
    exact = np.ones(LONG_AXIS, dtype=bool)
    ds = xr.Dataset(
        {"done": (("dice_sides", "replicate"), done), "exact_done": ("dice_sides", exact),
         "exact_exists": ("dice_sides", exact), "exact_note": ("dice_sides", np.full(LONG_AXIS, "", dtype=object))},
        coords={"dice_sides": np.arange(2, 2 + LONG_AXIS)}, attrs={"grid_axes": ["dice_sides"], "sweep": "long"})
    made = []
    points_at = status._points_at
    monkeypatch.setattr(status, "_points_at", lambda ds, axes, at: made.append(len(at)) or points_at(ds, axes, at))
    status.print_status(ds, "table")
    out = " ".join(capsys.readouterr().out.split())
    assert f"{LONG_AXIS} grid points: {LONG_AXIS - 2} finished, 2 partly done, 0 not started" in out
    assert f"exact answers: {LONG_AXIS} stored" in out and "│ 9 " in out and "│ 70002 " in out
    assert sum(made) == 2

