"""The embedded cluster's start has a deadline of its own (``cluster.embedded.START_S``): under
``ulimit -v`` a thread that cannot start can leave Python waiting for it for good, and the
client's start waited on an event loop stuck so (one run in twelve at 450 MB,
tests/pipeline/run/test_kernel_deadlines.py)."""

from __future__ import annotations

import subprocess
import sys

from specs import spec_toml  # tests/support is on sys.path

#: The run, with a start deadline no cluster meets: in a process of its own (its main thread's SIGALRM is free).
RUN = """\
import sys
sys.path.insert(0, sys.argv[3])
from boardsweep.core import games
games.GAME_MODULES.setdefault("toy", "toy_game")
from boardsweep.pipeline.cluster import embedded
embedded.START_S = 0.05
from boardsweep.pipeline.cli.commands import main
main(["run", sys.argv[1], "--store", sys.argv[2], "--workers", "2"])
"""


def test_a_cluster_start_past_its_deadline_ends_the_run_in_one_line(tmp_path):
    from pathlib import Path

    support = Path(__file__).resolve().parents[2] / "support"
    spec = tmp_path / "toy.toml"
    spec.write_text(spec_toml("toy", run={"replicates": 2, "games": 1, "turns": 10}))
    proc = subprocess.run([sys.executable, "-c", RUN, str(spec), str(tmp_path / "s.zarr"), str(support)],
                          capture_output=True, text=True, timeout=120)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr[-2000:]
    assert "did not start within 0 s" in lines[0] and "ulimit -v" in lines[0], lines[0]
