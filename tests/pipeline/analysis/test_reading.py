"""The cells ``--sel`` picks (:func:`boardsweep.pipeline.analysis.reading.select`)."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from boardsweep.pipeline.analysis import reading

#: Values of the long text axis.
LONG_AXIS = 100_000


class Refused(Exception):
    pass


def _grid(**axes) -> xr.Dataset:
    return xr.Dataset(coords={a: np.asarray(v) for a, v in axes.items()}, attrs={"grid_axes": list(axes)})


def test_a_long_text_axis_is_looked_up_whole(monkeypatch):
    """Each value of a 10^5-value axis is made text without a Python call per
    value (``python_value`` is for object axes), and values are picked by text."""
    calls = []
    python_value = reading.python_value
    monkeypatch.setattr(reading, "python_value", lambda v: calls.append(v) or python_value(v))
    ds = _grid(buy_policy=[f"reserve:{10 * i}" for i in range(LONG_AXIS)], dice_sides=[4, 6])
    picked = reading.select(ds, ("buy_policy=reserve:20,reserve:10", "dice_sides=6", "buy_policy=reserve:20"),
                                 Refused)
    assert picked == {"buy_policy": ["reserve:20", "reserve:10"], "dice_sides": [6]}
    assert all(type(v) is str for v in picked["buy_policy"]) and type(picked["dice_sides"][0]) is int
    assert calls == []
    with pytest.raises(Refused) as refused:
        reading.select(ds, ("buy_policy=reserve:5",), Refused)
    assert str(refused.value) == ("--sel 'buy_policy=reserve:5': 'reserve:5' is not on axis 'buy_policy'; values: "
                                  + ", ".join(f"reserve:{10 * i}" for i in range(10))
                                  + f", ... ({LONG_AXIS - 20} more), "
                                  + ", ".join(f"reserve:{10 * i}" for i in range(LONG_AXIS - 10, LONG_AXIS)))


def test_a_text_two_values_share_picks_the_first():
    ds = _grid(mixed=np.asarray([1, "1", "a,b", 2], dtype=object))
    assert reading.select(ds, ("mixed=1", "mixed=a,b"), Refused) == {"mixed": [1, "a,b"]}


def test_a_text_axis_makes_its_dict_only_for_many_lookups(monkeypatch):
    """A few values of a long text axis are found by comparing the axis
    whole; beyond ``SCANS`` of them, once, the dict of every value."""
    made = []
    by_text = reading._by_text
    monkeypatch.setattr(reading, "_by_text", lambda values: made.append(len(values)) or by_text(values))
    ds = _grid(buy_policy=[f"reserve:{10 * i}" for i in range(LONG_AXIS)])
    few = [f"reserve:{10 * i}" for i in (5, 3, 5)]
    assert reading.select(ds, (f"buy_policy={','.join(few)}",), Refused) == {"buy_policy": few[:2]}
    assert made == []
    many = [f"reserve:{10 * i}" for i in range(3 * reading.SCANS)]
    assert reading.select(ds, (f"buy_policy={','.join(many)}",), Refused) == {"buy_policy": many}
    assert made == [LONG_AXIS]


def test_a_task_without_its_record_while_a_live_run_holds_the_store_is_told_not_damaged(
        tmp_path, toy_spec_text, write_spec, capsys):
    """A run writes a task's done flags, then its checksum record: a read
    between the two, while the run holds the store, is told to read again;
    once no run holds it, the same store is damaged as before."""
    import socket

    from clirun import run_cli

    from boardsweep.pipeline.errors import StoreBeingRewritten
    from boardsweep.pipeline.store import MANIFEST_DIR, Store, StoreLock, load_sweep

    store = tmp_path / "s.zarr"
    assert run_cli("-q", "run", str(write_spec(toy_spec_text)), "--store", str(store), "--workers", "1") == 0
    st = Store(str(store))
    with st.lock():
        st.unpack()  # the layout a run writes tasks in: a checksum record per task
    records = sorted(p for p in (store / MANIFEST_DIR).rglob("*") if p.is_file() and "exact" not in p.parts)
    records[0].unlink()  # the task the run has just finished, its record not yet written
    capsys.readouterr()
    with StoreLock(str(store)):  # a live run holds the store (this process)
        for command in ("status", "query"):
            assert run_cli(command, str(store)) == 1
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1 and "is writing it" in err[0] and "read it again" in err[0], err
        with pytest.raises(StoreBeingRewritten, match="read it again"):
            load_sweep(str(store))
    (store / ".boardsweep.lock").write_text('{"pid": 999999999, "host": "%s"}' % socket.gethostname())
    assert run_cli("query", str(store)) == 1  # a run killed as it finished the task: rerun it, not damaged
    err = capsys.readouterr().err
    assert "was interrupted as it finished a task" in err and "damaged" not in err, err
    (store / ".boardsweep.lock").unlink()
    assert run_cli("query", str(store)) == 2  # no run's lock: damaged (a record lost), as before
    assert "damaged" in capsys.readouterr().err


def test_a_packing_a_killed_run_left_is_told_to_be_finished_not_damaged(tmp_path, toy_spec_text, write_spec, capsys):
    """A layout journal with no run holding the store: ``query`` and ``status``
    say a run was interrupted while it packed it, and which command finishes that."""
    from clirun import run_cli

    from boardsweep.pipeline.store import JOURNAL

    store = tmp_path / "s.zarr"
    assert run_cli("-q", "run", str(write_spec(toy_spec_text)), "--store", str(store), "--workers", "1") == 0
    (store / JOURNAL).write_text('{"state": "packing", "arrays": ["counts"]}')  # a packing cut short
    capsys.readouterr()
    told = []
    for command in ("query", "status"):
        code = run_cli(command, str(store))
        err = capsys.readouterr().err.strip().splitlines()
        if code == 0 or (command == "status" and code == 1 and not err):
            continue  # read whole: the journal's change touched nothing this read needs
        assert len(err) == 1 and "interrupted while it packed" in err[0] and "damaged" not in err[0], (command, err)
        told.append(command)
    assert "status" in told  # its integrity check meets the journal: told, not "damaged"


def test_a_command_reads_a_grid_whole_up_to_its_size_and_block_by_block_beyond(tmp_path, cluster2):
    """:func:`reading.read_sweep`, every command's one read strategy: a grid of
    at most ``whole`` points in memory, a larger one lazily in dask chunks of
    ``block`` points; the same values either way, and a caller's lazy
    Dataset read into memory from where it is."""
    from boardsweep.pipeline.run.execute import run_sweep
    from boardsweep.pipeline.spec.parse import parse_spec
    from boardsweep.pipeline.store import open_sweep

    from specs import spec_toml

    text = spec_toml("shut_the_box", name="read", seed=3, grid={"dice_sides": [2, 3, 4]},
                     run={"replicates": 2, "games": 50})
    url = str(tmp_path / "read.zarr")
    assert run_sweep(parse_spec(text, "read.toml"), url, scheduler=cluster2).complete
    whole, in_blocks = reading.read_sweep(url, whole=3)
    assert not in_blocks and all(v.chunks is None for v in whole.data_vars.values())  # numpy: in memory
    lazy, in_blocks = reading.read_sweep(url, whole=2, block=1)
    chunked = [v for v in lazy.data_vars.values() if v.chunks is not None and "dice_sides" in v.dims]
    assert in_blocks and chunked
    assert all(set(v.chunksizes["dice_sides"]) == {1} for v in chunked)  # a block of one point a chunk
    xr.testing.assert_equal(lazy.load(), whole)
    opened, in_blocks = reading.read_sweep(url, whole=3, opened=open_sweep(url, check=False))
    assert not in_blocks and all(v.chunks is None for v in opened.data_vars.values())
    xr.testing.assert_equal(opened, whole)
