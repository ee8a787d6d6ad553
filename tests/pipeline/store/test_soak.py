"""The soak's short form (``benchmarks/soak.py``): a toy sweep killed at
random by SIGKILL, SIGTERM and Ctrl-C and resumed, then grown in place (killed and
resumed again), while a reader checks
every cell it sees against the finished reference, and ``status`` and
``query`` run on the stores: no partial read, no wrong value, no lost cell,
no "damaged" said of a store a run writes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from specs import HERE as SUPPORT, spec_toml

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]

RUNNER = """\
import sys
sys.path.insert(0, {here!r})
from boardsweep.core import games
games.register("toy", "toy_game")
from boardsweep.pipeline.cli.commands import main
main(sys.argv[1:])
"""


def _soak():
    """benchmarks/soak.py as a module."""
    spec = importlib.util.spec_from_file_location("soak", ROOT / "benchmarks" / "soak.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_short_soak_loses_nothing_and_misleads_no_reader(tmp_path):
    spec = tmp_path / "toy.toml"
    spec.write_text(spec_toml("toy", params={"size": 8}, grid={"dice_sides": [2, 3, 4], "rule": ["plain", "sticky"]},
                              run={"replicates": 4, "games": 2, "turns": 60}, checkpoints={"count": 4},
                              tasks={"replicates_per_task": 1}))
    runner = tmp_path / "runner.py"
    runner.write_text(RUNNER.format(here=str(SUPPORT)))
    out = _soak().main(["--seconds", "30", "--min-finished", "1", "--stores", "1", "--readers", "1",
                        "--spec", str(spec),
                        "--runner", f"{sys.executable} {runner}", "--seed", "5",
                        "--grow", "grid.dice_sides=2,3,4,5"])
    assert sum(out["kills"].values()) >= 2 and out["resumes"] >= 2, out  # the soak did kill and resume
    assert out["reads"] >= 20 and out["command_reads"] >= 1, out  # a command read a store too
    assert out["grown"] >= 1, out  # a finished store grown in place, killed and resumed as it grew
    for key in ("partial_reads", "wrong_values", "lost_cells", "damaged_told", "run_tracebacks", "run_failures"):
        assert out[key] == 0, (key, out)
