"""Issue 57's Monopoly and Shut the Box figures: whole ``boardsweep run``
processes, this boardsweep beside an older one (``--against``) in the same
run, interleaved round by round so that the machine's load falls on both.

Scenarios (``--scenario``):

* ``monopoly``: the issue's grid of about 2,000 points x 500 turns, every
  point a rule variant of its own (dice 2..84 x deck policy x jail x chance
  deck x tally = 1,992 points), 1 game of 1 token, 1 replicate, the run's
  own layout (below 5,000 points: one point a task);
* ``monopoly_tasks``: the same grid in tasks of 24 points (``[tasks]
  points_per_task``, both versions alike): what a block of points costs;
* ``monopoly_replicates``: 2,016 runs of few rule variants (dice 4..10 x the
  same 24 combinations = 168 points x 12 replicates), 500 turns: where runs
  share their rules, a block's runs share one compiled call;
* ``shut_the_box``: dice 2..6 x every policy = 15 points x 128 replicates,
  20 games a run.

Printed per run: wall, CPU seconds (user + system of the command and every
process it waited for), CPU used (CPU / wall, in cores), peak resident memory,
and from the run's own report the summed kernel time and the tasks; then,
per scenario, the median wall and CPU of each version and old / new.

Usage::

    python benchmarks/sweep_games.py [--scenario monopoly shut_the_box] [--against /tmp/prev-main]
                                     [--rounds 2] [--workers 2] [--json out.json]

``--against OLD``: a worktree of the older version; run with its own
``OLD/.venv`` where it has one, else with this interpreter and ``OLD`` first
on ``PYTHONPATH`` (as the package ``boardsweep``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from sweep_batches import one_run  # noqa: E402
from sweep_million import cpu_model, uptime  # noqa: E402

_MONOPOLY_AXES = """deck_policy = ["independent", "shuffled_cycle"]
jail_strategy = ["short", "long"]
chance_deck = ["standard", "classic15"]
tally = ["per_roll", "per_landing", "per_turn"]"""

SCENARIOS = {
    "monopoly": ("monopoly", f"dice_sides = {list(range(2, 85))}\n{_MONOPOLY_AXES}",
                 "replicates = 1\ngames = 1\nplayers = 1\nturns = 500"),
    "monopoly_tasks": ("monopoly", f"dice_sides = {list(range(2, 85))}\n{_MONOPOLY_AXES}",
                       "replicates = 1\ngames = 1\nplayers = 1\nturns = 500", "points_per_task = 24"),
    "monopoly_replicates": ("monopoly", f"dice_sides = {list(range(4, 11))}\n{_MONOPOLY_AXES}",
                            "replicates = 12\ngames = 1\nplayers = 1\nturns = 500"),
    "shut_the_box": ("shut_the_box", 'dice_sides = [2, 3, 4, 5, 6]\npolicy = ["optimal", "greedy", "random"]',
                     "replicates = 128\ngames = 20"),
}


def spec_text(scenario: str, name: str) -> str:
    """The sweep spec of ``scenario`` (TOML)."""
    game, grid, run, *tasks = SCENARIOS[scenario]
    text = (f'name = "{name}"\ngame = "{game}"\nseed = 57\n\n[grid]\n{grid}\n\n[run]\n{run}\n\n'
            "[checkpoints]\ncount = 4\n")
    return text + "".join(f"\n[tasks]\n{t}\n" for t in tasks)


def interpreter(old: Path, tmp: Path) -> tuple[str, dict[str, str]]:
    """(python, extra environment) that runs the boardsweep of worktree ``old``."""
    own = old / ".venv" / "bin" / "python"
    if own.exists():
        return str(own), {}
    shim = tmp / "old-path"
    shim.mkdir(exist_ok=True)
    if not (shim / "boardsweep").exists():
        (shim / "boardsweep").symlink_to(old.resolve())
    return sys.executable, {"PYTHONPATH": str(shim)}


def warm(python: str, env: dict[str, str], tmp: Path, scenario: str, label: str) -> None:
    """One untimed run, so that numba's disk cache holds every kernel both versions run."""
    one_run(python, env, tmp, f"warm-{label}", spec_text(scenario, f"warm-{label}"), 2)


_TASKS_TIMED = """
import sys, time
sys.path.insert(0, {here!r})
from sweep_games import spec_text
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.plan.tasks import plan_tasks
from boardsweep.pipeline.run.worker import simulate_block
spec = parse_spec(spec_text({scenario!r}, "t"), "t.toml")
tasks = plan_tasks(spec)
best = []
for _ in range(3):
    t0 = time.perf_counter()
    for task in tasks:
        simulate_block(spec.game, spec.seed, task, spec.run_shape, spec.checkpoints)
    best.append(time.perf_counter() - t0)
print(len(tasks), min(best))
"""


def tasks_timed(python: str, env: dict[str, str], scenario: str) -> tuple[int, float]:
    """(tasks, seconds): every simulation task of ``scenario`` run in one process by
    the version's ``simulate_block`` (no Dask, no store), best of 3 passes."""
    code = _TASKS_TIMED.format(here=str(HERE), scenario=scenario)
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, env={**os.environ, **env},
                         cwd=tempfile.gettempdir(), check=True).stdout.split()
    return int(out[0]), float(out[1])


def summary(rows: list[dict], scenario: str) -> str:
    """Median wall and CPU per version and their ratio old / new."""
    med = {v: {k: statistics.median(r[k] for r in rows if r["version"] == v and r["scenario"] == scenario)
               for k in ("wall_s", "cpu_s", "cores")}
           for v in ("old", "this") if any(r["version"] == v and r["scenario"] == scenario for r in rows)}
    text = "; ".join(f"{v}: wall {m['wall_s']:.1f} s, CPU {m['cpu_s']:.1f} s ({m['cores']:.2f} cores)"
                     for v, m in med.items())
    if len(med) == 2:
        text += (f"; old / new: wall {med['old']['wall_s'] / med['this']['wall_s']:.2f}x, "
                 f"CPU {med['old']['cpu_s'] / med['this']['cpu_s']:.2f}x")
    return f"{scenario} (medians): {text}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", nargs="+", default=["monopoly", "shut_the_box"], choices=list(SCENARIOS))
    parser.add_argument("--against", type=Path, default=None, metavar="OLD")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--warm", nargs="*", default=None, choices=list(SCENARIOS),
                        help="scenarios run once untimed first, each version (default: all)")
    parser.add_argument("--tasks-only", action="store_true",
                        help="only each version's simulation tasks in one process (tasks_timed)")
    args = parser.parse_args()
    print(f"{cpu_model()}; {os.cpu_count()} CPUs; {uptime()}", flush=True)
    if args.tasks_only:
        tasks_only(args)
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="sweep_games-") as name:
        tmp = Path(name)
        versions = {"this": (sys.executable, {})}
        if args.against:
            versions["old"] = interpreter(args.against, tmp)
        for scenario in args.scenario:
            for label, (python, env) in versions.items():
                if args.warm is None or scenario in args.warm:
                    warm(python, env, tmp, scenario, label)
            for r in range(args.rounds):
                for label, (python, env) in (versions.items() if r % 2 == 0 else reversed(versions.items())):
                    name = f"{label}-{scenario}-{r}"
                    got = one_run(python, env, tmp, name, spec_text(scenario, name), args.workers)
                    rows.append({"scenario": scenario, "round": r, "version": label, **got})
                    print(f"{scenario} round {r} {label:>4}: wall {got['wall_s']:6.1f} s  CPU {got['cpu_s']:6.1f} s "
                          f"({got['cores']:.2f} cores)  peak {got['peak_mb']:5.0f} MB  kernel {got['kernel_s'] or 0:.1f} s"
                          f"  {got['tasks']} tasks of {got['points_per_task']} points  [{uptime()}]", flush=True)
            print(summary(rows, scenario), flush=True)
    print(uptime())
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


def tasks_only(args: argparse.Namespace) -> None:
    """Print, per scenario and round, each version's :func:`tasks_timed` and old / new."""
    with tempfile.TemporaryDirectory(prefix="sweep_games-") as name:
        versions = {"this": (sys.executable, {})}
        if args.against:
            versions["old"] = interpreter(args.against, Path(name))
        for scenario in args.scenario:
            for r in range(args.rounds):
                got = {label: tasks_timed(python, env, scenario) for label, (python, env) in versions.items()}
                text = "  ".join(f"{label} {s:.2f} s ({n} tasks)" for label, (n, s) in got.items())
                ratio = f"  old / new {got['old'][1] / got['this'][1]:.2f}x" if "old" in got else ""
                print(f"{scenario} round {r} simulation tasks in one process: {text}{ratio}  [{uptime()}]", flush=True)


if __name__ == "__main__":
    main()
