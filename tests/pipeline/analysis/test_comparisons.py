"""Grid axes compared where both sides tie (pipeline/analysis/comparisons.py):
a label whose replicates all have the same frequency on each side is decided
by the exact permutation test where the sides differ, and said to be not
testable where they tie alike; never a silent p = NaN."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from boardsweep.core.games import game_names
from boardsweep.pipeline.analysis import comparisons
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import open_sweep

from specs import spec_toml

pytestmark = pytest.mark.skipif("monopoly" not in game_names(), reason="monopoly not registered")


def _brute_p(a: list[float], b: list[float]) -> float:
    """Two-sided permutation p by enumerating every split (independent of the product's formula)."""
    pool, n = a + b, len(a)
    observed = abs(np.mean(a) - np.mean(b))
    splits = list(itertools.combinations(range(len(pool)), n))
    far = sum(abs(np.mean([pool[i] for i in s]) - np.mean([pool[i] for i in range(len(pool)) if i not in s]))
              >= observed - 1e-12 for s in splits)
    return far / math.comb(len(pool), n)


@pytest.fixture(scope="module")
def short(tmp_path_factory, cluster2):
    """Monopoly at 3 turns, 4 replicates, dice 4 and 6: most locations are never landed on."""
    text = spec_toml("monopoly", grid={"dice_sides": [4, 6]}, params={"tally": "per_roll"}, seed=42,
                     run={"replicates": 4, "games": 1, "players": 1, "turns": 3}, checkpoints={"count": 1})
    url = str(tmp_path_factory.mktemp("ties") / "ties.zarr")
    assert run_sweep(parse_spec(text, "ties.toml"), url, scheduler=cluster2).complete
    return open_sweep(url).load()


def test_tied_sides_get_the_exact_permutation_p_never_nan(short):
    ds = short.copy(deep=True)
    # dice 6: every replicate the first one, with 2 landings on a location no dice-4 replicate saw
    j = int(np.flatnonzero(ds["counts"].isel(checkpoint=-1).sum(["replicate", "dice_sides"]).values == 0)[0])
    counts = ds["counts"].values.copy()
    axes = ds["counts"].dims
    d, loc = axes.index("dice_sides"), axes.index("location")
    sel = [slice(None)] * counts.ndim
    sel[loc] = j
    sel[d] = 1
    counts[tuple(sel)] = 2
    rep = axes.index("replicate")
    six = [slice(None)] * counts.ndim
    six[d] = 1
    first = list(six)
    first[rep] = slice(0, 1)
    counts[tuple(six)] = counts[tuple(first)]  # every dice-6 replicate as the first: each label ties there
    ds["counts"].values = counts
    res = comparisons.compare_axis(ds, "dice_sides", 4, 6)
    freq = (ds["counts"] / ds["counts"].sum("location")).isel(checkpoint=-1)
    tied, alike = res["permutation"].values, res["untestable"].values
    assert tied.sum() >= 1 and res.attrs["permutation"] == int(tied.sum())
    assert alike.sum() >= 1 and res.attrs["untestable"] == int(alike.sum())  # e.g. never landed on either side
    assert "not testable at this size" in res.attrs["untestable_text"]
    assert np.isfinite(res["p"].values[~alike]).all()  # before: NaN wherever both sides tied, unsaid
    assert np.isnan(res["p"].values[alike]).all() and np.isnan(res["p_holm"].values[alike]).all()
    for i in np.flatnonzero(tied):
        label = ds["location"].values[i]
        a = freq.sel(dice_sides=4, location=label).values.tolist()
        b = freq.sel(dice_sides=6, location=label).values.tolist()
        assert float(res["p"].values[i]) == pytest.approx(_brute_p(a, b), rel=1e-12), label
    assert float(res["p"].values[j]) == pytest.approx(2 / 70, rel=1e-12)  # tied apart, 4 and 4 replicates
    untied = ~tied & ~alike & np.isfinite(res["t"].values)
    assert untied.any() and not res["permutation"].values[untied].any()


def test_permutation_p_of_tied_samples_against_enumeration():
    for n1, n2 in [(2, 2), (2, 3), (3, 5), (4, 4), (6, 2)]:
        got = comparisons.tied_permutation_p(0.0, n1, 0.25, n2)
        assert float(got) == pytest.approx(_brute_p([0.0] * n1, [0.25] * n2), rel=1e-12), (n1, n2)
    assert float(comparisons.tied_permutation_p(0.1, 4, 0.1, 4)) == 1.0
