"""One run per store: a lock file inside the store directory.

The lock file ``<store>/.boardsweep.lock`` holds JSON with the holder's pid,
host and start time.  It is created atomically (``O_EXCL``) for local stores.
A lock left by a dead process on this host is stale and is taken over; a lock
held by a live process, or by another host, is refused with a message naming
the holder.  On object storage the lock object is created with a conditional
put (``If-None-Match: *``, :func:`.remote.create_exclusive`), so of two runs
racing for it exactly one wins; storage that ignores the condition is refused
in one line.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import socket
from typing import Any

import fsspec

from ..errors import Fault, InputError
from .remote import NoExclusiveCreate, create_exclusive, is_local, storage_errors

__all__ = ["StoreLocked", "StoreLock", "LOCK_NAME"]

LOCK_NAME = ".boardsweep.lock"

#: A lock file that is not a lock record is taken over once it is this old
#: (younger, it may be one another run is writing right now).
MALFORMED_GRACE_S = 10.0


class StoreLocked(InputError):
    """Another run holds the store, or it cannot be locked (exit 2)."""


def _alive(pid: int) -> bool:
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
        }

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
        for _ in range(2):
            if self._try_create():
                return self
            holder = self.holder()
            if holder is not None and not self._stale(holder):
                raise StoreLocked(
                    f"store {self.url} is in use by pid {holder.get('pid')} on host "
                    f"{holder.get('host')} since {holder.get('since')} (lock file {self.path})"
                )
            self._remove()
        raise StoreLocked(f"store {self.url}: could not take the lock file {self.path}")

    def __exit__(self, *exc: Any) -> None:
        try:
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
                record = json.loads(f.read().decode("utf-8") or "{}")
        except FileNotFoundError:
            return None
        except (ValueError, UnicodeDecodeError):
            return {}
        valid = (isinstance(record, dict) and isinstance(record.get("pid"), int)
                 and not isinstance(record.get("pid"), bool) and isinstance(record.get("host"), str))
        return record if valid else {}

    def _stale(self, holder: dict) -> bool:
        if not holder:  # not a lock record: one being written now, or left by a process killed while writing it
            if self._age() < MALFORMED_GRACE_S:
                raise StoreLocked(f"store {self.url}: the lock file {self.path} is not a boardsweep lock record "
                                  "(being written by another run?); retry in a few seconds")
            return True
        return holder.get("host") == self.me["host"] and not _alive(holder["pid"])

    def _age(self) -> float:
        """Seconds since the lock file was last modified (0 where unknown)."""
        import time

        try:
            modified = self.fs.modified(self.path)
        except (OSError, NotImplementedError, ValueError):
            return 0.0
        return time.time() - modified.timestamp()

    def _try_create(self) -> bool:
        text = json.dumps(self.me)
        if self.local:
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                return False
            with os.fdopen(fd, "w") as f:
                f.write(text)
            return True
        return create_exclusive(self.fs, self.path, text.encode())

    def _remove(self) -> None:
        try:
            self.fs.rm(self.path)
        except FileNotFoundError:
            pass
