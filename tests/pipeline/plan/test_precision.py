"""Precision targets on real stores and real Dask clusters: the stopping
rule, its exact arithmetic, determinism (1 or 2 workers, a resume after a
kill), capped points, what status/query/report show, and all three games."""

from __future__ import annotations

import io
import json
import math
from fractions import Fraction

import numpy as np
import pytest
import xarray as xr

from clirun import run_cli
from localdask import assert_bitwise_equal, done_count, finish, kill, local_dask, start_client, toy_delay, wait_for
from rich.console import Console

from boardsweep.core import stats
from boardsweep.core.games import get_game, interval_headlines
from boardsweep.pipeline.views import display
from boardsweep.pipeline.analysis import headlines, query, read_finished
from boardsweep.pipeline import store
from boardsweep.pipeline.plan import precision
from boardsweep.pipeline.store import integrity, packing
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.errors import SpecError
from boardsweep.pipeline.spec.parse import parse_spec

TARGET = 0.01


def toy(make_spec, target: float = TARGET, most: int = 64, replicates: int = 4, block: int = 2) -> str:
    return make_spec("toy", params={"size": 8}, grid={"dice_sides": [2, 3], "rule": ["plain", "sticky"]},
                     run={"replicates": replicates, "games": 2, "turns": 60}, checkpoints={"count": 5},
                     tasks={"replicates_per_task": block},
                     precision={"stderr": target, "max_replicates": most})


@pytest.fixture(scope="module")
def reference(tmp_path_factory, cluster2):
    """The toy sweep run to a standard error of 0.01 on two workers."""
    from specs import spec_toml  # tests/support is on sys.path

    url = tmp_path_factory.mktemp("precision") / "reference.zarr"
    report = run_sweep(parse_spec(toy(spec_toml), "p.toml"), str(url), scheduler=cluster2)
    assert report.complete
    return url


def frequencies_stderr(counts: np.ndarray) -> float:
    """The largest standard error over labels of the frequencies (counts:
    (n, labels)) as a ratio of sums, in floats, as every command prints it:
    ``R = sum c_r / sum e_r``, ``se^2 = sum (c_r - R e_r)^2 / (n (n - 1) e_bar^2)``."""
    e = counts.sum(axis=1, keepdims=True).astype(float)
    ratio = counts.sum(axis=0) / e.sum()
    d = counts - ratio * e
    n = len(counts)
    return float(np.sqrt((d * d).sum(axis=0) / (n * (n - 1))).max() / e.mean())


def test_exact_stderr_matches_floats():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 1000, (7, 5))
    same = precision.stderr_squared(a, np.full(7, 4000))
    assert math.isclose(math.sqrt(float(same)), float((a / 4000).std(0, ddof=1).max() / math.sqrt(7)), rel_tol=1e-12)
    b = rng.integers(4000, 5000, 7)
    varied = precision.stderr_squared(a, b)
    _, _, se, _ = stats.replicate_ratio_stderr(a.astype(float), b.astype(float)[:, None], axis=0)
    assert math.isclose(math.sqrt(float(varied)), float(se.max()), rel_tol=1e-12)
    assert isinstance(varied, Fraction)
    total, games = rng.integers(0, 500, 5), 1000
    squares = total + rng.integers(0, 2000, 5)
    pooled = precision.pooled_stderr_squared(total, squares, games)
    _, se, _ = stats.pooled_unit_stderr(total, squares, np.full(5, games))
    assert math.isclose(math.sqrt(float(pooled)), float(se.max()), rel_tol=1e-12)


def test_rounds_follow_the_measured_variance():
    """se^2 = c / n: round sizes n ceil(n se^2 / t^2), at most doubling, in
    whole blocks, capped; a point whose first round meets the target stops."""
    done = np.ones(64, bool)
    t = 0.01
    c = Fraction(t) ** 2 * 30  # needs 30 replicates
    d = precision.decide(lambda n: c / n, done, 4, t, 64, 4)
    assert (d.state, d.n) == ("met", 32)  # 4 -> 8 -> 16 -> 32 (doubling caps 30 -> 32 blocks)
    d = precision.decide(lambda n: c / n, done, 16, t, 64, 4)
    assert (d.state, d.n) == ("met", 32)  # 16 -> ceil(16 * 30/16) = 30 -> 32 (whole blocks)
    d = precision.decide(lambda n: c / n, done, 4, t, 20, 4)
    assert (d.state, d.n) == ("capped", 20)
    d = precision.decide(lambda n: c / n, done, 40, t, 64, 4)
    assert (d.state, d.n) == ("met", 40)
    partial = done.copy()
    partial[10] = False
    d = precision.decide(lambda n: c / n, partial, 4, t, 64, 4)
    assert (d.state, d.n) == ("running", 16)  # replicate 10 of the round 8 -> 16 is missing


def upper_stderr(counts: np.ndarray) -> float:
    """The 90% upper confidence bound of that s.e. the rule reads: se sqrt(df / chi2_0.1(df)), df = n - 1."""
    return frequencies_stderr(counts) * math.sqrt(float(precision.upper_factor(len(counts) - 1)))


def _replay(counts: np.ndarray, first: int, target: float, cap: int, block: int) -> list[int]:
    """The rule again, in floats, from a point's stored counts: the rounds' sizes."""
    n, sizes = -(-first // block) * block, []
    while True:
        sizes.append(n)
        se = upper_stderr(counts[:n])
        if se <= target or n >= cap:
            return sizes
        need = math.ceil(n * (se / target) ** 2)
        n = min(cap, -(-min(2 * n, max(n + 1, need)) // block) * block)


def test_stopping_rule_met_without_overshooting(reference):
    ds = xr.open_zarr(reference, chunks=None)
    counts = ds["counts"].isel(checkpoint=-1).values  # (dice, rule, replicate, location)
    done = ds["done"].values
    used = ds["replicates_used"].values
    assert (ds["precision_state"].values == 1).all()  # every point met the target
    assert len(set(used.ravel().tolist())) > 1  # the points needed different numbers of replicates
    for i in np.ndindex(*used.shape):
        n = int(used[i])
        assert done[i][:n].all() and not done[i][n:].any()
        se = frequencies_stderr(counts[i][:n])
        assert math.isclose(float(ds["stderr_reached"].values[i]), se, rel_tol=1e-9)
        assert se <= TARGET and upper_stderr(counts[i][:n]) <= TARGET  # met: its upper bound is below
        sizes = _replay(counts[i], 4, TARGET, 64, 2)
        assert sizes[-1] == n and len(sizes) >= 2, sizes
        assert upper_stderr(counts[i][:sizes[-2]]) > TARGET  # it did not stop late
        needed = min(m for m in range(2, n + 1, 2) if upper_stderr(counts[i][:m]) <= TARGET)
        assert n <= 2 * needed, (n, needed)  # never about twice what the target needs
    # as query prints them: its largest stderr over labels is the one the rule reached
    est = query.estimate(store.load_sweep(str(reference)))
    worst = est["se"].max("location").transpose("dice_sides", "rule").values
    assert np.allclose(worst, ds["stderr_reached"].values, rtol=1e-9, atol=0)


def test_one_and_two_workers_identical(tmp_path, make_spec, reference):
    url = tmp_path / "one.zarr"
    assert run_sweep(parse_spec(toy(make_spec), "p.toml"), str(url), workers=1).complete
    assert_bitwise_equal(url, reference)


def test_staged_resume_identical(tmp_path, make_spec, cluster2, reference, capsys):
    """Stopped after 3 tasks, then after 5 more (mid-round), then resumed:
    the same store; status says incomplete until then."""
    spec = parse_spec(toy(make_spec), "p.toml")
    url = tmp_path / "staged.zarr"
    first = run_sweep(spec, str(url), scheduler=cluster2, max_tasks=3)
    assert not first.complete
    assert run_cli("status", str(url)) == 1
    summary = io.StringIO()
    display.run_summary(Console(file=summary, width=100), first, read_finished(first.store))
    assert "0 of 4 grid points met, 0 capped, 4 running" in summary.getvalue()
    assert "store INCOMPLETE" in summary.getvalue()
    assert not run_sweep(spec, str(url), scheduler=cluster2, max_tasks=9).complete
    assert run_cli("status", str(url)) == 1
    assert "running" in capsys.readouterr().out
    assert run_sweep(spec, str(url), scheduler=cluster2).complete
    assert run_cli("status", str(url)) == 0
    assert_bitwise_equal(url, reference)
    assert run_sweep(spec, str(url), scheduler=cluster2).tasks_run == 0


def test_killed_run_resumes_identical(tmp_path, make_spec, reference):
    spec_path = tmp_path / "p.toml"
    spec_path.write_text(toy(make_spec))
    url = tmp_path / "killed.zarr"
    slow, delay = toy_delay(tmp_path, 0.3)
    with local_dask(tmp_path / "logs", workers=2, env=slow) as cluster:
        args = ["run", str(spec_path), "--scheduler", cluster.address, "--store", str(url)]
        proc = start_client(tmp_path, *args)
        try:
            wait_for(lambda: done_count(url) >= 20 or proc.poll() is not None, what="a second round")
            assert proc.poll() is None, proc.communicate()
        finally:
            kill(proc)
        delay.unlink()  # killed mid-sweep: the resume runs at full speed
        rc, out, err = finish(start_client(tmp_path, *args))
        assert rc == 0, f"{out}\n{err}\n{cluster.log_text()}"
        assert "store complete" in out
    assert_bitwise_equal(url, reference)


def test_capped_points_are_flagged(tmp_path, make_spec, cluster2, capsys):
    url = tmp_path / "capped.zarr"
    assert run_sweep(parse_spec(toy(make_spec, target=1e-4, most=8), "p.toml"), str(url),
                     scheduler=cluster2).complete
    ds = xr.open_zarr(url, chunks=None)
    assert (ds["precision_state"].values == 2).all() and (ds["replicates_used"].values == 8).all()
    assert (ds["stderr_reached"].values > 1e-4).all()
    capsys.readouterr()
    assert run_cli("status", str(url)) == 0  # complete: every point reached its cap
    out = capsys.readouterr().out
    assert out.count("CAPPED") >= 4 and "32/32 replicates done" in out
    assert run_cli("query", str(url), "--format", "json") == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["precision"] for r in rows} == {"capped"} and {r["replicates_used"] for r in rows} == {8}
    assert run_cli("query", str(url)) == 0
    assert "0 of 4 grid points met, 4 capped, 0 running" in capsys.readouterr().out.replace("\n", " ")
    assert run_cli("report", str(url), "--out", str(tmp_path / "report")) == 0
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert {v["precision"]["precision"] for v in summary.values()} == {"capped"}
    assert (tmp_path / "report" / "precision.csv").exists()


def test_spec_errors_name_the_key(make_spec):
    base = dict(grid={"dice_sides": [2]}, run={"replicates": 4, "games": 2, "turns": 60})
    for table, key in (({"stderr": 0, "max_replicates": 8}, "precision.stderr"),
                       ({"stderr": 0.01}, "precision.max_replicates"),
                       ({"stderr": 0.01, "max_replicates": 3}, "precision.max_replicates"),
                       ({"stderr": 0.01, "max_replicates": 8, "rounds": 2}, "precision.rounds")):
        with pytest.raises(SpecError, match=f"^x.toml: {key}: "):
            parse_spec(make_spec("toy", precision=table, **base), "x.toml")
    with pytest.raises(SpecError, match="^x.toml: run.replicates: 1 is not allowed with"):
        parse_spec(make_spec("toy", precision={"stderr": 0.01, "max_replicates": 8},
                             grid={"dice_sides": [2]}, run={"replicates": 1}), "x.toml")


def test_extend_of_a_precision_sweep_is_refused(tmp_path, make_spec, reference, capsys):
    spec = tmp_path / "more.toml"
    spec.write_text(toy(make_spec, most=128))
    before = sorted(p.stat().st_mtime_ns for p in reference.rglob("*"))
    assert run_cli("run", str(spec), "--store", str(reference), "--extend") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "precision: --extend does not grow a sweep with a [precision]" in err
    assert sorted(p.stat().st_mtime_ns for p in reference.rglob("*")) == before


def batch_stderrs(ds, game, axes, printed: dict) -> dict:
    """Per headline and point, the s.e. the rule decides on, in floats: per-game
    means pooled (``printed``: what query prints), ratios over the
    checkpoint increments (a chain's long ones) of independent games ``se^2 = sum (a_b M - A
    m_b)^2 / (M^2 (M^2 - sum m^2))`` where their effective df exceeds the
    replicates' (else the replicates' s.e., ``printed`` again)."""
    from boardsweep.core.batches import effective_df, increments, long_batches

    out = {name: v.copy() for name, v in printed.items()}
    if game.checkpoint_of != "games":  # a chain: its long stretches, if long enough
        keep = long_batches(ds["checkpoint"].values)
        if np.diff(np.r_[0, ds["checkpoint"].values[keep]]).min() < precision.MIN_STRETCH:
            return out  # too short to be batches: the replicates' s.e.
        ds = ds.isel(checkpoint=keep)
    cp = np.asarray(ds["checkpoint"].values, dtype=np.int64)
    for i in np.ndindex(*ds["replicates_used"].shape):
        n = int(ds["replicates_used"].transpose(*axes).values[i])
        for h in interval_headlines(game):
            if h.squares is not None:
                continue
            a = ds[h.numerator].transpose(*axes, "replicate", "checkpoint", ...).values[i][:n].astype(float)
            a = increments(a, axis=1).reshape(n * len(cp), -1)
            m = (np.tile(increments(cp[None, :])[0], n) if h.denominator == "checkpoint" else
                 increments(ds[h.denominator].transpose(*axes, "replicate", "checkpoint").values[i][:n], 1).ravel()
                 if h.denominator else a.sum(1)).astype(float)
            if effective_df(m.astype(np.int64)) <= int((m.reshape(n, -1).sum(1) > 0).sum()) - 1:
                continue
            big_m = m.sum()
            se2 = ((a * big_m - a.sum(0) * m[:, None]) ** 2).sum(0) / (big_m ** 2 * (big_m ** 2 - (m * m).sum()))
            out[h.name][i] = float(np.sqrt(se2.max()))
    return out


@pytest.mark.parametrize("game, tables, target", [
    ("monopoly", dict(params={"tally": "per_roll"}, grid={"dice_sides": [4, 6]},
                      run={"replicates": 4, "games": 1, "players": 1, "turns": 2000}), 0.004),
    ("shut_the_box", dict(grid={"dice_sides": [2, 3], "policy": ["optimal"]}, run={"replicates": 4, "games": 50}),
     0.15),
    ("hk_monopoly", dict(params={"players": 2}, grid={"dice_sides": [4, 6]}, run={"replicates": 4, "games": 20}),
     0.05),
])
def test_every_game(tmp_path, make_spec, cluster2, game, tables, target):
    """Monopoly's location frequencies, Shut the Box's mean rolls, the HKD
    game's win shares, mean rounds and landing frequencies: every point met
    or capped, and the standard error it reached is the largest s.e. that
    ``query`` prints for the headlines with an interval per label."""
    text = make_spec(game, checkpoints={"count": 2}, tasks={"replicates_per_task": 2},
                     precision={"stderr": target, "max_replicates": 24}, **tables)
    url = tmp_path / f"{game}.zarr"
    assert run_sweep(parse_spec(text, "p.toml"), str(url), scheduler=cluster2).complete
    ds = store.load_sweep(str(url))
    axes = ds.attrs["grid_axes"]
    found = headlines.estimates(ds)
    bounded = [h.name for h in interval_headlines(get_game(game))]
    assert bounded and set(bounded) <= set(found)
    per = {n: found[n]["se"].max([d for d in found[n]["se"].dims if d not in axes]).transpose(*axes).values
           for n in bounded}
    per = batch_stderrs(ds, get_game(game), axes, per)  # ratios read from batches where they have more df
    worst = np.max(np.stack(list(per.values())), axis=0)
    assert np.allclose(worst, ds["stderr_reached"].transpose(*axes).values, rtol=1e-9)
    state = ds["precision_state"].values
    assert set(state.ravel().tolist()) <= {1, 2}
    assert (ds["stderr_reached"].values[state == 1] <= target).all()
    assert (ds["replicates_used"].values[state == 2] == 24).all()
    used = ds["done"].sum("replicate").transpose(*axes).values
    assert np.array_equal(used, ds["replicates_used"].transpose(*axes).values)


def test_a_complete_precision_store_is_packed(reference, capsys):
    """Complete means every point met its target or cap, with unrun replicate
    slots left missing: such a store is packed like any complete one."""
    assert packing.layout(str(reference)) == "packed" and not integrity.check(str(reference))
    assert not xr.open_zarr(reference, chunks=None)["done"].values.all()  # slots left unrun
    assert run_cli("status", str(reference)) == 0
    capsys.readouterr()
