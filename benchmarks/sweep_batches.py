"""Issue 57's figures: a money-game sweep's wall, CPU and peak memory,
this boardsweep beside an older one (``--against``) in the same run, with
the embedded cluster's workers as threads and as processes.

The sweep is :mod:`sweep_million`'s scenario (``hk_monopoly``, 1 game of 5
rounds a grid point, 1 replicate; a grid of dice_sides x jail_strategy x
buy_policy reserves), its layout chosen by the run (a grid of 5,000 points
or more: its points grouped into tasks).  Each round runs every version and
mode once, interleaved, so that the machine's load falls on all alike.
Printed per run: wall, CPU seconds (user + system, the command and every
process it waited for) and CPU used (CPU / wall, in cores), peak resident
memory (the command and its children, sampled), and from the run's own
report the summed kernel time, the writes and the tasks.

Usage::

    python benchmarks/sweep_batches.py [--points 100000] [--against /tmp/base] [--rounds 1]
                                       [--modes threads processes] [--workers 2] [--json out.json]

``--against OLD``: a worktree of the older version with its own ``.venv``
(``git worktree add /tmp/base de3d539``, then its pip install).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from sweep_million import PeakMemory, cpu_model, points_of, spec_text, uptime  # noqa: E402

MODES = {"threads": {}, "processes": {"DASK_BOARDSWEEP__PROCESSES": "True"}}


def one_run(python: str, env: dict[str, str], tmp: Path, label: str, text: str, workers: int) -> dict:
    """Run ``boardsweep run`` of the spec ``text`` once with ``python`` (``env``
    added to the environment) in ``tmp``; its figures: wall, CPU (user + system
    of the command and every process it waited for), cores (CPU / wall), peak
    resident memory, and from the run's own report the summed kernel and write
    time, the tasks, its points per task, run_sweep's wall and the packing.
    (:mod:`sweep_games` runs its scenarios with it too.)"""
    spec, report, store = tmp / f"{label}.toml", tmp / f"{label}.json", tmp / f"{label}.zarr"
    spec.write_text(text)
    command = [python, "-m", "boardsweep", "run", str(spec), "--store", str(store), "--workers", str(workers),
               "--report-json", str(report)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, **env}, cwd=tmp)
    peak = PeakMemory(proc.pid)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    most = peak.stop()
    if status != 0:
        raise SystemExit(f"{' '.join(command)} failed ({status}):\n{out[-3000:]}")
    got = json.loads(report.read_text())
    cpu = usage.ru_utime + usage.ru_stime
    subprocess.run(["rm", "-rf", str(store)], check=False)
    return {"wall_s": wall, "cpu_s": cpu, "cores": cpu / wall, "peak_mb": most / 1e6,
            "kernel_s": got.get("kernel_s"), "write_s": got.get("write_s"), "tasks": got.get("tasks_run"),
            "points_per_task": got.get("points_per_task"), "run_sweep_s": got.get("wall_s"),
            "pack_s": got.get("pack_s")}


def overhead(points: int = 500, repeat: int = 5) -> dict:
    """In this process, one task of ``points`` grid points: seconds a point of
    the kernel alone (``simulate_runs`` on the task's prepared columns), of the
    task as a block (:func:`batch_block`) and point by point (:func:`point_block`,
    the per-point path every task took before), each the best of ``repeat``."""
    import numpy as np

    from boardsweep.core.hk_monopoly.game import seat_table
    from boardsweep.core.hk_monopoly.board import load_board
    from boardsweep.core.hk_monopoly.rules import make_cfg
    from boardsweep.core.hk_monopoly.simulate import simulate_runs
    from boardsweep.pipeline.plan.tasks import plan_tasks
    from boardsweep.pipeline.run.worker import batch_block, point_block
    from boardsweep.pipeline.spec.parse import parse_spec

    spec = parse_spec(spec_text(points * 10, "o", {"points_per_task": points}), "o.toml")
    task = plan_tasks(spec)[0]
    cells = list(task.cells)
    board = load_board("default")
    cfgs = np.stack([make_cfg(p["players"], p["dice_sides"], p["rounds"], board.go, board.jail) for _, p, _ in cells])
    seats = np.stack([seat_table(p) for _, p, _ in cells])
    chance = np.array([50, -50], dtype=np.int64)
    keys = np.arange(2 * len(cells), dtype=np.uint64).reshape(-1, 2)

    def best(call) -> float:
        call()
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            call()
            times.append(time.perf_counter() - t0)
        return min(times) / len(cells)

    kernel = best(lambda: simulate_runs(board.table, cfgs, seats, chance, keys, spec.checkpoints))
    block = best(lambda: batch_block(spec.game, spec.seed, task, spec.run_shape, spec.checkpoints))
    single = best(lambda: point_block(spec.game, spec.seed, task, spec.run_shape, spec.checkpoints))
    return {"points": len(cells), "kernel_us": kernel * 1e6, "block_us": block * 1e6, "point_us": single * 1e6,
            "block_overhead": (block - kernel) / kernel, "point_overhead": (single - kernel) / kernel}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--against", type=Path, default=None, metavar="OLD")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--modes", nargs="+", default=["threads", "processes"], choices=list(MODES))
    parser.add_argument("--versions", nargs="+", default=None, help="this and/or old (default: both where --against)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--overhead", action="store_true", help="only the per-point Python overhead, in this process")
    args = parser.parse_args()
    if args.overhead:
        print(f"{cpu_model()}; {uptime()}")
        got = overhead()
        print(f"one task of {got['points']} points, a point: kernel {got['kernel_us']:.1f} us; as a block "
              f"{got['block_us']:.1f} us (Python {got['block_overhead']:.1f}x the kernel); point by point "
              f"{got['point_us']:.1f} us (Python {got['point_overhead']:.1f}x the kernel)")
        return
    pythons = {"this": sys.executable}
    if args.against:
        pythons["old"] = str(args.against.resolve() / ".venv" / "bin" / "python")
    pythons = {k: v for k, v in pythons.items() if args.versions is None or k in args.versions}
    points = points_of(args.points)
    print(f"{cpu_model()}; {os.cpu_count()} CPUs; {uptime()}", flush=True)
    print(f"hk_monopoly, {points:,} grid points, 1 game of 5 rounds each, {args.workers} workers", flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="sweep_batches-") as tmp:
        for r in range(args.rounds):
            for mode in args.modes:
                for version, python in pythons.items():
                    label = f"{version}-{mode}-{r}"
                    got = one_run(python, MODES[mode], Path(tmp), label, spec_text(points, label, {}), args.workers)
                    rows.append({"round": r, "version": version, "mode": mode, **got})
                    print(f"round {r} {version:>4} {mode:>9}: wall {got['wall_s']:7.1f} s  CPU {got['cpu_s']:7.1f} s "
                          f"({got['cores']:.2f} cores)  peak {got['peak_mb']:6.0f} MB  kernel {got['kernel_s']:.1f} s "
                          f"writes {got['write_s']:.1f} s  {got['tasks']} tasks of {got['points_per_task']} points; "
                          f"run_sweep {got['run_sweep_s'] or 0:.1f} s, packing {got['pack_s'] or 0:.1f} s",
                          flush=True)
    print(uptime())
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
