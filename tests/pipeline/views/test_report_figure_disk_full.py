"""A report part that cannot be written because the disk is full (a real
figure saved into a full tmpfs) ends the report with the disk-full error,
as every other write of the report does (``ReportDiskFull``), not with a
note that the part is "not available" in a report that claims to be whole."""

from __future__ import annotations


import pytest

from diskfill import fill_disk  # tests/support is on sys.path

from boardsweep.pipeline.errors import disk_full
from boardsweep.pipeline.views.report.parts import attempt




def _figure(out) -> dict:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [1, 0, 1])
    try:
        fig.savefig(out / "figure.png", dpi=150)
    finally:
        plt.close(fig)
    return {"figure": "figure.png"}


def test_a_figure_the_full_disk_cannot_hold_is_not_a_note(tmpfs):
    disk = tmpfs("full", "256k")
    fill_disk(disk / "filler")
    meta = {"notes": []}
    with pytest.raises(OSError) as raised:
        attempt(meta, "a figure", _figure, disk)
    assert disk_full(raised.value) and meta["notes"] == []


def test_other_failures_are_still_notes(tmp_path):
    meta = {"notes": []}
    assert attempt(meta, "a figure", _figure, tmp_path / "no such folder") is None
    assert len(meta["notes"]) == 1 and meta["notes"][0].startswith("a figure: not available (FileNotFoundError")
