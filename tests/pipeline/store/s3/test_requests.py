"""What one more task costs on object storage, counted by the server itself
(SeaweedFS on 127.0.0.1, its request metrics): a whole run, its packing
included, at two grid sizes; the difference over the difference in tasks.

A simulation task puts its chunk of each simulated array, its done flags and
its checksum record, in that order; the run reads its done flags once after
the round (packing takes them from the run), and packing reads each of its
other chunks once.  An exact task puts its
exact chunks, its flags and its record; packing reads each once.  Nothing is
asked twice, no object's existence or size is asked before it is read or
written, and no array's metadata is read per task."""

from __future__ import annotations

from boardsweep.core.games import series_sources

import os

import pytest

from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec

pytestmark = pytest.mark.slow  # two whole runs on S3

RUN = {"replicates": 4, "games": 2, "turns": 20}


def _sweep(make_spec, dice: list[int], rules: list[str]) -> str:
    return make_spec("toy", params={"size": 8}, grid={"dice_sides": dice, "rule": rules}, run=RUN,
                     checkpoints={"count": 3}, tasks={"replicates_per_task": 2})


def _spent(s3server, bucket: str, run, *args, **kwargs) -> tuple[dict[str, int], object]:
    """(the requests ``run(*args, **kwargs)`` made on ``bucket``, by type; what it returned)."""
    before = s3server.requests(bucket)
    result = run(*args, **kwargs)
    after = s3server.requests(bucket)
    return {kind: n - before.get(kind, 0) for kind, n in after.items() if n != before.get(kind, 0)}, result


def test_one_more_task_on_s3_costs_its_puts_and_one_read_of_each_chunk(s3server, s3cluster, make_spec):
    bucket = s3server.bucket()
    costs, tasks = [], []
    for name, dice, rules in (("small", [2], ["plain"]), ("large", [2, 3, 4, 5], ["plain", "sticky"])):
        spec = parse_spec(_sweep(make_spec, dice, rules), f"{name}.toml")
        url = f"s3://{bucket}/requests-{name}-{os.getpid()}/sweep.zarr"
        spent, report = _spent(s3server, bucket, run_sweep, spec, url, scheduler=s3cluster)
        assert report.complete and report.packing == "", report.packing
        costs.append(spent)
        tasks.append((report.tasks_run, report.exact_run))
    sim, exact = tasks[1][0] - tasks[0][0], tasks[1][1] - tasks[0][1]
    assert (sim, exact) == (14, 7), tasks
    extra = {kind: costs[1].get(kind, 0) - costs[0].get(kind, 0) for kind in {*costs[0], *costs[1]}}
    game = spec.game
    simulated, solved = len(game.variables) + len(series_sources(game)), len(game.exact_variables)  # + series (format 7)
    puts = sim * (simulated + 2) + exact * (solved + 2)  # data, then flags, then the record
    gets = sim * (simulated + 1) + exact * (solved + 1)  # the run reads the done flags, packing every other chunk
    # what a run may or may not do once, whatever its size: a worker reads each array's metadata once
    # per store (the two runs may differ by one worker's reads); the lock's conditional-put probe, two
    # PUTs, is made once per file-system instance (fsspec keeps one per thread)
    metadata, probe = simulated + solved + 3, 2
    assert extra.get("PUT", 0) <= puts + probe, extra
    assert extra.get("GET", 0) <= gets + metadata, extra  # before: 3 reads of a done chunk, 2 of an exact_done one
    assert extra.get("HEAD", 0) <= 0, extra
    assert sum(n for kind, n in extra.items() if kind not in ("GET", "PUT")) <= simulated + solved + 2, extra
    per_task = sum(extra.values()) / (sim + exact)
    assert per_task <= (puts + gets + metadata + probe) / (sim + exact), per_task
