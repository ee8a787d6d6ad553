"""A spec written as a dict, as TOML text: what ``Spec.from_dict`` and
``--set`` record in the store, like a file's text."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..errors import SpecError
from ..words import python_value

__all__ = ["toml_text"]


def toml_text(values: dict[str, Any], source: str = "<spec dict>") -> str:
    """TOML text of a spec dict: top-level keys first, then one ``[table]`` per
    dict value (values written as JSON, which is TOML for strings, numbers,
    booleans and lists of them)."""
    if not isinstance(values, dict):
        raise SpecError(f"{source}: expected a dict shaped like a spec file, got {type(values).__name__}")
    top = [f"{key} = {_toml_value(source, key, v)}" for key, v in values.items() if not isinstance(v, dict)]
    tables = []
    for table, content in values.items():
        if isinstance(content, dict):
            tables += ["", f"[{table}]", *(f"{k} = {_toml_value(source, f'{table}.{k}', v)}"
                                          for k, v in content.items())]
    return "\n".join(top + tables) + "\n"


def _toml_value(source: str, key: str, value: Any) -> str:
    value = python_value(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(source, key, v) for v in value) + "]"
    if isinstance(value, dict):  # an inline table, e.g. [storage_options] client_kwargs = {...}
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml_value(source, f'{key}.{k}', v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, (bool, int, str)) or (isinstance(value, float) and np.isfinite(value)):
        return json.dumps(value)
    raise SpecError(f"{source}: {key}: expected a string, number, boolean or list of them, got {value!r}")

