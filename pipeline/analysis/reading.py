"""The store a command reads, opened once, and the cells its ``--sel`` options pick;
or one line saying why not (no store, not ours, damaged, a bad selection); and
how it is read (:func:`read_sweep`: whole in memory, or block by block).  The
views receive what is read here, never a store to open."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
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
    whose growth was interrupted half-way.  A store a live run is growing
    now: :class:`StoreBeingRewritten` naming its pid (read it again)."""
    from ..store import Store, StoreMismatch, answers, interrupted, normalize_url

    try:
        normalize_url(url)  # an unknown protocol, a missing package: the line `run` gives
    except StoreMismatch as exc:  # "--store URL: why": this command's STORE argument
        raise error("store " + str(exc).removeprefix("--store ")) from None
    answers(url)  # storage that does not answer: one line within the read's deadline, not one per request
    st = Store(url)
    if st.kind == "rootless":
        from ..store import rootless_line
        from ..errors import StoreDamaged

        raise StoreDamaged(rootless_line(url))
    if st.kind == "creating":  # a run creating it, or interrupted while it did: no store to read yet
        from ..store import creating_line
        from ..errors import StoreBeingRewritten

        raise StoreBeingRewritten(creating_line(url))
    if st.kind == "empty":  # only a run's lock: a run making the store (its record next), or killed before
        from ..store import being_created

        if (told := being_created(url)) is not None:
            raise told
    if st.kind in ("absent", "empty"):
        raise error(f"store {url}: no sweep store there")
    if st.kind != "boardsweep":
        raise error(f"store {url}: not a boardsweep sweep store")
    with steadily(st.url):
        growing = interrupted(st.attrs)
    if growing is not None and (told := at_work(st.url)) is not None:  # a run growing it now, not interrupted
        raise told
    if not growing_ok and growing is not None:
        raise error(f"store {url}: growing it to a larger spec was interrupted; rerun "
                    f"`boardsweep run SPEC --store {url} --extend` with that spec to finish")
    return st


def read_sweep(st: Store | str, whole: int | None = None, block: int | None = None,
               opened=None) -> tuple[Any, bool]:
    """The read strategy of every command, decided here alone: (the store's
    Dataset, whether it is read block by block).  A grid of at most
    ``whole`` points (default :data:`blocks.BLOCK_POINTS`) is read whole into
    memory; a larger one lazily, a dask chunk a block of ``block`` points
    (default ``whole``), so that memory stays that of a block: in blocks
    iff points > whole.  ``opened``: the store's lazy Dataset where the
    caller already has it (read into memory from there, not opened again)."""
    from .blocks import block_chunks, BLOCK_POINTS
    from .dataset import grid_size
    from ..store import load_sweep, open_sweep, Store

    whole = BLOCK_POINTS if whole is None else int(whole)
    if opened is None and not isinstance(st, Store):
        st = Store(st)
    sized = opened if opened is not None else st.open_raw()  # the grid's size from the store opened once
    if grid_size(sized) <= whole:
        return (opened.load() if opened is not None else load_sweep(st, check=False)), False
    return open_sweep(st, check=False, chunks=block_chunks(sized, block or whole)), True


def read_finished(url: str) -> tuple[Any, bool]:
    """:func:`read_sweep` of the store a run has just checked and written (its summary's read)."""
    from ..store import Store

    allow_many_reads()
    return read_sweep(Store(url))


def read_summary(url: str, sels: tuple[str, ...], rows: bool, error: type[Exception]) -> tuple[Any, bool, int]:
    """``query --summary``'s read: (the Dataset, whether block by block, the
    block's points).  The cells ``sels`` picks, checked, in memory; a whole
    store checked, then :func:`read_sweep`, a block :data:`blocks.ROW_BLOCK_POINTS`
    where every row is printed (``rows``: a table a block), else :data:`blocks.BLOCK_POINTS`."""
    from .blocks import BLOCK_POINTS, ROW_BLOCK_POINTS

    most = ROW_BLOCK_POINTS if rows else BLOCK_POINTS
    if sels:
        return open_store(url, error, sels=sels), False, most
    st = intact_store(url, error)
    allow_many_reads()
    with steadily(st.url, st):
        ds, in_blocks = read_sweep(st, block=most)
    return ds, in_blocks, most


def open_store(url: str | Store, error: type[Exception], check: bool = True, sels: tuple[str, ...] = (),
               eager: bool = True):
    """The store's Dataset in memory (only the cells ``--sel`` options pick,
    when given), or ``error`` in one line: no store, not ours, damaged, a bad
    selection; a store a run packs, grows or creates while it is read:
    :class:`StoreBeingRewritten` (:func:`steadily`).  ``url``: a path or URL, or the store :func:`require_store`
    opened.  ``eager=False``: lazily (:func:`query.open_sweep`), for
    commands that read a few small arrays."""
    from ..store import Store, assert_intact
    from ..errors import StoreDamaged
    from ..store import load_sweep, open_sweep

    st = url if isinstance(url, Store) else require_store(url, error)
    allow_many_reads()
    with steadily(st.url, st):
        try:
            if check:  # before the selection: a relabelled store must not pick its cells by the wrong labels
                assert_intact(st.url, st.check(), st.attrs)
            picked = select(st.open_raw(), sels, error) if sels else None
            return (load_sweep if eager else open_sweep)(st, check=check, sel=picked)
        except StoreDamaged as exc:
            raise error(str(exc)) from None


def intact_store(url: str, error: type[Exception]) -> Store:
    """:func:`require_store`, its every finished cell checked
    (:func:`~boardsweep.pipeline.store.assert_intact` of :meth:`Store.check`): ``error`` in one line
    where damaged, and :class:`StoreBeingRewritten` where a run packs, grows or creates it meanwhile."""
    from ..errors import StoreDamaged
    from ..store import assert_intact

    st = require_store(url, error)
    with steadily(st.url, st):
        try:
            assert_intact(st.url, st.check(), st.attrs)
        except StoreDamaged as exc:
            raise error(str(exc)) from None
    return st


def checked_store(url: str, error: type[Exception]):
    """``status``'s read: (the store, its :class:`Damage`, its lazy Dataset),
    or one line (:class:`Fault`, exit 1): a growth interrupted, labels
    damaged, arrays missing; ``error`` where there is no store; and
    :class:`StoreBeingRewritten` (:func:`steadily`) where a run packs, grows
    or creates it meanwhile, never "damaged" about that."""
    from ..errors import Fault, StoreBeingRewritten
    from ..store import held_still, interrupted, layout_stamp  # not run.growth: it imports the spec parser

    st = require_store(url, error, growing_ok=True)  # opened once: kept for what follows
    before = layout_stamp(st.url)
    with steadily(st.url, st):
        if interrupted(st.attrs) is not None:
            raise Fault(f"store {url} is incomplete: growing it to a larger spec was interrupted; "
                        f"rerun `boardsweep run SPEC --store {url} --extend` with that spec to finish")
        damage = st.check()
        if damage and (told := writing(st)) is not None:
            raise told
        if damage.labels:
            raise Fault(f"store {url} is damaged: {st.describe(damage)}; rerun `boardsweep run SPEC "
                        f"--store {url}` to write its labels again from its spec")
        if damage.arrays:
            raise Fault(f"store {url} is incomplete: {st.describe(damage)}; "
                        f"rerun `boardsweep run SPEC --store {url}` to complete it")
        ds = open_store(st, error, check=False, eager=False)
    if not held_still(st.url, before):  # the check's masks and the Dataset read from two layouts (a growth)
        raise at_work(st.url, before) or StoreBeingRewritten(f"store {url} changed while it was read: read it again")
    return st, damage, ds


@contextmanager
def steadily(url: str, st: Store | None = None) -> Iterator[None]:
    """A command's read of the store at ``url``, whose failure is believed
    only where no run changed the store under it: an error (a "damaged"
    line, a shape or key error of an array moved or resized, a file gone)
    raised while a run created, packed, unpacked or grew the store is
    :class:`StoreBeingRewritten` instead, in one line naming the run's pid
    (:func:`at_work`): read it again.  With the store ``st`` whose check
    found only a task without its checksum record while a live run holds
    it (the task it has just finished), the same (:func:`writing`)."""
    from ..errors import StoreBeingRewritten
    from ..store import Store, layout_stamp, unreachable

    try:
        before = layout_stamp(url)
    except Exception:  # noqa: BLE001 - storage that does not answer: the read itself says so in its line
        before = None
    try:
        yield
    except StoreBeingRewritten:
        raise
    except Exception as exc:  # noqa: BLE001 - re-raised unless a run changed the store under the read
        told = at_work(url, before) if before is not None and not unreachable(exc) else None
        if told is None and not unreachable(exc):
            told = writing(st if st is not None else Store(url))
        if told is None:
            raise
        raise told from exc


def writing(st: Store):
    """The one line (:class:`StoreBeingRewritten`) for a store whose check
    (:meth:`Store.check`, as read) found only tasks without their checksum
    records, a run's lock there (:func:`~boardsweep.pipeline.store.unrecorded_only`):
    a live run's newest task, its record next, or a run killed as it finished
    one (:func:`~boardsweep.pipeline.store.unrecorded_line`); else ``None``."""
    from ..errors import StoreBeingRewritten
    from ..store import StoreLock, unrecorded_line, unrecorded_only

    try:
        if not unrecorded_only(st.check()) or StoreLock(st.url).holder() is None:
            return None
        who = live_run(st.url)
    except Exception:  # noqa: BLE001 - the check's own error is the read's
        return None
    return StoreBeingRewritten(unrecorded_line(st.url, who is not None, who or ""))


def live_run(url: str) -> str | None:
    """The live run holding the store's lock, in words (``pid N on host H``), else ``None``."""
    from ..errors import StoreLocked
    from ..store import StoreLock

    lock = StoreLock(url)
    holder = lock.holder()
    try:
        live = holder is not None and not lock.is_stale(holder)
    except StoreLocked:  # its lock record being written: a run starting
        return "a run starting"
    return f"pid {holder['pid']} on host {holder['host']}" if live and holder else None


def at_work(url: str, before: tuple[bool, bytes | None] | None = None):
    """The one line (:class:`StoreBeingRewritten`) for a store a run is
    creating, or a live run is packing, unpacking or growing (its pid), or
    whose layout changed since ``before`` (:func:`~boardsweep.pipeline.store.layout_stamp`);
    ``None`` where the store held still and no run is changing it."""
    from ..errors import StoreBeingRewritten
    from ..store import creating_line, creation_record, held_still, layout_stamp, lock_only_line, marked

    try:
        if creation_record(url) is not None:
            return StoreBeingRewritten(creating_line(url))
        if (line := lock_only_line(url)) is not None:
            return StoreBeingRewritten(line)
        journal, root = layout_stamp(url)
        who = live_run(url)
        moved = before is not None and not held_still(url, before)
    except Exception:  # noqa: BLE001 - storage that does not answer: the read's own error says so
        return None
    what = "packing or unpacking" if journal else "growing" if marked(root) else ""
    if who and (what or moved):
        return StoreBeingRewritten(f"store {url}: a run ({who}) is {what or 'changing the layout of'} it now; "
                                   "read it again once it ends")
    if moved:
        return StoreBeingRewritten(f"store {url} changed while it was read (a run packed, unpacked or grew it): "
                                   "read it again")
    if journal:  # no run holding it: interrupted, not damaged
        return StoreBeingRewritten(f"store {url}: a run was interrupted while it packed or unpacked it; rerun "
                                   f"`boardsweep run SPEC --store {url}` with its spec to finish that")
    return None


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
