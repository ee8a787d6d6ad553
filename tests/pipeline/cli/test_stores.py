"""The store commands' imports (:mod:`boardsweep.pipeline.cli.stores`):
``status`` imports only what reading a store needs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

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
