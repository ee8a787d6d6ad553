"""One run per store: a lock file in the store's own folder.

The lock file ``<store>/.boardsweep/lock`` (:data:`LOCK_NAME`) holds JSON
with the holder's pid, host and start time.  It lives in ``.boardsweep/``,
boardsweep's own folder, which a store's zarr group lists as a group of its
own (:data:`.creation.OWN_FOLDER_META`): zarr and xarray, listing the
group's members, never meet a file they do not recognise, while a run holds
the store or after one was killed.  Not beside the store (``<store>.lock``):
a store at an object-storage bucket's root has no such place, a store made
inside a folder its user could not write would be refused, a store that is
itself a member of a user's zarr hierarchy would put the lock in the user's
group, and moving or removing the store folder would leave its lock behind.
(A listing of every depth without consolidated metadata lists
``.boardsweep/``'s own files too, its task records as well as the lock:
zarr lists every key of a group's folder.)

Before this release the lock was ``<store>/.boardsweep.lock``
(:data:`LEGACY_LOCK_NAME`, in the group's folder itself, where zarr warns
about it).  Such a lock is still honoured: once a run holds its own lock, a
live holder of the old one is named and the run refused; one left by a run
that is gone is removed (exactly, as a stale lock is taken over).  A run of
an earlier release started after this one's lock is not kept out.

It is created atomically (``O_EXCL``) for local stores.
A lock left by a dead process on this host is stale and is taken over; a lock
held by a live process, or by another host, is refused with a message naming
the holder.  A local takeover is exact too: under an exclusive ``flock`` of
the lock file, the record is read again and, if still stale, rewritten in
place, so of several runs taking over one stale lock exactly one wins (on a
file system without ``flock``, the stale file is removed and created again).  On object storage the lock object is created with a conditional
put (``If-None-Match: *``, :func:`.remote.create_exclusive`), so of two runs
racing for it exactly one wins; a stale one is taken over by replacing it
only if it is still the object that was read (``If-Match`` its ETag,
:func:`.remote.replace_if_unchanged`), so of several runs taking over one
stale lock exactly one wins too, and a run releases its lock only if it is
still its own.  Storage that ignores either condition is refused in one line.
"""

from __future__ import annotations

import datetime as _dt
import json
import time
import os
import socket
import uuid
from typing import Any, Callable

import fsspec

from ..errors import Fault, StoreLocked, StoreUnreachable

try:
    import fcntl
except ImportError:  # not on this platform: local takeover by remove and create
    fcntl = None
from ..errors import NoExclusiveCreate
from .storage import local_root, open_storage
from .remote import (read_tagged, remove_if_unchanged,
                     replace_if_unchanged, storage_errors, unreachable)

__all__ = ["StoreLock", "LOCK_NAME", "LEGACY_LOCK_NAME", "OWN_FOLDER", "pid_alive", "run_holds"]

#: boardsweep's own folder in a store: a zarr group (:data:`.creation.OWN_FOLDER_META`).
OWN_FOLDER = ".boardsweep"

#: The lock file, relative to the store's folder.
LOCK_NAME = f"{OWN_FOLDER}/lock"

#: Where releases before this one kept the lock (beside the group's ``zarr.json``, where zarr warns about it).
LEGACY_LOCK_NAME = ".boardsweep.lock"

#: A lock file that is not a lock record is taken over once it is this old
#: (younger, it may be one another run is writing right now).
MALFORMED_GRACE_S = 10.0




def _parse(raw: bytes) -> dict:
    """A lock record from the lock file's bytes (``{}`` where it is not one:
    empty, not JSON, not an object with an integer pid and a host)."""
    try:
        record = json.loads(raw.decode("utf-8") or "{}")
    except (ValueError, UnicodeDecodeError):
        return {}
    valid = (isinstance(record, dict) and isinstance(record.get("pid"), int)
             and not isinstance(record.get("pid"), bool) and isinstance(record.get("host"), str))
    return record if valid else {}


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class StoreLock:
    """Context manager holding the lock of the store at ``url``."""

    def __init__(self, url: str) -> None:
        self.fs, root = fsspec.core.url_to_fs(url)
        self.files = open_storage(url)
        self.url = url
        self.path = f"{root.rstrip('/')}/{LOCK_NAME}"
        self.legacy = f"{root.rstrip('/')}/{LEGACY_LOCK_NAME}"  # an earlier release's lock (module docstring)
        self.found = self.path  # the lock file read last: what a refusal names
        self.local = local_root(url) is not None  # an exact takeover: flock (a folder) or If-Match (objects)
        self.me = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "token": uuid.uuid4().hex,  # this run's own record, whatever the pid
        }
        self.etag: str | None = None  # on object storage: the ETag of our lock object

    def __enter__(self) -> "StoreLock":
        try:
            self.fs.makedirs(self.path.rsplit("/", 1)[0], exist_ok=True)
            self._take()
            try:
                self._retire_legacy()
            except BaseException:
                self.__exit__(None, None, None)  # ours released: the earlier release's run keeps the store
                raise
            return self
        except NoExclusiveCreate as exc:
            raise StoreLocked(f"store {self.url}: cannot be locked exactly: {exc}; use storage that does, "
                              "or a folder") from None
        except OSError as exc:
            raise StoreLocked(
                f"store {self.url}: cannot write there ({exc.strerror or exc}); choose a writable "
                "--store (status, query and report only read a store)"
            ) from None

    def _take(self) -> "StoreLock":
        for _ in range(5):
            if self._try_create():
                return self
            holder, etag = self._read(self.path)
            if holder is None:
                continue  # released meanwhile: create it again
            if not self.is_stale(holder):
                raise self._in_use(holder)
            if self._take_over(holder, etag):
                return self
            # another run took the stale lock first: read it again (now its live holder's)
        raise StoreLocked(f"store {self.url}: could not take the lock file {self.path}")

    def _retire_legacy(self) -> None:
        """With this run's lock held: refuse (one line, its holder named) where
        a live run holds an earlier release's lock (:data:`LEGACY_LOCK_NAME`);
        remove it where that run is gone, only if it is still the stale lock
        that was read (as :meth:`_take_over` decides)."""
        for _ in range(5):
            holder, etag = self._read(self.legacy)
            if holder is None:
                return
            if not self.is_stale(holder):
                raise self._in_use(holder)
            if self.local:
                if self._decide_stale(self.legacy, self._remove_legacy):
                    return
            elif etag is None:
                raise self._not_exact(holder)
            elif remove_if_unchanged(self.fs, self.legacy, etag):
                return
        raise StoreLocked(f"store {self.url}: could not remove the stale lock file {self.legacy}")

    def _in_use(self, holder: dict) -> StoreLocked:
        """The one line for a lock ``holder`` that is alive (the lock file read last named)."""
        return StoreLocked(f"store {self.url} is in use by pid {holder.get('pid')} on host "
                           f"{holder.get('host')} since {holder.get('since')} (lock file {self.found})")

    def _not_exact(self, holder: dict) -> StoreLocked:
        """The one line for a stale lock that this storage cannot replace exactly."""
        return StoreLocked(f"store {self.url}: the lock file {self.found} was left by a run that is gone "
                           f"(pid {holder.get('pid')} on host {holder.get('host')}) and this storage cannot "
                           "replace it exactly (no conditional replace, If-Match); remove it by hand once no "
                           "run uses the store")

    def refuse_if_held(self) -> None:
        """Raise :class:`StoreLocked` (the line :meth:`__enter__` gives) where
        another run holds the lock now; writes nothing.  For a refusal decided
        without the lock: what was read may be that run's change under way."""
        try:
            holder = self.holder()
        except OSError:
            return
        if holder is not None and not self.is_stale(holder):
            raise self._in_use(holder)

    def _read(self, path: str) -> tuple[dict | None, str | None]:
        """The record of the lock file ``path`` (as :meth:`holder`) and, on
        object storage, the lock object's ETag, read together."""
        self.found = path
        if self.local or not hasattr(self.fs, "_call_s3"):
            return self._record(path), None
        found = read_tagged(self.fs, path)
        if found is None:
            return None, None
        return _parse(found[0]), found[1]

    def _take_over(self, holder: dict, etag: str | None) -> bool:
        """Replace the stale lock that was read by ours; False if another run replaced or removed it first."""
        if self.local:
            return self._decide_stale(self.path, self._rewrite)
        if etag is None:
            raise self._not_exact(holder)
        if not replace_if_unchanged(self.fs, self.path, self._text().encode(), etag):
            return False
        self.etag = self._own_etag()
        return True

    def _decide_stale(self, path: str, act: Callable[[int | None], bool]) -> bool:
        """``act(fd)`` on the local lock file ``path`` where it is still stale,
        deciding again under an exclusive ``flock`` of it (``fd`` its open
        descriptor; None where there is no flock: ``act`` then goes ahead
        undecided); False where it is no longer stale or no longer there (the
        caller reads it again)."""
        try:
            fd = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            return False
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)  # held only while deciding: other takers wait, then decide again
            except (AttributeError, OSError):  # no flock here
                return act(None)
            same = os.fstat(fd)
            try:
                now = os.stat(path)
            except FileNotFoundError:
                return False
            if (same.st_ino, same.st_dev) != (now.st_ino, now.st_dev):
                return False  # replaced meanwhile
            self.found = path
            if not self.is_stale(_parse(os.pread(fd, 1 << 16, 0))):
                return False
            return act(fd)
        finally:
            os.close(fd)  # releases the flock

    def _rewrite(self, fd: int | None) -> bool:
        """Our record in the stale lock file, in place (``fd``), or removed and created again (no flock)."""
        if fd is None:
            self._remove(self.path)
            return self._try_create()
        text = self._text().encode()
        os.pwrite(fd, text, 0)
        os.ftruncate(fd, len(text))
        return True

    def _remove_legacy(self, fd: int | None) -> bool:
        """Remove the stale lock file of an earlier release (decided under its flock, ``fd``)."""
        self._remove(self.legacy)
        return True

    def __exit__(self, *exc: Any) -> None:
        try:
            if not self.local and self.etag is not None:
                if isinstance(exc[1], StoreUnreachable) or (exc[0] and unreachable(exc[1])):  # storage gone: a rerun
                    return  # here takes the stale lock over; another request would wait its deadline again
                remove_if_unchanged(self.fs, self.path, self.etag)  # never a lock another run took over
                return
            holder = self._record(self.path)
            if holder is not None and holder.get("pid") == self.me["pid"] and holder.get("host") == self.me["host"]:
                self._remove(self.path)
                if self.local:  # boardsweep's folder, where the lock alone made it: the store folder as it was
                    try:
                        os.rmdir(self.path.rsplit("/", 1)[0])
                    except OSError:  # it holds the store's records (or a run's new lock): kept
                        pass
        except storage_errors() as error:  # the storage is gone: say so once, unless a failure is on its way
            if exc[0] is None:
                raise Fault(f"store {self.url}: the lock file {self.path} could not be removed "
                            f"({error.strerror or error}); remove it once the storage is back") from None

    def holder(self) -> dict | None:
        """The current holder's record (``{}`` where the file is not one:
        empty, not JSON, not an object with an integer pid and a host), or
        None when there is no lock file: this release's lock, else an earlier
        release's (:data:`LEGACY_LOCK_NAME`); :attr:`found` names the file read."""
        record = self._record(self.path)
        if record is None:
            record = self._record(self.legacy)
        if record is None:
            self.found = self.path
        return record

    def _record(self, path: str) -> dict | None:
        """The record of the lock file ``path`` (as :meth:`holder`); :attr:`found` is ``path``."""
        self.found = path
        try:  # one read of the whole file: a lock replaced between an open and its read never says FileExpired
            return _parse(self.fs.cat_file(path))
        except FileNotFoundError:
            return None

    def is_stale(self, holder: dict) -> bool:
        """Whether ``holder`` (read from the lock file :attr:`found`) is a run that is gone."""
        if not holder:  # not a lock record: one being written now, or left by a process killed while writing it
            if self._age() < MALFORMED_GRACE_S:
                raise StoreLocked(f"store {self.url}: the lock file {self.found} is not a boardsweep lock record "
                                  "(being written by another run?); retry in a few seconds")
            return True
        return holder.get("host") == self.me["host"] and not pid_alive(holder["pid"])

    def _age(self) -> float:
        """Seconds since the lock file :attr:`found` was last modified (0 where unknown)."""
        try:
            modified = self.fs.modified(self.found)
        except (OSError, NotImplementedError, ValueError):
            return 0.0
        return time.time() - modified.timestamp()

    def _text(self) -> str:
        return json.dumps(self.me)

    def _own_etag(self) -> str | None:
        """The ETag of the lock object, if it holds our record (just written)."""
        if not hasattr(self.fs, "_call_s3"):
            return None
        found = read_tagged(self.fs, self.path)
        return found[1] if found is not None and _parse(found[0]).get("token") == self.me["token"] else None

    def _try_create(self) -> bool:
        """Create the lock file whole with our record, only where none is there
        (:meth:`.storage.Storage.write_if_absent`: a folder's hard link or
        ``O_EXCL``, object storage's conditional put); False where it is there."""
        if not self.files.write_if_absent(LOCK_NAME, self._text().encode()):
            return False
        self.etag = self._own_etag()
        return True

    def _remove(self, path: str) -> None:
        try:
            self.fs.rm(path)
        except FileNotFoundError:
            pass


def run_holds(url: str) -> bool:
    """Whether a live run holds the lock of the store at ``url`` (or is writing its
    lock record, starting), by the one rule of :meth:`StoreLock.is_stale`: a
    record of this host's dead process, or a malformed record older than
    :data:`MALFORMED_GRACE_S`, holds nothing; a run on another host is taken as alive."""
    lock = StoreLock(url)
    holder = lock.holder()
    try:
        return holder is not None and not lock.is_stale(holder)
    except StoreLocked:  # a lock record being written: a run is starting
        return True
