"""What a Ctrl-C's line says (:mod:`boardsweep.pipeline.cli.interrupt`): the finished
tasks kept where the store exists, nothing written where it was never made."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from boardsweep.pipeline.cli import interrupt

ROOT = Path(__file__).resolve().parents[3]


def test_the_line_says_nothing_was_written_until_the_store_exists(tmp_path):
    store = tmp_path / "results" / "pe84b.zarr"
    interrupt.starts(["run", "pe84b.toml"])
    assert interrupt.line() == "boardsweep: interrupted"  # nothing said to be kept yet
    interrupt.keeps(f"the finished tasks, in {store},", store=str(store))
    assert interrupt.line() == (f"boardsweep: interrupted; nothing was written (no store at {store} yet); "
                                "`boardsweep run pe84b.toml` starts it again")
    store.mkdir(parents=True)
    (store / ".boardsweep").mkdir()
    (store / ".boardsweep" / "lock").write_text("{}")  # a folder with only the lock is no store either
    assert "nothing was written" in interrupt.line()
    (store / "zarr.json").write_text("{}")
    assert interrupt.line() == (f"boardsweep: interrupted; the finished tasks, in {store}, are kept; "
                                "`boardsweep run pe84b.toml` resumes")
    interrupt.keeps("the finished tasks, in s3://b/x.zarr,", store="s3://b/x.zarr")  # storage is not asked
    assert interrupt.line() == ("boardsweep: interrupted; the finished tasks, in s3://b/x.zarr, if any finished, "
                                "are kept; `boardsweep run pe84b.toml` resumes")  # never a claim of tasks kept
    interrupt.starts(None)


def test_the_line_asks_the_store_s_one_local_answer(tmp_path):
    """A ``file://`` store is a folder (asked whether it was made), a chained fsspec URL object storage
    (never asked): :func:`boardsweep.pipeline.urls.local_root`, as the store itself answers."""
    interrupt.starts(["run", "x.toml"])
    interrupt.keeps("the finished tasks", store=f"file://{tmp_path / 'x.zarr'}")
    assert "nothing was written" in interrupt.line()
    (tmp_path / "x.zarr").mkdir()
    (tmp_path / "x.zarr" / "zarr.json").write_text("{}")
    assert interrupt.line().endswith("the finished tasks are kept; `boardsweep run x.toml` resumes")
    interrupt.keeps("the finished tasks", store="simplecache::s3://b/x.zarr")
    assert "if any finished" in interrupt.line()
    interrupt.starts(None)


@pytest.mark.slow
def test_a_ctrl_c_before_the_store_exists_says_nothing_was_written(tmp_path):
    """A real process, SIGINT as soon as the run has taken its lock (the store's folder appears) and before
    its root ``zarr.json`` is there: the line says the tasks are kept exactly where the store is there
    afterwards (was: "the finished tasks, in q.zarr, are kept" of a store never made)."""
    store = tmp_path / "q.zarr"
    proc = subprocess.Popen([sys.executable, "-m", "boardsweep", "run", str(ROOT / "sweeps" / "quickstart.toml"),
                             "--store", str(store), "--workers", "1"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    deadline = time.monotonic() + 120
    while not store.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    early = not (store / "zarr.json").exists()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    lines = [line for line in err.splitlines() if line.strip()]
    assert proc.returncode == 130 and len(lines) == 1, err
    made = (store / "zarr.json").is_file()
    assert ("are kept" in lines[0]) == made and ("nothing was written" in lines[0]) == (not made), err
    if early and not made:
        assert lines[0].startswith(f"boardsweep: interrupted; nothing was written (no store at {store} yet); "), err
