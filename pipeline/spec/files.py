"""Which of a spec's text values may name a file, found with one listing.

A string value of a parameter without fixed choices names a file when a
file is there (``Spec.files``, e.g. a board file).  A grid axis of 10^6
text values (``reserve:0``, ``reserve:10``, ...) would cost 10^6 ``stat``
calls; most such values are plain names in the working folder, so that
folder is listed once and only the values found in it (compared as the
file system may compare them: case and Unicode normalisation aside) are
looked at.  Every other value (one with a folder, ``~``, a name too long
for one entry) is kept, to be looked at one by one as before.
"""

from __future__ import annotations

import os
import sys
import unicodedata
from collections.abc import Iterable

__all__ = ["maybe_files"]

#: Values at most this many bytes long with no folder are looked up in the folder's listing.
NAME_MAX = 255


def maybe_files(values: Iterable[str]) -> list[str]:
    """The ``values`` that may name a file (a superset of those that do):
    every value but the plain names missing from the working folder."""
    values = list(values)
    if len(values) < 2:
        return values
    try:
        listed = {_key(name) for name in os.listdir(".")}
    except OSError:  # not listable: each one looked at, as before
        return values
    sep, alt = os.sep, os.altsep or os.sep
    key = _key if sys.platform == "win32" else str.casefold  # non-ASCII values: _key below
    return [v for v in values if (key(v) if v.isascii() else _key(v)) in listed or sep in v or alt in v
            or v[:1] == "~" or v in ("", ".", "..")
            or (len(v) * 4 > NAME_MAX and len(v.encode("utf-8", "surrogateescape")) > NAME_MAX)]


def _key(name: str) -> str:
    """``name`` as a case-insensitive, normalising file system may compare it."""
    key = name.casefold() if name.isascii() else unicodedata.normalize("NFC", name).casefold()
    return key.rstrip(" .") if sys.platform == "win32" else key
