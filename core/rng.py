"""Random streams for the numba kernels: one xoshiro256** stream per game.

Scheme (recorded in every store as :data:`RNG_SCHEME`): a run's seed (an int or
a :class:`numpy.random.SeedSequence`) yields two 64-bit words ``key``; game
``g`` of the run starts from the xoshiro256** state made of four successive
SplitMix64 outputs seeded with ``key[0] ^ splitmix64(key[1] + g)``.  Each game
thus has its own stream, independent of how many games a run holds or of the
order in which games are played, and no global numba RNG state is used.

Uniform integers in ``[0, n)`` are drawn by Lemire's multiply-shift on the 32
high bits of one output, ``(x >> 32) * n >> 32``: the bias is below
``n / 2**32`` (< 5e-9 for the dice sizes used here), far below any Monte Carlo
resolution.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from .seeds import RNG_SCHEME, int_words, seed_key, seed_keys  # noqa: F401 - re-exported

__all__ = ["RNG_SCHEME", "seed_key", "seed_keys", "int_words", "game_state", "xoshiro", "below", "next_u64", "randint", "shuffle"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, inline="always")
def _splitmix64(x):
    z = x + uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> uint64(27))) * uint64(0x94D049BB133111EB)
    return z ^ (z >> uint64(31))


@njit(cache=True, nogil=True)
def game_state(key, game, out):
    """Fill ``out`` (4 x uint64) with the xoshiro256** start state of game ``game``:
    four successive SplitMix64 outputs from ``key[0] ^ splitmix64(key[1] + game)``."""
    x = key[0] ^ _splitmix64(key[1] + uint64(game))
    for i in range(4):
        out[i] = _splitmix64(x)
        x = x + uint64(0x9E3779B97F4A7C15)


@njit(cache=True, inline="always")
def _rotl(x, k):
    return (x << uint64(k)) | (x >> uint64(64 - k))


@njit(cache=True, inline="always")
def xoshiro(s0, s1, s2, s3):
    """xoshiro256** on scalar state: (64 random bits, s0, s1, s2, s3 advanced).

    Kernels that keep the state in scalars (registers) call this directly;
    :func:`next_u64` is the same generator on a 4-element state array.
    """
    result = _rotl(s1 * uint64(5), 7) * uint64(9)
    t = s1 << uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return result, s0, s1, s2, s3


@njit(cache=True, inline="always")
def below(bits32, n):
    """Multiply-shift map of 32 random bits onto ``[0, n)``: ``bits32 * n >> 32``."""
    return np.int64((bits32 * uint64(n)) >> uint64(32))


@njit(cache=True, inline="always")
def next_u64(s):
    """Advance the xoshiro256** state ``s`` (4 x uint64) and return 64 random bits."""
    result, s0, s1, s2, s3 = xoshiro(s[0], s[1], s[2], s[3])
    s[0], s[1], s[2], s[3] = s0, s1, s2, s3
    return result


@njit(cache=True, inline="always")
def randint(s, n):
    """A uniform integer in ``[0, n)`` from the 32 high bits of one draw of ``s``."""
    return below(next_u64(s) >> uint64(32), n)


@njit(cache=True, nogil=True)
def shuffle(s, a):
    """Fisher-Yates shuffle of the 1-d array ``a`` in place, drawing from ``s``."""
    for i in range(a.shape[0] - 1, 0, -1):
        j = randint(s, i + 1)
        tmp = a[i]
        a[i] = a[j]
        a[j] = tmp
