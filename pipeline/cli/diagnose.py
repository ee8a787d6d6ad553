"""Errors whose cause lies outside boardsweep, named in one line: the output
stream, the working folder, storage credentials, the process's limits."""

from __future__ import annotations

import errno
import os
import sys

from ..cluster import malformed_config_file
from ..errors import causes, one_line

__all__ = ["diagnose"]


def diagnose(exc: BaseException) -> tuple[str, int] | None:
    """(one line, exit code) for an error whose cause lies outside boardsweep
    (the output stream, the working folder, storage credentials, the
    process's limits), else None: "unexpected" is kept for bugs."""
    chain = causes(exc)
    config = next(filter(None, map(malformed_config_file, chain)), None)
    if config is not None:  # a Dask config file dask cannot read, met when dask is first imported
        return config, 2
    stream = _output_stream(exc)
    if stream is not None:
        return (f"cannot write to {stream}: {one_line(exc, named=False)} (the output stream is full or closed, "
                "not the store: send the output elsewhere)"), 1
    if any(isinstance(e, FileNotFoundError) for e in chain) and _working_folder_gone():
        return ("the working folder was deleted while boardsweep ran in it: cd to an existing folder "
                "(or give absolute paths) and rerun"), 2
    if _storage_unreachable(exc):  # a storage that does not answer (digest, report, query with the server down)
        return (f"cannot reach the storage ({one_line(chain[-1], named=False)}); check the endpoint (AWS_ENDPOINT_URL or "
                "fsspec's configuration) and that the server is up"), 1
    for e in chain:
        name = type(e).__name__
        code = _s3_error_code(e)
        if name in ("NoCredentialsError", "PartialCredentialsError") or code in _CREDENTIAL_CODES or (
                isinstance(e, PermissionError) and "://" in str(getattr(e, "filename", "") or "") + str(e)
                and code is None and ("Access Denied" in str(e) or "Forbidden" in str(e))):
            return (f"the storage refused the credentials ({name}: {' '.join(str(e).split())}); give valid "
                    "ones in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, ~/.aws/credentials or fsspec's "
                    "configuration (nothing was changed by this refusal)"), 2
        if isinstance(e, MemoryError) or (isinstance(e, RuntimeError) and "not enough memory" in str(e)) or (
                (isinstance(e, SystemError) or "returned NULL" in str(e) or _unmappable(e))
                and _address_space_limited()):
            return (f"out of memory ({one_line(e, named=False)}): a smaller sweep, or more memory or `ulimit -v` "
                    "for this process; finished tasks are kept in the store"), 1
        if isinstance(e, RuntimeError) and "can't start new thread" in str(e):
            return ("cannot start a thread: this process's limits (ulimit -v, ulimit -u) are too low for "
                    "the run's workers; raise them or give fewer --workers"), 1
        if "cannot cache function" in str(e):
            return (f"numba cannot write its kernel cache ({one_line(e, named=False)}): set NUMBA_CACHE_DIR to a "
                    "folder you can write"), 1
    return None


def _storage_unreachable(exc: BaseException) -> bool:
    """:func:`store.remote.unreachable`, False where the store modules cannot be
    loaded (numba unable to cache the kernels they import: named next)."""
    try:
        from ..store import unreachable
        return unreachable(exc)
    except Exception:  # noqa: BLE001 - the error being diagnosed may be the reason (a MemoryError importing botocore)
        return False


#: S3 error codes that say the credentials are missing, wrong or not allowed.
_CREDENTIAL_CODES = {"AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken",
                     "ExpiredToken", "AuthorizationHeaderMalformed", "403"}


def _s3_error_code(exc: BaseException) -> str | None:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code")) or None
    return None


def _output_stream(exc: BaseException) -> str | None:
    """``stdout`` or ``stderr`` where ``exc`` is an OSError raised writing to
    that stream (a full ``/dev/full``, a closed pipe), else None."""
    if not isinstance(exc, OSError):
        return None
    streams = {"stdout": (sys.stdout, sys.__stdout__), "stderr": (sys.stderr, sys.__stderr__)}
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames, tb = [*frames[-1:], tb.tb_frame], tb.tb_next
    for frame in frames:  # the write that failed: the innermost frame, or the one calling it
        for value in frame.f_locals.values():
            for name, candidates in streams.items():
                for stream in candidates:
                    if stream is not None and (value is stream or value is getattr(stream, "buffer", None)
                                               or getattr(value, "file", None) is stream):
                        return name
    if exc.errno in (errno.ENOSPC, errno.EPIPE, errno.EIO) and getattr(exc, "filename", None) is None:
        for name in ("stdout", "stderr"):  # a write of nothing fails too on a full /dev/full or a closed pipe
            try:
                os.write(getattr(sys, f"__{name}__").fileno(), b"")
            except OSError as again:
                if again.errno == exc.errno:
                    return name
            except (AttributeError, ValueError):  # no such stream, or no file descriptor
                pass
    return None


def _address_space_limited() -> bool:
    """Whether ``ulimit -v`` limits this process: a SystemError, or a C function
    that "returned NULL", there has run out of address space (its MemoryError
    lost on the way)."""
    import resource

    return resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY


def _unmappable(exc: BaseException) -> bool:
    """A shared library the loader could not map (``dlopen``'s "failed to map
    segment": no room left in a limited address space)."""
    return isinstance(exc, ImportError) and "failed to map segment" in str(exc)


def _working_folder_gone() -> bool:
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    return False

