"""A store read while a run writes it: every cell read as done has its data.

A run in a process of its own writes many small tasks (and packs the store
as it completes) while this process reads it again and again with
``load_sweep(check=False)`` (and now and then
``open_sweep``, computed).  A task writes its data, then its done flags;
read the other way round (the data, then the masks), a task finishing
between the two reads left cells done whose counts read NaN, and a read
during the packing's swap of arrays saw every cell done and most of the
counts missing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from specs import spec_toml

from boardsweep.pipeline.errors import StoreBeingRewritten
from boardsweep.pipeline.store.open import load_sweep, open_sweep

_TOY_MAIN = ("import sys; from boardsweep.core import games; games.register('toy', 'toy_game'); "
             "from boardsweep.pipeline.cli.commands import command_line; sys.argv[0] = 'boardsweep'; command_line()")

#: 16 grid points x 16 replicates, one replicate per task: 256 small tasks, each a few
#: milliseconds of the toy kernel plus TOY_DELAY_S, so reads fall between tasks' writes.
SPEC = spec_toml("toy", params={"size": 8}, grid={"dice_sides": list(range(2, 10)), "rule": ["plain", "sticky"]},
                 run={"replicates": 16, "games": 2, "turns": 60}, checkpoints={"count": 5},
                 tasks={"replicates_per_task": 1})


def _done_without_data(ds) -> int:
    """Cells flagged done whose counts hold a NaN (a value never written)."""
    counts = ds["counts"].values
    if counts.dtype.kind != "f":
        return 0  # read as integers: no cell holds the fill value
    missing = np.isnan(counts).any(axis=tuple(range(ds["done"].ndim, counts.ndim)))
    return int((ds["done"].values & missing).sum())


@pytest.mark.slow
def test_every_cell_read_as_done_has_its_data_while_a_run_writes(tmp_path):
    spec, store = tmp_path / "toy.toml", tmp_path / "s.zarr"
    spec.write_text(SPEC)
    run = subprocess.Popen([sys.executable, "-c", _TOY_MAIN, "-q", "run", str(spec), "--store", str(store),
                            "--workers", "2"], env={**os.environ, "TOY_DELAY_S": "0.02"},
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    reads, bad, busy = 0, [], 0
    try:
        while run.poll() is None:
            try:
                ds = (load_sweep(str(store), check=False) if reads % 4 else
                      open_sweep(str(store), check=False).compute())  # the lazy reader too, now and then
            except StoreBeingRewritten:
                busy += 1  # told, not misled: allowed
                continue
            except Exception:  # noqa: BLE001 - the store is not made yet
                if reads:
                    raise
                continue
            reads += 1
            found = _done_without_data(ds)
            if found:
                bad.append((found, int(ds["done"].values.sum())))
    finally:
        if run.poll() is None:
            run.kill()
        _, err = run.communicate(timeout=60)
    assert run.returncode == 0, err[-2000:]
    assert reads >= 10, f"only {reads} reads while the run wrote: the race was not provoked"
    assert not bad, f"{len(bad)} of {reads} reads had cells done without data (cells, done): {bad[:5]}"
    final = load_sweep(str(store))
    assert bool(final["done"].all()) and _done_without_data(final) == 0


@pytest.mark.slow  # the reader waits about 5 s for the change to end
def test_a_read_during_a_live_layout_change_is_told_not_misled(tmp_path, toy_spec_text, write_spec):
    from clirun import run_cli

    from boardsweep.pipeline.store import JOURNAL, StoreLock

    store = tmp_path / "s.zarr"
    assert run_cli("run", str(write_spec(toy_spec_text)), "--store", str(store), "--workers", "1") == 0
    journal = store / JOURNAL
    journal.write_text('{"state": "unpacking", "arrays": []}')  # a layout change under way ...
    with StoreLock(str(store)):  # ... by a live run (this process holds the lock)
        with pytest.raises(StoreBeingRewritten, match="read it again once the run ends"):
            load_sweep(str(store), check=False)
    ds = load_sweep(str(store), check=False)  # a journal whose run is gone: read as it is
    assert bool(ds["done"].all()) and _done_without_data(ds) == 0


#: A process that holds the store's lock, as a run does, and packs and
#: unpacks it again and again (a run's layout changes), ``pause`` seconds
#: apart, until told to stop by the file ``stop``; keeps the count of changes
#: it made in the file ``stop`` + ``.count``, and prints it.
_RELAYOUT = """
import os, sys, time
from boardsweep.pipeline.store import Store
store, stop, pause = sys.argv[1], sys.argv[2], float(sys.argv[3])
st, changes = Store(store), 0
with st.lock():
    print("locked", flush=True)
    while not os.path.exists(stop):
        if st.layout == "packed":
            st.unpack()
        else:
            st.pack()
        changes += 1
        open(stop + ".count", "w").write(str(changes))
        time.sleep(pause)
print(changes, flush=True)
"""


def _same_cells(ds, reference) -> bool:
    """Whether ``ds`` holds every cell of the finished ``reference``, equal (counts, done)."""
    return (bool(ds["done"].values.all()) and ds["counts"].shape == reference["counts"].shape
            and bool(np.array_equal(ds["counts"].values, reference["counts"].values)))


@pytest.mark.slow
def test_readers_across_hundreds_of_layout_changes_see_the_whole_store_or_are_told(tmp_path, toy_spec_text,
                                                                                  write_spec):
    """Every read path, lazily opened and computed, loaded, and through
    xarray's engine, while a process packs and unpacks the store back to
    back: each read is the whole finished store, or StoreBeingRewritten;
    never a KeyError, a shape error, or a cell done without its data."""
    import xarray as xr
    from clirun import run_cli

    store, stop = tmp_path / "s.zarr", tmp_path / "stop"
    assert run_cli("run", str(write_spec(toy_spec_text)), "--store", str(store), "--workers", "1", "-q") == 0
    reference = load_sweep(str(store))
    began = time.monotonic()
    for _ in range(3):
        open_sweep(str(store), check=False).compute()
    pause = (time.monotonic() - began) / 3  # one read's time on this machine: reads overlap changes and fall between
    changer = subprocess.Popen([sys.executable, "-c", _RELAYOUT, str(store), str(stop), str(pause)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    readers = (lambda: load_sweep(str(store), check=False), lambda: open_sweep(str(store), check=False).compute(),
               lambda: xr.open_dataset(str(store), engine="boardsweep", check=False).compute(),
               lambda: open_sweep(str(store), check=False))  # the last computed after a pause: opened, then read
    reads, told, wrong, raised = 0, 0, [], []
    try:
        assert changer.stdout.readline().strip() == "locked", changer.stderr.read()
        count = Path(f"{stop}.count")
        while reads + told < 1000 and not (reads >= 20 and reads + told >= 40 and count.exists()
                                            and int(count.read_text() or 0) >= 40):  # a loaded machine: more tries
            which = (reads + told) % len(readers)
            try:
                ds = readers[which]()
                if which == 3:
                    time.sleep(pause / 2)
                    ds = ds.compute()
                same = _same_cells(ds, reference)
            except StoreBeingRewritten:
                told += 1
                continue
            except Exception as exc:  # noqa: BLE001 - what the test counts: a raw error
                raised.append(f"{type(exc).__name__}: {exc}"[:200])
                reads += 1
                continue
            reads += 1
            if not same:
                wrong.append((which, int(ds["done"].values.sum())))
    finally:
        stop.touch()
        out, err = changer.communicate(timeout=120)
    changes = int(out.split()[-1])
    assert changer.returncode == 0, err[-2000:]
    assert changes >= 10, f"only {changes} layout changes during {reads + told} reads: the race was not provoked"
    assert not raised, f"{len(raised)} of {reads} reads raised a raw error: {raised[:3]}"
    assert not wrong, f"{len(wrong)} of {reads} reads were not the whole store (reader, cells done): {wrong[:5]}"
    assert reads >= 20, f"{told} of {reads + told} reads told the store was being rewritten: too few read"


def test_a_lazy_read_after_a_layout_change_since_it_was_opened_is_told(tmp_path, toy_spec_text, write_spec):
    """A store opened lazily, then unpacked (its chunks moved) before it is
    computed: the computation says so in one line, never a raw shape error
    or the fill values of chunks no longer there; opened again, it reads whole."""
    from clirun import run_cli

    from boardsweep.pipeline.store import Store

    store = tmp_path / "s.zarr"
    assert run_cli("run", str(write_spec(toy_spec_text)), "--store", str(store), "--workers", "1", "-q") == 0
    reference = load_sweep(str(store))
    st = Store(str(store))
    assert st.layout == "packed"
    lazy = open_sweep(str(store), check=False)
    with st.lock():
        st.unpack()
    with pytest.raises(StoreBeingRewritten, match="changed layout since it was opened .*: open it and read it again"):
        lazy.compute()
    assert _same_cells(open_sweep(str(store), check=False).compute(), reference)
