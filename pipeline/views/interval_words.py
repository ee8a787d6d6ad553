"""The interval and the test an estimate table used, in a caption's words.

Read from the table's attrs, never chosen again here: ``interval_kind``
(``t``, ``skew_t``, ``share``, ``count``, ``z``, ``mixed``: t where a label
averages enough counts a replicate, else a count interval, or ``mixed_z``: the
z test's own interval where the label is z-tested; with
``interval_count_rows``, the rows whose interval is count-based), or, for a
table that does not name it, its ``interval`` text
(:data:`boardsweep.pipeline.analysis.intervals.INTERVAL_TEXT`); and
``test`` (:data:`boardsweep.pipeline.analysis.clt.TEST_TEXT`).
"""

from __future__ import annotations

from typing import Mapping

import xarray as xr

from ..analysis import TEST_NAMES, TEST_TEXT, MIN_COUNT, INTERVAL_NAMES, INTERVAL_TEXT

__all__ = ["interval_name", "intervals_of", "noted", "test_name", "test_kind"]

#: Each interval kind in a caption's words (analysis names them; a count interval says how it is made).
NAMES = {**INTERVAL_NAMES,
         "count": f"{INTERVAL_NAMES['count']} (the pooled count as Poisson, scaled by the replicates' dispersion)"}
#: Each interval kind in a terminal legend's words.
SHORT = {"t": "t interval", "skew_t": "skew-corrected t interval", "share": "exact binomial interval",
         "count": "count interval", "z": "z interval (CLT)"}
#: Each test in a caption's words (keys of :data:`TEST_TEXT`), its one name (:data:`TEST_NAMES`) first.
TESTS = {
    "t": f"the {TEST_NAMES['t']}: Student's t with the estimated s.e. and its df",
    "z": f"the {TEST_NAMES['z']}: the normal, the s.e. known (no df)",
    "binomial": f"the {TEST_NAMES['binomial']}",
    "skew_t": f"{TEST_NAMES['skew_t']} (the interval's own), the s.e.'s df from the games' kurtosis",
}


def _kind(est: xr.Dataset) -> str:
    """The table's interval kind (``t`` where it names none)."""
    kind = est.attrs.get("interval_kind")
    if kind:
        return str(kind)
    text = est.attrs.get("interval", "")
    found = next((k for k, v in INTERVAL_TEXT.items() if v == text), "t")
    return "mixed" if found == "frequency" else found


def interval_name(est: xr.Dataset, long: bool = True) -> str:
    """The interval ``est``'s ``low``/``high`` are, in words: "t interval",
    "exact binomial interval", ... (``long``: with how it is computed); a
    frequency mixing both: the t interval and where the count interval replaced it."""
    kind = _kind(est)
    if kind == "mixed_z":  # the z test's own interval where the CLT s.e. is known, t or count elsewhere
        return (f"{NAMES['z'] if long else SHORT['z']} where the label is z-tested, else t interval "
                f"({SHORT['count']} below {MIN_COUNT} counts a replicate)")
    if kind != "mixed":
        return NAMES.get(kind, NAMES["t"]) if long else SHORT.get(kind, "t interval")
    return f"t interval ({SHORT['count']} below {MIN_COUNT} counts a replicate)"


def noted(name: str, note: str) -> str:
    """``name`` with ``note`` in its parentheses ("t interval (count ...; note)") or in new ones."""
    return f"{name[:-1]}; {note})" if name.endswith(")") else f"{name} ({note})"


def intervals_of(found: Mapping[str, xr.Dataset], long: bool = False) -> str:
    """The intervals of several headlines in one phrase: "t interval" where
    all share it, else each kind with its headlines ("t interval: mean_rolls;
    exact binomial interval: win_share")."""
    by: dict[str, list[str]] = {}
    for name, est in found.items():
        by.setdefault(interval_name(est, long), []).append(name)
    if len(by) == 1:
        return next(iter(by))
    return "; ".join(f"{kind}: {', '.join(names)}" for kind, names in by.items())


def test_name(est: xr.Dataset) -> str:
    """The test ``est``'s z and p come from, in words (t where it names none)."""
    return TESTS[test_kind(est)]


def test_kind(est: xr.Dataset) -> str:
    """The key of :data:`TEST_TEXT` naming ``est``'s test ("t" where it names none)."""
    text = est.attrs.get("test", "")
    return next((k for k, v in TEST_TEXT.items() if v == text), "t")
