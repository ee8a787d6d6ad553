"""Variance diagnostics with their own uncertainty, against the truth: a real
Shut the Box store whose histograms are redrawn from the exact law
(replicates that agree by construction) or with one replicate planted off.

* the replicate-heterogeneity test keeps its 5% size over 200 sweeps and
  sees a planted replicate;
* ArviZ's R-hat and ESS on the equal-batch series read about 1 and about the
  number of draws where replicates agree, and R-hat rises where one is off.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st

from boardsweep.pipeline.analysis import variance

from lawdraws import draw  # tests/support is on sys.path

SWEEPS = 200


def modal(ds) -> int:
    return int(np.argmax(ds["exact_pmf"].values.ravel()))


@pytest.mark.slow
def test_heterogeneity_test_keeps_its_size_and_sees_a_planted_replicate(box_store):
    rng = np.random.default_rng(7)
    label = modal(box_store)
    null = [float(variance.heterogeneity(draw(box_store, rng), "hist")["p"].isel(rolls=label))
            for _ in range(SWEEPS)]
    alarms = sum(p < 0.05 for p in null)
    assert st.binom.ppf(0.001, SWEEPS, 0.05) <= alarms <= st.binom.ppf(0.999, SWEEPS, 0.05), alarms
    shift = {0: (label, label + 1, 0.15)}  # replicate 0 moves 15% of the modal bin's games one roll on
    planted = [float(variance.heterogeneity(draw(box_store, rng, shift), "hist")["p"].isel(rolls=label))
               for _ in range(50)]
    assert sum(p < 0.05 for p in planted) >= 40, planted


def test_rhat_and_ess_on_batches_read_agreement_and_see_a_planted_replicate(box_store):
    rng = np.random.default_rng(8)
    label = modal(box_store)
    same = [variance.batch_diagnostics(draw(box_store, rng), "hist").isel(rolls=label) for _ in range(10)]
    rhat = np.array([float(d["rhat"]) for d in same])
    ess = np.array([float(d["ess_bulk"]) for d in same])
    draws = 4 * box_store.sizes["batch"]  # 4 replicates x the equal batches of the store's series
    assert all(float(d["draws"]) == draws for d in same)
    assert np.median(rhat) < float(same[0]["rhat_limit"]) and 0.6 * draws <= np.median(ess) <= 1.6 * draws, (
        rhat, ess, draws)
    shift = {0: (label, label + 1, 0.3)}
    off = [float(variance.batch_diagnostics(draw(box_store, rng, shift), "hist")["rhat"].isel(rolls=label))
           for _ in range(10)]
    assert np.median(off) > rhat.max(), (off, rhat)  # the planted replicate's R-hat above every correct one's


def test_variance_csv_columns_are_the_diagnostics(box_store):
    """label_variance (the report's variance.csv) carries the heterogeneity
    p, R-hat and bulk ESS of the distribution variable's own labels."""
    from boardsweep.pipeline.analysis import headlines

    ds = draw(box_store, np.random.default_rng(9))
    table = variance.label_variance(ds, headlines.estimates(ds), variable="hist")
    label = modal(ds)
    row = table[(table["headline"] == "rolls_distribution") & (table["label"] == str(ds["rolls"].values[label]))]
    assert len(row) == 1
    het = variance.heterogeneity(ds, "hist").isel(rolls=label)
    diag = variance.batch_diagnostics(ds, "hist").isel(rolls=label)
    assert float(row["heterogeneity_p"].iloc[0]) == pytest.approx(float(het["p"]), rel=1e-12)
    assert float(row["rhat"].iloc[0]) == pytest.approx(float(diag["rhat"]), rel=1e-12)
    assert float(row["ess_bulk"].iloc[0]) == pytest.approx(float(diag["ess_bulk"]), rel=1e-12)
