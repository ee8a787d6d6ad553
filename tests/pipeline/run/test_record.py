"""The run's record (:class:`RunReport`): compile time as the user waited for
it, not added over workers that compiled side by side (issue 41)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from specs import spec_toml
from boardsweep.pipeline.run.record import RunReport, span_union


def _record(key: str, compile_s: float, *spans: tuple[float, float]) -> dict:
    return {"key": key, "kernel_s": 1.0, "compile_s": compile_s, "write_s": 0.1, "compile_spans": list(spans)}


def test_span_union_counts_overlaps_once_within_the_run():
    assert span_union([], 0.0, 10.0) == 0.0
    assert span_union([(1, 3), (2, 4), (6, 7)], 0.0, 10.0) == pytest.approx(4.0)
    assert span_union([(-5, 1), (9, 12)], 0.0, 10.0) == pytest.approx(2.0)  # clipped to the run


def test_compile_wait_is_the_union_of_the_compile_spans_not_their_sum():
    """The warm-up compiles from 100 s to 104 s (1 s of it before the run
    starts at 101 s); two workers wait for the compiler lock from 102 s to
    104.5 s, side by side: the user waited 3.5 s, not 4 + 2.5 + 2.5."""
    report = RunReport(store="x", tasks_total=4)
    report.compile_spans += [(100.0, 104.0)]  # the warm-up's
    for _ in ("worker a", "worker b"):
        report.add(_record("sim-1", 2.5, (102.0, 104.5)))
        report.add(_record("exact-1", 0.0))
    report.add(_record("sim-2", 0.0), head_start=True)
    report.finish_compile(101.0, 110.0)
    assert report.compile_s == pytest.approx(5.0)  # summed over tasks, as before
    assert report.compile_wait_s == pytest.approx(3.5)
    assert (report.tasks_run, report.exact_run, report.head_start) == (3, 2, 1)


def test_the_report_stamps_its_first_and_last_finished_task(tmp_path, cluster2):
    """A real run's record says when it began and when the client heard of
    its first and its last finished task (the benchmarks' head and tail,
    issue 57): in that order, within the run's wall time."""
    import time

    from boardsweep.pipeline.run.execute import run_sweep
    from boardsweep.pipeline.spec.parse import parse_spec

    assert RunReport(store="x", tasks_total=1).last_done_at == 0.0  # nothing finished: no stamp
    text = spec_toml("chutes_ladders", grid={"sides": [4, 6]}, params={"board": "milton_bradley"},
                     run={"replicates": 2, "games": 20}, tasks={"replicates_per_task": 1})
    before = time.time()
    report = run_sweep(parse_spec(text, "s.toml"), str(tmp_path / "s.zarr"), scheduler=cluster2)
    after = time.time()
    assert report.complete and report.tasks_run == 4
    assert before <= report.started_at <= report.first_done_at <= report.last_done_at <= after
    assert report.last_done_at - report.started_at <= report.wall_s


def test_work_on_the_packed_store_that_fails_costs_the_run_nothing(tmp_path, cluster2):
    """``Hooks.on_packed`` (the verdict on the workers) is called once, with
    the store and the run's client, after packing; one that raises leaves the
    run complete and packed, its reason in the report (the summary then makes
    the verdict itself); a run with nothing to do does not call it."""
    from boardsweep.pipeline.cluster import Target
    from boardsweep.pipeline.run import Hooks, RunRequest
    from boardsweep.pipeline.run.execute import execute
    from boardsweep.pipeline.spec.parse import parse_spec

    calls = []

    def boom(url, client):
        calls.append((url, len(client.scheduler_info()["workers"])))
        raise RuntimeError("no verdict today")

    spec = parse_spec(spec_toml("chutes_ladders", grid={"sides": [4, 6]}, params={"board": "milton_bradley"},
                                run={"replicates": 2, "games": 20}), "s.toml")
    url = str(tmp_path / "s.zarr")
    request = RunRequest(spec, url, Target(scheduler=cluster2))
    report = execute(request, Hooks(on_packed=boom))
    assert calls == [(report.store, 2)]
    assert report.complete and not report.packing and report.on_packed_failed == "RuntimeError: no verdict today"
    again = execute(request, Hooks(on_packed=boom))
    assert again.complete and calls == [(report.store, 2)] and not again.on_packed_failed


@pytest.mark.slow
def test_a_two_worker_run_says_a_compile_wait_within_its_wall_time(tmp_path):
    """Kernels compiled afresh (an empty numba cache) by a run of 2 workers:
    the compile time reported is not above the run's wall time, and the
    summary line no longer says it was summed over the workers."""
    spec = tmp_path / "spec.toml"
    spec.write_text(spec_toml(
        "chutes_ladders", grid={"sides": [4, 6, 8, 10]}, params={"board": "milton_bradley"},
        run={"replicates": 4, "games": 50}, checkpoints={"count": 3}, tasks={"replicates_per_task": 1}))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache"), "COLUMNS": "200"}
    report_json = tmp_path / "report.json"
    out = subprocess.run(
        [sys.executable, "-m", "boardsweep", "run", str(spec), "--store", str(tmp_path / "s.zarr"), "--workers", "2",
         "--report-json", str(report_json)], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(report_json.read_text())
    assert report["workers"] == 2 and report["compile_wait_s"] > 0
    assert report["compile_wait_s"] <= report["wall_s"]
    line = next(line for line in out.stdout.splitlines() if line.lstrip().startswith("wall "))
    wall, compiled = map(float, re.search(r"wall ([\d.]+) s, compiling kernels ([\d.]+) s, kernel", line).groups())
    assert compiled <= wall
    assert not re.search(r"compiling kernels [\d.]+ s summed over", line)
