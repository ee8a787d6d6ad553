"""English and numbers for what the commands print: plurals, counts, and
numpy scalars as plain Python values."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["plural", "count", "python_value", "finite_float"]


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


def finite_float(value: Any) -> float | None:
    """``value`` as a Python float; None where it is no finite number (NaN,
    infinity, None, text)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None
