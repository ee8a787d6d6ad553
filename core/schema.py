"""The parts a game is declared with: its parameters (:class:`Param`),
output arrays (:class:`Variable`), ratios (:class:`Ratio`) and headline
quantities (:class:`Headline`); :class:`boardsweep.core.games.Game` holds them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .errors import ParameterError

__all__ = ["Param", "Variable", "Ratio", "Headline"]


@dataclass(frozen=True)
class Param:
    """One game parameter, a possible sweep axis.

    Parameters
    ----------
    name : str
        The parameter's name as written in specs and ``--set``.
    default : int | float | str
        The value used when none is given.
    help : str
        One line for users.
    choices : tuple, optional
        The allowed values, for a categorical parameter.
    minimum, maximum : int, optional
        Inclusive bounds, for an integer parameter.
    check : callable, optional
        An extra validator ``value -> value`` raising ParameterError, for
        parameters with a richer grammar (e.g. ``reserve:R``).
    """

    name: str
    default: Any
    help: str = ""
    choices: tuple | None = None
    minimum: int | None = None
    maximum: int | None = None
    check: Callable[[Any], Any] | None = None

    @property
    def kind(self) -> type:
        return type(self.default)

    def allowed(self) -> str:
        """Describe the allowed values in words."""
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind is int:
            lo = "" if self.minimum is None else f" >= {self.minimum}"
            hi = "" if self.maximum is None else f" <= {self.maximum}"
            return f"an integer{lo}{hi and (' and' if lo else '') + hi}"
        return f"a {self.kind.__name__}"

    def parse(self, text: str) -> Any:
        """Convert a command-line string (``--set name=text``) and validate it."""
        if self.kind is int:
            try:
                value: Any = int(text)
            except ValueError:
                raise ParameterError(
                    f"parameter {self.name!r}: {text!r} is not {self.allowed()}"
                ) from None
        elif self.kind is float:
            try:
                value = float(text)
            except ValueError:
                raise ParameterError(
                    f"parameter {self.name!r}: {text!r} is not {self.allowed()}"
                ) from None
        else:
            value = text
        return self.validate(value)

    def validate(self, value: Any) -> Any:
        """Return ``value`` if it is allowed, else raise :class:`ParameterError`."""
        given = value
        if self.kind is int:
            ok = not isinstance(value, bool) and isinstance(value, (int, np.integer))
            value = int(value) if ok else value
            ok = ok and (self.minimum is None or value >= self.minimum) and (self.maximum is None or value <= self.maximum)
        elif self.kind is float:
            ok = not isinstance(value, bool) and isinstance(value, (int, float, np.number))
            value = float(value) if ok else value
        else:
            ok = isinstance(value, str)
        if not ok or (self.choices is not None and value not in self.choices):
            raise ParameterError(f"parameter {self.name!r}: {given!r} is not allowed; expected {self.allowed()}")
        if self.check is not None:
            value = self.check(value)
        return value


@dataclass(frozen=True)
class Variable:
    """An output array of a game, per run (grid and replicate dims excluded).

    ``dims`` lists the array's dimensions in order; ``checkpoint`` comes first
    for simulation outputs.  Every other dimension must have its labels in
    ``Game.coords``.
    """

    dims: tuple[str, ...]
    dtype: str
    description: str = ""


@dataclass(frozen=True)
class Ratio:
    """An estimate reported with a 95% interval: ``numerator / denominator``,
    pooled over the done replicates at a checkpoint.

    Parameters
    ----------
    numerator : str
        A simulation variable (cumulative), e.g. ``wins`` (checkpoint, seat).
    denominator : str
        A simulation variable, or ``"checkpoint"`` for the checkpoint value
        itself (e.g. the number of games played so far).
    kind : {"share", "mean"}
        ``share``: successes out of trials, exact (Clopper-Pearson) interval on the pooled
        counts; ``mean``: a mean per unit, normal interval from the spread of
        the replicates' own ratios.
    exact : str, optional
        The ``exact_variables`` entry that this ratio estimates.
    """

    numerator: str
    denominator: str
    kind: str = "share"
    exact: str | None = None


@dataclass(frozen=True)
class Headline:
    """A quantity the game exists to answer, estimated from its stored integer
    outputs and compared with its exact value where one exists.

    The estimate is a ratio of sums over the finished replicates at a
    checkpoint, ``sum numerator / sum denominator``.  Its standard error is

    * per unit, pooled (``squares`` given): the numerator is a sum over
      independent units (games) of a per-unit value ``x`` and ``squares`` the
      sum of ``x^2``, the denominator counts the units:
      ``s^2 = (sum x^2 - (sum x)^2 / N) / (N - 1)``, ``se = s / sqrt(N)``,
      ``df = N - 1``.  For a 0/1 outcome (a win; a game in a histogram bin)
      ``squares`` is the numerator itself (``x^2 = x``);
    * per replicate (no ``squares``): the linearised ratio estimator from the
      spread of the R replicates, ``df = R - 1`` (tokens within a replicate
      are one correlated Markov chain, so the replicate is the unit).

    Parameters
    ----------
    name : str
        Short name (``mean_rolls``, ``win_share``, ``frequency``).
    description : str
        What it is, in a line.
    numerator : str
        A simulated cumulative variable, ``(checkpoint,)`` or ``(checkpoint, DIM)``.
    denominator : str, optional
        A simulated ``(checkpoint,)`` variable, ``"checkpoint"`` (the
        checkpoint value: e.g. games played) or None: the numerator summed
        over its own DIM (a distribution: frequencies that sum to 1).
    squares : str, optional
        Sum over units of the squared per-unit value (see above).
    exact : str, optional
        The ``exact_variables`` entry it estimates (normalised over DIM for a
        distribution; its value at the checkpoint where it has a checkpoint dim).
    kind : {"mean", "distribution"}
        ``mean``: one t test per label against the exact value;
        ``distribution``: a goodness-of-fit test of the whole distribution
        (chi-square on pooled counts when units are independent, i.e.
        ``squares`` given; else one t test per label with at least
        ``MIN_COUNT`` counts per replicate).
    exact_unless : str, optional
        A simulated variable whose non-zero value voids the exact answer: at a
        grid point where it is above 0 (summed over the finished replicates
        and its labels, at the checkpoint) the exact value is not the
        simulator's expectation there and the point is not tested (hk_monopoly's
        ``retired``: its landing reference assumes nobody retires).
    question : str, optional
        The question the headline answers, as a user would ask it (a sentence
        ending in ``?``): what ``run``, ``query --summary`` and the report
        print above its answer.  A game may leave it out (plugin games): the
        description stands in.
    cap : str, optional
        A parameter that bounds the per-unit value from above (hk_monopoly's
        ``rounds``: a game that nobody wins stops there).  An estimate equal to
        the cap with no spread is every game reaching the cap, censored rather
        than measured: the summaries say so.
    """

    name: str
    description: str
    numerator: str
    denominator: str | None = "checkpoint"
    squares: str | None = None
    exact: str | None = None
    kind: str = "mean"
    exact_unless: str | None = None
    question: str = ""
    cap: str | None = None

    @property
    def basis(self) -> str:
        """``"units"`` (pooled per-unit s.e.) or ``"replicates"``."""
        return "units" if self.squares is not None else "replicates"

    @property
    def basis_text(self) -> str:
        """The standard error's basis in words, with its degrees of freedom."""
        if self.squares == self.numerator:
            return (f"per game, pooled from {self.numerator} (a 0/1 outcome per game, so sum x^2 = sum x) over "
                    "all finished replicates; t with df = games - 1")
        if self.squares is not None:
            return (f"per game, pooled from {self.numerator} and {self.squares} over all finished replicates; "
                    "t with df = games - 1")
        return "from the spread of the replicates' own ratios; t with df = replicates - 1"
