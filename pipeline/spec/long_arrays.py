"""TOML with long one-line arrays read whole: a spec's 500,000-value axis.

``tomllib`` reads an array value by value in Python (a second for the
500,000 values of a 10^7-point grid).  A one-line array of plain numbers,
booleans and double-quoted strings without escapes is written the same in
TOML and JSON, so :func:`loads` reads each such long line with ``json`` (in
C) and the rest of the text with ``tomllib``: the same values.  Anything
else, or any doubt, is left to ``tomllib`` alone: an array it would refuse,
a line inside a multi-line string, an error (its message and position are
``tomllib``'s own, from the whole text).
"""

from __future__ import annotations

import json
import math
import re
import tomllib
import uuid
from typing import Any

__all__ = ["loads", "LONG_LINE"]

#: Lines at least this long holding ``key = [...]`` are read with ``json``.
LONG_LINE = 4096
_KEY = re.compile(r'[ \t]*[A-Za-z0-9_.\- \t"]+?=[ \t]*(?=\[)')
_DECODER = json.JSONDecoder(parse_constant=lambda name: None)  # NaN, Infinity: not TOML, refused by _plain


def loads(text: str) -> dict[str, Any]:
    """``tomllib.loads(text)``, its long one-line arrays read whole (module docstring)."""
    if len(text) < LONG_LINE:
        return tomllib.loads(text)
    marker = f"boardsweep-array-{uuid.uuid4().hex}"
    lines, arrays = text.split("\n"), {}
    for i, line in enumerate(lines):
        if len(line) >= LONG_LINE:
            found = _array(line)
            if found is not None:
                start, end, values = found
                arrays[f"{marker}-{len(arrays)}"] = values
                lines[i] = f'{line[:start]}["{marker}-{len(arrays) - 1}"]{line[end:]}'
    if not arrays or marker in text:
        return tomllib.loads(text)
    try:
        parsed = tomllib.loads("\n".join(lines))
    except tomllib.TOMLDecodeError:
        return tomllib.loads(text)  # the error as tomllib words it on the text as written
    if _put_back(parsed, arrays) != len(arrays):  # one was not a value (inside a string): tomllib alone
        return tomllib.loads(text)
    return parsed


def _array(line: str) -> tuple[int, int, list] | None:
    """(start, end, values) of the one-line array of ``key = [...]  # comment``
    where JSON reads it as TOML does, else None."""
    key = _KEY.match(line)
    if key is None:
        return None
    start = key.end()
    if "\\" in line or "\x7f" in line:  # an escape, a character TOML refuses: tomllib decides
        return None
    try:
        values, end = _DECODER.raw_decode(line, start)
    except ValueError:
        return None
    tail = line[end:].strip()
    if tail and not tail.startswith("#") or not isinstance(values, list) or not _plain(values):
        return None
    return start, end, values


def _plain(values: list) -> bool:
    """Values JSON and TOML write alike: strings, integers, finite floats, booleans."""
    types = set(map(type, values))  # in C: no Python call per value
    if not types <= {str, int, bool, float}:
        return False
    return float not in types or all(math.isfinite(v) for v in values if type(v) is float)


def _put_back(value: Any, arrays: dict[str, list]) -> int:
    """Replace each one-marker list in ``value`` (parsed TOML) by its array; how many were replaced."""
    count = 0
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(item, list) and len(item) == 1 and isinstance(item[0], str) and item[0] in arrays:
            value[key] = arrays[item[0]]
            count += 1
        else:
            count += _put_back(item, arrays)
    return count
