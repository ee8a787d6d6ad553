"""The sweep store: everything about a sweep's zarr store lives in this package.

* :mod:`.schema`: the variables, dims, chunks and attributes (the template);
* :mod:`.identity`: what is at a URL, the attributes, the format and spec checks;
* :mod:`.creation`: create a store from its template, complete it, remove it;
* :mod:`.writes`: a task's region, a point's exact answer, done flags, then its checksum record (manifest);
* :mod:`.reads`: arrays whole or a region, the done masks, the raw Dataset;
* :mod:`.metadata`: the store's self-description (CF attributes, history);
* :mod:`.integrity`: task manifests, the check, damage;
* :mod:`.kept`: a complete store's summary, computed once and kept in it;
* :mod:`.packing`: the packed layout of a finished store and its journal;
* :mod:`.chunkfiles`: direct reads and writes of a local store's chunk files;
* :mod:`.lock`: one run per store;
* :mod:`.storage`: what the store needs of storage (:class:`~.storage.Storage`:
  read, write whole, write if absent, list, delete, move, exists), for a
  folder and for object storage, and the one place that asks which a URL is;
* :mod:`.remote`: what is particular to object storage (bounded retries, exclusive create);
* :mod:`.owner`: :class:`Store`, one store as a command sees it (opened
  once, what it found kept), and every change a command makes to it;
* :mod:`.layout`, :mod:`.growth`: the layout as read (packed or not, grid
  points per task, a growth under way) and its record written; growth on disk;
* :mod:`.zarr_private`: every use of zarr beyond its public API;
* :mod:`.open`: the store as an xarray Dataset (:func:`open_sweep`,
  :func:`load_sweep`; ``xr.open_dataset(store, engine="boardsweep")``).

Code outside this package imports from here (``from ..store import X``),
never from the modules: every name it uses is below.  The store's exception
classes live in :mod:`boardsweep.pipeline.errors`.

Nothing outside this package opens zarr or fsspec or touches a store's files
(``tests/test_structure.py`` checks it).
"""

from __future__ import annotations

from . import zarr_private  # noqa: F401 - first: it imports zarr without zarr 3.0's import-time warning
from ..errors import (ChunkUnreadable, LayoutError, RootDamaged, StoreDamaged, StoreLocked, StoreMismatch,
                      StoreUnreachable, UnknownFormat)
from .creation import create_store, creating_line, creation_record, ensure_arrays, remove_store
from .layout import GROWING, interrupted, marked
from .identity import (check_format, check_spec, check_writable, differences, inspect, lock_only_line, read_attrs,
                       rootless_line, store_exists)
from .integrity import MANIFEST_DIR, Damage, assert_intact
from .integrity import check as check_integrity
from .integers import mark
from .storage import answers, local_root, read_deadline
from .kept import keep_summary, read_summary, summary_key
from .layout import JOURNAL, store_chunks
from .lock import LOCK_NAME, MALFORMED_GRACE_S, StoreLock
from .metadata import EXACT_CODES, SEAT_DIM, exact_codes, exact_state_text, playing
from .metadata import recorded_spec, exact_renames, exact_state, exact_states, label_text, simulated_variables
from .reads import unrecorded_only, array_names, coordinate_labels, many_reads, open_raw, read_array, read_done, read_exact_done, read_raw
from .schema import FILL, blank_unplayed, code_revision, provenance, source_revision, template, unplayed
from .writes import clear_done, write_exact, write_region, write_whole
from .zarr_private import quiet as quiet_zarr
from .owner import Store, check_location, normalize_url
from .open import READ_CHUNK_BYTES, being_created, held_still, layout_stamp, unrecorded_line, load_sweep, mask, open_sweep, read_chunks
from .remote import bound_failures, unreachable, use_storage_options

bound_failures()  # every process that touches a store (workers too) gives up on a lost S3 server in seconds

__all__ = [
    # the store as a command sees it, and as xarray reads it
    "Store", "normalize_url", "check_location", "lock_only_line", "being_created", "open_sweep", "load_sweep", "mask", "read_chunks", "READ_CHUNK_BYTES",
    "layout_stamp", "held_still", "unrecorded_line",
    # what is at a URL, its attributes, the format and spec checks
    "inspect", "store_exists", "read_attrs", "check_format", "check_spec", "check_writable", "differences",
    "rootless_line", "creating_line", "creation_record",
    # template, creation, reads and writes
    "FILL", "template", "unplayed", "blank_unplayed", "provenance", "source_revision", "code_revision",
    "create_store", "ensure_arrays", "remove_store",
    "array_names", "coordinate_labels", "many_reads", "open_raw", "read_array", "read_done", "read_exact_done",
    "read_raw", "unrecorded_only", "write_region", "write_exact", "write_whole", "clear_done", "quiet_zarr",
    # self-description, checksums, layout, growth, lock, object storage
    "EXACT_CODES", "SEAT_DIM", "exact_codes", "exact_state_text", "playing", "mark", "local_root",
    "simulated_variables", "recorded_spec", "label_text", "exact_state", "exact_states", "exact_renames", "store_chunks",
    "Damage", "check_integrity", "assert_intact", "MANIFEST_DIR", "JOURNAL", "GROWING", "interrupted", "marked", "StoreLock", "LOCK_NAME", "MALFORMED_GRACE_S",
    "unreachable", "use_storage_options", "answers", "read_deadline",
    # a complete store's summary, kept in it
    "summary_key", "read_summary", "keep_summary",
    # errors (defined in boardsweep.pipeline.errors)
    "StoreMismatch", "UnknownFormat", "RootDamaged", "StoreDamaged", "ChunkUnreadable", "LayoutError",
    "StoreLocked", "StoreUnreachable",
]
