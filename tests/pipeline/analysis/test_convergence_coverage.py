"""The convergence slope's interval covers the true -1/2 at its stated 95%.

One real Shut the Box store gives the product's Dataset; each of 200
sweeps replaces its histogram with fresh draws from the game's exact
distribution of rolls (games are independent, so a histogram of ``n`` games
is multinomial: the truth is exactly ``E (f - p)^2 = p (1 - p) / n``, slope
-1/2), and :func:`convergence_rate` fits it.  Fitted on nested cumulative
checkpoints (the old way) the same s.e. covered -1/2 in about 75% of sweeps.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st

from boardsweep.core.stats import loglog_slope
from boardsweep.pipeline.analysis import convergence as analysis

from lawdraws import draw  # tests/support is on sys.path

SWEEPS = 200


@pytest.mark.slow
def test_slope_interval_covers_minus_one_half_at_its_stated_rate(box_store):
    box = box_store
    rng = np.random.default_rng(42)
    covered = old = 0
    for _ in range(SWEEPS):
        ds = draw(box, rng)
        conv = analysis.convergence(ds, "hist")
        rate = analysis.convergence_rate(conv)
        assert str(rate["basis"].values) == "rms_error"
        covered += float(rate["slope_low"]) <= -0.5 <= float(rate["slope_high"])
        steps, err = conv["steps"].values, conv["rms_error"].values
        keep = np.log(steps) >= np.log(steps).max() - 0.5 * np.ptp(np.log(steps))
        slope, se = loglog_slope(steps[keep], err[keep])
        old += abs(slope + 0.5) <= 1.96 * se
    assert covered >= st.binom.ppf(0.001, SWEEPS, 0.95), covered
    assert old < st.binom.ppf(0.001, SWEEPS, 0.95), old  # what the increments fix
