"""The seed half of :mod:`boardsweep.core.rng`, in numpy alone (no numba): the
recorded scheme and a run's key from its seed, as SeedSequence derives it.

Key of a run: ``SeedSequence(seed).generate_state(2, uint64)``; :func:`seed_keys`
computes it for many runs at once, bit for bit.  Split off so that reading a
store (``boardsweep status``, ``query``) need not import numba;
:mod:`boardsweep.core.rng` re-exports every name.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RNG_SCHEME", "seed_key", "seed_keys", "int_words"]

RNG_SCHEME = (
    "numpy.random.SeedSequence -> 2 x uint64 key; per game xoshiro256** state from "
    "SplitMix64(key[0] ^ splitmix64(key[1] + game)); uniform ints by 32-bit multiply-shift"
)

# numpy.random.SeedSequence's hash constants (pool of 4 uint32 words, 16-bit xor-shift)
_INIT_A, _MULT_A = np.uint32(0x43B0D7E5), np.uint32(0x931E8875)
_INIT_B, _MULT_B = np.uint32(0x8B51F9DD), np.uint32(0x58F38DED)
_MIX_L, _MIX_R = np.uint32(0xCA01F9DD), np.uint32(0x4973F715)
_POOL = 4


def seed_key(seed: int | np.random.SeedSequence) -> np.ndarray:
    """Two uint64 words derived from ``seed`` with numpy's SeedSequence."""
    if not isinstance(seed, np.random.SeedSequence):
        seed = np.random.SeedSequence(seed)
    return seed.generate_state(2, np.uint64)


def int_words(value: int) -> list[int]:
    """The 32-bit words SeedSequence reads a non-negative int as: least
    significant first, ``[0]`` for 0 (``value = sum w_i 2^(32 i)``)."""
    value = int(value)
    if value < 0:
        raise ValueError(f"seed entropy must be >= 0, got {value}")
    words = []
    while True:
        words.append(value & 0xFFFFFFFF)
        value >>= 32
        if not value:
            return words


def _hashmix(value: np.ndarray, const: list[np.uint32]) -> np.ndarray:
    """SeedSequence's hashmix on a column of words; ``const`` advances in place."""
    value = value ^ const[0]
    const[0] = np.uint32(const[0] * _MULT_A)
    value = value * const[0]
    return value ^ (value >> np.uint32(16))


def _mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    r = _MIX_L * x - _MIX_R * y
    return r ^ (r >> np.uint32(16))


def seed_keys(entropy: np.ndarray) -> np.ndarray:
    """``seed_key(SeedSequence(row))`` of every row of ``entropy`` at once,
    bit for bit: SeedSequence's mixing of the row's uint32 words into a pool
    of 4, then ``generate_state(2, uint64)``, in uint32 arithmetic mod 2^32
    over the rows (the hash constants do not depend on the data).

    Parameters
    ----------
    entropy : ndarray
        uint32 (runs, words): each run's entropy words as SeedSequence
        reads its list of ints (:func:`int_words` of each, concatenated).

    Returns
    -------
    ndarray
        uint64 (runs, 2): each run's key.
    """
    e = np.ascontiguousarray(entropy, dtype=np.uint32)
    n, width = e.shape
    const = [_INIT_A]
    with np.errstate(over="ignore"):
        zero = np.zeros(n, dtype=np.uint32)
        pool = [_hashmix(e[:, i] if i < width else zero, const) for i in range(_POOL)]
        for src in range(_POOL):
            for dst in range(_POOL):
                if src != dst:
                    pool[dst] = _mix(pool[dst], _hashmix(pool[src], const))
        for src in range(_POOL, width):
            for dst in range(_POOL):
                pool[dst] = _mix(pool[dst], _hashmix(e[:, src], const))
        out = np.empty((n, 4), dtype=np.uint32)
        h = _INIT_B
        for i in range(4):
            value = pool[i % _POOL] ^ h
            h = np.uint32(h * _MULT_B)
            value = value * h
            out[:, i] = value ^ (value >> np.uint32(16))
    return out.astype("<u4").view("<u8").astype(np.uint64)
