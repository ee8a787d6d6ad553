"""Every exception class of the core (games, their parameters and boards)."""

from __future__ import annotations

__all__ = ["ParameterError", "GameNotInstalled", "BoardError"]


class ParameterError(ValueError):
    """A game parameter or run-shape value is invalid.

    The message names the parameter, the value given and what is allowed.
    """


class GameNotInstalled(ParameterError):
    """A registered game whose module cannot be imported here (for example on a
    Dask worker that lacks the game's distribution).  The message names the
    game and the distribution that provides it."""


class BoardError(ParameterError):
    """A board file is missing, unreadable or invalid (message names file, square, key)."""
