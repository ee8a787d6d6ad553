"""English and numbers for what the commands print: plurals and counts,
numpy scalars as plain Python values, and numbers as text (an estimate to six
significant digits, a standard error to two, an estimate to two significant
digits of its standard error)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["plural", "count", "python_value", "finite_float", "fmt_value", "fmt_stderr", "fmt_significant",
           "decimals", "fmt_to", "fmt_pm", "fmt_interval", "fmt_z", "fmt_p", "fmt_int", "json_ready", "json_text",
           "json_default", "unexpected_line"]


def plural(word: str, count: int = 2) -> str:
    """``word`` for ``count`` things: ``location`` -> ``locations``; a word
    already ending in s (``rolls``, ``rounds``) stays as it is; the last word
    of a phrase is the one made plural (``exact solve`` -> ``exact solves``)."""
    if count == 1 or word.endswith("s"):
        return word
    return word[:-1] + "ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else word + "s"


def count(n: int, word: str) -> str:
    """``n word`` with ``word`` in the plural unless ``n`` is 1: ``1 grid point``, ``3 exact solves``."""
    return f"{n} {plural(word, n)}"


def python_value(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (``np.int64(3)`` -> ``3``,
    ``np.str_("a")`` -> ``"a"``); anything else as it is."""
    return value.item() if isinstance(value, np.generic) else value


def json_ready(value: Any) -> Any:
    """``value`` as JSON can hold it, every number at full precision (a float as
    Python's shortest repr that reads back to the same double): mappings,
    sequences and arrays as plain dicts and lists, numpy scalars as Python's,
    NaN and infinities as None (null), other objects as their text."""
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, np.ndarray)):
        return [json_ready(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
    value = python_value(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


def json_default(value: Any) -> Any:
    """``json.dumps(x, default=json_default)``: numpy scalars and arrays as the Python numbers and
    lists they hold (:func:`python_value`, ``ndarray.tolist``), NaN kept; anything else refused (TypeError)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return python_value(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def json_text(value: Any) -> str:
    """``value`` (:func:`json_ready`) as indented JSON text: what ``--format json`` prints."""
    import json

    return json.dumps(json_ready(value), indent=2)


def finite_float(value: Any) -> float | None:
    """``value`` as a Python float; None where it is no finite number (NaN,
    infinity, None, text)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def fmt_value(x: float | None) -> str:
    """An estimate or exact value: 6 significant digits, '-' for none."""
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.6g}"


def fmt_stderr(x: float | None) -> str:
    """A standard error: two significant digits in exponent form (3.4e-05)."""
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.1e}"


def fmt_significant(x: float | None, digits: int) -> str:
    """``x`` with ``digits`` significant digits (``0.76``, ``3.4e-05``), '-' for none."""
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.{digits}g}"


def decimals(se: float) -> int | None:
    """Decimals that show a value to two significant digits of its s.e."""
    if not np.isfinite(se) or se <= 0:
        return None
    return int(max(0, 1 - np.floor(np.log10(se))))


def fmt_to(x: float, places: int | None) -> str:
    """``x`` with ``places`` decimals (6 significant digits when None), '-' for NaN."""
    if not np.isfinite(x):
        return "-"
    return f"{x:.6g}" if places is None else f"{x:.{places}f}"


def fmt_pm(x: float, half: float, se: float) -> str:
    """``estimate ± half-width``, both to two significant digits of the s.e."""
    d = decimals(se)
    if not np.isfinite(x):
        return "-"
    if not np.isfinite(half):
        return fmt_to(x, d)
    return f"{fmt_to(x, d)} ± {fmt_to(half, d)}"


def fmt_interval(x: float, low: float, high: float, se: float) -> str:
    """``estimate ± half-width`` where the interval is symmetric (t), else
    ``estimate [low, high]`` (an exact binomial interval of a share or bin
    near 0 or 1, e.g. ``1 [0.99908, 1]``), to two significant digits of the s.e."""
    if not (np.isfinite(low) and np.isfinite(high) and np.isfinite(x)):
        return fmt_pm(x, high - x if np.isfinite(high) else np.nan, se)
    up, down = high - x, x - low
    if abs(up - down) <= 0.05 * max(up, down, 0.0):
        return fmt_pm(x, up, se)
    d = decimals(se) if se > 0 else None
    if d is None:  # no s.e. to round to (every game or none): digits that tell the ends from the estimate
        d = int(max(0, 1 - np.floor(np.log10(max(up, down))))) if max(up, down) > 0 else None
    return f"{fmt_to(x, d)} [{fmt_to(low, d)}, {fmt_to(high, d)}]"


def fmt_z(x: float) -> str:
    """A z score to two decimals, '-' for NaN."""
    return "-" if not np.isfinite(x) else f"{x:.2f}"


def fmt_p(x: float) -> str:
    """A p-value to two significant digits, '-' for NaN."""
    return "-" if not np.isfinite(x) else f"{x:.2g}"


def fmt_int(x: float) -> str:
    """A whole number (degrees of freedom), '-' for NaN."""
    return "-" if not np.isfinite(x) else str(int(x))


def unexpected_line(exc: BaseException, detail: str | None = None) -> str:
    """The one line of an error boardsweep did not expect: ``boardsweep: error:
    unexpected X[: detail] (rerun with -v for the traceback)``; ``out of memory``
    for a :class:`MemoryError` without ``detail``."""
    what = "out of memory" if isinstance(exc, MemoryError) and detail is None else f"unexpected {type(exc).__name__}"
    return f"boardsweep: error: {what}{f': {detail}' if detail else ''} (rerun with -v for the traceback)"
