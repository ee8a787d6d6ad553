"""One run per store: a lock file inside the store directory.

The lock file ``<store>/.boardsweep.lock`` holds JSON with the holder's pid,
host and start time.  It is created atomically (``O_EXCL``) for local stores.
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
from typing import Any

import fsspec

from ..errors import Fault, StoreLocked, StoreUnreachable

try:
    import fcntl
except ImportError:  # not on this platform: local takeover by remove and create
    fcntl = None
from ..errors import NoExclusiveCreate
from .remote import (create_exclusive, is_local, read_tagged, remove_if_unchanged,
                     replace_if_unchanged, storage_errors, unreachable)

__all__ = ["StoreLock", "LOCK_NAME"]

LOCK_NAME = ".boardsweep.lock"

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
        self.url = url
        self.path = f"{root.rstrip('/')}/{LOCK_NAME}"
        self.local = is_local(self.fs)
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
            return self._take()
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
            holder, etag = self._read()
            if holder is None:
                continue  # released meanwhile: create it again
            if not self.is_stale(holder):
                raise self._in_use(holder)
            if self._take_over(holder, etag):
                return self
            # another run took the stale lock first: read it again (now its live holder's)
        raise StoreLocked(f"store {self.url}: could not take the lock file {self.path}")

    def _in_use(self, holder: dict) -> StoreLocked:
        """The one line for a lock ``holder`` that is alive."""
        return StoreLocked(f"store {self.url} is in use by pid {holder.get('pid')} on host "
                           f"{holder.get('host')} since {holder.get('since')} (lock file {self.path})")

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

    def _read(self) -> tuple[dict | None, str | None]:
        """The holder's record (as :meth:`holder`) and, on object storage, the
        lock object's ETag, read together."""
        if self.local or not hasattr(self.fs, "_call_s3"):
            return self.holder(), None
        found = read_tagged(self.fs, self.path)
        if found is None:
            return None, None
        return _parse(found[0]), found[1]

    def _take_over(self, holder: dict, etag: str | None) -> bool:
        """Replace the stale lock that was read by ours; False if another run replaced or removed it first."""
        if self.local:
            return self._take_over_local()
        if etag is None:
            raise StoreLocked(f"store {self.url}: the lock file {self.path} was left by a run that is gone "
                              f"(pid {holder.get('pid')} on host {holder.get('host')}) and this storage cannot "
                              "replace it exactly (no conditional replace, If-Match); remove it by hand once no "
                              "run uses the store")
        if not replace_if_unchanged(self.fs, self.path, self._text().encode(), etag):
            return False
        self.etag = self._own_etag()
        return True

    def _take_over_local(self) -> bool:
        """Rewrite the stale lock file in place with our record, deciding again
        under an exclusive ``flock`` of it; False where it is no longer stale
        or no longer there (the caller reads it again)."""
        try:
            fd = os.open(self.path, os.O_RDWR)
        except FileNotFoundError:
            return False
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)  # held only while deciding: other takers wait, then decide again
            except (AttributeError, OSError):  # no flock here
                self._remove()
                return self._try_create()
            same = os.fstat(fd)
            try:
                now = os.stat(self.path)
            except FileNotFoundError:
                return False
            if (same.st_ino, same.st_dev) != (now.st_ino, now.st_dev):
                return False  # replaced meanwhile
            if not self.is_stale(_parse(os.pread(fd, 1 << 16, 0))):
                return False
            text = self._text().encode()
            os.pwrite(fd, text, 0)
            os.ftruncate(fd, len(text))
            return True
        finally:
            os.close(fd)  # releases the flock

    def __exit__(self, *exc: Any) -> None:
        try:
            if not self.local and self.etag is not None:
                if isinstance(exc[1], StoreUnreachable) or (exc[0] and unreachable(exc[1])):  # storage gone: a rerun
                    return  # here takes the stale lock over; another request would wait its deadline again
                remove_if_unchanged(self.fs, self.path, self.etag)  # never a lock another run took over
                return
            holder = self.holder()
            if holder is not None and holder.get("pid") == self.me["pid"] and holder.get("host") == self.me["host"]:
                self._remove()
        except storage_errors() as error:  # the storage is gone: say so once, unless a failure is on its way
            if exc[0] is None:
                raise Fault(f"store {self.url}: the lock file {self.path} could not be removed "
                            f"({error.strerror or error}); remove it once the storage is back") from None

    def holder(self) -> dict | None:
        """The current holder's record (``{}`` where the file is not one:
        empty, not JSON, not an object with an integer pid and a host), or
        None when there is no lock file."""
        try:
            with self.fs.open(self.path, "rb") as f:
                return _parse(f.read())
        except FileNotFoundError:
            return None

    def is_stale(self, holder: dict) -> bool:
        if not holder:  # not a lock record: one being written now, or left by a process killed while writing it
            if self._age() < MALFORMED_GRACE_S:
                raise StoreLocked(f"store {self.url}: the lock file {self.path} is not a boardsweep lock record "
                                  "(being written by another run?); retry in a few seconds")
            return True
        return holder.get("host") == self.me["host"] and not pid_alive(holder["pid"])

    def _age(self) -> float:
        """Seconds since the lock file was last modified (0 where unknown)."""
        try:
            modified = self.fs.modified(self.path)
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
        text = self._text()
        if self.local:
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                return False
            with os.fdopen(fd, "w") as f:
                f.write(text)
            return True
        if not create_exclusive(self.fs, self.path, text.encode()):
            return False
        self.etag = self._own_etag()
        return True

    def _remove(self) -> None:
        try:
            self.fs.rm(self.path)
        except FileNotFoundError:
            pass
