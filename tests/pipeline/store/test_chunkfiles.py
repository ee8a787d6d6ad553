"""The lazy chunk-file reader holds the chunks it decoded last: a packed
chunk read in many small dask chunks (the run's summary, block by block)
is decoded once, and a chunk file replaced meanwhile is read again."""

from __future__ import annotations

import os
import pickle
import zlib
from pathlib import Path

import numpy as np
import zarr

from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import chunkfiles

from specs import spec_toml  # tests/support is on sys.path


def test_a_packed_chunk_read_in_parts_is_decoded_once(tmp_path, cluster2, monkeypatch):
    url = str(tmp_path / "stb.zarr")
    text = spec_toml("shut_the_box", name="stb", seed=4, grid={"dice_sides": [2, 3, 4], "policy": ["optimal", "greedy"]},
                     run={"replicates": 2, "games": 50})
    assert run_sweep(parse_spec(text, "stb.toml"), url, scheduler=cluster2).complete  # packed: one chunk an array
    stored = zarr.open_array(url, path="rolls_sum", mode="r")
    assert stored.chunks == stored.shape
    whole = chunkfiles.read(url, "rolls_sum")
    decoded = []
    real = chunkfiles._decode
    monkeypatch.setattr(chunkfiles, "_decode", lambda *a, **k: decoded.append(a[-1]) or real(*a, **k))
    lazy = chunkfiles.ChunkFileArray(url, "rolls_sum", stored.shape, stored.dtype)
    parts = [lazy[(slice(i, i + 1),)] for i in range(3)]
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    assert len(decoded) == 1  # not once per part
    chunk = Path(decoded[0])
    copy = chunk.with_name(".copy")
    copy.write_bytes(chunk.read_bytes())
    os.replace(copy, chunk)  # the same bytes in a new file, as a rewrite leaves it
    np.testing.assert_array_equal(lazy[(slice(0, 1),)], whole[:1])
    assert len(decoded) == 2
    again = pickle.loads(pickle.dumps(lazy))  # sent to a worker: without the held chunks
    assert again._held == {} and np.array_equal(again[(slice(2, 3),)], whole[2:3])


def _chunk_on_disk(root: Path, key: str) -> np.ndarray:
    return np.frombuffer(chunkfiles.decompress((root / key).read_bytes()), dtype=np.int64)


def test_a_chunk_written_records_its_size_and_crc_and_follows_its_arrays_metadata(tmp_path):
    """Issue 44, the warm first run: a chunk write returns the size and CRC-32
    of the bytes it wrote (the task's checksum record, not read back), and a
    writer keeps an array's parsed ``zarr.json`` only while that file is the
    same: replaced (as creation and packing replace it), it is read again."""
    url = str(tmp_path / "s.zarr")
    zarr.create_array(url, name="n", shape=(3,), chunks=(2,), dtype="int64", fill_value=0,
                              compressors=[zarr.codecs.ZstdCodec(level=1)], zarr_format=3)
    path, (size, crc) = chunkfiles.put_chunk(url, "n", (slice(2, 3),), np.array([5]))
    raw = (tmp_path / "s.zarr" / path).read_bytes()
    assert path == "n/c/1" and [size, crc] == [len(raw), zlib.crc32(raw)]
    assert _chunk_on_disk(tmp_path / "s.zarr", path).tolist() == [5, 0]  # padded with the fill value
    meta = tmp_path / "s.zarr" / "n" / "zarr.json"
    text = meta.read_text()
    assert '"fill_value": 0' in text
    fresh = meta.with_name(".new")
    fresh.write_text(text.replace('"fill_value": 0', '"fill_value": 7'))  # the same size, a new file
    os.replace(fresh, meta)
    chunkfiles.put_chunk(url, "n", (slice(2, 3),), np.array([5]))
    assert _chunk_on_disk(tmp_path / "s.zarr", path).tolist() == [5, 7]
    assert zarr.open_array(url, path="n", mode="r")[:].tolist() == [7, 7, 5]  # zarr reads it alike


def test_a_zarr_json_rewritten_in_place_within_one_clock_tick_is_read_again(tmp_path):
    """Issue 56: the writer's kept ``zarr.json`` is keyed by the file's identity (inode, modification
    time, size); a rewrite in place at the same size within one tick of the file system's clock keeps
    all three.  A file modified less than ``_SETTLED_NS`` ago is not kept, so that rewrite is read."""
    url = str(tmp_path / "s.zarr")
    zarr.create_array(url, name="n", shape=(3,), chunks=(2,), dtype="int64", fill_value=0,
                      compressors=[zarr.codecs.ZstdCodec(level=1)], zarr_format=3)
    meta = tmp_path / "s.zarr" / "n" / "zarr.json"
    before = os.stat(meta)
    chunkfiles.put_chunk(url, "n", (slice(2, 3),), np.array([5]))  # the writer has read it
    with open(meta, "r+") as f:  # the same file, the same size, the same modification time
        text = f.read()
        f.seek(0)
        f.write(text.replace('"fill_value": 0', '"fill_value": 7'))
    os.utime(meta, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(meta)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    path, _ = chunkfiles.put_chunk(url, "n", (slice(2, 3),), np.array([5]))
    assert _chunk_on_disk(tmp_path / "s.zarr", path).tolist() == [5, 7]  # padded with the new fill value
