"""``run --dry-run``'s time against the truth: the CPU time of simulating every
replicate of the sweep, on a grid whose points differ in cost by two orders of
magnitude (Shut the Box: the random policy on 6-sided dice against the optimal
one on 2-sided dice), where three timed points and the slowest of them
counting for every replicate were 4x off."""

from __future__ import annotations

import re
import time

from clirun import run_cli
from specs import spec_toml

SPEC = spec_toml("shut_the_box", name="uneven", grid={"dice_sides": [2, 3, 6], "policy": ["optimal", "random"]},
                 run={"replicates": 4, "games": 1500}, checkpoints={"count": 3})


def _seconds(text: str) -> float:
    number, unit = re.search(r"(\S+) (s|min|h) of simulation in all", text).groups()
    return float(number) * {"s": 1, "min": 60, "h": 3600}[unit]


def _true_cpu(path) -> float:
    """CPU seconds of every replicate of the sweep, simulated in this thread (warm)."""
    from boardsweep.pipeline.plan.tasks import replicate_seed
    from boardsweep.pipeline.spec.parse import load_spec

    spec = load_spec(path)
    total = 0.0
    for _, params in spec.resolved_points():
        for r in range(spec.replicates):
            t0 = time.thread_time()
            spec.game.simulate(params, replicate_seed(spec.seed, params, r), spec.run_shape, spec.checkpoints)
            total += time.thread_time() - t0
    return total


def test_dry_run_time_is_within_1_5x_of_the_sweeps_cpu(tmp_path, write_spec, capsys):
    path = write_spec(SPEC)
    assert run_cli("run", str(path), "--store", str(tmp_path / "u.zarr"), "--dry-run", "--workers", "1") == 0
    out = capsys.readouterr().out
    assert "(timed at 6 grid points)" in out  # every point of a small grid
    estimate, truth = _seconds(out), _true_cpu(path)
    assert truth / 1.5 <= estimate <= truth * 1.5, (estimate, truth, out)


def test_estimate_sums_each_points_first_and_warm_replicates():
    from boardsweep.pipeline.run.calibration import ESTIMATE_POINTS, _timing, estimate_indices
    from boardsweep.pipeline.spec.parse import parse_spec

    spec = parse_spec(SPEC)  # 6 points, 4 replicates
    timed = _timing(spec, {0: (0.5, 0.1), 3: (0.2, 0.2), 5: (1.0, 1.0)})
    assert timed.kernel_s == (0.5 + 3 * 0.1 + 0.2 + 3 * 0.2 + 1.0 + 3 * 1.0) * 6 / 3
    assert timed.slowest == 1.0 and timed.points == 3  # the first, middle and last: 0, 3, 5
    assert estimate_indices(6) == [0, 1, 2, 3, 4, 5]
    many = estimate_indices(1001)
    assert len(many) <= ESTIMATE_POINTS + 1 and {0, 500, 1000} <= set(many)
