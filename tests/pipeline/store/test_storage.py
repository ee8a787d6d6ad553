"""What the store needs of storage (:mod:`boardsweep.pipeline.store.storage`):
the same contract held by a real folder and by a real S3-compatible server
(SeaweedFS on 127.0.0.1), and the one place that asks which a URL is."""

from __future__ import annotations

from pathlib import Path

import pytest

from boardsweep.pipeline.store.storage import FolderStorage, ObjectStorage, local_root, open_storage


@pytest.fixture(params=["folder", "s3"])
def storage(request, tmp_path):
    """The storage of a fresh store: a folder, or a prefix of the test server's bucket."""
    if request.param == "folder":
        return open_storage(str(tmp_path / "sweep.zarr"))
    return open_storage(request.getfixturevalue("bucket_url"))


def test_a_url_is_asked_once_which_storage_it_is():
    assert local_root("/data/sweep.zarr") == Path("/data/sweep.zarr")
    assert local_root("file:///data/sweep.zarr") == Path("/data/sweep.zarr")
    assert local_root("s3://bucket/sweep.zarr") is None
    assert isinstance(open_storage("/data/sweep.zarr"), FolderStorage)
    assert isinstance(open_storage(Path("relative/sweep.zarr")), FolderStorage)
    assert isinstance(open_storage("memory://sweep.zarr"), ObjectStorage)


def test_a_file_is_written_whole_read_and_replaced(storage):
    assert storage.read("a/b.json") is None and not storage.exists("a/b.json")
    storage.write("a/b.json", b'{"x": 1}')
    assert storage.read("a/b.json") == b'{"x": 1}' and storage.exists("a/b.json")
    assert storage.json("a/b.json") == {"x": 1}
    storage.write("a/b.json", b"not json")
    assert storage.read("a/b.json") == b"not json" and storage.json("a/b.json") is None
    assert storage.why_unread("a/missing") == "missing"


def test_several_files_are_written_and_read_at_once(storage):
    storage.write_many({"x/1": b"one", "x/2": b"two"})
    assert storage.read_many(["x/1", "x/2", "x/3"]) == {"x/1": b"one", "x/2": b"two", "x/3": None}
    assert storage.read_many(["x/3"], strict=False) == {"x/3": None}
    assert storage.list("x") == ["1", "2"] and storage.list("nothing") == []


def test_a_file_is_written_if_absent_exactly_once(storage):
    assert storage.write_if_absent("lock/it", b"first")
    assert not storage.write_if_absent("lock/it", b"second")
    assert storage.read("lock/it") == b"first"


def test_files_are_deleted_and_moved(storage):
    storage.write_many({"d/1": b"one", "d/2": b"two"})
    storage.delete(["d/1", "d/gone"])  # one already gone is fine
    assert storage.read("d/1") is None and storage.read("d/2") == b"two"
    storage.move("d/2", "d/3")
    assert storage.read("d/2") is None and storage.read("d/3") == b"two"


def test_a_folder_delete_removes_what_a_killed_write_left(tmp_path):
    storage = open_storage(str(tmp_path))
    storage.write("rec.json", b"{}")
    (tmp_path / ".rec.json.0123456789ab4242-7.tmp").write_bytes(b"{")  # a write killed before its rename
    storage.delete(["rec.json"])
    assert sorted(p.name for p in tmp_path.iterdir()) == []
