"""A task's write on object storage is batched (SeaweedFS on 127.0.0.1, its
own request counters): its chunks, then its done flag, then its checksum
record, and nothing read back; what it wrote reads back through zarr and
passes the integrity check."""

from __future__ import annotations

import numpy as np
import zarr

from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import create_store, integrity, template, write_region


def _requests(server, bucket: str) -> dict[str, int]:
    """The S3 requests the server has answered on ``bucket`` so far, by type (settled)."""
    return server.requests(bucket)


def test_a_task_write_on_s3_is_its_chunks_then_its_flag_then_its_record(bucket_url, s3server, toy_spec_text):
    spec = parse_spec(toy_spec_text, "toy.toml")
    create_store(bucket_url, spec)
    ds, _ = template(spec, spec.game)
    k = len(spec.axes)
    rng = np.random.default_rng(5)
    blocks = {}
    for index in [(0, 0), (1, 1)]:
        blocks[index] = {name: rng.integers(0, 1000, (spec.block, *ds[name].shape[k + 1:])).astype(ds[name].dtype)
                         for name in spec.game.variables}
    def region(index):
        return (*(slice(i, i + 1) for i in index), slice(0, spec.block))

    flags = np.ones((1, 1, spec.block), dtype=bool)
    write_region(bucket_url, (0, 0), region((0, 0)), blocks[(0, 0)], flags, token="t")  # reads the metadata once
    before = _requests(s3server, "boardsweep-tests")
    write_region(bucket_url, (1, 1), region((1, 1)), blocks[(1, 1)], flags, token="t")
    after = _requests(s3server, "boardsweep-tests")
    spent = {kind: after[kind] - before.get(kind, 0) for kind in after if after[kind] != before.get(kind, 0)}
    assert spent == {"PUT": len(spec.game.variables) + 2}, spent  # the chunks, the flag, the record
    group = zarr.open_group(bucket_url, mode="r")
    for index, values in blocks.items():
        for name, written in values.items():
            assert np.array_equal(group[name][index + (slice(0, spec.block),)], written), name
        assert group["done"][index + (slice(0, spec.block),)].all()
    assert not integrity.check(bucket_url)  # the records hold the checksums of what was stored


def test_a_store_made_again_with_other_task_chunks_is_not_written_with_the_old_metadata(
        bucket_url, s3server, make_spec):
    """A worker keeps a store's array metadata between tasks and runs; a
    ``[tasks] seconds`` spec calibrated otherwise the next time remakes the
    store at the same URL with other chunks, which the worker reads afresh
    (here 4 replicates a chunk, then 2: the old metadata would put replicates
    4-5 where the new layout keeps 2-3)."""
    from boardsweep.pipeline.plan.task_layout import TaskLayout
    from boardsweep.pipeline.run.dispatch import token

    text = make_spec("toy", params={"size": 8}, grid={"dice_sides": [2]}, run={"replicates": 6, "games": 1,
                     "turns": 10}, checkpoints={"count": 2}, tasks={"seconds": 1})
    spec = parse_spec(text, "toy.toml")
    first, second = TaskLayout(4, (1,)), TaskLayout(2, (1,))
    ds, _ = template(spec, spec.game)
    rng = np.random.default_rng(8)

    def block(n):
        return {name: rng.integers(0, 1000, (1, n, *ds[name].shape[2:])).astype(ds[name].dtype)
                for name in spec.game.variables}

    create_store(bucket_url, spec, layout=first)
    write_region(bucket_url, (0,), (slice(0, 1), slice(4, 6)), block(2), np.ones((1, 2), dtype=bool),
                 token=token(spec, first))
    s3server.filesystem().rm(bucket_url.removeprefix("s3://"), recursive=True)
    create_store(bucket_url, spec, layout=second)
    written = block(2)
    write_region(bucket_url, (0,), (slice(0, 1), slice(4, 6)), written, np.ones((1, 2), dtype=bool),
                 token=token(spec, second))
    group = zarr.open_group(bucket_url, mode="r")
    for name, values in written.items():
        assert np.array_equal(group[name][0:1, 4:6], values), name
    assert group["done"][0].tolist() == [False] * 4 + [True] * 2
    assert not integrity.check(bucket_url)
