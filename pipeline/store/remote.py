"""What is particular to a store behind an fsspec URL (object storage).

* bounded failure: S3 clients give up after :data:`S3_ATTEMPTS` attempts and
  :data:`S3_CONNECT_TIMEOUT_S` / :data:`S3_READ_TIMEOUT_S`, 18 s per request
  at most (botocore's and s3fs's own defaults, retries around retries, wait
  for minutes on a server that never answers); set as fsspec defaults, so a
  user's own fsspec/s3fs configuration or ``[storage_options]`` still wins;
* exclusive create: write an object only if none exists (S3's conditional
  put, ``If-None-Match: *``), the primitive an exact lock needs;
* exact replace: read an object with its ETag in one request, then replace
  or remove it only if it still has that ETag (``If-Match``), so of several
  runs taking over one stale lock exactly one wins.  These go through s3fs's
  ``_call_s3`` (s3fs has no public conditional replace); other storage is
  refused (:class:`NoExclusiveCreate`);
* deadlines: :func:`write_deadline`, what one request (or a task's
  concurrent puts, :func:`.writes.write_region`) may take in all;
* a spec's ``[storage_options]`` given to fsspec for the store's protocol,
  in this process and in the worker processes it starts
  (:func:`use_storage_options`);
* credentials come from where the client library looks (the ``AWS_*``
  environment variables, ``~/.aws``, fsspec's ``s3`` configuration); the
  store's URL never holds them and boardsweep never writes them.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from typing import Any, Mapping

import fsspec
from fsspec.asyn import sync

from ..errors import NoExclusiveCreate, causes

__all__ = ["S3_ATTEMPTS", "S3_CONNECT_TIMEOUT_S", "S3_READ_TIMEOUT_S", "bound_failures", "create_exclusive", "storage_errors", "unreachable", "read_tagged", "replace_if_unchanged", "remove_if_unchanged", "write_deadline", "timed_out", "use_storage_options"]

#: Attempts per S3 request (the first and the retries), and the socket timeouts: a request
#: to a server that is gone gives up within ``S3_ATTEMPTS * S3_CONNECT_TIMEOUT_S`` (9 s), one to
#: a server that accepts connections and never answers (frozen, a cut network) within
#: ``S3_ATTEMPTS * S3_READ_TIMEOUT_S`` (18 s), and the command ends in one line.  Set them in
#: a spec's ``[storage_options]`` (``config_kwargs = {read_timeout = 30, connect_timeout = 5,
#: retries = {total_max_attempts = 5}}``) or in fsspec's configuration (``FSSPEC_S3``).
S3_ATTEMPTS = 3
S3_CONNECT_TIMEOUT_S = 3
S3_READ_TIMEOUT_S = 6
#: Seconds a write's deadline grows per MiB it sends (:func:`write_deadline`): 1 MiB/s at the least.
WRITE_S_PER_MIB = 1.0
#: s3fs's own retries of a request that botocore already retried (its class default).
S3FS_RETRIES = 5






def storage_errors() -> tuple[type[BaseException], ...]:
    """What reading or writing a store can raise when its storage fails: OSError and
    botocore's errors (a lost S3 endpoint surfaces as those, not as OSError)."""
    try:
        from botocore.exceptions import BotoCoreError
    except ImportError:
        return (OSError,)
    return (OSError, BotoCoreError)


def unreachable(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what caused it) says the storage cannot be reached:
    a refused or timed-out connection, not a missing or malformed object."""
    try:
        from botocore.exceptions import HTTPClientError
    except ImportError:
        HTTPClientError = ConnectionError  # noqa: N806 - same role without botocore
    return any(isinstance(e, (ConnectionError, TimeoutError, HTTPClientError)) for e in causes(exc))


def timed_out(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is a timeout: the storage was silent, not refusing."""
    try:
        from botocore.exceptions import ConnectTimeoutError, ReadTimeoutError
    except ImportError:
        ConnectTimeoutError = ReadTimeoutError = TimeoutError  # noqa: N806 - same role without botocore
    return any(isinstance(e, (TimeoutError, ConnectTimeoutError, ReadTimeoutError)) for e in causes(exc))


def bound_failures() -> None:
    """Make S3 requests fail within seconds when the server is gone, and read
    an object in one request (fsspec defaults only: what a user set in
    fsspec's configuration is kept).

    s3fs asks an object's size (a HEAD, and a LIST where it is missing)
    before every whole read, to split large ones into ranged reads; a
    store's objects are small (a packed chunk is at most 64 MiB), so
    ``max_concurrency = 1`` reads each with one GET: half the requests of a
    check or a read."""
    conf = fsspec.config.conf.setdefault("s3", {})
    conf.setdefault("max_concurrency", 1)
    kwargs = conf.setdefault("config_kwargs", {})
    kwargs.setdefault("retries", {"total_max_attempts": S3_ATTEMPTS, "mode": "standard"})  # max_attempts: retries
    kwargs.setdefault("connect_timeout", S3_CONNECT_TIMEOUT_S)
    kwargs.setdefault("read_timeout", S3_READ_TIMEOUT_S)
    if "s3fs" in sys.modules:
        _one_s3fs_attempt()
    else:  # s3fs (0.3 s to import) loads on the first S3 path, through fsspec's registry and this module
        for protocol in ("s3", "s3a"):
            fsspec.register_implementation(protocol, f"{__name__}.S3FileSystem", clobber=True,
                                           errtxt="install s3fs for s3:// stores (pip install s3fs)")


def _one_s3fs_attempt():
    """s3fs's S3FileSystem, its own loop around botocore's attempts turned off
    (5 x 3 attempts otherwise); botocore's (standard mode: throttling, 5xx) are kept."""
    import s3fs

    if s3fs.S3FileSystem.retries == S3FS_RETRIES:
        s3fs.S3FileSystem.retries = 1
    return s3fs.S3FileSystem


def __getattr__(name: str):
    """``S3FileSystem``: s3fs's own class, imported when fsspec first asks for it (:func:`bound_failures`)."""
    if name == "S3FileSystem":
        return _one_s3fs_attempt()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def write_deadline(fs, nbytes: int = 0) -> float:
    """Seconds a request through this module may take in all (one task's
    writes, put concurrently, are one): every attempt waiting its longest
    for the server, ``attempts * max(connect, read timeout)``, 18 s with the
    defaults as the docs say, plus a second per MiB of ``nbytes`` sent
    (:data:`WRITE_S_PER_MIB`: a large write on a slow link is not cut
    short).  botocore's read timeout does not cover a PUT whose server
    accepted the connection and froze (SIGSTOP, a cut network): the write
    would wait forever; past this deadline it raises
    :class:`fsspec.exceptions.FSTimeoutError` (a TimeoutError: the run ends
    in one line, :func:`unreachable`)."""
    conf = dict(getattr(fs, "storage_options", {}).get("config_kwargs") or {})
    retries = conf.get("retries") or {}
    attempts = retries.get("total_max_attempts") or (retries.get("max_attempts", S3_ATTEMPTS - 1) + 1)
    per_attempt = max(float(conf.get("connect_timeout", S3_CONNECT_TIMEOUT_S)),
                      float(conf.get("read_timeout", S3_READ_TIMEOUT_S)))
    return attempts * per_attempt + WRITE_S_PER_MIB * nbytes / 2**20


def use_storage_options(url: str, options: Mapping[str, Any]) -> None:
    """Give ``options`` (a spec's ``[storage_options]``) to fsspec for the
    protocol of ``url``, over its configured defaults: in this process, and
    through the environment variable fsspec reads at import
    (``FSSPEC_<PROTOCOL>``, JSON) in the worker processes it starts.  A
    remote cluster's workers need their own configuration (as for
    credentials).  Nothing for a folder."""
    if not options or "://" not in url:
        return
    protocol = url.split("://", 1)[0]
    conf = fsspec.config.conf.setdefault(protocol, {})
    _merge(conf, options)  # config_kwargs = {read_timeout = 30} keeps the other bounds
    os.environ[f"FSSPEC_{protocol.upper()}"] = json.dumps(conf)


def _merge(into: dict, options: Mapping[str, Any]) -> None:
    """``options`` written over ``into``, tables merged key by key."""
    for key, value in options.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            into[key] = dict(into[key])
            _merge(into[key], value)
        else:
            into[key] = value


def create_exclusive(fs, path: str, data: bytes) -> bool:
    """Write ``data`` at ``path`` only if nothing is there; False if something is.

    Uses a conditional put (``If-None-Match: *``); raises
    :class:`NoExclusiveCreate` where the storage ignores the condition (checked
    once per file system with a probe object next to ``path``)."""
    _check_conditional_put(fs, path.rsplit("/", 1)[0])
    try:
        fs.pipe_file(path, data, mode="create", timeout=write_deadline(fs, len(data)))
    except (FileExistsError, OSError) as exc:
        if _precondition_failed(exc):
            return False
        raise
    return True


def _precondition_failed(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is S3's 412 Precondition Failed."""
    while exc is not None:
        if isinstance(exc, FileExistsError):
            return True
        response = getattr(exc, "response", None)
        if isinstance(response, dict) and response.get("Error", {}).get("Code") in (
                "PreconditionFailed", "ConditionalRequestConflict", "412"):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


_CHECKED: set[tuple[int, str]] = set()


def _check_conditional_put(fs, folder: str) -> None:
    key = (id(fs), folder.split("/", 1)[0])
    if key in _CHECKED:
        return
    probe = f"{folder}/.boardsweep-probe-{uuid.uuid4().hex}"
    try:
        fs.pipe_file(probe, b"1", mode="create")
        try:
            fs.pipe_file(probe, b"2", mode="create")
        except OSError as exc:
            if not _precondition_failed(exc):
                raise
        else:
            raise NoExclusiveCreate("the storage does not honour conditional writes (If-None-Match: *)")
    finally:
        try:
            fs.rm_file(probe)
        except OSError:
            pass
    _CHECKED.add(key)


def _s3(fs, operation: str, path: str, **kwargs: Any) -> Any:
    """One S3 request through s3fs (``operation`` on the object at ``path``)."""
    if not hasattr(fs, "_call_s3") or not hasattr(fs, "split_path"):
        raise NoExclusiveCreate(f"{type(fs).__name__} offers no conditional replace (If-Match)")
    bucket, key, _ = fs.split_path(path)
    sent = len(kwargs.get("Body") or b"")
    return sync(fs.loop, fs._call_s3, operation, Bucket=bucket, Key=key, timeout=write_deadline(fs, sent), **kwargs)


def read_tagged(fs, path: str) -> tuple[bytes, str] | None:
    """The bytes of the object at ``path`` and its ETag, from one request
    (``None`` where there is no object)."""
    async def get() -> tuple[bytes, str]:
        bucket, key, _ = fs.split_path(path)
        response = await fs._call_s3("get_object", Bucket=bucket, Key=key)
        async with response["Body"] as body:
            return await body.read(), response["ETag"]

    if not hasattr(fs, "_call_s3"):
        raise NoExclusiveCreate(f"{type(fs).__name__} offers no conditional replace (If-Match)")
    try:
        return sync(fs.loop, get, timeout=write_deadline(fs))
    except FileNotFoundError:
        return None


def replace_if_unchanged(fs, path: str, data: bytes, etag: str) -> bool:
    """Write ``data`` at ``path`` only if the object there still has ``etag``
    (``If-Match``); False if it changed or went.  Raises
    :class:`NoExclusiveCreate` where the storage ignores the condition."""
    _check_if_match(fs, path.rsplit("/", 1)[0])
    try:
        _s3(fs, "put_object", path, Body=data, IfMatch=etag)
    except (FileNotFoundError, OSError) as exc:
        if isinstance(exc, FileNotFoundError) or _precondition_failed(exc):
            return False
        raise
    return True


def remove_if_unchanged(fs, path: str, etag: str) -> bool:
    """Remove the object at ``path`` only if it still has ``etag``; False if it changed or went."""
    try:
        _s3(fs, "delete_object", path, IfMatch=etag)
    except (FileNotFoundError, OSError) as exc:
        if isinstance(exc, FileNotFoundError) or _precondition_failed(exc):
            return False
        raise
    return True


_CHECKED_IF_MATCH: set[tuple[int, str]] = set()


def _check_if_match(fs, folder: str) -> None:
    """Raise :class:`NoExclusiveCreate` unless a put with a wrong ``If-Match`` is
    refused (checked once per file system and bucket, on a probe object)."""
    key = (id(fs), folder.split("/", 1)[0])
    if key in _CHECKED_IF_MATCH:
        return
    probe = f"{folder}/.boardsweep-probe-{uuid.uuid4().hex}"
    try:
        fs.pipe_file(probe, b"1")
        try:
            _s3(fs, "put_object", probe, Body=b"2", IfMatch='"0123456789abcdef0123456789abcdef"')
        except OSError as exc:
            if not _precondition_failed(exc):
                raise
        else:
            raise NoExclusiveCreate("the storage does not honour conditional replaces (If-Match)")
    finally:
        try:
            fs.rm_file(probe)
        except OSError:
            pass
    _CHECKED_IF_MATCH.add(key)
