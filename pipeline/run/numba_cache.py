"""numba's kernel cache in a folder this user can write.

numba caches compiled kernels beside the package's sources, else under the
user's cache folder (``~/.cache/numba``); where neither can be written (a
read-only install, an unwritable HOME), numba refuses to load the games
("cannot cache function").  :func:`writable_numba_cache` then points
``NUMBA_CACHE_DIR`` at a private folder in the temporary directory.  The
command calls it first thing (:mod:`.entry`), the Python API on its first use
(``boardsweep.Spec``, ``run``, ...), and a worker as it loads its tasks
(:mod:`.tasks`).  It imports nothing of boardsweep's.
"""

from __future__ import annotations

import os
import sys

__all__ = ["writable_numba_cache"]


def _writable(folder: str) -> bool:
    """Whether a file can be made in ``folder`` (made if missing), as numba checks it."""
    try:
        import tempfile  # here, not at the top: the command's Ctrl-C handler is set before it loads

        os.makedirs(folder, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


def _private_folder(path: str) -> str | None:
    """``path``, made if missing, when this user owns it and nobody else can
    write it (numba's cache holds pickles, which are code), else a new private
    temporary folder; None when neither can be written."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        found = os.stat(path)
        if found.st_uid == os.getuid() and not found.st_mode & 0o022 and _writable(path):
            return path
        import tempfile

        path = tempfile.mkdtemp(prefix="boardsweep-numba-cache-")
    except OSError:
        return None
    return path if _writable(path) else None


def writable_numba_cache() -> str | None:
    """Set ``NUMBA_CACHE_DIR`` to a folder in the temporary directory when numba
    could cache the games' kernels neither beside their sources nor in the
    user's cache folder, and return it; None when nothing was changed (a
    cache is writable, ``NUMBA_CACHE_DIR`` is already set, or no fallback
    can be written either: numba's own error is then named in one line).
    Call it before the games' kernels are imported: ``import boardsweep``
    does, so the command and the Python API (``boardsweep.run``, worker
    processes) share it."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    core = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "core")
    if _writable(os.path.join(core, "__pycache__")):  # numba's cache beside the sources
        return None
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if _writable(os.path.join(home, "numba")):  # numba's user-wide cache
        return None
    import tempfile

    fallback = _private_folder(os.path.join(tempfile.gettempdir(), f"boardsweep-numba-cache-{os.getuid()}"))
    if fallback is None:
        return None
    os.environ["NUMBA_CACHE_DIR"] = fallback  # inherited by worker processes too
    numba = sys.modules.get("numba")
    if numba is not None:  # imported first (a notebook): its configuration reads the variable again
        numba.core.config.reload_config()
    return fallback
