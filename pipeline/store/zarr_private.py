"""Every use boardsweep makes of zarr-python beyond its public API, in one place.

zarr-python does not promise to keep these; ``tests/pipeline/store/test_zarr_private.py``
exercises each one and fails naming it when a zarr release changes it.  The
zarr versions boardsweep supports are pinned in ``pyproject.toml``
(:data:`SUPPORTED`), and the lowest and the highest are tested.

* :func:`sync`: ``zarr.core.sync.sync``, which runs a coroutine on zarr's own
  event loop; a worker writes one task's arrays concurrently through zarr's
  async arrays with it (a remote store), as zarr's synchronous API does inside;
* :func:`settle`: ``zarr.core.sync.loop``, zarr's event loop, waited on until
  the writes still in flight there end (zarr gathers a call's writes without
  cancelling the others when one fails);
* :func:`chunk_key`: ``array.metadata.encode_chunk_key``, the key of a chunk
  under its array (``c/0/1/2``), which the checksum records name;
* :func:`chunk_shape` and :func:`with_chunk_shape`: an array's ``zarr.json``
  read and edited by hand (``chunk_grid.configuration.chunk_shape``) where a
  local store is packed and unpacked, and read for the direct chunk-file
  reader (:mod:`.chunkfiles`): the zarr v3 format, which zarr-python writes
  and reads as :data:`ARRAY_LAYOUT` says;
* :class:`quiet`: the warnings zarr gives about what boardsweep does on
  purpose (consolidated metadata, which is not in the v3 spec yet; the lock
  file and the ``.boardsweep/`` folder beside the arrays); matched by the
  warning classes and message texts of every supported zarr release, and
  in force only while a boardsweep call is inside it (the user's
  ``warnings.filters`` are as they were before and after).  zarr
  itself is imported here first, quietly (zarr 3.0 imports a codec that
  numcodecs deprecates).
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
import warnings
from typing import Any, Awaitable, TypeVar

# zarr 3.0 imports numcodecs' crc32c codec, which numcodecs 0.16.4 deprecates with
# a filter of its own ('once'): every command on zarr 3.0 began with that warning.
# It is recorded here and dropped; any other warning of the import is given on.
with warnings.catch_warnings(record=True) as _caught:
    warnings.simplefilter("always")
    import zarr
    import zarr.errors
for _w in _caught:
    if "crc32c usage is deprecated" not in str(_w.message):
        warnings.warn_explicit(_w.message, _w.category, _w.filename, _w.lineno)

__all__ = ["SUPPORTED", "ARRAY_LAYOUT", "sync", "settle", "chunk_key", "chunk_shape", "with_chunk_shape", "quiet"]

#: The zarr-python releases boardsweep supports (``pyproject.toml`` pins the same).
SUPPORTED = ">=3.1.1,<3.2"  # 3.1.0 warned that vlen-utf8 (store format 5's text) is not in the v3 spec

#: What an array of a boardsweep store holds in its ``zarr.json`` (keys read by
#: :mod:`.chunkfiles` and edited by :mod:`.packing`).
ARRAY_LAYOUT = {"zarr_format": 3, "node_type": "array", "chunk_grid": "regular",
                "chunk_key_encoding": "default", "codecs": ["bytes", "zstd"]}

T = TypeVar("T")


def sync(coroutine: Awaitable[T]) -> T:
    """Run ``coroutine`` on zarr's event loop and return its result (zarr.core.sync.sync)."""
    from zarr.core.sync import sync as zarr_sync

    return zarr_sync(coroutine)


def settle(timeout: float = 30.0) -> None:
    """Wait until zarr's event loop has no task left but this wait (at most ``timeout`` s).

    zarr gathers one call's writes (an array's ``zarr.json`` beside its parents',
    a chunk's pieces) with :func:`asyncio.gather`, which does not cancel the others
    when one fails: after a full disk's error surfaces, a write of the same call can
    still land.  What a failed creation removes is removed after this."""
    from zarr.core.sync import loop

    running = loop[0]
    if running is None or running.is_closed() or not running.is_running():
        return

    async def idle() -> None:
        me = asyncio.current_task()
        while others := [task for task in asyncio.all_tasks() if task is not me]:
            await asyncio.wait(others)

    try:
        asyncio.run_coroutine_threadsafe(idle(), running).result(timeout)
    except Exception:  # noqa: BLE001 - a write that never ends: clean up what is there
        pass


def chunk_key(array: Any, coords: tuple[int, ...]) -> str:
    """The key of the chunk at ``coords`` under ``array``'s folder, e.g. ``c/0/1/2``
    (``array.metadata.encode_chunk_key``)."""
    return str(array.metadata.encode_chunk_key(tuple(coords)))


def chunk_shape(meta: dict[str, Any]) -> list[int]:
    """The chunk shape an array's ``zarr.json`` (parsed) records."""
    return list(meta["chunk_grid"]["configuration"]["chunk_shape"])


def with_chunk_shape(meta: dict[str, Any], chunks: tuple[int, ...] | list[int]) -> dict[str, Any]:
    """``meta`` (an array's parsed ``zarr.json``), changed in place to record ``chunks``."""
    meta["chunk_grid"]["configuration"]["chunk_shape"] = [int(c) for c in chunks]
    return meta


#: Message texts of zarr's warnings about consolidated metadata, unknown
#: objects beside the arrays (the lock, ``.boardsweep/``) and v3 groups, in
#: zarr 3.0 and 3.1.
_MESSAGES = ".*(onsolidated|not recognized|does not have a Zarr V3|not part (of|in) the Zarr|Object at).*"


class quiet:
    """Silence zarr's warnings about consolidated metadata and the files
    beside the arrays, while boardsweep's own calls run.

    zarr 3.1 raises them as ``ZarrUserWarning``, 3.0 as plain ``UserWarning``
    or ``RuntimeWarning`` with other texts; every warning a ``zarr`` module
    raises is silenced, and those others by message text.

    The filters go to the front of ``warnings.filters`` when the first
    caller enters and are taken out (those entries only, by identity) when
    the last one leaves: the user's process keeps its own filters, as they
    were, outside boardsweep's calls.  A count rather than
    ``warnings.catch_warnings`` (which is not thread-safe: with the warm-up
    thread, worker threads and the client all reading the store, one
    thread leaving its context restored the filters under another that was
    still inside).

    A process that is boardsweep's own (the command line, and the workers it
    starts, which inherit :data:`KEEP_ENV` = ``1``) keeps them for good: there
    a thread leaving ``catch_warnings`` (numba's compiler, numpy's reductions)
    while another is inside could restore a list without them, and a zarr
    warning then reached the terminal now and then.
    """

    _lock = threading.Lock()
    _inside = 0  # callers inside, over all threads

    def __enter__(self) -> None:
        with quiet._lock:
            quiet._inside += 1
            ours = _filters()
            if warnings.filters[:len(ours)] != ours:  # first caller in, or filters reset or added before ours
                _set_filters([*ours, *_without(ours)])

    def __exit__(self, *exc: Any) -> None:
        with quiet._lock:
            quiet._inside -= 1
            if quiet._inside == 0 and os.environ.get(KEEP_ENV) != "1":
                _set_filters(_without(_filters()))


#: Environment variable that makes :class:`quiet`'s filters stay once
#: installed (set by the command line for itself and its worker processes).
KEEP_ENV = "BOARDSWEEP_QUIET_ZARR"

_OURS: list[tuple] = []


def _filters() -> list[tuple]:
    """The filter entries :class:`quiet` installs (made once; the same objects every time)."""
    if not _OURS:
        category = _zarr_warning()
        if category is not None:
            _OURS.append(("ignore", None, category, None, 0))
        _OURS.append(("ignore", None, Warning, re.compile(r"zarr(\.|$)"), 0))
        _OURS.append(("ignore", re.compile(_MESSAGES, re.I), Warning, None, 0))
    return _OURS


def _without(ours: list[tuple]) -> list[tuple]:
    """``warnings.filters`` less the entries in ``ours`` (by identity: an equal filter of the user's stays)."""
    return [f for f in warnings.filters if not any(f is o for o in ours)]


def _set_filters(items: list[tuple]) -> None:
    """``warnings.filters`` (the list in place) set to ``items``, and the warning caches told."""
    warnings.filters[:] = items
    mutated = getattr(warnings, "_filters_mutated", None)  # CPython: resets the 'once'/'default' registries
    if mutated is not None:
        mutated()


def _zarr_warning() -> type[Warning] | None:
    """zarr's own warning class (3.1: ``zarr.errors.ZarrUserWarning``), if it has one."""
    found = getattr(zarr.errors, "ZarrUserWarning", None)
    return found if isinstance(found, type) and issubclass(found, Warning) else None
