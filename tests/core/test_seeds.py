"""The vectorised seed keys (:mod:`boardsweep.core.seeds`): every row of an entropy block mixed as
numpy's SeedSequence mixes it, bit for bit (integers: the same on every CPU)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from boardsweep.core.seeds import int_words, seed_key, seed_keys


@pytest.mark.parametrize("width", [1, 3, 4, 5, 10, 13])
def test_seed_keys_are_seed_sequences_keys_bit_for_bit(width):
    rows = np.random.default_rng(width).integers(0, 2 ** 32, size=(3000, width), dtype=np.uint64)
    rows[:3, 0] = [0, 2 ** 32 - 1, 1]  # the extremes of a word
    want = np.array([seed_key(np.random.SeedSequence([int(v) for v in row])) for row in rows])
    got = seed_keys(rows.astype(np.uint32))
    assert got.dtype == np.uint64 and got.shape == (len(rows), 2)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("value", [0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 64 + 5, 2 ** 127 + 3])
def test_int_words_are_seed_sequences_reading_of_an_int(value):
    words = int_words(value)
    assert sum(w << (32 * i) for i, w in enumerate(words)) == value and all(0 <= w < 2 ** 32 for w in words)
    entropy = np.array([words + [7]], dtype=np.uint32)
    assert np.array_equal(seed_keys(entropy)[0], seed_key(np.random.SeedSequence([value, 7])))


def test_a_negative_int_is_refused():
    with pytest.raises(ValueError, match=">= 0"):
        int_words(-1)


def test_the_seeds_import_no_numba():
    """Reading a store records and checks the seed scheme without the kernels' numba."""
    code = "import sys, boardsweep.core.seeds, boardsweep.pipeline.plan.tasks; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False"]
