"""The dry run's estimate against the run, for every shipped sweep.

For each ``sweeps/*.toml`` (or those named): ``boardsweep run SPEC --dry-run
--format json`` (its own wall time too, the goal under 5 s), then the run
itself, both as commands in fresh processes on ``--workers`` workers of the
embedded cluster, into a temporary folder.  Printed per sweep: the estimated
kernel seconds beside the run's measured kernel seconds (``kernel_s``,
simulations and exact solves summed over tasks), the estimated wall beside
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
    print(f"{'sweep':<13}{'dry run':>8} | {'kernel est':>10}{'run':>7}{'ratio':>7}{'ok':>4} | "
          f"{'wall est':>9}{'run':>7}{'ratio':>7}{'ok':>4} | {'compile':>7}{'load':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            m = measure(name, args.workers, tmp)
            plan, report = m["plan"], m["report"]
            k_ratio = report["kernel_s"] / plan["kernel_s"]
            w_ratio = m["wall"] / plan["wall_s"]
            print(f"{name:<13}{m['dry_s']:>7.1f}s | {plan['kernel_s']:>9.1f}s{report['kernel_s']:>6.1f}s"
                  f"{k_ratio:>7.2f}{_within(k_ratio):>4} | {plan['wall_s']:>8.1f}s{m['wall']:>6.1f}s"
                  f"{w_ratio:>7.2f}{_within(w_ratio):>4} | {report['compile_s']:>6.1f}s{m['load']:>6.2f}"
                  + (f"  (shrunk: {m['shrunk']})" if m["shrunk"] else ""))
    print("ratio: the run's over the estimate (1 is exact; within the goal from 0.67 to 1.5)")


if __name__ == "__main__":
    main()
