"""The dry run's estimate against the run, for every shipped sweep.

For each ``sweeps/*.toml`` (or those named): ``boardsweep run SPEC --dry-run
--format json`` (its own wall time too, the goal under 5 s), then the run
itself, both as commands in fresh processes on ``--workers`` workers of the
embedded cluster, into a temporary folder.  Printed per sweep: the estimated
kernel seconds beside the kernel's CPU seconds (every replicate and exact
solve simulated in this process, thread CPU time) and the run's measured
kernel seconds (``kernel_s``, simulations and exact solves summed over
tasks, a wall clock per task), the estimated wall beside
the command's wall (process start to end), their ratios and whether they are
within the goal of 1.5x.  The machine's load is printed with each line: on
cores other programs share, the run's wall and kernel seconds (a wall clock
per task) grow and the estimate's do not.

Sweeps that take minutes are shrunk with ``--set`` (:data:`SHRINK`, said in
the output).  A first run compiles the kernels (its ``compile_s`` is printed;
run the benchmark twice to compare warm runs).

Usage::

    python benchmarks/dry_run.py [--workers 2] [quickstart pe84 ...]
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

ROOT = Path(__file__).resolve().parent.parent
BOARDSWEEP = str(Path(sys.executable).with_name("boardsweep"))
#: ``--set`` overrides that bring a shipped sweep under a minute on 2 cores.
SHRINK: dict[str, list[str]] = {}
GOAL = 1.5


def _command(args: list[str]) -> tuple[float, str]:
    """(wall seconds, stdout) of ``boardsweep ARGS`` in a fresh process."""
    t0 = time.perf_counter()
    out = subprocess.run([BOARDSWEEP, *args], capture_output=True, text=True)
    took = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"boardsweep {' '.join(args)}: rc {out.returncode}: {out.stderr.strip()[-400:]}")
    return took, out.stdout


def _within(ratio: float) -> str:
    return "yes" if 1 / GOAL <= ratio <= GOAL else "NO"


def kernel_cpu(path: str, sets: list[str]) -> float:
    """Thread CPU seconds of every replicate of the sweep at ``path`` (with the
    ``--set`` overrides ``sets``), simulated in this thread, warm, and of its
    exact solves: the kernel's cost, whatever else the machine runs."""
    from boardsweep.pipeline.plan.tasks import replicate_seed
    from boardsweep.pipeline.spec.parse import load_spec

    spec = load_spec(path, tuple(sets[1::2]))
    total = 0.0
    for _, params in spec.resolved_points():
        spec.game.simulate(params, 1, spec.run_shape, spec.checkpoints)  # compiled or loaded, tables built
        t0 = time.thread_time()
        for r in range(spec.replicates):
            spec.game.simulate(params, replicate_seed(spec.seed, params, r), spec.run_shape, spec.checkpoints)
        if spec.game.exact is not None:
            spec.game.exact(params, spec.run_shape, spec.checkpoints)
        total += time.thread_time() - t0
    return total


def measure(name: str, workers: int, tmp: str) -> dict:
    """The dry run's plan and the run's record of sweep ``name``."""
    spec = str(ROOT / "sweeps" / f"{name}.toml")
    sets = [a for s in SHRINK.get(name, []) for a in ("--set", s)]
    common = [spec, "--store", f"{tmp}/{name}.zarr", "--workers", str(workers), *sets]
    dry_s, text = _command(["run", *common, "--dry-run", "--format", "json"])
    plan = json.loads(text)
    load = os.getloadavg()[0]
    wall, _ = _command(["run", *common, "--report-json", f"{tmp}/{name}.json"])
    report = json.loads(Path(f"{tmp}/{name}.json").read_text())
    return {"name": name, "dry_s": dry_s, "plan": plan["time"], "wall": wall, "report": report, "load": load,
            "cpu": kernel_cpu(spec, sets),
            "shrunk": " ".join(SHRINK.get(name, []))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    names = args.names or sorted(p.stem for p in (ROOT / "sweeps").glob("*.toml"))
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model = next((line.split(":", 1)[1].strip() for line in cpu.splitlines() if line.startswith("Model name")), "?")
    print(f"{model}, {os.cpu_count()} cores, {args.workers} workers; goal: estimate within {GOAL}x of the run")
    print(f"{'sweep':<13}{'dry run':>8} | {'kernel est':>10}{'CPU':>7}{'ratio':>7}{'ok':>4}{'run':>7} | "
          f"{'wall est':>9}{'run':>7}{'ratio':>7}{'ok':>4} | {'compile':>7}{'load':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            m = measure(name, args.workers, tmp)
            plan, report = m["plan"], m["report"]
            k_ratio = m["cpu"] / plan["kernel_s"]
            w_ratio = m["wall"] / plan["wall_s"]
            print(f"{name:<13}{m['dry_s']:>7.1f}s | {plan['kernel_s']:>9.1f}s{m['cpu']:>6.1f}s"
                  f"{k_ratio:>7.2f}{_within(k_ratio):>4}{report['kernel_s']:>6.1f}s | {plan['wall_s']:>8.1f}s{m['wall']:>6.1f}s"
                  f"{w_ratio:>7.2f}{_within(w_ratio):>4} | {report['compile_s']:>6.1f}s{m['load']:>6.2f}"
                  + (f"  (shrunk: {m['shrunk']})" if m["shrunk"] else ""))
    print("ratio: the measured over the estimate (1 is exact; within the goal from 0.67 to 1.5); kernel CPU: every\n"
          "replicate and exact solve simulated here, thread CPU time; run: the run's kernel_s (a wall clock per task,\n"
          "which other programs on the cores stretch); wall: the command's, process start to end")


if __name__ == "__main__":
    main()
