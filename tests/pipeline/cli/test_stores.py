"""The store commands' imports (:mod:`boardsweep.pipeline.cli.stores`):
``status`` imports only what reading a store needs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from clirun import run_cli

OLD_STORE = Path(__file__).resolve().parents[2] / "support" / "old_stores" / "format5_hk_monopoly.zarr"


def test_status_imports_neither_the_run_nor_distributed(tmp_path):
    """``status`` asks ``store.interrupted`` (not ``run.growth``, which
    imports the spec parser and the planner) and reads its masks with
    threads: dask never looks for a distributed client (0.15 s of imports)."""
    store = tmp_path / "sweep.zarr"
    shutil.copytree(OLD_STORE, store)
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "boardsweep", "status", str(store)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "replicates done" in out.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    assert "boardsweep.pipeline.store.open" in imported  # the list is the command's own
    assert not imported & {"boardsweep.pipeline.run.growth", "distributed"}, imported & {
        "boardsweep.pipeline.run.growth", "distributed"}


#: What reading a Monopoly store never needs: the kernels (numba), the exact
#: solver (scipy.sparse.linalg), the run and dask's distributed client.  dask.array
#: stays: xarray imports it for any Variable made where dask is installed.
NOT_FOR_READING = {"numba", "distributed", "boardsweep.core.rng", "boardsweep.core.monopoly.kernel",
                   "boardsweep.core.monopoly.simulate", "boardsweep.pipeline.run.growth",
                   "boardsweep.pipeline.run.execute"}


def _imports_of(*args: str) -> tuple[str, set[str]]:
    """The standard output of ``boardsweep ARGS`` in a fresh process, and every module it imported."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "boardsweep", *args],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout, {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines()
                        if line.startswith("import time:")}


def test_status_and_query_of_a_monopoly_store_import_no_kernel(tmp_path, write_spec, monopoly_spec_text):
    """``status`` and ``query`` of a Monopoly store (the quickstart's game) read
    its labels from the game module without its kernels, solver or numba, and
    read with dask's threads without ``distributed`` (together about a second of
    imports on a 2-core machine); ``status`` needs no exact solver either
    (``query`` does: the exact CLT standard error)."""
    store = tmp_path / "small.zarr"
    assert run_cli("run", str(write_spec(monopoly_spec_text)), "--store", str(store), "-q") == 0
    text, imported = _imports_of("status", str(store))
    assert "replicates done" in text
    assert "boardsweep.pipeline.store.open" in imported and "xarray" in imported  # the list is the command's own
    assert not imported & (NOT_FOR_READING | {"boardsweep.core.monopoly.exact", "scipy.sparse.linalg"}), imported & (
        NOT_FOR_READING | {"boardsweep.core.monopoly.exact", "scipy.sparse.linalg"})
    text, imported = _imports_of("query", str(store), "--summary")
    assert "verdict" in text
    assert "boardsweep.core.monopoly.variance" in imported
    assert not imported & NOT_FOR_READING, imported & NOT_FOR_READING
