"""Which distribution variable a command shows: one rule for ``query`` and ``report``."""

from __future__ import annotations

import xarray as xr

from ..analysis import distribution_variables
from ..errors import InputError

__all__ = ["pick_variable"]


def pick_variable(ds: xr.Dataset, variable: str | None = None,
                  error: type[Exception] | None = None) -> str | None:
    """The distribution variable to show: ``variable`` where given (one of the
    store's, else ``error``, default :class:`InputError`); by default
    ``counts``, else one over ``location``, else the first.  None where the
    store has none and none was asked for, unless ``error`` is given: then
    ``error`` says so."""
    found = distribution_variables(ds)
    if variable is None:
        variable = _default(found)
        if variable is not None or error is None:
            return variable
    if variable not in found:
        raise (error or InputError)(f"--variable {variable!r}: expected one of {', '.join(found) or '(none)'}")
    return variable


def _default(found: dict[str, str]) -> str | None:
    """``counts``, else the first variable over ``location``, else the first of ``found`` ({name: dim})."""
    if not found:
        return None
    if "counts" in found:
        return "counts"
    return next((v for v, d in found.items() if d == "location"), next(iter(found)))
