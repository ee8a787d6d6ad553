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


def test_a_store_a_run_cleared_is_one_it_makes_not_someones_folder(bucket_url, s3server):
    """A resumed run clears what a killed creation left (the arrays, the root,
    the record) and holds the lock: SeaweedFS still lists the removed arrays'
    folders, empty.  The S3 soak's ``status`` called that "not a boardsweep
    sweep store" (a folder of someone's); it is a folder holding only a run's
    lock (``empty``: a run making the store, one line), and a file of someone's there stays theirs."""
    import os
    import socket

    from boardsweep.pipeline.errors import StoreBeingRewritten

    fs = s3server.filesystem()
    root = bucket_url.removeprefix("s3://")
    lock = {"pid": os.getpid(), "host": socket.gethostname(), "since": "2026-01-01T00:00:00+00:00"}
    fs.pipe({f"{root}/{LOCK_NAME}": json.dumps(lock).encode(), f"{root}/zarr.json": b"{}",
             f"{root}/done/zarr.json": b"{}", f"{root}/done/c/0/0": b"x", f"{root}/counts/c/0/0/0": b"y"})
    for name in ("done", "counts"):  # cleared as remove_store clears a store's arrays
        fs.rm(f"{root}/{name}", recursive=True)
    fs.rm(f"{root}/zarr.json")
    fs.invalidate_cache()
    assert {p.rsplit("/", 1)[1] for p in fs.ls(root, detail=False)} >= {"done", "counts"}  # still listed
    assert Store(bucket_url).kind == "empty"
    with pytest.raises(StoreBeingRewritten, match="is making the store now"):
        load_sweep(bucket_url)
    fs.pipe(f"{root}/counts/notes.txt", b"mine")
    assert Store(bucket_url).kind == "folder"
