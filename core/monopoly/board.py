"""The 40-square Monopoly board and the 41 result locations.

Squares 0..39 carry the short names of Project Euler 84 (GO, A1, CC1, ..., H2);
location 40 is ``IN_JAIL``, a token held in jail, told apart from square 10
(JAIL, "just visiting").  ``next_railway`` and ``next_utility`` give, for every
square, the first railway / utility strictly ahead (cards always move forward).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "SQUARES",
    "US_NAMES",
    "LOCATIONS",
    "N_SQUARES",
    "N_LOCATIONS",
    "GO",
    "JAIL",
    "G2J",
    "IN_JAIL",
    "COMMUNITY_CHEST",
    "CHANCE",
    "RAILWAYS",
    "UTILITIES",
    "next_railway",
    "next_utility",
    "merge_jail",
    "modal_string",
]

SQUARES: tuple[str, ...] = (
    "GO", "A1", "CC1", "A2", "T1", "R1", "B1", "CH1", "B2", "B3",
    "JAIL", "C1", "U1", "C2", "C3", "R2", "D1", "CC2", "D2", "D3",
    "FP", "E1", "CH2", "E2", "E3", "R3", "F1", "F2", "U2", "F3",
    "G2J", "G1", "G2", "CC3", "G3", "R4", "CH3", "H1", "T2", "H2",
)  # fmt: skip

US_NAMES: tuple[str, ...] = (
    "Go", "Mediterranean Avenue", "Community Chest", "Baltic Avenue", "Income Tax",
    "Reading Railroad", "Oriental Avenue", "Chance", "Vermont Avenue", "Connecticut Avenue",
    "Jail / Just Visiting", "St. Charles Place", "Electric Company", "States Avenue",
    "Virginia Avenue", "Pennsylvania Railroad", "St. James Place", "Community Chest",
    "Tennessee Avenue", "New York Avenue", "Free Parking", "Kentucky Avenue", "Chance",
    "Indiana Avenue", "Illinois Avenue", "B & O Railroad", "Atlantic Avenue",
    "Ventnor Avenue", "Water Works", "Marvin Gardens", "Go to Jail", "Pacific Avenue",
    "North Carolina Avenue", "Community Chest", "Pennsylvania Avenue",
    "Short Line Railroad", "Chance", "Park Place", "Luxury Tax", "Boardwalk",
)  # fmt: skip

LOCATIONS: tuple[str, ...] = SQUARES + ("IN_JAIL",)
N_SQUARES = 40
N_LOCATIONS = 41
GO, JAIL, G2J, IN_JAIL = 0, 10, 30, 40
COMMUNITY_CHEST = (2, 17, 33)
CHANCE = (7, 22, 36)
RAILWAYS = (5, 15, 25, 35)
UTILITIES = (12, 28)


def _next_of(targets: tuple[int, ...]) -> np.ndarray:
    out = np.empty(N_SQUARES, dtype=np.int64)
    for sq in range(N_SQUARES):
        step = 1
        while (sq + step) % N_SQUARES not in targets:
            step += 1
        out[sq] = (sq + step) % N_SQUARES
    return out


next_railway: np.ndarray = _next_of(RAILWAYS)
next_utility: np.ndarray = _next_of(UTILITIES)


def merge_jail(values: np.ndarray) -> np.ndarray:
    """Fold location IN_JAIL into square 10 (the PE84 convention); last axis 41 -> 40."""
    values = np.asarray(values)
    out = values[..., :N_SQUARES].copy()
    out[..., JAIL] += values[..., IN_JAIL]
    return out


def modal_string(frequency: np.ndarray) -> str:
    """PE84 modal string: the three most frequent squares (IN_JAIL merged into
    JAIL), as two-digit numbers in decreasing order of frequency."""
    squares = merge_jail(np.asarray(frequency, dtype=np.float64))
    top = np.argsort(-squares, kind="stable")[:3]
    return "".join(f"{int(sq):02d}" for sq in top)
