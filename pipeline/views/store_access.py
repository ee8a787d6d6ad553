"""The store a command reads, opened once, and the cells its ``--sel`` options pick;
or one line saying why not (no store, not ours, damaged, a bad selection)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..words import python_value

if TYPE_CHECKING:
    from ..store import Store


def allow_many_reads() -> None:
    """Let zarr keep more chunk reads in flight in this (CLI) process: a
    store holds one small chunk per task and variable."""
    from ..store import many_reads

    many_reads()


def require_store(url: str, error: type[Exception], growing_ok: bool = False) -> Store:
    """The boardsweep store at ``url``, opened once for the command
    (:class:`~boardsweep.pipeline.store.Store`: what it finds is kept), or
    ``error`` in one line: no store, not ours, or (unless ``growing_ok``) one
    whose growth was interrupted half-way."""
    from ..store import Store, StoreMismatch, interrupted, normalize_url

    try:
        normalize_url(url)  # an unknown protocol, a missing package: the line `run` gives
    except StoreMismatch as exc:  # "--store URL: why": this command's STORE argument
        raise error("store " + str(exc).removeprefix("--store ")) from None
    st = Store(url)
    if st.kind == "rootless":
        from ..store import rootless_line
        from ..errors import StoreDamaged

        raise StoreDamaged(rootless_line(url))
    if st.kind == "creating":  # a run creating it, or interrupted while it did: no store to read yet
        from ..store import creating_line
        from ..errors import StoreBeingRewritten

        raise StoreBeingRewritten(creating_line(url))
    if st.kind in ("absent", "empty"):
        raise error(f"store {url}: no sweep store there")
    if st.kind != "boardsweep":
        raise error(f"store {url}: not a boardsweep sweep store")
    if not growing_ok and interrupted(st.attrs) is not None:
        raise error(f"store {url}: growing it to a larger spec was interrupted; rerun "
                    f"`boardsweep run SPEC --store {url} --extend` with that spec to finish")
    return st


def open_store(url: str | Store, error: type[Exception], check: bool = True, sels: tuple[str, ...] = (),
               eager: bool = True):
    """The store's Dataset in memory (only the cells ``--sel`` options pick,
    when given), or ``error`` in one line: no store, not ours, damaged, a bad
    selection.  ``url``: a path or URL, or the store :func:`require_store`
    opened.  ``eager=False``: lazily (:func:`query.open_sweep`), for
    commands that read a few small arrays."""
    from ..store import Store
    from ..errors import StoreDamaged
    from ..store import load_sweep, open_sweep

    st = url if isinstance(url, Store) else require_store(url, error)
    allow_many_reads()
    try:
        if check:  # before the selection: a relabelled store must not pick its cells by the wrong labels
            st.assert_intact()
        picked = select(st.open_raw(), sels, error) if sels else None
        return (load_sweep if eager else open_sweep)(st, check=check, sel=picked)
    except StoreDamaged as exc:
        raise error(str(exc)) from None


def select(ds, sels: tuple[str, ...], error: type[Exception]) -> dict[str, list]:
    """The selection ``--sel axis=value`` options make: {axis: [values]}, each
    value parsed as the axis's type.  ``--sel axis=a,b`` and repeated
    ``--sel`` options on one axis select every value given, in that order
    (a value that itself holds a comma, e.g. a per-seat list, matches whole)."""
    axes = list(ds.attrs.get("grid_axes", []))
    picked: dict[str, dict] = {}  # axis -> {value: None}: the values in order, each once
    by_text: dict[str, Mapping[str, Any]] = {}  # axis -> {str(value): value}, the first value of each text
    for item in sels:
        if "=" not in item:
            raise error(f"--sel {item!r}: expected AXIS=VALUE or AXIS=VALUE,VALUE,...")
        axis, text = (x.strip() for x in item.split("=", 1))
        if axis not in axes:
            raise error(f"--sel {item!r}: no grid axis {axis!r}; axes: {', '.join(axes) or '(none)'}")
        if axis not in by_text:  # once per axis: a selection costs the axis's length plus its values
            values = ds[axis].values
            by_text[axis] = _Texts(values) if values.dtype.kind == "U" else _by_text(values)
        known = by_text[axis]
        texts = [text] if text in known else [t.strip() for t in text.split(",")]
        for wanted in texts:
            if wanted not in known:
                raise error(f"--sel {item!r}: {wanted!r} is not on axis {axis!r}; values: {_some(list(known))}")
            picked.setdefault(axis, {})[known[wanted]] = None
    return {axis: list(values) for axis, values in picked.items()}


def _by_text(values) -> dict[str, Any]:
    """{str(value): value} of an axis's values in order, the first value of
    each text: made whole (``tolist``, a dict built in C), no Python loop per value."""
    items = [python_value(v) for v in values] if values.dtype.kind == "O" else values.tolist()
    texts = list(map(str, items))
    known = dict(zip(texts, items))  # each text where it first comes, with its last value ...
    if len(known) < len(texts):  # ... put back to its first value where a text repeats
        known.update(zip(reversed(texts), reversed(items)))
    return known


class _Texts(Mapping):
    """:func:`_by_text` of a text axis (``<U``: each value its own text),
    looked up whole: each text asked for is found with one comparison of
    the axis in C, no dict of its 10^5 values; after :data:`SCANS` texts,
    the dict of every value, so that many lookups stay linear."""

    def __init__(self, values: np.ndarray) -> None:
        self.values, self.found, self.every = values, {}, None

    def _value(self, text: str) -> Any:
        if self.every is None and len(self.found) >= SCANS:
            self.every = _by_text(self.values)
        if self.every is not None:
            return self.every.get(text, _MISSING)
        if text not in self.found:
            hits = np.flatnonzero(self.values == text) if isinstance(text, str) else ()
            self.found[text] = self.values[hits[0]].item() if len(hits) else _MISSING
        return self.found[text]

    def __contains__(self, text: object) -> bool:
        return self._value(text) is not _MISSING

    def __getitem__(self, text: str) -> Any:
        value = self._value(text)
        if value is _MISSING:
            raise KeyError(text)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(self.values.tolist()))

    def __len__(self) -> int:
        return len(dict.fromkeys(self.values.tolist()))


#: Texts a text axis looks up one by one before it makes the dict of every value.
SCANS = 16
_MISSING = object()


#: Values an error line lists of an axis, at most (an axis may hold 10^5).
LISTED_VALUES = 20


def _some(texts: list[str]) -> str:
    """``texts`` joined by commas, at most :data:`LISTED_VALUES` of them and a count of the rest."""
    if len(texts) <= LISTED_VALUES:
        return ", ".join(texts)
    half = LISTED_VALUES // 2
    return f"{', '.join(texts[:half])}, ... ({len(texts) - 2 * half} more), {', '.join(texts[-half:])}"
