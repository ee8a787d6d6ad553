"""The goals table of the first run: each figure measured on whole processes.

Every figure times a whole ``python -m boardsweep run`` process (imports,
cluster start, store creation, exact answers, tasks, packing, summary) and
reads the run's own report (``--report-json``) for the kernel and compile
times summed over the workers:

* quickstart with an empty numba cache (``NUMBA_CACHE_DIR`` a new folder, so
  nothing is reused from an earlier run): a newcomer's first run;
* the same again, warm (the cache the first run filled);
* a 4-point, 8-task sweep, warm: whole-process wall minus the kernel time per
  worker (kernel summed / workers), the fixed costs a user waits for;
* parallel efficiency of the warm quickstart: kernel summed / (workers x
  whole-process wall);
* 1 -> 2 workers on 24 tasks of about 0.1 s (10^7 rolls each), warm (a
  first, untimed run compiles its variants): wall with 1 worker / wall with 2;
  2.4 s of kernel in all, so the fixed costs of a whole process dominate it;
* the same on 240 such tasks (10 replicates per grid point, one per task):
  how the task phase itself scales, with the fixed costs a smaller share.

Usage::

    python benchmarks/first_run.py [--processes] [--repeat 1] [--against OLD] [--quickstart-only] [--api]

``--processes`` runs the embedded cluster as worker processes
(``DASK_BOARDSWEEP__PROCESSES=True``) instead of the default threads, for a
comparison.  ``--against OLD`` measures, in every round, an older version
too, alternately with this one (``OLD``: a folder holding its ``boardsweep``
package, e.g. ``git archive REV | tar -x -C OLD/boardsweep``, put first on
``PYTHONPATH``), each with its own empty numba cache: on a busy machine, a
before/after pair taken in one run.  ``--quickstart-only`` measures the
quickstart alone (cold, then warm).  ``--api`` times a script calling
``boardsweep.run(SPEC, STORE, progress=False)`` instead of the command (its
whole process too; the report read from the returned result).  The machine's CPU model and load average are printed: other
processes on the cores inflate every figure, so record the load with them.
Each run's CPU time (user + system, its helper processes included) is
printed too: it is what a loaded machine changes least.  ``PYTHONDONTWRITEBYTECODE``
is dropped from the runs' environment: a user's Python keeps each module's
compiled bytecode, so a first run does not compile boardsweep's modules again
(with it set, an editable install recompiles about a hundred modules every run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "sweeps" / "quickstart.toml"

EIGHT_TASKS = """\
name = "eight"
game = "monopoly"
seed = 5
[params]
chance_deck = "standard"
tally = "per_roll"
[grid]
dice_sides = [4, 6]
deck_policy = ["independent", "shuffled_cycle"]
[run]
replicates = 8
games = 32
players = 1
turns = 20000
[checkpoints]
count = 8
[tasks]
replicates_per_task = 4
"""

SHORT_TASKS = """\
name = "short"
game = "monopoly"
seed = 1
[params]
chance_deck = "standard"
tally = "per_roll"
[grid]
dice_sides = [4, 6, 8, 10, 12, 20]
deck_policy = ["independent", "shuffled_cycle"]
jail_strategy = ["short", "long"]
[run]
replicates = 1
games = 1
players = 1
turns = 8500000
[checkpoints]
count = 16
[tasks]
replicates_per_task = 1
"""

MANY_SHORT_TASKS = SHORT_TASKS.replace('name = "short"', 'name = "many"').replace("replicates = 1\n", "replicates = 10\n")

GOALS = {  # figure -> (goal, better when larger)
    "quickstart, empty numba cache (s)": (6.0, False),
    "quickstart, warm (s)": (1.5, False),
    "quickstart CPU, empty numba cache (s)": (float("nan"), False),
    "quickstart CPU, warm (s)": (float("nan"), False),
    "8-task sweep, warm: wall minus kernel time (s)": (1.5, False),
    "parallel efficiency, warm quickstart": (0.8, True),
    "1 -> 2 workers, tasks of 0.1 s (speed-up)": (1.8, True),
    "the same, 240 tasks (speed-up)": (1.8, True),
}


def cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        return next(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown CPU"


def _children_cpu() -> float:
    """User + system CPU seconds of the finished child processes (and theirs) so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


#: ``--api``: a script running ``boardsweep.run(SPEC, STORE)`` (argv: SPEC STORE REPORT [WORKERS]), its report as JSON.
API_SCRIPT = """
import json, sys
from dataclasses import asdict
import boardsweep
workers = int(sys.argv[4]) if len(sys.argv) > 4 else None
result = boardsweep.run(sys.argv[1], sys.argv[2], workers=workers, progress=False)
with open(sys.argv[3], "w") as f:
    json.dump(asdict(result.report), f)
"""

#: Whether :func:`run` times the Python API (``--api``) instead of the command.
THROUGH = {"api": False}


def run(spec: Path, store: Path, env: dict, workers: int | None = None) -> dict:
    """One whole ``boardsweep run`` process (or, ``--api``, a script calling
    ``boardsweep.run``); its report plus ``command_wall_s``."""
    report = store.with_suffix(".json")
    command = [sys.executable, "-m", "boardsweep", "run", str(spec), "--store", str(store),
               "--report-json", str(report)] + (["--workers", str(workers)] if workers else [])
    if THROUGH["api"]:
        command = [sys.executable, "-c", API_SCRIPT, str(spec), str(store), str(report)] + ([str(workers)] if workers
                                                                                            else [])
    t0, cpu0 = time.perf_counter(), _children_cpu()
    out = subprocess.run(command, capture_output=True, text=True, env=env)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{out.stdout}\n{out.stderr}")
    data = json.loads(report.read_text())
    data.pop("records", None)
    data["command_wall_s"], data["command_cpu_s"] = wall, cpu
    data["announced_compile"] = "compiling kernels (first run only)" in out.stdout
    return data


def measure(tmp: Path, env: dict, quickstart_only: bool = False) -> dict[str, float]:
    quick_cold = run(QUICKSTART, tmp / "q-cold.zarr", env)
    print(f"  quickstart cold: {quick_cold['command_wall_s']:.2f} s, CPU {quick_cold['command_cpu_s']:.1f} s "
          f"(compiling: {quick_cold.get('warm_s', 0.0):.1f} s while starting, {quick_cold['compile_s']:.1f} s in "
          f"the tasks, {quick_cold['compile_wait_s']:.1f} s of the wall time while some kernel compiled; kernel "
          f"{quick_cold['kernel_s']:.1f} s summed over {quick_cold['workers']} workers; "
          f"announced: {quick_cold['announced_compile']})", flush=True)
    quick = run(QUICKSTART, tmp / "q-warm.zarr", env)
    print(f"  quickstart warm: {quick['command_wall_s']:.2f} s, CPU {quick['command_cpu_s']:.1f} s (run_sweep "
          f"{quick['wall_s']:.2f} s, kernel {quick['kernel_s']:.2f} s summed, cache loads "
          f"{quick.get('warm_s', 0.0):.2f} s while starting and {quick['compile_s']:.2f} s in the tasks; "
          f"{quick['tasks_total']} simulation tasks, {quick.get('head_start', 0)} tasks run during start-up)", flush=True)
    quickstart = {"quickstart, empty numba cache (s)": quick_cold["command_wall_s"],
                  "quickstart, warm (s)": quick["command_wall_s"],
                  "quickstart CPU, empty numba cache (s)": quick_cold["command_cpu_s"],
                  "quickstart CPU, warm (s)": quick["command_cpu_s"],
                  "parallel efficiency, warm quickstart": quick["kernel_s"] / (max(quick["workers"], 1)
                                                                               * quick["command_wall_s"])}
    if quickstart_only:
        return quickstart
    eight_spec = tmp / "eight.toml"
    eight_spec.write_text(EIGHT_TASKS)
    eight = run(eight_spec, tmp / "eight.zarr", env)
    eight_overhead = eight["command_wall_s"] - eight["kernel_s"] / max(eight["workers"], 1)
    print(f"  8-task sweep: {eight['command_wall_s']:.2f} s, CPU {eight['command_cpu_s']:.1f} s, kernel "
          f"{eight['kernel_s']:.2f} s summed over {eight['workers']} workers", flush=True)
    short_spec = tmp / "short.toml"
    short_spec.write_text(SHORT_TASKS)
    run(short_spec, tmp / "short-warm-up.zarr", env)  # its kernel variants (dice above 8) compiled, untimed
    one, two = (run(short_spec, tmp / f"short-{w}.zarr", env, workers=w) for w in (1, 2))
    print(f"  24 tasks of ~0.1 s: 1 worker {one['command_wall_s']:.2f} s, 2 workers {two['command_wall_s']:.2f} s "
          f"(kernel {one['kernel_s']:.2f} / {two['kernel_s']:.2f} s summed; CPU {one['command_cpu_s']:.1f} / "
          f"{two['command_cpu_s']:.1f} s)", flush=True)
    many_spec = tmp / "many.toml"
    many_spec.write_text(MANY_SHORT_TASKS)
    many_one, many_two = (run(many_spec, tmp / f"many-{w}.zarr", env, workers=w) for w in (1, 2))
    print(f"  240 tasks of ~0.1 s: 1 worker {many_one['command_wall_s']:.2f} s, 2 workers "
          f"{many_two['command_wall_s']:.2f} s (kernel {many_one['kernel_s']:.2f} / {many_two['kernel_s']:.2f} s "
          f"summed; CPU {many_one['command_cpu_s']:.1f} / {many_two['command_cpu_s']:.1f} s)", flush=True)
    return {
        **quickstart,
        "8-task sweep, warm: wall minus kernel time (s)": eight_overhead,
        "1 -> 2 workers, tasks of 0.1 s (speed-up)": one["command_wall_s"] / two["command_wall_s"],
        "the same, 240 tasks (speed-up)": many_one["command_wall_s"] / many_two["command_wall_s"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", action="store_true", help="embedded cluster of worker processes")
    parser.add_argument("--repeat", type=int, default=1, help="measure this many times (each cold run anew)")
    parser.add_argument("--against", type=Path, default=None, metavar="OLD",
                        help="also measure the boardsweep package in OLD/boardsweep, alternately")
    parser.add_argument("--quickstart-only", action="store_true", help="measure the quickstart alone")
    parser.add_argument("--api", action="store_true", help="time boardsweep.run in a script, not the command")
    args = parser.parse_args()
    THROUGH["api"] = args.api
    print(f"{cpu_model()}, {os.cpu_count()} cores; load average before: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; embedded cluster: "
          f"{'processes' if args.processes else 'threads (default)'}; "
          f"{'the Python API (boardsweep.run)' if args.api else 'the command (boardsweep run)'}", flush=True)
    versions = {"this": None, **({"old": args.against.resolve()} if args.against else {})}
    rounds: dict[str, list] = {name: [] for name in versions}
    for i in range(args.repeat):
        for name, path in versions.items():
            with tempfile.TemporaryDirectory(prefix="boardsweep-first-run-") as tmp:
                env = {**os.environ, "NUMBA_CACHE_DIR": str(Path(tmp) / "numba-cache"), "COLUMNS": "120",
                       "DASK_BOARDSWEEP__PROCESSES": str(args.processes)}
                env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's Python keeps the modules' bytecode
                if path is not None:
                    env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
                print(f"round {i + 1}, {name} ({path or ROOT}):", flush=True)
                rounds[name].append(measure(Path(tmp), env, args.quickstart_only))
    for name, measured in rounds.items():
        print(f"\n{name}: {'figure':<44} {'measured':>16} {'goal':>8}  met")
        for figure, (goal, larger) in GOALS.items():
            values = [r[figure] for r in measured if figure in r]
            if not values:
                continue
            best = max(values) if larger else min(values)
            shown = f"{best:.2f}" if len(values) == 1 else f"{best:.2f} ({min(values):.2f}-{max(values):.2f})"
            met = "-" if goal != goal else ("yes" if (best >= goal if larger else best <= goal) else "no")
            print(f"{'':{len(name) + 2}}{figure:<44} {shown:>16} {goal:>8g}  {met}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
