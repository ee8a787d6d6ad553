"""Monopoly rule variants (DESIGN 3.1): parameters, validation, kernel encoding.

Movement rules common to every variant: a roll moves the token by the sum of
two ``dice_sides``-sided dice; landing on G2J, a "go to jail" card or a third
double in a row sends the token to jail, which ends the turn; a double
otherwise earns another roll; back 3 from CH3 lands on CC3, which is resolved.

Tally conventions (what one "event" is):

* ``per_roll`` (PE84): the location each roll ends on, IN_JAIL included;
* ``per_landing`` (the Stats 102A assignment): every square the token comes to rest on, card
  squares and card destinations both counted, G2J never (jail instead), and
  each turn that ends in jail counts IN_JAIL once;
* ``per_turn``: the location at the end of each whole turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..games import Param

from .cards import CHANCE_DECKS, COMMUNITY_CHEST_DECK

__all__ = ["PARAMS", "DECK_POLICIES", "JAIL_STRATEGIES", "TALLIES", "Rules"]

DECK_POLICIES = ("independent", "shuffled_cycle")
JAIL_STRATEGIES = ("short", "long")
TALLIES = ("per_roll", "per_landing", "per_turn")

PARAMS: tuple[Param, ...] = (
    Param("dice_sides", 6, "sides of each of the two dice", minimum=2, maximum=1000),
    Param(
        "deck_policy",
        "independent",
        "independent: each draw uniform; shuffled_cycle: shuffled once per game, drawn cyclically",
        choices=DECK_POLICIES,
    ),
    Param(
        "jail_strategy",
        "short",
        "short: pay and leave at once; long: roll for doubles, leave on the third turn",
        choices=JAIL_STRATEGIES,
    ),
    Param(
        "chance_deck",
        "standard",
        "standard: PE84's 16 cards; classic15: the Stats 102A assignment's 15 cards",
        choices=tuple(CHANCE_DECKS),
    ),
    Param(
        "tally",
        "per_roll",
        "what one counted event is: per_roll, the location each dice roll ends on (PE84); "
        "per_landing, every square come to rest on, card squares and card destinations both "
        "(Stats 102A); per_turn, the location at the end of each whole turn",
        choices=TALLIES,
    ),
)
_BY_NAME = {p.name: p for p in PARAMS}


@dataclass(frozen=True)
class Rules:
    """One validated Monopoly rule variant.

    Build it with :meth:`from_params`; a bad value raises
    :class:`boardsweep.core.games.ParameterError` naming the parameter, the value and the
    allowed values.
    """

    dice_sides: int = 6
    deck_policy: str = "independent"
    jail_strategy: str = "short"
    chance_deck: str = "standard"
    tally: str = "per_roll"

    def __post_init__(self) -> None:
        for name, param in _BY_NAME.items():
            param.validate(getattr(self, name))

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "Rules":
        """Rules from a parameter mapping (missing keys take their defaults)."""
        for name in params:
            if name not in _BY_NAME:
                from ..games import ParameterError

                raise ParameterError(
                    f"monopoly has no parameter {name!r}; known parameters: {', '.join(_BY_NAME)}"
                )
        return cls(**{k: params[k] for k in _BY_NAME if k in params})

    @property
    def chance_cards(self) -> np.ndarray:
        return CHANCE_DECKS[self.chance_deck]

    @property
    def community_cards(self) -> np.ndarray:
        return COMMUNITY_CHEST_DECK

    @property
    def long_jail(self) -> bool:
        return self.jail_strategy == "long"

    @property
    def shuffled(self) -> bool:
        return self.deck_policy == "shuffled_cycle"

    @property
    def tally_code(self) -> int:
        """0 per_roll, 1 per_landing, 2 per_turn (the kernel's encoding)."""
        return TALLIES.index(self.tally)
