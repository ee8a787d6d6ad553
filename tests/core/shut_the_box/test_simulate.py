"""Monte Carlo Shut the Box against the exact chain; determinism of the streams."""

from __future__ import annotations

import numpy as np
import pytest

from boardsweep.core.shut_the_box import solve
from boardsweep.core.shut_the_box.simulate import HIST_BINS, simulate_rolls


def _run(n, policy, seed, checkpoints):
    table = solve.solve_optimal(n).policy if policy == "optimal" else None
    return simulate_rolls(n, policy, seed, np.asarray(checkpoints), table)


@pytest.mark.parametrize("policy", solve.POLICIES)
@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_mean_within_five_standard_errors(n, policy):
    games = 4000
    out = _run(n, policy, 1000 * n + len(policy), [games])
    total, sq = out["rolls_sum"][-1], out["rolls_sq_sum"][-1]
    mean = total / games
    var = (sq - total * total / games) / (games - 1)
    se = np.sqrt(var / games)
    exact_mean, exact_var = solve.moments(n, policy)
    assert abs(mean - exact_mean[0]) < 5 * se
    assert out["capped"][-1] == 0


@pytest.mark.parametrize("policy", ["optimal", "greedy"])
def test_histogram_matches_exact_pmf(policy):
    # chi-square goodness of fit on bins with >= 5 expected games (fixed seed)
    n, games = 4, 20000
    hist = _run(n, policy, 11, [games])["hist"][-1]
    p = solve.binned_pmf(n, policy, HIST_BINS)
    expected = games * p
    keep = expected >= 5
    obs = np.append(hist[keep], hist[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    chi2 = ((obs - exp) ** 2 / exp).sum()
    dof = obs.size - 1
    # a 5-sigma bound on a chi-square with dof degrees of freedom
    assert chi2 < dof + 5 * np.sqrt(2 * dof)


def test_checkpoints_are_cumulative():
    cps = [1, 10, 100, 1000]
    out = _run(5, "greedy", 3, cps)
    np.testing.assert_array_equal(out["hist"].sum(axis=1), cps)
    assert np.all(np.diff(out["rolls_sum"]) > 0)
    # the first k games are the same whatever the run length
    short = _run(5, "greedy", 3, [100])
    assert short["rolls_sum"][0] == out["rolls_sum"][2]
    np.testing.assert_array_equal(short["hist"][0], out["hist"][2])
    t = np.arange(HIST_BINS)
    assert (out["hist"][-1] * t).sum() == out["rolls_sum"][-1]  # no overflow at n = 5 greedy


@pytest.mark.parametrize("policy", solve.POLICIES)
def test_same_seed_same_bits_different_seed_differs(policy):
    a = _run(4, policy, 42, [50, 500])
    b = _run(4, policy, 42, [50, 500])
    c = _run(4, policy, 43, [50, 500])
    ss = _run(4, policy, np.random.SeedSequence(42), [50, 500])
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
        np.testing.assert_array_equal(a[key], ss[key])
    assert not np.array_equal(a["hist"], c["hist"])


def test_random_policy_is_not_greedy():
    a = _run(4, "random", 5, [200])
    b = _run(4, "greedy", 5, [200])
    assert a["rolls_sum"][0] > b["rolls_sum"][0]


def test_bad_inputs():
    with pytest.raises(ValueError):
        simulate_rolls(3, "greedy", 0, np.array([5, 5]))
    with pytest.raises(ValueError):
        simulate_rolls(3, "optimal", 0, np.array([5]))  # no table
    with pytest.raises(KeyError):
        simulate_rolls(3, "smart", 0, np.array([5]))


def test_interpreted_kernel_gives_the_same_bits():
    """The kernel run as plain Python (NUMBA_DISABLE_JIT=1) reproduces the compiled run."""
    import json
    import os
    import subprocess
    import sys

    code = (
        "import json, warnings, numpy as np\n"
        "warnings.simplefilter('ignore')\n"
        "from boardsweep.core.shut_the_box.simulate import simulate_rolls\n"
        "print(json.dumps({p: simulate_rolls(3, p, 8, np.array([5, 40]))['hist'].tolist()"
        " for p in ('greedy', 'random')}))\n"
    )
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True)
    slow = json.loads(res.stdout.strip().splitlines()[-1])
    for policy, hist in slow.items():
        np.testing.assert_array_equal(_run(3, policy, 8, [5, 40])["hist"], np.array(hist))
