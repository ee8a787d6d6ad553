"""Stores that `run` could not finish, or that were called complete when they
were not: an undecodable task chunk in a precision store, a full disk while
packing is finished, a process killed during `--overwrite` after the root
metadata was removed.  Real runs, real killed processes, a real full disk."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import xarray as xr

from clirun import run_cli
from localdask import COMPARED, HERE, assert_bitwise_equal
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import integrity, packing



def _precision_spec(make_spec) -> str:
    return make_spec("toy", params={"size": 8}, grid={"dice_sides": [2, 3]},
                     run={"replicates": 4, "games": 2, "turns": 60}, checkpoints={"count": 3},
                     tasks={"replicates_per_task": 2}, precision={"stderr": 0.02, "max_replicates": 8})


def test_an_undecodable_task_chunk_of_a_precision_store_is_recomputed(tmp_path, make_spec, cluster2):
    spec = parse_spec(_precision_spec(make_spec), "p.toml")
    reference, url = tmp_path / "reference.zarr", tmp_path / "store.zarr"
    assert run_sweep(spec, str(reference), scheduler=cluster2, pack=False).complete
    shutil.copytree(reference, url)
    (url / "counts" / "c" / "1" / "0" / "0" / "0").write_bytes(b"not zstd")
    report = run_sweep(spec, str(url), scheduler=cluster2, pack=False)
    assert report.complete and report.tasks_run == 1 and len(report.repaired) == 1
    assert not integrity.check(str(url))
    assert_bitwise_equal(url, reference, [*COMPARED, "replicates_used", "precision_state"])


_KILLED_OVERWRITE = f"""
import os, sys
sys.path.insert(0, {str(HERE)!r})
from fsspec.implementations.local import LocalFileSystem
from boardsweep.core import games
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
games.register("toy", "toy_game")
real = LocalFileSystem.rm
def rm(self, path, *args, **kwargs):
    real(self, path, *args, **kwargs)
    if str(path).endswith("zarr.json") and os.path.dirname(str(path)) == sys.argv[2]:
        os._exit(9)  # killed right after the root metadata went: no clean-up of any kind
LocalFileSystem.rm = rm
spec = parse_spec(open(sys.argv[1]).read(), sys.argv[1])
run_sweep(spec, sys.argv[2], overwrite=True, scheduler=sys.argv[3])
"""


def test_sigkill_during_overwrite_after_the_root_metadata_is_gone(tmp_path, make_spec, write_spec, toy_spec_text,
                                                                  cluster2, capsys):
    first = write_spec(toy_spec_text, "first.toml")
    other = write_spec(toy_spec_text.replace("seed = 7", "seed = 8"), "other.toml")
    url = tmp_path / "store.zarr"
    assert run_cli("-q", "run", str(first), "--store", str(url), "--scheduler", cluster2) == 0
    (url / "notes.txt").write_text("mine")
    killed = subprocess.run([sys.executable, "-c", _KILLED_OVERWRITE, str(other), str(url), cluster2],
                            capture_output=True, text=True)
    assert killed.returncode == 9, killed.stderr
    assert not (url / "zarr.json").exists() and (url / ".boardsweep").is_dir()
    # the overwrite's creation record survives the kill: the same command without --overwrite finishes it
    assert run_cli("-q", "run", str(other), "--store", str(url), "--scheduler", cluster2) == 0
    assert run_cli("status", str(url)) == 0
    assert json.loads(xr.open_zarr(url).attrs["spec_canonical"])["seed"] == 8  # the overwrite's spec, not the first
    assert (url / "notes.txt").read_text() == "mine"


def test_a_full_disk_while_packing_is_finished_leaves_a_complete_task_layout(tmpfs, toy_spec_text, cluster2,
                                                                            monkeypatch, capsys):
    disk = tmpfs("disk", "4m")
    url = disk / "store.zarr"
    spec = parse_spec(toy_spec_text, "toy.toml")
    assert run_sweep(spec, str(url), scheduler=cluster2, pack=False).complete
    real = packing._write_journal

    def then_fill(root, journal):
        real(root, journal)
        if journal and journal.get("state") == packing.PACKING_STATE:  # the copies are written: fill the disk
            with open(disk / "filler", "wb") as f:
                try:
                    while True:
                        f.write(b"\0" * 4096)
                        f.flush()
                except OSError:
                    pass

    monkeypatch.setattr(packing, "_write_journal", then_fill)
    report = run_sweep(spec, str(url), scheduler=cluster2)
    assert report.complete and "not packed" in report.packing and "task layout" in report.packing
    monkeypatch.undo()
    assert packing.layout(str(url)) == "tasks" and not integrity.check(str(url))
    assert not (url / packing.PACKING).exists() and not (url / packing.CELLS).exists()
    assert run_cli("status", str(url)) == 0  # what the run said is true
    # a rerun on the still-full disk: one honest line, never a traceback; the store stays complete
    report = run_sweep(spec, str(url), scheduler=cluster2)
    assert report.complete and "not packed" in report.packing and report.tasks_run == 0
    (disk / "filler").unlink()
    report = run_sweep(spec, str(url), scheduler=cluster2)
    assert report.complete and not report.packing and packing.layout(str(url)) == "packed"
    assert not integrity.check(str(url))
    os.sync()
