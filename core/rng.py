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

__all__ = ["RNG_SCHEME", "seed_key", "seed_keys", "int_words", "game_state", "xoshiro", "below", "next_u64", "randint", "shuffle"]

RNG_SCHEME = (
    "numpy.random.SeedSequence -> 2 x uint64 key; per game xoshiro256** state from "
    "SplitMix64(key[0] ^ splitmix64(key[1] + game)); uniform ints by 32-bit multiply-shift"
)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)

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
