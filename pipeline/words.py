"""English for what the commands print: plurals and counts."""

from __future__ import annotations

__all__ = ["plural", "count"]


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
