"""The replicate-disagreement flag (pipeline/analysis/variance.py): the
heterogeneity F test across replicates under Holm over every label, at
family-wise 1%, fires in at most 1% of sweeps whose replicates are correct
(so on at most 1% of labels), where R-hat > 1.01 on the same 8 log-spaced
batches fired on most labels; and it sees replicates that differ.  Monopoly's
own kernel, 200 sweeps of 8 replicates, 16 checkpoints; one real store."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st

from boardsweep.core import stats
from boardsweep.core.batches import heterogeneity_test, long_batches
from boardsweep.core.games import get_game
from boardsweep.pipeline.analysis import variance
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import open_sweep

from specs import spec_toml

SWEEPS = 200
REPS = 8


def _sweeps(turns: int, seed: int):
    """Per sweep: the long batches' increments (replicate, batch, location) and their events."""
    spec = parse_spec(spec_toml("monopoly", name="m", seed=1, params={"tally": "per_roll"},
                                run={"replicates": REPS, "games": 1, "players": 1, "turns": turns},
                                checkpoints={"count": 16}), "m.toml")
    (_, params), = spec.resolved_points()
    cps = np.asarray(spec.checkpoints, dtype=np.int64)
    keep = long_batches(cps)
    game = get_game("monopoly")
    for k in range(SWEEPS):
        runs = [game.simulate(params, np.random.SeedSequence([seed, k, r]), dict(spec.run_shape), cps)
                for r in range(REPS)]
        counts = np.stack([np.asarray(o["counts"], dtype=float)[keep] for o in runs])  # (rep, batch, loc)
        events = np.stack([np.asarray(o["events"], dtype=float)[keep] for o in runs])
        a = np.diff(counts, axis=1, prepend=0.0)
        m = np.diff(events, axis=1, prepend=0.0)
        yield a, m.reshape(REPS, -1)


def test_the_flag_fires_on_at_most_its_share_with_correct_replicates():
    """200 correct sweeps (8 replicates x 16 checkpoints, 20,000 turns): sweeps
    with any label flagged are Binomial(200, q <= 1%), at most its 99.9%
    quantile (6); R-hat > 1.01 on the same batches flags over a third of the
    labels (the flag it replaces could not be read as one)."""
    from arviz_stats.base import array_stats

    alarms, labels, rhat_share = 0, 0, []
    for a, m in _sweeps(20_000, 5454):
        enough = a.sum(axis=1).mean(axis=0) >= 10
        p = heterogeneity_test(a[..., enough], m)["p"]
        flagged = stats.holm(p) < variance.DISAGREE_ALPHA
        alarms += bool(flagged.any())
        labels += len(p)
        f = a[..., enough] / m[..., None]
        pooled = a[..., enough].sum(axis=(0, 1)) / m.sum()
        z = np.sqrt(m)[..., None] * (f - pooled)
        rhat = array_stats.rhat(np.moveaxis(z, -1, 0), method="rank")
        rhat_share.append(float(np.mean(rhat > 1.01)))
    assert labels > 30 * SWEEPS
    assert alarms <= st.binom.ppf(0.999, SWEEPS, 0.01), alarms
    assert np.mean(rhat_share) > 1 / 3, np.mean(rhat_share)


def test_the_flag_sees_a_replicate_that_differs():
    """One replicate of 8 whose counts at one location are 25% high in every
    batch: the flag fires there in most of 50 sweeps (at least 40)."""
    seen = 0
    for k, (a, m) in enumerate(_sweeps(20_000, 5555)):
        if k == 50:
            break
        enough = a.sum(axis=1).mean(axis=0) >= 10
        a = a[..., enough].copy()
        j = int(np.argmax(a.sum(axis=(0, 1))))
        a[0, :, j] *= 1.25
        seen += bool((stats.holm(heterogeneity_test(a, m)["p"]) < variance.DISAGREE_ALPHA)[j])
    assert seen >= 40, seen


@pytest.fixture(scope="module")
def store(tmp_path_factory, cluster2):
    text = spec_toml("monopoly", grid={"dice_sides": [4, 6]}, params={"tally": "per_roll"}, seed=77,
                     run={"replicates": 4, "games": 1, "players": 1, "turns": 5000}, checkpoints={"count": 16})
    url = str(tmp_path_factory.mktemp("flag") / "flag.zarr")
    assert run_sweep(parse_spec(text, "flag.toml"), url, scheduler=cluster2).complete
    URL["store"] = url
    return open_sweep(url).load()


#: Where the module's store is (the query summary reads it).
URL: dict[str, str] = {}


def test_a_real_store_states_the_flag_in_one_line_and_per_label(store):
    """A real sweep: variance rows carry the Holm-adjusted p and the flag, the
    one-line summary counts the labels it tested, and the flag is Holm's."""
    found = variance.replicate_agreement(store)
    assert found["labels"] > 40 and found["text"].startswith("replicates ")
    het = variance.heterogeneity(store)
    p = het["p"].values.ravel()
    ok = np.isfinite(p)
    assert np.allclose(het["p_holm"].values.ravel()[ok], stats.holm(p[ok]))
    assert found["flagged"] == int((het["p_holm"] < 0.01).sum())
    from boardsweep.pipeline.analysis.headlines import estimates

    rows = variance.label_variance(store, estimates(store), variable="counts")
    tested = rows["heterogeneity_p_holm"].notna()
    assert tested.sum() == found["labels"]
    assert (rows.loc[tested, "replicates_disagree"].astype(bool)
            == (rows.loc[tested, "heterogeneity_p_holm"] < 0.01)).all()


def test_the_accessor_states_the_flag(store):
    """``ds.boardsweep.replicate_agreement()`` is the same line as the function's."""
    assert store.boardsweep.replicate_agreement() == variance.replicate_agreement(store)


def test_a_real_store_diagnoses_its_equal_batches_and_summarises_in_one_line(store):
    """The store keeps 64 equal batches a replicate (store format 7): R-hat,
    ESS and MCSE per label from them, R-hat beside its reference for 4
    chains of 64 draws; the run's and query's summary line is the flag's."""
    from boardsweep.pipeline.analysis import draws
    from boardsweep.pipeline.views.overview import replicate_line

    found = store.boardsweep.diagnostics()
    freq = found["headlines"]["frequency"]
    tested = freq["rhat"].notnull()
    assert int(tested.sum()) > 40 and bool((freq["draws"] == 4 * 64).where(tested, True).all())
    assert float(freq["rhat_limit"].max()) == draws.rhat_reference(4, 64)
    assert 0.5 * 256 <= float(freq["ess_bulk"].median()) <= 1.5 * 256
    assert found["text"].startswith("R-hat on 256 equal-batch draws a label: ") and "\n" not in found["text"]
    from boardsweep.pipeline.analysis.headlines import estimates

    rows = variance.label_variance(store, estimates(store), variable="counts")
    mine = rows[rows["headline"] == "frequency"].set_index(["dice_sides", "label"])["rhat"]
    here = freq["rhat"].sel(dice_sides=6, location="IN_JAIL")
    assert float(mine.loc[(6, "IN_JAIL")]) == pytest.approx(float(here), rel=1e-12)
    found = variance.replicate_agreement(store)
    assert replicate_line(store) == (f"replicates: {'DIFFER' if found['flagged'] else 'agree'} ({found['flagged']} "
                                     f"of {found['labels']} labels flagged; heterogeneity F test, Holm at 1%)")


def test_an_older_store_reads_and_says_it_has_no_series():
    """A store of format 5 (tests/support/old_stores, written before the
    series): it reads, its diagnostics are NaN with the one line that says
    why and how to get them, and the heterogeneity flag still answers."""
    from pathlib import Path

    from boardsweep.pipeline.analysis import draws

    old = open_sweep(str(Path(__file__).resolve().parents[2] / "support" / "old_stores"
                         / "format5_hk_monopoly.zarr")).load()
    diag = variance.batch_diagnostics(old, "landings")
    assert bool(diag["rhat"].isnull().all()) and diag.attrs["note"] == draws.NO_SERIES
    assert old.boardsweep.diagnostics() == {"text": draws.NO_SERIES, "headlines": {}}
    assert draws.series_summary(old)["text"] == draws.NO_SERIES and "\n" not in draws.NO_SERIES
    assert variance.replicate_agreement(old, "landings")["text"].startswith("replicate")


def test_query_summary_prints_the_flag_in_one_line(store, capsys):
    """``query --summary`` ends with the flag's one line."""
    from boardsweep.pipeline.views.overview import replicate_line

    from clirun import run_cli

    assert run_cli("query", URL["store"], "--summary") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == replicate_line(store) and lines[-1].startswith("replicates: ") and len(lines[-1]) < 100
