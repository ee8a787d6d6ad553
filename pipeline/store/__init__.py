"""The sweep store: everything about a sweep's zarr store lives in this package.

* :mod:`.schema`: the variables, dims, chunks and attributes (the template);
* :mod:`.identity`: what is at a URL, the attributes, the format and spec checks;
* :mod:`.creation`: create a store from its template, complete it, remove it;
* :mod:`.writes`: a task's region, a point's exact answer, done flags;
* :mod:`.reads`: arrays whole or a region, the done masks, the raw Dataset;
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
from .creation import create_store, ensure_arrays, remove_store
from .identity import StoreMismatch, check_format, check_spec, check_writable, inspect, read_attrs, store_exists
from .reads import array_names, coordinate_labels, many_reads, open_raw, read_array, read_done, read_exact_done, read_raw
from .schema import FILL, blank_unplayed, provenance, source_revision, template, unplayed
from .writes import clear_done, write_exact, write_region, write_whole
from .zarr_private import quiet as quiet_zarr
from .chunkfiles import ChunkUnreadable, LayoutError
from .owner import Store, normalize_url
from .remote import bound_failures

bound_failures()  # every process that touches a store (workers too) gives up on a lost S3 server in seconds

__all__ = [
    "Store", "normalize_url",
    "array_names", "coordinate_labels", "many_reads", "open_raw", "read_raw", "write_whole",
    "ChunkUnreadable", "LayoutError", "FILL", "StoreMismatch", "check_format", "check_spec", "check_writable", "clear_done", "create_store", "ensure_arrays", "inspect",
    "provenance", "quiet_zarr", "read_array", "read_attrs", "read_done", "read_exact_done", "remove_store",
    "source_revision", "store_exists", "template", "unplayed", "blank_unplayed", "write_exact", "write_region",
]
