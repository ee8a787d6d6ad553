"""The sweep store: everything about a sweep's zarr store lives in this package.

* :mod:`.arrays`: the schema, the template, region writes, done masks, reads;
* :mod:`.metadata`: the store's self-description (CF attributes, history);
* :mod:`.integrity`: task manifests, the check, damage;
* :mod:`.packing`: the packed layout of a finished store and its journal;
* :mod:`.chunkfiles`: direct reads and writes of a local store's chunk files;
* :mod:`.lock`: one run per store;
* :mod:`.remote`: what is particular to object storage (bounded retries, exclusive create);
* :mod:`.owner`: :class:`Store`, one store as a command sees it (opened
  once, what it found kept), and every change a command makes to it;
* :mod:`.manifests`, :mod:`.layout`, :mod:`.growth`: checksum records, the
  packed layout as read, growth on disk;
* :mod:`.zarr_private`: every use of zarr beyond its public API.

Nothing outside this package opens zarr or fsspec or touches a store's files
(``tests/test_structure.py`` checks it).
"""

from __future__ import annotations

from . import zarr_private  # noqa: F401 - first: it imports zarr without zarr 3.0's import-time warning
from .arrays import (
    FILL,
    array_names,
    coordinate_labels,
    many_reads,
    open_raw,
    read_raw,
    write_whole,
    StoreMismatch,
    check_format,
    check_writable,
    check_spec,
    clear_done,
    create_store,
    ensure_arrays,
    inspect,
    provenance,
    quiet_zarr,
    read_array,
    read_attrs,
    read_done,
    read_exact_done,
    remove_store,
    source_revision,
    store_exists,
    template,
    unplayed,
    write_exact,
    write_region,
)
from .chunkfiles import ChunkUnreadable, LayoutError
from .owner import Store, normalize_url
from .remote import bound_failures

bound_failures()  # every process that touches a store (workers too) gives up on a lost S3 server in seconds

__all__ = [
    "Store", "normalize_url",
    "array_names", "coordinate_labels", "many_reads", "open_raw", "read_raw", "write_whole",
    "ChunkUnreadable", "LayoutError", "FILL", "StoreMismatch", "check_format", "check_spec", "check_writable", "clear_done", "create_store", "ensure_arrays", "inspect",
    "provenance", "quiet_zarr", "read_array", "read_attrs", "read_done", "read_exact_done", "remove_store",
    "source_revision", "store_exists", "template", "unplayed", "write_exact", "write_region",
]
