"""The read commands' time beside another install's, alternating, on one store.

``boardsweep status STORE``, ``boardsweep query STORE`` and ``boardsweep --help``,
each in a fresh process, run by this environment's ``boardsweep`` and by the
other's (``--old``: a checkout of main's ``.venv/bin/boardsweep``) in turn,
``--times`` each; printed: the median and range of each wall time, their
ratio, the median CPU time (user + system: what the load stretches least),
the CPU and the load before and after.  The two must print the same
(but ``--dry-run SWEEP``'s rows, ``run SWEEP --dry-run``: the estimate may differ;
and ``--rerun SPEC``'s, ``run SPEC --store STORE`` on the complete store, the
no-op re-run: its summary says its own wall time).

Usage::

    boardsweep run quickstart --store /tmp/rf-q.zarr -q
    python benchmarks/read_commands.py --old /work/main/.venv/bin/boardsweep /tmp/rf-q.zarr [--dry-run nightly] \
        [--rerun quickstart]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

NEW = str(Path(sys.executable).with_name("boardsweep"))


def _wall(exe: str, args: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stdout) of ``exe ARGS`` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([exe, *args], capture_output=True, text=True)
    took = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return took, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out.stdout


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store")
    parser.add_argument("--old", required=True, help="the other install's boardsweep executable")
    parser.add_argument("--times", type=int, default=5)
    parser.add_argument("--dry-run", nargs="*", default=[], metavar="SWEEP", help="also time `run SWEEP --dry-run`")
    parser.add_argument("--rerun", default=None, metavar="SPEC", help="also time `run SPEC --store STORE` (no-op)")
    args = parser.parse_args()
    commands = {"status": ["status", args.store], "query": ["query", args.store], "--help": ["--help"],
                **{f"run {name} --dry-run": ["run", name, "--dry-run"] for name in args.dry_run},
                **({f"run {args.rerun} (no-op)": ["run", args.rerun, "--store", args.store]} if args.rerun else {})}
    print(f"{_cpu()}, {os.cpu_count()} cores; load before: {os.getloadavg()[0]:.1f}")
    print("| command | old wall: median (range) | new wall: median (range) | new/old | CPU old / new (new/old) |")
    print("|---|---|---|---|---|")
    for name, argv in commands.items():
        times: dict[str, list[float]] = {"old": [], "new": []}
        cpu: dict[str, list[float]] = {"old": [], "new": []}
        outputs: dict[str, set[str]] = {"old": set(), "new": set()}
        for _ in range(args.times):
            for which, exe in (("old", args.old), ("new", NEW)):
                took, used, text = _wall(exe, argv)
                times[which].append(took)
                cpu[which].append(used)
                outputs[which].add(text)
        same = "" if outputs["old"] == outputs["new"] or name.startswith("run ") else " (outputs differ!)"
        cells = [f"{statistics.median(t):.2f} s ({min(t):.2f}-{max(t):.2f})" for t in times.values()]
        ratio = statistics.median(times["new"]) / statistics.median(times["old"])
        old_cpu, new_cpu = statistics.median(cpu["old"]), statistics.median(cpu["new"])
        print(f"| `{name}` | {cells[0]} | {cells[1]} | {ratio:.2f}{same} | {old_cpu:.2f} / {new_cpu:.2f} s "
              f"({new_cpu / old_cpu:.2f}) |")
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
