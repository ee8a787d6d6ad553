"""One reference an estimate is compared with (pipeline/analysis/reference.py):
the paired deck test compares each replicate with the verdict's reference
(the run's finite-horizon exact answer), not with a long-run answer looked
up on its own, so the two cannot contradict each other on a correct simulator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tomllib

from boardsweep.pipeline.analysis import headlines
from boardsweep.pipeline.analysis.decks import deck_pairs, shuffle_decomposition
from boardsweep.pipeline.analysis.dataset import frequencies
from boardsweep.pipeline.store import load_sweep
from boardsweep.pipeline.analysis.reference import exact_reference, replicate_reference
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec

from specs import spec_toml  # tests/support is on sys.path

SWEEPS = Path(__file__).resolve().parents[3] / "sweeps"


@pytest.fixture(scope="module")
def store(tmp_path_factory, cluster2):
    """sweeps/stats102a.toml made small: 150 turns (a finite horizon), two
    games of two players a replicate, independent and shuffled_cycle decks."""
    with open(SWEEPS / "stats102a.toml", "rb") as f:
        big = tomllib.load(f)
    params = {k: v for k, v in big["params"].items() if k != "deck_policy"}
    spec = parse_spec(spec_toml("monopoly", name="stats102a", seed=big["seed"], params=params,
                                grid={"deck_policy": ["independent", "shuffled_cycle"]},
                                run={"replicates": 4, "games": 2, "players": 2, "turns": 150},
                                checkpoints={"values": [10, 150]}, tasks={"replicates_per_task": 4}),
                      "stats102a.toml")
    url = str(tmp_path_factory.mktemp("reference") / "s.zarr")
    assert run_sweep(spec, url, scheduler=cluster2).complete
    return load_sweep(url, check=False).load()


def test_the_paired_deck_test_uses_the_verdicts_reference(store):
    ds = store
    decomp = shuffle_decomposition(ds)
    assert decomp is not None
    ref = replicate_reference(ds, decomp)
    verdict_exact = headlines.estimates(ds)["frequency"]["exact"]
    independent, shuffled = {"deck_policy": "independent"}, {"deck_policy": "shuffled_cycle"}
    # independent decks: every replicate is compared with the verdict's exact answer at the run's horizon ...
    mine = ref.sel(independent).transpose("replicate", "location").values
    theirs = verdict_exact.sel(independent).transpose("location").values
    np.testing.assert_array_equal(mine, np.broadcast_to(theirs, mine.shape))
    # ... which is not the long-run answer the paired test looked up before (GO: 0.0277 against 0.0280)
    long_run = ds["exact_frequency"].sel(independent).values
    assert np.abs(theirs - long_run / long_run.sum()).max() > 1e-4
    # shuffled decks: the verdict has no answer; each replicate against the exact answer of its own decks
    assert verdict_exact.sel(shuffled).isnull().all()
    np.testing.assert_array_equal(ref.sel(shuffled).values, decomp["replicate_exact"].sel(shuffled).values)
    # the paired test is against that reference: its mean difference is the estimate's distance from it
    pairs = deck_pairs(ds, decomp)
    freq = frequencies(ds).isel(checkpoint=-1).sel(independent)
    diff = (freq - verdict_exact.sel(independent)).mean("replicate")
    np.testing.assert_allclose(pairs["difference"].sel(independent).values, diff.values, rtol=1e-12)


def test_the_convergence_reference_is_the_verdicts(store):
    ds = store
    conv = exact_reference(ds).isel(checkpoint=-1).sel(deck_policy="independent")
    verdict_exact = headlines.estimates(ds)["frequency"]["exact"].sel(deck_policy="independent")
    np.testing.assert_allclose(conv.values, verdict_exact.transpose(*conv.dims).values, rtol=1e-15)


def test_the_between_share_has_no_interval_without_equal_batches(store):
    """Checkpoints 10 and 150 give no equal batches for the ANOVA, and the
    exact answers' F interval is not printed (it under-covers where deck
    answers are discrete: test_decks.py): no interval, and its kind says so
    (the old code printed the F(R G - 1, R) interval here)."""
    from boardsweep.pipeline.analysis.decks import SHARE_INTERVAL_TEXT

    dec = shuffle_decomposition(store).sel(deck_policy="shuffled_cycle")
    ok = np.isfinite(dec["between_share"].values) & (dec["sampling"].values > 0)
    assert ok.sum() > 20
    assert np.isnan(dec["between_share_low"].values).all() and np.isnan(dec["between_share_high"].values).all()
    assert (dec["between_share_interval"].values[ok] == "none").all()
    assert "not equally spaced" in SHARE_INTERVAL_TEXT["none"]
