"""A long-lived process (a notebook, a reader looping over a store) that
looked at a store on object storage earlier sees what another process has
made of it since: what is there is never judged by a listing cached from
before (s3fs keeps each listing it made; another process's writes do not
reach that cache)."""

from __future__ import annotations

import json

import pytest

from boardsweep.pipeline.store import LOCK_NAME, Store, load_sweep
from boardsweep.pipeline.errors import BoardsweepError

pytestmark = pytest.mark.slow


def test_a_store_another_process_made_is_seen_after_an_earlier_look(bucket_url, s3server):
    other = s3server.filesystem()  # another process's view: an instance of its own, no cache shared
    root = bucket_url.removeprefix("s3://")
    lock = {"pid": 1, "host": "elsewhere", "since": "2026-01-01T00:00:00+00:00"}
    other.pipe(f"{root}/{LOCK_NAME}", json.dumps(lock).encode())  # a run has just taken the folder
    assert Store(bucket_url).kind == "empty"  # this process looks, and lists the folder
    with pytest.raises(BoardsweepError):  # told in one line: a run at work, nothing to read yet
        load_sweep(bucket_url)
    meta = {"zarr_format": 3, "node_type": "group", "attributes": {"spec_canonical": "{}"}}
    other.pipe(f"{root}/zarr.json", json.dumps(meta).encode())  # the run made its store, and ended
    other.rm(f"{root}/{LOCK_NAME}")
    assert Store(bucket_url).kind == "boardsweep"
