"""One sweep store and everything a command does to it: :class:`Store`.

A command opens a store once (``Store(url)``) and keeps what it found:
what is there (:attr:`Store.kind`), its attributes (:attr:`Store.attrs`) and
its layout (:attr:`Store.layout`) are read on first use and kept until the
command itself changes them.  The methods are the store's life:

* open and create: :meth:`Store.refuse_foreign`, :meth:`Store.create`;
  a lost storage in one line: :meth:`Store.lost`,
  :meth:`Store.losing_storage_ends_the_run`;
* prepare for a run (lock held): :meth:`Store.prepare` (check the spec,
  recover a layout change, unpack a damaged packed copy, complete the
  arrays), :meth:`Store.clear_damaged`, :meth:`Store.apply_growth`;
* write: :meth:`Store.write_whole`;
* read: :meth:`Store.read_array`, :meth:`Store.read_done`,
  :meth:`Store.read_exact_done`, :meth:`Store.open_raw`;
* status and publishing: :meth:`Store.check` (a damaged store refused:
  :func:`.integrity.assert_intact` of what it found), :meth:`Store.describe`, :meth:`Store.pack`,
  :meth:`Store.unpack`; history: :meth:`Store.append_history`.

The functions of the modules beside this one do the work (they take a URL and
are what the workers call); this class is where a command's calls to them
are made, each once.
"""

from __future__ import annotations

import errno
import os
from contextlib import contextmanager, nullcontext
from typing import Any, Iterator, Mapping

import fsspec
import numpy as np
import xarray as xr

from . import creation, growth, identity, integrity, lost_records, metadata, packing, reads, writes
from .. import errors
from .schema import template
from .lock import StoreLock
from .remote import unreachable
from .storage import local_root
from .zarr_private import settle
from ..errors import (ChunkUnreadable, SchedulerLost, StoreCreationFailed, StoreLocked, StoreMismatch,
                      StoreUnreachable, TaskOverdue, one_line)
from ..spec import Spec
from ..plan import TaskLayout, given

__all__ = ["Store", "normalize_url", "check_location"]

#: What ``--overwrite`` may replace, and what boardsweep never touches.
_REFUSED = {
    "file": "is a regular file; a store is a folder",
    "zarr-group": "is a zarr group boardsweep did not make",
    "zarr-array": "is a zarr array boardsweep did not make",
    "folder": "is a folder of other files, not a boardsweep store",
    "unreadable": "holds a zarr.json that cannot be read",
}

#: Protocols whose stores a run cannot use: every worker process would see its own, empty one.
_PROCESS_LOCAL = {"memory": "keeps the store in one process's memory, which the worker processes do not share"}


def normalize_url(url: str) -> str:
    """Absolute path for a local store (workers may run elsewhere), URLs unchanged."""
    if "::" in url:
        raise StoreMismatch(
            f"--store {url}: '::' chains fsspec URLs and cannot be part of a store path; "
            "choose a name without '::'"
        )
    root = local_root(url)
    if root is None:
        _check_protocol(url)
        return url
    return str(root.expanduser().resolve())


def _check_protocol(url: str) -> None:
    """Refuse (one line) a store URL whose protocol fsspec does not know, whose
    package is not installed, or that workers cannot share."""
    protocol = url.split("://", 1)[0]
    if protocol in _PROCESS_LOCAL:
        raise StoreMismatch(f"--store {url}: {protocol}:// {_PROCESS_LOCAL[protocol]}; "
                            "choose a folder or shared object storage")
    try:
        fsspec.get_filesystem_class(protocol)
    except ImportError as exc:
        raise StoreMismatch(f"--store {url}: the {protocol}:// protocol needs a package that is not "
                            f"installed ({one_line(exc)})") from None
    except ValueError:
        raise StoreMismatch(f"--store {url}: unknown protocol {protocol!r}; give a folder or an fsspec URL "
                            "such as s3://bucket/path") from None


def check_location(url: str) -> None:
    """Refuse, in the line the run's lock gives (:class:`.lock.StoreLock`), a
    local store location the run could not write: under a regular file, in a
    folder it may not write, on a read-only file system.  Reads only (``run
    --dry-run``); a URL's storage is not probed (that would write)."""
    path = local_root(normalize_url(url))
    if path is None:
        return
    url, found = str(path), path
    while not found.exists() and found != found.parent:  # the nearest folder the run would create from
        found = found.parent
    if found.is_dir():
        if os.access(found, os.W_OK | os.X_OK):
            return
        code = errno.EROFS if os.statvfs(found).f_flag & os.ST_RDONLY else errno.EACCES
    elif found == path:
        return  # a regular file where the store would be: the run refuses it as what it is (:meth:`Store.kind`)
    else:
        code = errno.ENOTDIR
    raise StoreLocked(f"store {url}: cannot write there ({os.strerror(code)}); choose a writable --store "
                      "(status, query and report only read a store)")


class Store:
    """The sweep store at ``url`` (a folder or an fsspec URL), as one command sees it."""

    def __init__(self, url: str) -> None:
        self.url = str(url)
        self._kind: str | None = None
        self._attrs: dict[str, Any] | None = None
        self._layout: str | None = None
        self._damage: integrity.Damage | None = None
        self._raw: xr.Dataset | None = None
        self._created = False  # made by this command, nothing written into it since
        self._rebuilt = ""  # the root metadata this command rebuilt (:meth:`rebuild_root`), in words

    def __repr__(self) -> str:
        return f"Store({self.url!r})"

    # -- what is there, read once ------------------------------------------

    @property
    def kind(self) -> str:
        """What is at the URL (:func:`.identity.inspect`): ``absent``, ``boardsweep``, ..."""
        if self._kind is None:
            try:
                self._kind = identity.inspect(self.url)
            except Exception as exc:
                if unreachable(exc):  # the first look at a store: a storage that does not answer is one line
                    raise StoreUnreachable.at_open(self.url, exc) from exc
                raise
        return self._kind

    @property
    def attrs(self) -> dict[str, Any]:
        """The store's attributes, its format checked (:func:`.identity.read_attrs`)."""
        if self._attrs is None:
            self._attrs = identity.read_attrs(self.url)
        return self._attrs

    @property
    def layout(self) -> str:
        """``tasks`` or ``packed`` (or a change under way, :func:`.layout.layout`)."""
        if self._layout is None:
            self._layout = packing.layout(self.url)
        return self._layout

    def changed(self) -> None:
        """Forget what was read: the command changed the store's metadata or layout."""
        self._kind = self._attrs = self._layout = self._damage = self._raw = None
        self._created = False

    # -- open, create, prepare ------------------------------------------------

    def refuse_foreign(self, overwrite: bool = False) -> str:
        """:attr:`kind`, refusing (one line) anything boardsweep may not write."""
        kind = self.kind
        if kind == "leftover" and not overwrite:
            raise StoreMismatch(
                f"--store {self.url} holds only what is left of a boardsweep store whose removal was cut short "
                "(its .boardsweep/ folder, no arrays); rerun with --overwrite to replace it (other files stay)")
        if kind in _REFUSED:
            raise StoreMismatch(
                f"--store {self.url} {_REFUSED[kind]}; boardsweep writes only into a new or empty folder or "
                "a store it made (--overwrite replaces only a boardsweep store), so nothing was touched"
            )
        return kind

    def rebuild_root(self, spec: Spec, held: bool = False) -> str:
        """Rebuild the lost root metadata of a ``rootless`` store from ``spec``
        (:func:`.creation.rebuild_root`, lock held: one line, nothing touched,
        where ``spec`` does not describe its arrays); returns :attr:`kind`,
        now ``boardsweep``.  ``held``: the caller holds the lock already."""
        with nullcontext() if held else self.lock():
            if identity.inspect(self.url) == "rootless":
                self._rebuilt = creation.rebuild_root(self.url, spec)
        self.changed()
        return self.kind

    def check_spec(self, spec: Spec) -> None:
        """Refuse a store made by another spec (:func:`.identity.check_spec`)."""
        identity.check_spec(self.url, spec, self.attrs)

    def check_writable(self) -> None:
        """Refuse a store in an older format (:func:`.identity.check_writable`)."""
        identity.check_writable(self.url, self.attrs)

    def prepare(self, spec: Spec, overwrite: bool, layout: TaskLayout | None = None) -> list[str]:
        """Create the store (chunked as ``layout``: the run's, decided once;
        the spec's own where None), or check that it belongs to ``spec``, put
        its layout right and complete its arrays (lock already held).  Returns
        what was repaired on the way, in words.

        Only a boardsweep store is ever written into or replaced; anything
        else is refused, with ``--overwrite`` too.
        """
        kind = self.refuse_foreign(overwrite)
        if kind == "creating":  # a creation interrupted (we hold the lock): nothing computed, made afresh
            creation.clear_interrupted(self.url)
            self.changed()
        if kind == "leftover":  # what a removal cut short left: boardsweep's own folder, no arrays
            self.create(spec, replacing=[], layout=layout)
            return []
        if kind == "rootless":  # its root metadata lost: replaced with --overwrite (else rebuilt before)
            self.create(spec, replacing=[str(n) for n in template(spec, spec.game)[0].variables], layout=layout)
            return []
        if kind == "boardsweep":
            if not overwrite:
                self.check_spec(spec)
                repaired = [r for r in [self._rebuilt, self.recover(), self._unpack_if_damaged()] if r]
                self._rebuilt = ""
                relabelled = identity.check_labels(self.url, self.attrs, self._coordinates())
                recreated = creation.ensure_arrays(self.url, spec, layout)
                if recreated:
                    self.changed()
                repaired += [f"coordinate {name!r} {why}: rewritten from the spec" for name, why in relabelled.items()
                             if name in recreated]
                recreated = [name for name in recreated if name not in relabelled]
                return repaired + [f"array metadata recreated: {', '.join(recreated)}"] * bool(recreated)
            self.create(spec, replacing=self._own_arrays(), layout=layout)
            return []
        self.create(spec, layout=layout)
        return []

    def _own_arrays(self) -> list[str]:
        """The arrays of this boardsweep store (its ``arrays`` attribute; all
        its arrays where it predates that record): what ``--overwrite`` removes."""
        named = identity.read_attrs(self.url, check=False).get("arrays")
        if isinstance(named, list) and named:
            return [str(n) for n in named]
        return creation.legacy_arrays(self.url)

    def create(self, spec: Spec, replacing: list[str] | None = None, layout: TaskLayout | None = None) -> None:
        """Create the store (removing ``replacing``, the arrays of the store it
        replaces, :func:`.creation.create_store`); if that fails (disk full,
        out of memory), remove what was made and say so."""
        try:
            creation.create_store(self.url, spec, replacing, layout)
        except OSError as exc:
            settle()  # the failed call's other writes end first, then what was written is removed
            try:
                if creation.creation_record(self.url) is not None:  # else nothing was written
                    creation.clear_interrupted(self.url)
            except Exception:  # noqa: BLE001 - nothing more to clean than what exists
                pass
            remedy = ("more memory or a higher `ulimit -v` (out of memory)" if exc.errno == errno.ENOMEM
                      else "free space")
            raise StoreCreationFailed(
                f"could not create the store {self.url}: {one_line(exc)}; what was written is removed: "
                f"{remedy}, then rerun the same command"
            ) from None
        finally:
            self.changed()
        self._created = True

    def remove_if_empty(self) -> None:
        """Remove the folder this command created when nothing was stored in it."""
        path = local_root(self.url)
        if path is not None and path.is_dir() and not any(path.iterdir()):
            path.rmdir()

    def lock(self) -> StoreLock:
        """The store's lock (a context manager): one run per store."""
        return StoreLock(self.url)

    # -- lost storage ---------------------------------------------------------

    def lost(self, exc: BaseException) -> StoreUnreachable | None:
        """The one-line error to end a run with where ``exc`` (raised here or
        by a task) says the store's storage cannot be reached, else ``None``
        (a lost scheduler, or a task past its deadline, is not a lost store)."""
        if isinstance(exc, (SchedulerLost, StoreUnreachable, TaskOverdue)) or not unreachable(exc):
            return None
        return StoreUnreachable.during_run(self.url, exc)

    @contextmanager
    def losing_storage_ends_the_run(self) -> Iterator[None]:
        """Raise :meth:`lost`'s one line in place of an error that says the
        storage cannot be reached (finished tasks are kept: rerun)."""
        try:
            yield
        except Exception as exc:
            lost = self.lost(exc)
            if lost is not None:
                raise lost from exc
            raise

    def recover(self) -> str:
        """Finish a layout change a killed process left half done (:func:`.packing.recover`)."""
        done = packing.recover(self.url)
        if done:
            self.changed()
        return done

    def _unpack_if_damaged(self) -> str:
        """Unpack a packed store whose packed copy is damaged: the task-chunked
        arrays move back, and the run checks and repairs them as usual."""
        if self.layout != "packed":
            return ""
        damage = self.check()
        if not damage:
            return ""
        self.unpack()
        reason = next(iter(damage.reasons.values()), "")
        return f"packed copy damaged ({reason}): unpacked, packed again once complete"

    def check(self) -> integrity.Damage:
        """Every finished cell verified against its checksum record
        (:func:`.integrity.check`); checked once until the command changes the store."""
        if self._damage is None:
            self._damage = integrity.check(self.url, self.attrs, self.layout, self._coordinates())
        return self._damage

    def _coordinates(self) -> dict[str, np.ndarray] | None:
        """The store's 1-D coordinates as :meth:`open_raw` read them (no
        second read of the store), ``None`` where it cannot be opened so."""
        try:
            raw = self.open_raw()
        except Exception:  # noqa: BLE001 - the check reads them itself and names what is wrong
            return None
        return {str(name): np.asarray(raw[name].values) for name in raw.coords if raw[name].ndim == 1}

    def describe(self, damage: integrity.Damage, limit: int = 4) -> str:
        """``damage`` in words, the cells named by the store's grid values (:func:`.integrity.describe`)."""
        return integrity.describe(self.url, damage, limit, self.attrs)

    def clear_damaged(self, spec: Spec, layout: TaskLayout | None = None) -> tuple[list[str], np.ndarray, np.ndarray]:
        """Find finished cells whose data is missing or damaged and clear their done
        flags, so that they are planned again.

        Returns what was found, in words, and the done and exact_done masks
        without the damaged cells (the masks the check read, so that a run on a
        complete store reads each mask once).
        """
        if self._created:  # made by this command: nothing is finished, nothing to check (10^5 points: 2 s)
            return [], np.zeros((*spec.shape, spec.slots), dtype=bool), np.zeros(spec.shape, dtype=bool)
        damage = self.check()
        if damage.labels:  # prepare rewrote them from the spec: still wrong, the cells cannot be named
            raise errors.StoreDamaged(f"store {self.url} is damaged: {self.describe(damage)}, and rewriting "
                                         "them from the spec did not put them right; replace the store with "
                                         "--overwrite")
        if damage.done is None:  # a store without checksums: its flags are all there is
            return [], self.read_done(), self.read_exact_done()
        block = (layout or given(spec)).block  # the store's replicates per task (the run's layout)
        kept = lost_records.keep_unrecorded(self.url, damage, block)  # records lost, chunks intact
        told = [f"{kept} finished tasks had lost their checksum records; their chunks are intact: kept, "
                "records written again"] if kept else []
        done, exact_done = damage.intact(block)
        if not damage:
            return told, done, exact_done
        described = damage.describe(list(spec.axes), {a: list(v) for a, v in spec.grid.items()}, block,
                                    limit=10**9).split("; ")
        writes.clear_done(self.url, damage.sim, damage.exact, block, damage.chunks)
        self._damage = None
        return told + described, done, exact_done

    def apply_growth(self, spec: Spec, described: str, source: str) -> None:
        """Grow the store in place to ``spec`` (lock held): finish any layout
        change, unpack (new cells are written in the task layout), then the
        crash-safe steps of :mod:`.growth`."""
        self.recover()
        self.unpack()
        growth.mark(self.url, spec, described, source)
        growth.resize(self.url, spec)
        growth.finish(self.url, spec, described, source)
        self.changed()

    # -- write --------------------------------------------------------------

    def write_whole(self, values: Mapping[str, np.ndarray]) -> None:
        """Small per-point arrays rewritten whole (the precision rule's decisions)."""
        writes.write_whole(self.url, values)

    def append_history(self, what: str) -> None:
        """One line added to the store's ``history`` attribute."""
        metadata.append_history(self.url, what)
        self._attrs = None

    # -- read ---------------------------------------------------------------

    def read_array(self, name: str, region: tuple[slice, ...] = (), unreadable_as_fill: bool = False) -> np.ndarray:
        """Array ``name`` as written (:func:`.reads.read_array`)."""
        return reads.read_array(self.url, name, region, unreadable_as_fill)

    def read_done(self) -> np.ndarray:
        """The ``done`` mask (grid shape + replicates)."""
        return reads.read_done(self.url)

    def read_exact_done(self) -> np.ndarray:
        """The ``exact_done`` mask (grid shape)."""
        return reads.read_exact_done(self.url)

    def open_raw(self) -> xr.Dataset:
        """The store as xarray reads it, lazily, without dask, values as stored
        (:func:`.reads.open_raw`): opened once per command, a shallow copy each
        call (the caller may replace its variables)."""
        if self._raw is None:
            self._raw = reads.open_raw(self.url)
        return self._raw.copy(deep=False)

    # -- publish ------------------------------------------------------------

    def unpack(self) -> bool:
        """Back to the task layout where packed (:func:`.packing.unpack`)."""
        if self.layout == packing.TASKS:
            return False
        done = packing.unpack(self.url)
        self.changed()
        return done

    def pack(self, done: np.ndarray | None = None) -> str:
        """Pack the complete store (the run checked the old cells and wrote the
        new ones); a store that cannot be packed (too little disk) stays
        complete in the task layout, and the reason is returned.  ``done``:
        the ``done`` mask the run read after its last write (object storage
        then does not read it again, :func:`.packing.pack`)."""
        try:
            packing.pack(self.url, verify=False, done=done)
        except (OSError, ChunkUnreadable) as exc:
            return f"not packed ({one_line(exc)}); the store is complete in the task layout"
        finally:
            self.changed()
        return ""
