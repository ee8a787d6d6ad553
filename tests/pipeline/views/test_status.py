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
    from boardsweep.pipeline.analysis import dataset

    made = []
    points_at = dataset.grid_points_at
    monkeypatch.setattr(dataset, "grid_points_at", lambda ds, at: made.append(len(at)) or points_at(ds, at))
    status.print_status(ds, "table")
    out = " ".join(capsys.readouterr().out.split())
    assert f"{LONG_AXIS} grid points: {LONG_AXIS - 2} finished, 2 partly done, 0 not started" in out
    assert f"exact answers: {LONG_AXIS} stored" in out and "│ 9 " in out and "│ 70002 " in out
    assert sum(made) == 2



def _marked(exists, notes, exact_done, note_data=None):
    """A status dataset of 6 x 5 grid points, 2 replicates (all done), with
    the exact markers given (``note_data``: ``exact_note``'s array, lazily read)."""
    import numpy as np
    import xarray as xr

    dims = ("a", "b")
    note = note_data if note_data is not None else np.asarray(notes, dtype=object)
    return xr.Dataset(
        {"done": ((*dims, "replicate"), np.ones((6, 5, 2), dtype=bool)), "exact_done": (dims, exact_done),
         "exact_exists": (dims, exists), "exact_note": (dims, note)},
        coords={"a": np.arange(6), "b": np.arange(10, 15)}, attrs={"grid_axes": list(dims), "sweep": "marks"})


def test_status_digest_counts_states_and_gives_each_reason_once(capsys):
    """The digest of a grid beyond a screen: exact states counted, each
    reason a missing answer has printed once, the first unfinished points listed."""
    import json

    import numpy as np

    exists, notes, exact_done = np.ones((6, 5), bool), np.full((6, 5), "", dtype=object), np.ones((6, 5), bool)
    exists[0, 1] = exists[2, 2] = exists[3, 3] = False
    notes[0, 1] = notes[2, 2] = "decks shuffled"  # (3, 3): no reason given
    exact_done[4, 4] = False
    status.print_status(_marked(exists, notes, exact_done), "table")
    lines = capsys.readouterr().out.splitlines()
    out = " ".join(" ".join(lines).split())
    assert "exact answers: 26 stored, 3 none exists, 1 not yet" in out
    assert lines[-2:] == ["exact 'none': no single exact answer exists",  # (3, 3): no reason given
                          "exact 'none': no single exact answer exists: decks shuffled"]
    assert "│ 4 │ 14 │ 2/2 │ not yet │" in out and "grid points not finished" in out
    status.print_status(_marked(exists, notes, exact_done), "json")
    points = {(p["a"], p["b"]): p for p in json.loads(capsys.readouterr().out)["points"]}
    assert points[(0, 11)]["exact"] == "none"
    assert points[(0, 11)]["exact_note"] == "no single exact answer exists: decks shuffled"
    assert points[(3, 13)]["exact_note"] == "no single exact answer exists"
    assert points[(4, 14)]["exact"] == "pending" and points[(4, 14)]["exact_note"] == "not computed yet"
    assert points[(1, 10)]["exact_note"] == "exact answer stored"


def test_status_reads_no_reason_where_every_point_has_its_answer(capsys):
    """``exact_note`` (a text per grid point) is read only where an answer is
    missing: here none is, and reading it would fail."""
    import dask.array as da
    import numpy as np

    def unreadable(block):
        raise AssertionError("exact_note read")

    lazy = da.map_blocks(unreadable, da.zeros((6, 5), chunks=(6, 5)), dtype=object)
    status.print_status(_marked(np.ones((6, 5), bool), None, np.ones((6, 5), bool), note_data=lazy), "table")
    assert "exact answers: 30 stored, 0 none exists, 0 not yet" in " ".join(capsys.readouterr().out.split())
