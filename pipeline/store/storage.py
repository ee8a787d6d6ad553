"""What the store needs of storage: :class:`Storage`, for a folder and for object storage.

A store lives in a local folder or behind an fsspec URL (object storage:
S3 and the like).  What differs between the two is answered here, once:
:func:`local_root` is the one place that asks which a URL is, and
:func:`open_storage` picks the implementation, :class:`FolderStorage` or
:class:`ObjectStorage`, each reading and writing files by store-relative
path (``"done/zarr.json"``, ``".boardsweep/layout.json"``):

* read one file whole (``None`` where it is missing), or several at once
  (concurrent requests on object storage);
* write a whole file, which a reader sees entire or not at all (a folder:
  a temporary file renamed into place; object storage: one put);
* write a file only if none is there (a folder: a hard link, else
  ``O_EXCL``; object storage: a conditional put, ``If-None-Match: *``,
  :func:`.remote.create_exclusive`);
* list a folder's names, delete files (those already gone are fine), say
  whether one exists, and move one (a folder: a rename; object storage: a
  copy, then a delete).

zarr itself is handed the URL and opens the storage its own way; this is for
the files boardsweep reads and writes beside it.
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import threading
import uuid
from pathlib import Path
from typing import Any, Protocol

import fsspec

from ..errors import StoreUnreachable
from ..urls import local_root  # the one local-versus-object question, light: the CLI asks it before zarr
from .remote import create_exclusive, timed_out, unreachable, write_deadline

__all__ = ["Storage", "FolderStorage", "ObjectStorage", "open_storage", "local_root", "write_file", "read_deadline", "answers"]


class Storage(Protocol):
    """The files of one store, by store-relative path (``rel``)."""

    url: str
    #: The store's root as the storage names it (a folder's path, or ``bucket/prefix``).
    root: str

    def path(self, rel: str) -> str:
        """The storage's own name of ``rel`` (a path, or an object key with its bucket)."""

    def read(self, rel: str) -> bytes | None:
        """The file's bytes, ``None`` where it is missing or cannot be read."""

    def read_many(self, rels: list[str], strict: bool = True) -> dict[str, bytes | None]:
        """:meth:`read` of each (object storage: concurrent requests); a
        failure of the storage raises, unless not ``strict`` (then ``None``)."""

    def write(self, rel: str, data: bytes) -> None:
        """Write the file whole: a reader sees the old bytes or the new, never part."""

    def write_many(self, files: dict[str, bytes]) -> None:
        """:meth:`write` of each (object storage: concurrent requests)."""

    def write_if_absent(self, rel: str, data: bytes) -> bool:
        """Write the file whole only where none is there; ``False`` where one is."""

    def list(self, rel: str) -> list[str]:
        """The names in folder ``rel`` (``[]`` where there is none)."""

    def delete(self, rels: list[str]) -> None:
        """Remove the files; those already gone are fine (in a folder, the
        temporary files a killed :meth:`write` of them left go too)."""

    def move(self, src: str, dst: str) -> None:
        """``src`` to ``dst``, replacing it (a folder: one rename; object storage: copy, then delete)."""

    def exists(self, rel: str) -> bool:
        """Whether the file (or folder) is there."""

    def json(self, rel: str) -> dict[str, Any] | None:
        """The file parsed as a JSON object, ``None`` where it is missing or not one."""

    def why_unread(self, rel: str) -> str:
        """Why :meth:`read` gave ``None``: ``missing``, or ``unreadable (why)``."""


def json_object(raw: bytes | None) -> dict[str, Any] | None:
    """``raw`` parsed as a JSON object; ``None`` where it is missing, not JSON or not an object."""
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


#: What makes this process's temporary file names its own: a random part (hosts) and the process id (forks).
_OWN = uuid.uuid4().hex[:12]
_SERIAL = itertools.count()


def write_file(path: Path, data: bytes) -> None:
    """Write ``data`` as the file ``path`` whole: into a temporary file of
    this process, renamed over ``path`` (a reader sees the old file or the
    new one; a full disk leaves no partial file behind); its folders made
    where missing.  Each system call lets the interpreter lock go, which a
    worker thread beside busy threads waits to take back: so no call that
    is not needed (no folder made where it is there; no random name drawn)."""
    tmp = path.with_name(f".{path.name}.{_OWN}{os.getpid()}-{next(_SERIAL)}.tmp")  # unique across processes, hosts
    try:
        try:
            tmp.write_bytes(data)
        except FileNotFoundError:  # a folder of the path is missing
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


#: errno values of a file system without hard links (:meth:`FolderStorage.write_if_absent` then uses ``O_EXCL``).
NO_LINKS = (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS)


class FolderStorage:
    """A store in a local folder: files read and written with the operating system's calls."""

    def __init__(self, url: str, folder: Path) -> None:
        self.url, self.folder, self.root = url, folder, str(folder)

    def path(self, rel: str) -> str:
        return str(self.folder / rel)

    def read(self, rel: str) -> bytes | None:
        try:
            with open(f"{self.root}/{rel}", "rb") as f:  # a string, not a Path: a check reads 10^5 records
                return f.read()
        except OSError:
            return None

    def read_many(self, rels: list[str], strict: bool = True) -> dict[str, bytes | None]:
        return {rel: self.read(rel) for rel in rels}

    def write(self, rel: str, data: bytes) -> None:
        write_file(self.folder / rel, data)

    def write_many(self, files: dict[str, bytes]) -> None:
        for rel, data in files.items():
            self.write(rel, data)

    def write_if_absent(self, rel: str, data: bytes) -> bool:
        """Written into a temporary file, hard-linked to its name (exclusive,
        as ``O_EXCL``, and a reader never meets it half written); ``O_EXCL``
        where the file system has no links.  A folder removed meanwhile (a
        run releasing its lock removes ``.boardsweep/`` when empty) is made
        again, up to five times."""
        path = self.folder / rel
        for attempt in range(5):
            try:
                return self.link_new(path, data)
            except FileNotFoundError:
                if attempt == 4:
                    raise
                path.parent.mkdir(parents=True, exist_ok=True)
        return False

    def link_new(self, path: Path, data: bytes) -> bool:
        """One try of :meth:`write_if_absent` (``FileNotFoundError`` where a folder of ``path`` is missing)."""
        tmp = path.with_name(f".{path.name}.{_OWN}{os.getpid()}-{next(_SERIAL)}.tmp")
        try:
            tmp.write_bytes(data)
            try:
                os.link(tmp, path)
                return True
            except FileExistsError:
                return False
            except OSError as exc:
                if exc.errno not in NO_LINKS:
                    raise
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                return False
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            return True
        finally:
            tmp.unlink(missing_ok=True)

    def list(self, rel: str) -> list[str]:
        try:
            return sorted(os.listdir(self.folder / rel))
        except (FileNotFoundError, NotADirectoryError):
            return []

    def delete(self, rels: list[str]) -> None:
        for rel in rels:
            path = self.folder / rel
            path.unlink(missing_ok=True)
            for stray in path.parent.glob(f".{path.name}.*.tmp"):  # write_file's, of a killed process
                stray.unlink(missing_ok=True)

    def move(self, src: str, dst: str) -> None:
        os.replace(self.folder / src, self.folder / dst)

    def exists(self, rel: str) -> bool:
        return (self.folder / rel).exists()

    def json(self, rel: str) -> dict[str, Any] | None:
        return json_object(self.read(rel))

    def why_unread(self, rel: str) -> str:
        try:
            with open(self.folder / rel, "rb") as f:
                f.read(1)
        except FileNotFoundError:
            return "missing"
        except OSError as exc:
            return f"unreadable ({exc.strerror or type(exc).__name__})"
        return "unreadable"


class ObjectStorage:
    """A store behind an fsspec URL: files are objects, written whole by one put."""

    def __init__(self, url: str, fs: Any = None, root: str | None = None) -> None:
        if fs is None:
            fs, root = fsspec.core.url_to_fs(url)
        self.url, self.fs, self.root = url, fs, root.rstrip("/")

    def path(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def read(self, rel: str) -> bytes | None:
        try:
            return self.fs.cat_file(self.path(rel))
        except FileNotFoundError:
            return None

    def read_many(self, rels: list[str], strict: bool = True) -> dict[str, bytes | None]:
        if len(rels) < 2 and strict:
            return {rel: self.read(rel) for rel in rels}
        got = self.fs.cat([self.path(r) for r in rels], on_error="return") if rels else {}
        got = got if isinstance(got, dict) else {self.path(rels[0]): got}
        out = {}
        for rel in rels:
            value = got.get(self.path(rel))
            if strict and isinstance(value, BaseException) and not isinstance(value, FileNotFoundError):
                raise value  # the storage failed: not a missing file
            out[rel] = value if isinstance(value, (bytes, bytearray)) else None
        return out

    def write(self, rel: str, data: bytes) -> None:
        self.fs.pipe_file(self.path(rel), data)

    def write_many(self, files: dict[str, bytes]) -> None:
        if files:
            self.fs.pipe({self.path(rel): data for rel, data in files.items()})

    def write_if_absent(self, rel: str, data: bytes) -> bool:
        return create_exclusive(self.fs, self.path(rel), data)

    def list(self, rel: str) -> list[str]:
        try:
            entries = self.fs.ls(self.path(rel), detail=False, refresh=True)
        except FileNotFoundError:
            return []
        return sorted(e.rstrip("/").rsplit("/", 1)[-1] for e in entries)

    def delete(self, rels: list[str]) -> None:
        if rels:
            try:
                self.fs.rm([self.path(rel) for rel in rels])
            except FileNotFoundError:
                pass

    def move(self, src: str, dst: str) -> None:
        self.fs.mv(self.path(src), self.path(dst))

    def exists(self, rel: str) -> bool:
        return self.fs.exists(self.path(rel))

    def json(self, rel: str) -> dict[str, Any] | None:
        return json_object(self.read(rel))

    def why_unread(self, rel: str) -> str:
        try:
            if not self.fs.exists(self.path(rel)):
                return "missing"
            self.fs.cat_file(self.path(rel), start=0, end=1)
        except FileNotFoundError:
            return "missing"
        except OSError as exc:
            return f"unreadable ({exc.strerror or type(exc).__name__})"
        return "unreadable"


def open_storage(url: str | os.PathLike) -> Storage:
    """The storage of the store at ``url``: :class:`FolderStorage` for a
    local folder, :class:`ObjectStorage` for an fsspec URL (:func:`local_root` decides)."""
    url = os.fspath(url)
    folder = local_root(url)
    return FolderStorage(url, folder) if folder is not None else ObjectStorage(url)


def read_deadline(url: str) -> float | None:
    """Seconds a command's read of the store at ``url`` (``status``,
    ``query``, ``report``, ``digest``) waits on storage that does not
    answer before it ends in one line: the deadline of one request
    (:func:`.remote.write_deadline`, nothing sent), ``attempts * max(connect, read
    timeout)`` of botocore's configuration (fsspec's, or a spec's
    ``[storage_options]``), 18 s with the defaults; ``None`` for a folder."""
    if local_root(url) is not None:
        return None
    return write_deadline(ObjectStorage(url).fs)


def answers(url: str) -> None:
    """Ask the storage of the store at ``url`` for one small object (its root
    metadata), giving it :func:`read_deadline` seconds: a command's first
    request, before its read's many; :class:`StoreUnreachable` in one line
    where it does not answer within that (a frozen server, a cut network),
    rather than each request of the read waiting out its own.  An answer,
    even "not found", returns; nothing for a folder."""
    deadline = read_deadline(url)
    if deadline is None:
        return
    objects = ObjectStorage(url)
    failed: list[BaseException] = []

    def ask() -> None:
        try:
            objects.fs.cat_file(objects.path("zarr.json"))
        except Exception as exc:  # noqa: BLE001 - "not found", denied: an answer; a timeout: none
            failed.append(exc)

    asking = threading.Thread(target=ask, name="boardsweep-answers", daemon=True)  # left waiting, if it waits
    asking.start()
    asking.join(deadline)
    if not asking.is_alive() and failed and unreachable(failed[0]) and not timed_out(failed[0]):
        raise StoreUnreachable.at_open(url, failed[0])  # refused at once (a server down): said as such
    if asking.is_alive() or (failed and unreachable(failed[0])):
        raise StoreUnreachable(
            f"store {url}: the storage did not answer within {deadline:g} s, the deadline of a read (attempts "
            "times the longer of connect_timeout and read_timeout in `config_kwargs` of fsspec's configuration, "
            "FSSPEC_S3); nothing was read: read it again once it answers")
