"""The store's hand-written parts beside the libraries that could do them, in one run.

Issue 55 asks, for each of three libraries, whether it does the store's job
at equal speed and with the same guarantees.  Measured here side by side, on
real files (a temporary folder), real zarr and real locks:

* **lock**: ``with StoreLock(folder)`` (pipeline/store/lock.py) against
  ``with filelock.FileLock(...)`` (skipped where filelock is not installed;
  it is not a dependency): seconds per take and release; and what a second
  taker is told (the refusal line) while the first holds it;
* **checksums**: a task's chunk written and verified the store's way
  (``chunkfiles.put_chunk``: zstd, the file renamed into place, its size and
  CRC-32 recorded; verified by reading the bytes and comparing the record)
  against zarr writing the same chunks with its ``crc32c`` codec appended
  (verified by reading them back through zarr, which checks the CRC-32C);
  then what each says of a chunk that was deleted and of one altered;
* **packing**: the task-chunked arrays rewritten into large chunks (the
  store's packer: :func:`packed_chunks`, plain zarr chunks) against the same
  arrays rewritten as zarr shards (shard = the packed chunk, inner chunk =
  the task chunk), then each read whole with plain ``xr.open_zarr(...).load()``
  (the reason the store packs), with the dask task count xarray makes.

Ratios are printed beside the figures; the load average is printed too.

Usage::

    python benchmarks/store_libraries.py [--chunks 800] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import warnings
import shutil
import tempfile
import sys
import zlib
from pathlib import Path

import numpy as np
import xarray as xr
import zarr
from zarr.codecs import BytesCodec, Crc32cCodec, ZstdCodec

sys.path.insert(0, str(Path(__file__).resolve().parent))

from store_io import best  # noqa: E402  (the benchmarks' one timing loop)
from boardsweep.pipeline.errors import StoreLocked
from boardsweep.pipeline.store import StoreLock
from boardsweep.pipeline.store.chunkfiles import put_chunk
from boardsweep.pipeline.store.layout import packed_chunks

#: A task's chunk of one array, as a realistic sweep writes it: one grid
#: point, 4 replicates, 2 seats, 40 checkpoints-by-squares values (float64).
TASK_CHUNK = (1, 4, 2, 40)


# -- lock ----------------------------------------------------------------------

def bench_lock(tmp: Path, n: int, repeat: int) -> list[tuple[str, str]]:
    folder = tmp / "lockstore"
    folder.mkdir()

    def ours() -> None:
        for _ in range(n):
            with StoreLock(str(folder)):
                pass

    t_ours = best(ours, repeat) / n
    rows = [("StoreLock take+release", f"{t_ours * 1e6:.0f} us")]
    with StoreLock(str(folder)):
        try:
            with StoreLock(str(folder)):
                pass
        except StoreLocked as exc:
            rows.append(("StoreLock second taker told", str(exc)))
    try:
        import filelock
    except ImportError:
        rows.append(("filelock", "not installed (pip install filelock to compare)"))
        return rows
    path = folder / ".boardsweep" / "flock"
    path.parent.mkdir(exist_ok=True)

    def theirs() -> None:
        for _ in range(n):
            with filelock.FileLock(str(path)):
                pass

    t_theirs = best(theirs, repeat) / n
    rows.append(("filelock.FileLock take+release", f"{t_theirs * 1e6:.0f} us (StoreLock / filelock = "
                 f"{t_ours / t_theirs:.1f})"))
    with filelock.FileLock(str(path)):
        try:
            filelock.FileLock(str(path), timeout=0).acquire()
        except filelock.Timeout as exc:
            rows.append(("filelock second taker told", str(exc)))
    return rows


# -- checksums -------------------------------------------------------------------

def task_values(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Counts-like float64 values (what a sweep's arrays hold: small integers, some repeats)."""
    return rng.poisson(30, size=shape).astype("f8")


def make_array(path: Path, shape: tuple[int, ...], chunks: tuple[int, ...], crc: bool) -> zarr.Array:
    codecs = [BytesCodec(), ZstdCodec(level=1)] + ([Crc32cCodec()] if crc else [])
    return zarr.create_array(str(path), shape=shape, chunks=chunks, dtype="f8", fill_value=np.nan,
                             serializer=codecs[0], compressors=codecs[1:], zarr_format=3)


def bench_checksums(tmp: Path, n: int, repeat: int) -> list[tuple[str, str]]:
    shape = (n,) + TASK_CHUNK[1:]
    rng = np.random.default_rng(1)
    values = task_values(rng, shape)
    regions = [(slice(i, i + 1),) for i in range(n)]
    rows = []

    def ours() -> None:
        root = tmp / "ours"
        shutil.rmtree(root, ignore_errors=True)
        make_array(root / "wins", shape, TASK_CHUNK, crc=False)
        records = {}
        for region in regions:
            key, record = put_chunk(str(root), "wins", region, values[region])
            records[key] = record
        for key, record in records.items():  # verify: the raw bytes against the record (no decompression)
            data = (root / key).read_bytes()
            assert [len(data), zlib.crc32(data)] == record

    def theirs() -> None:
        root = tmp / "theirs"
        shutil.rmtree(root, ignore_errors=True)
        array = make_array(root / "wins", shape, TASK_CHUNK, crc=True)
        for region in regions:
            array[region] = values[region]
        assert np.array_equal(zarr.open_array(str(root / "wins"))[...], values)  # every chunk's CRC-32C checked

    t_ours, t_theirs = best(ours, repeat), best(theirs, repeat)
    rows.append((f"write+verify {n} task chunks, store's CRC-32 records", f"{t_ours * 1e3:.0f} ms"))
    rows.append((f"write+verify {n} task chunks, zarr crc32c codec", f"{t_theirs * 1e3:.0f} ms "
                 f"(crc32c / store's = {t_theirs / t_ours:.1f})"))
    raw = (tmp / "ours" / "wins" / "c" / "0" / "0" / "0" / "0").read_bytes()
    try:
        import google_crc32c
        k = 20000
        t_crc = best(lambda: [zlib.crc32(raw) for _ in range(k)], repeat) / k
        t_crcc = best(lambda: [google_crc32c.value(raw) for _ in range(k)], repeat) / k
        rows.append((f"checksum of one {len(raw)}-byte chunk", f"zlib CRC-32 {t_crc * 1e6:.2f} us, "
                     f"CRC-32C {t_crcc * 1e6:.2f} us"))
    except ImportError:
        pass
    rows += damage_rows(tmp / "theirs")
    return rows


def damage_rows(root: Path) -> list[tuple[str, str]]:
    """What zarr's crc32c codec says of a deleted chunk and of an altered one."""
    rows = []
    os.remove(root / "wins" / "c" / "0" / "0" / "0" / "0")
    got = zarr.open_array(str(root / "wins"))[0]
    rows.append(("crc32c codec, chunk deleted", "read as fill, no error" if np.isnan(got).all() else "error"))
    path = root / "wins" / "c" / "1" / "0" / "0" / "0"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    try:
        zarr.open_array(str(root / "wins"))[1]
        rows.append(("crc32c codec, chunk altered", "read without error"))
    except Exception as exc:  # noqa: BLE001 - what zarr raises is what is measured
        rows.append(("crc32c codec, chunk altered", f"{type(exc).__name__}: {str(exc)[:90]}"))
    return rows


# -- packing -----------------------------------------------------------------------

def bench_packing(tmp: Path, n: int, repeat: int) -> list[tuple[str, str]]:
    shape = (n,) + TASK_CHUNK[1:]
    packed = packed_chunks(shape, 8)
    values = {name: task_values(np.random.default_rng(i), shape) for i, name in enumerate(["wins", "turns", "rent"])}
    task = tmp / "task.zarr"
    xr.Dataset({k: (("point", "replicate", "seat", "k"), v) for k, v in values.items()}).to_zarr(
        task, encoding={k: {"chunks": TASK_CHUNK} for k in values}, zarr_format=3, consolidated=True)

    def rewrite(target: Path, sharded: bool) -> None:
        shutil.rmtree(target, ignore_errors=True)
        source = xr.open_zarr(task).load()
        if sharded:
            encoding = {k: {"chunks": TASK_CHUNK, "shards": packed} for k in values}
        else:
            encoding = {k: {"chunks": packed} for k in values}
        source.to_zarr(target, encoding=encoding, zarr_format=3, consolidated=True)

    rows = [(f"task layout: {len(values)} arrays of {shape}, task chunk {TASK_CHUNK}", f"packed chunk {packed}")]
    t_pack = best(lambda: rewrite(tmp / "packed.zarr", False), repeat)
    t_shard = best(lambda: rewrite(tmp / "sharded.zarr", True), repeat)
    rows.append(("rewrite task layout -> packed (zarr chunks)", f"{t_pack * 1e3:.0f} ms"))
    rows.append(("rewrite task layout -> sharded", f"{t_shard * 1e3:.0f} ms (sharded / packed = "
                 f"{t_shard / t_pack:.1f})"))
    reads = {}
    for label, path in [("task", task), ("packed", tmp / "packed.zarr"), ("sharded", tmp / "sharded.zarr")]:
        ds = xr.open_zarr(path)
        tasks = len(ds["wins"].data.__dask_graph__())
        reads[label] = best(lambda p=path: xr.open_zarr(p).load(), repeat)
        rows.append((f"xr.open_zarr(...).load(), {label}", f"{reads[label] * 1e3:.0f} ms, {tasks} dask tasks per array"))
    rows.append(("read ratio sharded / packed", f"{reads['sharded'] / reads['packed']:.1f}"))
    rows.append(("bytes on disk packed / sharded", f"{du(tmp / 'packed.zarr')} / {du(tmp / 'sharded.zarr')}"))
    return rows


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=800, help="task chunks per array")
    parser.add_argument("--locks", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = []
    warnings.simplefilter("ignore")  # zarr's note on consolidated metadata, once per store written
    with tempfile.TemporaryDirectory() as tmp:
        for part in (lambda t: bench_lock(t, args.locks, args.repeat),
                     lambda t: bench_checksums(t, args.chunks, args.repeat),
                     lambda t: bench_packing(t, args.chunks, args.repeat)):
            sub = Path(tempfile.mkdtemp(dir=tmp))
            rows += part(sub)
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
