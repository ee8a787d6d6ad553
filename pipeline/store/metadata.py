"""The store's self-description (CF conventions), readable with plain xarray.

A reader who has never seen boardsweep opens the store with
``xarray.open_zarr`` (or ``cf_xarray``, or writes it out with ``to_netcdf``)
and finds:

* on every variable and coordinate a short ``long_name`` (a plot label) and a
  ``description`` (the explanation); ``units`` only where a unit exists (a
  game declares them in ``extras["units"]``): counts, shares, dice sides
  and checkpoints carry none, and a currency (``{"money": "HKD"}``), which
  UDUNITS has not, is the attribute ``currency``;
* label coordinates as text in zarr's variable-length ``string`` data type
  (:func:`text`; plain xarray reads it as numpy ``StringDType``,
  boardsweep's readers as fixed-width ``<U``), histogram bins as
  integers (``0, 1, ..., N``; the last bin, ``>= N``, is named by the
  coordinate's ``overflow_bin`` attribute), see :func:`label_coordinate`;
* no CF ``axis`` attribute: a board's locations are not longitudes, nor
  checkpoints (turns played) times, and CF tools read ``X`` and ``T`` so;
* seats that do not play at a grid point with fewer players as NaN: a
  variable over seats of a game with a ``players`` parameter (and, with a
  precision rule, every simulated integer variable: replicate slots it did
  not use) is float64 whose values are whole numbers, NaN where there is
  none, its integer dtype in the attribute ``integer_dtype``
  (:mod:`boardsweep.pipeline.store.integers`): plain xarray reads NaN there,
  so ``ds.wins.sum("seat")`` sums the players, and writes it to netCDF
  without a warning;
* exact answers named ``exact_*`` (:data:`boardsweep.core.games.EXACT_PREFIX`),
  simulated sums by what they count;
* ``<dim>_name`` beside a label coordinate whose labels are codes (Monopoly's
  ``location``: ``CC1`` -> "Community Chest", ``IN_JAIL`` -> "In Jail");
* global ``title``, ``description`` (the spec's), ``Conventions``,
  ``history`` (one line per run that changed the store), ``comment`` (how to
  compute a frequency) and the run shape as plain integers (``games``,
  ``players``, ``turns``, ``replicates``, ...);
* ``exact_exists`` (grid dims, boolean) and ``exact_note`` (why no exact answer
  exists): with ``exact_done`` they tell the three states apart, see
  :func:`exact_state`;
* ``boardsweep_format`` (:data:`STORE_FORMAT`); a store without it is format 1
  (string histogram bins, variable-length strings, padded seats stored as
  0, the names of the simulated variables in ``variables``); format 2 kept
  the packed layout's record on each array (``boardsweep_layout``), named
  some exact variables without the ``exact_`` prefix and marked every game
  dim as CF axis X; format 4 is format 3 with tasks of several grid points
  (root attribute ``grid_chunks``, :data:`MULTI_POINT_FORMAT`); format 5
  stores text as zarr's ``string``, where 2 to 4 stored zarr-python's
  ``fixed_length_utf32``; format 6 (:data:`STORE_FORMAT`) stores the
  integers that may be missing as float64 (NaN), where 5 stored int64 with
  ``_FillValue = -1``.  Readers take all six
  (:func:`simulated_variables`, :func:`exact_renames`,
  :func:`boardsweep.pipeline.store.reads.fixed_width`,
  :func:`boardsweep.pipeline.store.reads.integer_view`), runs refuse to
  write into an older format, in one line naming what to do
  (:func:`boardsweep.pipeline.store.check_writable`);
* boardsweep's own bookkeeping only in the root attributes (the packed
  layout's record, ``boardsweep_layout``) and the ``.boardsweep/`` folder
  (a zarr group of its own, so that zarr lists it without a warning): no
  variable a user reads carries any.

The texts come from the game interface: ``Variable.description``,
``Param.help``, ``Game.label_names`` and the optional
``extras["no_exact_reason"](params) -> str | None``.
"""

from __future__ import annotations

import json

import datetime as _dt
import re
from importlib.metadata import version
from typing import Any, Mapping

import numpy as np
import xarray as xr
import zarr

from ...core.games import EXACT_PREFIX
from .zarr_private import quiet

__all__ = [
    "recorded_spec",
    "CONVENTIONS",
    "STORE_FORMAT",
    "store_format",
    "simulated_variables",
    "short_name",
    "label_coordinate",
    "label_text",
    "text",
    "EXACT_STATES",
    "describe",
    "global_attrs",
    "history_line",
    "append_history",
    "exact_state",
    "exact_states",
    "exact_codes",
    "exact_state_text",
    "EXACT_CODES",
    "exact_renames",
    "no_exact_reason",
    "axis_values",
]

CONVENTIONS = "CF-1.10"

#: The layout version this boardsweep writes (attribute ``boardsweep_format``;
#: absent: format 1).  2: fixed-width strings, numeric histogram bins,
#: seats that do not play stored as missing, ``simulated_variables``, the
#: packed layout recorded in each array.  3: every exact variable named
#: ``exact_*``, the packed layout recorded in the root attributes (no
#: bookkeeping on the variables), one CF X axis, ``.boardsweep/`` a zarr
#: group, complete packed integer arrays without ``_FillValue``.  4: format
#: 3 with tasks of several grid points (:data:`MULTI_POINT_FORMAT`).  5:
#: text in zarr's variable-length ``string`` data type (format 2 to 4:
#: zarr-python's ``fixed_length_utf32``, which other zarr implementations
#: do not read), seats that do not play at the fill value declared as
#: ``_FillValue`` in a complete store too (plain xarray reads NaN there), no
#: CF ``axis`` (the game's labels are not space, checkpoints not time),
#: ``done``/``exact_done``/``exact_exists`` booleans, whatever a task holds.
#: 6: an integer variable that can hold cells without a value in the
#: finished store (seats that do not play, replicate slots a precision rule
#: did not use: :func:`.schema.may_miss`) stored as float64, NaN there, its
#: integer dtype in the attribute ``integer_dtype`` (:mod:`.integers`), where
#: format 5 stored int64 with ``_FillValue = -1``, whose lazy ``to_netcdf``
#: plain xarray warns about (zarr-python's explicit ``<i8``).  Format 5's -1
#: is ambiguous (a value of -1 reads as missing); format 6's other integer
#: arrays declare their fill value, int64's least value (:data:`.integers.FILL`,
#: which no output may take; -1 in stores written before it was), and are
#: read by what they declare.  7: format 6 with each headline variable's
#: equal-batch series (``series_*`` over dim ``batch``, :func:`.schema.series_names`),
#: the draws of the convergence diagnostics; format 6 stores read as before,
#: their diagnostics saying that they lack the series.
STORE_FORMAT = 7

#: Format 4: a store whose tasks hold several grid points (root attribute
#: ``grid_chunks``), which the releases that wrote format 3 refuse in one
#: line; formats 5 and 6 store either kind.
MULTI_POINT_FORMAT = 4

#: The formats this boardsweep reads (it adds to :data:`STORE_FORMAT` only).
READABLE_FORMATS = (1, 2, 3, 4, 5, 6, 7)

#: The formats this boardsweep writes into: :data:`STORE_FORMAT` only, so
#: that a store never mixes fixed-width and variable-length text, nor
#: int64 and float64 masked integers.
WRITABLE_FORMATS = (STORE_FORMAT,)

def exact_renames(attrs: dict) -> dict[str, str]:
    """Old name -> format-3 name of the exact variables of an older store
    (format 1 and 2 named some without the prefix: ``expected_rolls`` is
    ``exact_expected_rolls`` now); empty for a format-3 store."""
    if store_format(attrs) >= 3:
        return {}
    return {name: EXACT_PREFIX + name for name in attrs.get("exact_variables", [])
            if not str(name).startswith(EXACT_PREFIX)}


def store_format(attrs: dict) -> int:
    """The layout version of a store from its attributes (1 where none is recorded)."""
    value = attrs.get("boardsweep_format", attrs.get("store_format", 1))
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def recorded_spec(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """The canonical spec a store records (its root attribute ``spec_canonical``),
    parsed: a new dict each call, the caller's to change; empty where it has none."""
    try:
        found = json.loads(attrs["spec_canonical"])
    except (KeyError, TypeError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def simulated_variables(attrs: dict) -> list[str]:
    """Names of the store's simulated variables (``simulated_variables``;
    ``variables`` in format 1)."""
    return list(attrs.get("simulated_variables", attrs.get("variables", [])))


def short_name(description: str, fallback: str) -> str:
    """A ``long_name`` for plots: ``description`` up to its first `` (``, ``; `` or ``: ``."""
    head = re.split(r" \(|; |: ", description or "", maxsplit=1)[0].strip().rstrip(",.:")
    return head or fallback.replace("_", " ")


_INT = re.compile(r"-?[0-9]+")


def label_coordinate(labels) -> tuple[np.ndarray, dict[str, Any]]:
    """The stored values of a game's labels and their attributes.

    Histogram bins ``'0', '1', ..., '>=N'`` become the integers ``0..N``
    with ``overflow_bin = N`` (the last bin counts every value >= N); other
    labels become text (:func:`text`)."""
    texts = [str(x) for x in labels]
    overflow = bool(texts) and texts[-1].startswith(">=")
    body = texts[:-1] + [texts[-1][2:].strip()] if overflow else texts
    if texts and all(_INT.fullmatch(t) for t in body):
        values = np.array([int(t) for t in body], dtype=np.int64)
        if len(np.unique(values)) == len(values) and (not overflow or values[-1] == values.max()):
            attrs: dict[str, Any] = {}
            if overflow:
                last = int(values[-1])
                attrs = {"overflow_bin": last,
                         "comment": f"bin {last} counts every value >= {last}; every other bin its own value"}
            return values, attrs
    return text(texts), {}


def text(values) -> np.ndarray:
    """``values`` as an object array of Python strings: what xarray writes
    in zarr's variable-length ``string`` data type (``vlen-utf8``), which
    any zarr v3 reader knows, rather than a fixed width."""
    items = np.asarray(values, dtype=object)
    out = np.empty(items.shape, dtype=object)
    out.reshape(-1)[:] = [str(v) for v in items.reshape(-1)]
    return out



def axis_values(values: list) -> np.ndarray:
    """A grid axis's values: numbers as they are, text as variable-length text (:func:`text`)."""
    array = np.asarray(values)
    return text(array) if array.dtype.kind in "OUT" else array

def label_text(coord: xr.DataArray) -> list[str]:
    """The labels of a coordinate as text: ``>=N`` for a histogram's overflow bin."""
    last = coord.attrs.get("overflow_bin")
    return [f">={x}" if last is not None and x == last else str(x) for x in coord.values.tolist()]


#: The three exact states, as :func:`exact_state` names them.
EXACT_STATES = ("stored", "none", "pending")

_STATE_TEXT = {
    "stored": "exact answer stored",
    "none": "no single exact answer exists",
    "pending": "not computed yet",
}


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def history_line(what: str) -> str:
    """One ``history`` line: the UTC time, the program and what it did."""
    return f"{_now()} boardsweep {version('boardsweep')}: {what}"


def no_exact_reason(game, params: dict) -> str | None:
    """Why the game has no single exact answer for ``params`` (None: it has one)."""
    if not game.exact_variables:
        return f"the game {game.name!r} has no exact solver"
    hook = game.extras.get("no_exact_reason")
    return None if hook is None else hook(params)


def global_attrs(spec, game) -> dict[str, Any]:
    """Title, description, Conventions, history, comment and the run shape."""
    points = int(np.prod(spec.shape)) if spec.shape else 1
    axes = ", ".join(spec.axes) or "no grid axes"
    attrs: dict[str, Any] = {
        "title": f"boardsweep sweep {spec.name!r}: {game.description}",
        "description": spec.description or f"{game.description}; grid over {axes}",
        "Conventions": CONVENTIONS,
        "history": history_line(f"created from {spec.source}"),
        "source": "boardsweep simulation (numba kernels) and exact solvers",
        "comment": _reading_guide(game),
        "grid_points": points,
        "replicates": int(spec.replicates),
        "checkpoints": int(len(spec.checkpoints)),
    }
    for key, value in spec.run_shape.items():
        attrs[key] = int(value)
    if spec.precision_stderr is not None:  # replicates: the first round
        attrs.update(precision_stderr=float(spec.precision_stderr), max_replicates=int(spec.max_replicates))
    return attrs


def _reading_guide(game) -> str:
    """How to turn the stored integers into the numbers a reader wants."""
    lines = [f"{game.description}."]
    for name, var in game.variables.items():
        if len(var.dims) >= 2 and var.dims[0] == "checkpoint":
            dim = var.dims[-1]
            lines.append(
                f"Relative frequency of each {dim}: {name} / {name}.sum('{dim}') at a checkpoint "
                f"(one replicate), or pooled over replicates; its exact counterpart is in the "
                f"exact_* variables where exact_exists = 1."
            )
            break
    lines.append(
        f"checkpoint = {game.checkpoint_of} played so far; simulated arrays are cumulative. "
        "Cells not yet computed read as NaN (see done and exact_done)."
    )
    return " ".join(lines)


def _param_help(game, name: str) -> str:
    for p in game.params:
        if p.name == name:
            return p.help or name
    return name


#: The game dim whose padded entries do not play where a grid point has
#: fewer ``players`` than the dim has labels (see :func:`playing`).
SEAT_DIM = "seat"


def playing(game, params: dict) -> int | None:
    """How many leading ``seat`` labels play at this grid point: its
    ``players`` parameter where the game has one and a ``seat`` dim, else
    ``None`` (every label counts)."""
    if "players" not in params or not any(SEAT_DIM in v.dims for v in game.variables.values()):
        return None
    return int(params["players"])


#: A declared unit of this form (ISO 4217: ``HKD``, ``USD``) is a currency,
#: which UDUNITS (CF's units) has not: recorded as ``currency``, not ``units``.
_CURRENCY = re.compile(r"[A-Z]{3}")


def _variable_attrs(game, name: str, var) -> dict[str, Any]:
    """``long_name``, ``description`` and, where the game declares one,
    ``units`` (a currency code as ``currency``, :data:`_CURRENCY`)."""
    attrs: dict[str, Any] = {"long_name": short_name(var.description, name),
                             "description": var.description or name.replace("_", " ")}
    unit = game.extras.get("units", {}).get(name) if isinstance(game.extras.get("units"), dict) else None
    if unit:
        attrs["currency" if _CURRENCY.fullmatch(str(unit)) else "units"] = str(unit)
    notes = []
    if name in game.exact_variables:
        notes.append("NaN where no single exact answer exists (exact_exists = 0, reason in exact_note) "
                     "or it is not computed yet (exact_done = 0)")
    if SEAT_DIM in var.dims and any(p.name == "players" for p in game.params):
        notes.append("NaN for the seats beyond the grid point's number of players (they do not play)")
    if notes:
        attrs["comment"] = "; ".join(notes)
    for h in getattr(game, "headlines", ()):
        if h.numerator == name:  # the headline estimated from this variable and its standard error's basis
            attrs["headline"] = h.name
            attrs["standard_error"] = h.basis_text
    return attrs


def describe(ds: xr.Dataset, spec, game) -> xr.Dataset:
    """``ds`` (a store template) with every CF attribute and the exact markers added."""
    ds = ds.copy()
    ds.attrs.update(global_attrs(spec, game))
    for name, var in {**game.variables, **game.exact_variables}.items():
        if name in ds:
            ds[name].attrs.update(_variable_attrs(game, name, var))
    # booleans, no CF flags: netCDF stores them as int8, a list attribute as int64, and CF wants the two alike
    ds["done"].attrs.update(long_name="replicate done", description="replicate finished and written (true) or not yet")
    ds["exact_done"].attrs.update(long_name="exact answer computed",
                                  description="exact solver ran for this grid point (true) or not yet")
    for axis in spec.axes:
        ds[axis].attrs.update(long_name=axis.replace("_", " "), description=_param_help(game, axis))
    ds["replicate"].attrs.update(long_name="replicate",
                                 description="independent replicate (own random stream) of the run shape")
    ds["checkpoint"].attrs.update(
        long_name=f"{game.checkpoint_of} played",
        description=f"{game.checkpoint_of} played so far: simulated arrays are cumulative up to here")
    for dim in game.coords_for(spec.resolved_points()[0][1]):  # no CF axis: labels are not space, nor checkpoints time
        if dim in ds.coords:
            last = ds[dim].attrs.get("overflow_bin")
            ds[dim].attrs.update(long_name=dim.replace("_", " "), description=(
                f"the game's {dim} labels" if last is None else
                f"histogram bin: the number of {dim} it counts (bin {last}: {last} or more)"))
            names = getattr(game, "label_names", {}).get(dim)
            if names is not None and len(names) == ds.sizes[dim]:
                ds = ds.assign_coords({f"{dim}_name": (dim, text(list(names)))})
                ds[f"{dim}_name"].attrs.update(long_name=f"{dim} name", description=f"full name of each {dim} label")
    return _tidied(_exact_markers(ds, spec, game))


def _tidied(ds: xr.Dataset) -> xr.Dataset:
    """Every other variable (e.g. the precision rule's) in the same style: a
    sentence-long ``long_name`` becomes the ``description`` beside a short
    one, and the dimensionless ``units: "1"`` goes."""
    for name in ds.variables:
        attrs = ds[name].attrs
        if attrs.get("units") == "1":
            del attrs["units"]
        if "long_name" in attrs and "description" not in attrs:
            attrs["description"] = attrs["long_name"]
            attrs["long_name"] = short_name(attrs["long_name"], str(name))
    return ds


def _exact_markers(ds: xr.Dataset, spec, game) -> xr.Dataset:
    """``exact_exists`` (1/0 per grid point) and ``exact_note`` (the reason when 0)."""
    shape = spec.shape
    if not game.exact_variables or "no_exact_reason" not in game.extras:  # one reason for every point: whole arrays
        reason = no_exact_reason(game, {}) or ""
        exists, notes = np.full(shape, not reason), np.full(shape, reason, dtype=object)
    else:
        exists, notes = np.ones(shape, dtype=bool), np.full(shape, "", dtype=object)
        for index, params in spec.resolved_points():
            reason = no_exact_reason(game, params)
            if reason:
                exists[index], notes[index] = False, reason
        notes = text(notes)
    dims = tuple(spec.axes)
    ds["exact_exists"] = xr.Variable(dims, exists, {
        "long_name": "exact answer exists",
        "description": "a single exact answer exists for this grid point (true) or none exists"})
    ds["exact_note"] = xr.Variable(dims, notes, {  # Python strings already (:func:`text`)
        "long_name": "why no exact answer", "description": "why no single exact answer exists (empty where one exists)"})
    return ds


def exact_state(ds: xr.Dataset, point: dict[str, Any]) -> tuple[str, str]:
    """``(state, text)`` of one grid point: state is ``stored``, ``none`` or
    ``pending`` (:data:`EXACT_STATES`); text says it in words, with the reason
    where none exists."""
    states, texts = exact_states(ds.sel(point) if point else ds)
    return str(states.item()), str(texts.item())


def exact_states(ds: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
    """:func:`exact_state` of every grid point at once: two object arrays
    shaped like the grid (dims in ``grid_axes`` order), made from
    :func:`exact_codes` with whole arrays."""
    code, noted_at, notes = exact_codes(ds)
    flat = code.reshape(-1)
    states = np.array(EXACT_CODES, dtype=object)[flat]
    texts = np.array([_STATE_TEXT[s] for s in EXACT_CODES], dtype=object)[flat]
    texts[noted_at] = [exact_state_text("none", n) for n in notes]
    return states.reshape(code.shape), texts.reshape(code.shape)


#: The exact states by their code in :func:`exact_codes`.
EXACT_CODES = ("pending", "stored", "none")


def exact_state_text(state: str, note: str = "") -> str:
    """A grid point's exact state in words (:func:`exact_states`), with the
    reason ``note`` where none exists and one is given."""
    return f"{_STATE_TEXT['none']}: {note}" if state == "none" and note else _STATE_TEXT[state]


def exact_codes(ds: xr.Dataset) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The exact state of every grid point as one byte, an index into
    :data:`EXACT_CODES` (int8, shaped like the grid, dims in ``grid_axes``
    order); the flat indices of the points with no single exact answer whose
    ``exact_note`` gives a reason, and those reasons (``exact_note`` is read
    only where an answer is missing).  Stores made before ``exact_exists``
    was recorded infer ``none`` from an exact answer that is all NaN."""
    axes = [a for a in ds.attrs.get("grid_axes", []) if a in ds["exact_done"].dims]
    grid = lambda v: v.transpose(*axes, ...).values  # noqa: E731
    done = grid(ds["exact_done"]).astype(bool)
    names = list(ds.attrs.get("exact_variables", []))
    if "exact_exists" in ds:
        exists = grid(ds["exact_exists"]).astype(bool)
    else:
        exists = np.zeros(done.shape, dtype=bool)
        for name in names:
            values = grid(ds[name]).astype(float).reshape(*done.shape, -1)
            exists |= np.isfinite(values).any(-1)
    code = np.full(done.shape, EXACT_CODES.index("none"), dtype=np.int8)  # whole arrays: no loop per point
    code[exists], code[~done] = EXACT_CODES.index("stored"), EXACT_CODES.index("pending")
    none = code.reshape(-1) == EXACT_CODES.index("none")
    if not none.any():
        return code, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object)
    if "exact_exists" not in ds:
        notes = np.full(int(none.sum()), "" if names else "the game has no exact solver", dtype=object)
    elif "exact_note" in ds:
        notes = np.asarray(grid(ds["exact_note"]), dtype=object).reshape(-1)[none]
    else:
        notes = np.full(int(none.sum()), "", dtype=object)
    noted = notes.astype(str) != ""
    return code, np.flatnonzero(none)[noted], notes[noted]


def append_history(url: str, what: str) -> None:
    """Append one :func:`history_line` to the store's ``history`` attribute
    (and re-consolidate the metadata so that ``xarray.open_zarr`` sees it)."""
    with quiet():
        group = zarr.open_group(url, mode="r+")
        old = str(group.attrs.get("history", "")).rstrip("\n")
        group.attrs["history"] = (old + "\n" if old else "") + history_line(what)
        zarr.consolidate_metadata(url)

