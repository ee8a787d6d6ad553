"""boardsweep.pipeline.report and ``boardsweep report``: stores with missing cells, other games."""

from __future__ import annotations

import json

import numpy as np
import pytest

from boardsweep.core.games import game_names
from boardsweep.pipeline.cli import main
from boardsweep.pipeline.execute import run_sweep
from boardsweep.pipeline.report import build_report
from boardsweep.pipeline.spec import parse_spec

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

MONO = """\
name = "rep"
game = "monopoly"
seed = 3
[params]
tally = "per_roll"
[grid]
dice_sides = [4, 6]
deck_policy = ["independent", "shuffled_cycle"]
[run]
replicates = 4
games = 1
players = 1
turns = 4000
[checkpoints]
count = 6
[tasks]
replicates_per_task = 2
"""


def check_pngs(out):
    import matplotlib.image as mpimg

    pngs = sorted(out.glob("*.png"))
    assert pngs
    for path in pngs:
        assert path.read_bytes()[:8] == PNG_SIGNATURE
        image = mpimg.imread(path)
        assert image.ndim == 3 and image.shape[0] > 10 and image.shape[1] > 10
    html = (out / "index.html").read_text()
    for path in pngs:
        assert f"src='{path.name}'" in html  # self-contained: figures beside the page
    return pngs


@pytest.mark.skipif("monopoly" not in game_names(), reason="monopoly not registered")
def test_report_cli_on_interrupted_store(tmp_path, write_spec, cluster2):
    spec = write_spec(MONO)
    store = tmp_path / "rep.zarr"
    # interrupted: 3 of 8 tasks
    run_sweep(parse_spec(MONO, str(spec)), str(store), scheduler=cluster2, max_tasks=3)
    out = tmp_path / "report"
    main(["report", str(store), "--out", str(out)])
    pngs = check_pngs(out)
    assert {"convergence.png", "variance_ratio.png"} <= {p.name for p in pngs}
    summary = json.loads((out / "summary.json").read_text())
    keys = {f"dice_sides={d},deck_policy={p}" for d in (4, 6) for p in ("independent", "shuffled_cycle")}
    assert set(summary) == keys
    done = {k: v for k, v in summary.items() if v["replicates"]}
    missing = {k: v for k, v in summary.items() if not v["replicates"]}
    assert done and missing  # 3 tasks of 2 replicates: some points have nothing yet
    for row in missing.values():
        assert row["slope"] is None and row["top3"] is None and row["max_abs_error"] is None
    for key, row in done.items():
        assert len(row["top3"]) == 3 and len(row["modal"]) == 6
        if "independent" in key:
            assert row["max_abs_error"] is not None and row["variance_ratio"] is not None
        else:
            assert row["max_abs_error"] is None and row["variance_ratio"] is None
    html = (out / "index.html").read_text()
    assert "Sorted by frequency" in html and "Board order" in html and "IN_JAIL" in html


@pytest.mark.skipif("monopoly" not in game_names(), reason="monopoly not registered")
def test_report_tables_and_summary_match_store(tmp_path, cluster2):
    from boardsweep.pipeline.query import frequencies, modal_string, open_sweep

    store = str(tmp_path / "full.zarr")
    assert run_sweep(parse_spec(MONO, "rep.toml"), store, scheduler=cluster2).complete
    out = tmp_path / "r"
    summary = build_report(store, out)
    ds = open_sweep(store)
    freq = frequencies(ds).isel(checkpoint=-1).mean("replicate")
    cell = freq.sel(dice_sides=6, deck_policy="independent")
    row = summary["dice_sides=6,deck_policy=independent"]
    assert row["modal"] == modal_string(cell)
    order = np.argsort(-cell.values, kind="stable")[:3]
    assert [t["label"] for t in row["top3"]] == [str(cell["location"].values[i]) for i in order]
    assert row["slope_basis"] == "rms_error" and -1.0 < row["slope"] < 0.0
    counts = ds["counts"].sel(dice_sides=6, deck_policy="independent").isel(checkpoint=-1).sum("replicate")
    jail = int(counts.sel(location="IN_JAIL"))
    assert f"<td>{jail}</td>" in (out / "index.html").read_text()
    check_pngs(out)
    meta = json.loads((out / "report.json").read_text())
    assert meta["decomposition"] and meta["comparisons"]


def test_report_on_toy_game(tmp_path, cluster2, toy_spec_text):
    store = str(tmp_path / "toy.zarr")
    assert run_sweep(parse_spec(toy_spec_text, "toy.toml"), store, scheduler=cluster2).complete
    summary = build_report(store, tmp_path / "t")
    assert len(summary) == 4
    assert all(v["variance_ratio"] is None for v in summary.values())
    assert all(v["slope"] is not None for v in summary.values())
    sticky = [v for k, v in summary.items() if "rule=sticky" in k]
    assert all(v["max_abs_error"] is None and v["slope_basis"] == "sd" for v in sticky)
    check_pngs(tmp_path / "t")


@pytest.mark.skipif("hk_monopoly" not in game_names(), reason="hk_monopoly not registered")
def test_report_on_hk_monopoly(tmp_path, cluster2):
    text = """\
name = "hk"
game = "hk_monopoly"
seed = 4
[params]
players = 2
[grid]
dice_sides = [4, 6]
[run]
replicates = 2
games = 10
[checkpoints]
count = 3
"""
    store = str(tmp_path / "hk.zarr")
    assert run_sweep(parse_spec(text, "hk.toml"), store, scheduler=cluster2).complete
    summary = build_report(store, tmp_path / "h")
    assert set(summary) == {"dice_sides=4", "dice_sides=6"}
    assert all(v["variance_ratio"] is None and v["top3"] for v in summary.values())
    assert all(v["modal"] is None for v in summary.values())  # PE84's string is Monopoly's
    check_pngs(tmp_path / "h")
    # win shares: only the 2 seats in play; estimate = pooled wins / games from the raw store;
    # each Wilson bound solves the score equation |p_hat - p| = z sqrt(p (1 - p) / n)
    import zarr

    wins = zarr.open_array(store, path="wins", mode="r")[...]
    games = zarr.open_array(store, path="games", mode="r")[...]
    z = 1.959963984540054
    for i, key in enumerate(("dice_sides=4", "dice_sides=6")):
        shares = summary[key]["estimates"]["win_share"]
        assert set(shares) == {"P1", "P2"}
        n = games[i, :, -1].sum()
        for seat, e in enumerate(shares.values()):
            p_hat = wins[i, :, -1, seat].sum() / n
            assert e["estimate"] == pytest.approx(p_hat, abs=1e-12)
            for bound in (e["low"], e["high"]):
                assert abs(p_hat - bound) == pytest.approx(z * np.sqrt(bound * (1 - bound) / n), abs=1e-9)
            assert e["low"] < p_hat < e["high"]
    assert "Estimates with 95% intervals" in (tmp_path / "h" / "index.html").read_text()


def test_report_on_shut_the_box_mean_rolls(tmp_path, cluster2):
    """Mean rolls with a replicate-based interval, beside the exact expectation."""
    import zarr

    text = """\
name = "stb"
game = "shut_the_box"
seed = 640
[grid]
policy = ["optimal", "greedy"]
[params]
dice_sides = 3
[run]
replicates = 4
games = 2000
[checkpoints]
count = 4
"""
    store = str(tmp_path / "stb.zarr")
    assert run_sweep(parse_spec(text, "stb.toml"), store, scheduler=cluster2).complete
    summary = build_report(store, tmp_path / "s")
    rolls = zarr.open_array(store, path="rolls_sum", mode="r")[...][:, :, -1] / 2000.0
    for i, policy in enumerate(("optimal", "greedy")):
        e = summary[f"policy={policy}"]["estimates"]["mean_rolls"]["value"]
        se = rolls[i].std(ddof=1) / 2.0
        assert e["estimate"] == pytest.approx(rolls[i].mean(), rel=1e-12)
        assert e["high"] - e["estimate"] == pytest.approx(1.959963984540054 * se, rel=1e-9)
        assert abs(e["estimate"] - e["exact"]) < 5 * se  # 5 standard errors
    assert summary["policy=optimal"]["estimates"]["mean_rolls"]["value"]["exact"] < \
        summary["policy=greedy"]["estimates"]["mean_rolls"]["value"]["exact"]


def test_report_cli_errors(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", str(tmp_path / "nothing.zarr"), "--out", str(tmp_path / "o")])
    assert exc.value.code == 2
    assert "no sweep store" in capsys.readouterr().err
