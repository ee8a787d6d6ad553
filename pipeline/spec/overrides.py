"""``--set KEY=VALUE`` overrides of a spec: set in the parsed file before it is validated."""

from __future__ import annotations

import tomllib
from typing import Any

from ..errors import SpecError

__all__ = ["apply_overrides"]


def apply_overrides(raw: dict[str, Any], overrides: tuple[str, ...] | list[str], source: str = "--set") -> dict:
    """Set each ``KEY=VALUE`` of ``overrides`` in the parsed spec ``raw``, in place.

    ``KEY`` is a dotted path (``run.replicates``, ``grid.dice_sides``,
    ``storage_options.client_kwargs.region_name``); missing tables are made.
    ``VALUE`` is read as a TOML value (``16``, ``1e-4``, ``true``,
    ``"text"``, ``[4, 6]``); otherwise a comma-separated list of them
    (``4,6``), otherwise plain text (``per_roll``).  A grid axis is always a
    list (``grid.dice_sides=4`` is ``[4]``).  Keys and values are validated
    afterwards, like the file's.

    Examples
    --------
    >>> apply_overrides({"run": {"replicates": 8}}, ["run.replicates=2", "grid.dice_sides=4,6"])
    {'run': {'replicates': 2}, 'grid': {'dice_sides': [4, 6]}}
    >>> apply_overrides({}, ["params.tally=per_landing"])
    {'params': {'tally': 'per_landing'}}
    """
    for item in overrides:
        key, sep, text = item.partition("=")
        path = [part.strip() for part in key.split(".")]
        if not sep or not all(path):
            raise SpecError(f"{source}: --set {item!r}: expected KEY=VALUE, KEY a dotted spec key "
                            "such as run.replicates or grid.dice_sides")
        table = raw
        for depth, part in enumerate(path[:-1]):
            table = table.setdefault(part, {})
            if not isinstance(table, dict):
                raise SpecError(f"{source}: {'.'.join(path[:depth + 1])}: is not a table, so --set {key} "
                                "cannot set a key inside it")
        value = _override_value(text.strip())
        if path[0] == "grid" and len(path) == 2 and not isinstance(value, list):
            value = [value]
        table[path[-1]] = value
    return raw


def _override_value(text: str) -> Any:
    """A ``--set`` value: TOML, else a comma-separated list of TOML values or words, else text."""
    def toml(item: str) -> Any:
        return tomllib.loads(f"v = {item}")["v"]

    try:
        return toml(text)
    except tomllib.TOMLDecodeError:
        pass
    if "," not in text:
        return text
    items = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        try:
            items.append(toml(part))
        except tomllib.TOMLDecodeError:
            items.append(part)
    return items

