"""The run's start-up (:mod:`boardsweep.pipeline.run.startup`): one warm-up,
begun before Dask, xarray and zarr are imported, by ``boardsweep run`` and
``boardsweep.run`` alike (their one path, :func:`boardsweep.pipeline.api.run_request`),
and a new store's first replicates simulated early and stored as computed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from boardsweep.pipeline.spec.parse import parse_spec
from specs import spec_toml  # tests/support is on sys.path

SPEC = spec_toml(
    "chutes_ladders", grid={"sides": [4, 6]}, params={"board": "milton_bradley"},
    run={"replicates": 2, "games": 50}, checkpoints={"count": 3}, tasks={"replicates_per_task": 1})


#: A spy on the warm-ups a process starts: what of Dask, xarray and zarr was imported at each start, and at the
#: end how many took replicates simulated early and how many such replicates were left; then ``boardsweep run``
#: (CLI) or ``boardsweep.run`` (API) of ``sys.argv``.
SPY = """
import atexit, sys
from boardsweep.pipeline.run import startup
started, made = [], []
real = startup.WarmUp.__init__
def spy(self, *args, **kwargs):
    started.append(sorted(m for m in ("distributed", "xarray", "zarr") if m in sys.modules))
    real(self, *args, **kwargs)
    made.append(self)
startup.WarmUp.__init__ = spy
atexit.register(lambda: print("warm-ups started with", started, "early replicates taken:",
                              sum(m._used > 0 for m in made), "left:", [len(m._stash) for m in made], file=sys.stderr))
"""
CLI = SPY + """
from boardsweep.pipeline.cli.commands import main
main(["run", sys.argv[1], "--store", sys.argv[2], "--workers", "1"])
"""
API = SPY + """
import boardsweep
result = boardsweep.run(sys.argv[1], sys.argv[2], workers=1, progress=False)
print("store complete" if result.complete else "store INCOMPLETE", result.head_start)
"""


@pytest.mark.parametrize("way", ["CLI", "API"])
def test_run_warms_the_kernels_before_importing_dask_xarray_and_zarr(tmp_path, write_spec, way):
    """``boardsweep run`` and ``boardsweep.run`` start one warm-up, as soon as
    the spec is read: the kernels load while Dask, xarray and zarr are imported."""
    spec = write_spec(SPEC)
    out = subprocess.run([sys.executable, "-c", {"CLI": CLI, "API": API}[way], str(spec), str(tmp_path / "w.zarr")],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "store complete" in out.stdout
    assert "warm-ups started with [[]]" in out.stderr, out.stderr


@pytest.mark.parametrize("way", ["CLI", "API"])
def test_a_new_stores_first_replicates_are_simulated_early_and_stored_as_computed(tmp_path, write_spec, cluster2,
                                                                                  way):
    """Issue 44: ``boardsweep run`` (and, issue 55, ``boardsweep.run``) of a new
    store has the warm-up thread simulate the head start's first replicates
    while Dask, xarray and zarr are imported; the head start takes them, none
    is left, and the store equals one made by worker processes (no warm-up
    there) bit for bit."""
    from compare import assert_same_by_value
    from boardsweep.pipeline.run.execute import run_sweep

    text = spec_toml("chutes_ladders", grid={"sides": [4, 6]}, params={"board": "milton_bradley"},
                     run={"replicates": 8, "games": 50}, checkpoints={"count": 3})  # no [tasks]: 8 tasks of 2
    spec = write_spec(text)
    early = tmp_path / "early.zarr"
    out = subprocess.run([sys.executable, "-c", {"CLI": CLI, "API": API}[way], str(spec), str(early)],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "early replicates taken: 1 left: [0]" in out.stderr, out.stderr
    other = tmp_path / "processes.zarr"
    assert run_sweep(parse_spec(text, "spec.toml"), str(other), scheduler=cluster2).complete
    assert_same_by_value(other, early)


def test_the_run_paths_modules_import_no_numba_dask_xarray_or_zarr():
    """The policy of ``run/startup.py``: the run path's modules (the command's, the API,
    the start-up itself) import neither numba nor Dask's client, xarray or zarr, so that
    the run's first line comes at once and the warm-up begins before those imports."""
    code = ("import sys, boardsweep.pipeline.cli.run, boardsweep.pipeline.api, boardsweep.pipeline.run.startup; "
            "print(sorted(m for m in ('numba', 'distributed', 'xarray', 'zarr') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr[-2000:]
