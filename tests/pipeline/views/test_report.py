"""boardsweep.pipeline.views.report and ``boardsweep report``: stores with missing cells, other games."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as st

from boardsweep.core.games import game_names
from boardsweep.pipeline.cli.commands import main
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.api import report as write_report
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import load_sweep

from specs import spec_toml  # tests/support is on sys.path

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

MONO_GRID = {"dice_sides": [4, 6], "deck_policy": ["independent", "shuffled_cycle"]}
MONO_RUN = {"replicates": 4, "games": 1, "players": 1, "turns": 4000}


def mono(grid: dict = MONO_GRID, run: dict = MONO_RUN) -> str:
    return spec_toml("monopoly", name="rep", seed=3, params={"tally": "per_roll"}, grid=grid, run=run,
                     checkpoints={"count": 6}, tasks={"replicates_per_task": 2})


MONO = mono()


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
        assert f'src="{path.name}"' in html  # self-contained: figures beside the page
        assert path.with_suffix(".svg").read_text().lstrip().startswith("<?xml")  # vector copy beside it
    assert "nothing to draw:" not in html
    return pngs


def check_figures(out, expected: set) -> set:
    """The figures written are ``expected``, except difference heatmaps left
    out because no label differs (then the report's notes say so)."""
    names = {p.name for p in check_pngs(out)}
    expected = expected | {"answer.png"}  # the answer figure leads every report
    assert "answer.png" in names
    notes = json.loads((out / "report.json").read_text())["notes"]
    for name in expected - names:
        assert name.startswith("difference_"), name
        assert any(n.startswith(f"{name} left out: no label differs") for n in notes), (name, notes)
    assert names <= expected, names - expected
    return names


MONOPOLY_FIGURES = {"frequency_heatmap.png", "z_heatmap.png", "difference_deck_policy.png",
                    "convergence.png", "variance_ratio.png", "diagnostics.png"}


def check_tables(out, points: int, labels: int) -> dict:
    """Every table is a CSV beside the page, every column defined in report.json."""
    import pandas as pd

    meta = json.loads((out / "report.json").read_text())
    for name, table in meta["tables"].items():
        df = pd.read_csv(out / table["csv"])
        assert list(df.columns) == list(table["columns"]), name
        assert all(table["columns"].values())
        assert f"href=\"{table['csv']}\"" in (out / "index.html").read_text()
    pts = pd.read_csv(out / "points.csv")
    assert len(pts) == points
    assert set(meta["grid"]) <= set(pts.columns)  # grid axes as separate columns
    if labels:
        assert len(pd.read_csv(out / "frequencies.csv")) == points * labels
    return meta


def check_summary_first(out, meta) -> str:
    """The answer first (the question, the verdict in one line, the answer
    figure), then the sweep's summary, before the validation figures."""
    page = (out / "index.html").read_text()
    first_figure = page.index("<img")
    assert page[first_figure:].startswith('<img src="answer.png"')
    for text in (meta["answer"]["question"], meta["answer"]["verdict"]):
        assert page.index(text.replace("'", "&#39;")) < first_figure, text
    second = page.find("<img", first_figure + 1)
    for text in (meta["description"], "run shape", meta["verdict"]["text"][:40] if meta.get("verdict") else ""):
        assert text and page.index(text.replace("'", "&#39;")) < (second if second > 0 else len(page)), text
    return page


@pytest.mark.skipif("monopoly" not in game_names(), reason="monopoly not registered")
def test_report_cli_on_interrupted_store(tmp_path, write_spec, cluster2):
    spec = write_spec(MONO)
    store = tmp_path / "rep.zarr"
    # interrupted: 3 of 8 tasks
    run_sweep(parse_spec(MONO, str(spec)), str(store), scheduler=cluster2, max_tasks=3)
    out = tmp_path / "report"
    main(["report", str(store), "--out", str(out), "--deck-orders"])
    check_figures(out, MONOPOLY_FIGURES)
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
            assert row["exact"] == "stored" and row["reference"] == "exact"
            assert row["max_abs_error"] is not None and row["variance_ratio"] is not None
        else:  # no single exact answer; the replicates' own deck orders are the reference
            assert row["exact"] == "none" and row["reference"] == "replicate decks"
            assert row["max_abs_error"] is not None and row["variance_ratio"] is None
    meta = check_tables(out, 4, 41)
    page = check_summary_first(out, meta)
    assert "no finished replicate yet" in meta["verdict"]["text"]
    assert "no single exact answer" in meta["verdict"]["text"]
    assert "IN_JAIL" in page and "Community Chest" in page  # square names beside the codes


@pytest.fixture(scope="module")
def mono_full(tmp_path_factory, cluster2):
    store = str(tmp_path_factory.mktemp("full") / "full.zarr")
    assert run_sweep(parse_spec(MONO, "rep.toml"), store, scheduler=cluster2).complete
    return store


@pytest.mark.skipif("monopoly" not in game_names(), reason="monopoly not registered")
def test_report_tables_and_summary_match_store(tmp_path, mono_full):
    import pandas as pd
    from scipy.stats import norm, t

    import xarray as xr

    from boardsweep.core.games import get_game
    from boardsweep.pipeline.analysis.clt import CLT_MIN_COUNT
    from boardsweep.pipeline.analysis import comparisons, decks, headlines, variance
    from boardsweep.pipeline.analysis.query import modal_string
    from boardsweep.pipeline.store import open_sweep

    out = tmp_path / "r"
    said: list[str] = []
    summary = write_report(mono_full, out, deck_orders=True, progress=said.append)
    assert len(said) == 2 and said[0].startswith("deck orders: solving") and " done in " in said[1]
    ds = open_sweep(mono_full)
    at = {"dice_sides": 6, "deck_policy": "independent"}
    counts = ds["counts"].isel(checkpoint=-1).sel(at).values.astype(float)  # (replicate, location)
    events = ds["events"].isel(checkpoint=-1).sel(at).values.astype(float)[:, None]
    # the one estimator, by hand: the ratio of sums with its linearised s.e. over the 4 replicates
    estimate = counts.sum(0) / events.sum(0)
    d = counts - estimate * events
    se = np.sqrt((d * d).sum(0) / (4 * 3)) / events.mean()
    row = summary["dice_sides=6,deck_policy=independent"]
    cell = xr.DataArray(estimate, dims="location", coords={"location": ds["location"].values})
    assert row["modal"] == modal_string(cell)
    order = np.argsort(-estimate, kind="stable")[:3]
    assert [t_["label"] for t_ in row["top3"]] == [str(ds["location"].values[i]) for i in order]
    assert row["slope_basis"] == "rms_error" and -1.0 < row["slope"] < 0.0
    exact = ds["exact_counts"].sel(at).isel(checkpoint=-1).values
    exact = exact / exact.sum()
    game = get_game("monopoly")
    params = {p.name: p.default for p in game.params} | {"tally": "per_roll", **at}
    rolls = ds["rolls"].isel(checkpoint=-1).sel(at).values.sum()
    clt_se = np.sqrt(game.extras["asymptotic_variance"](params)["variance"] / rolls)
    z_row = exact * rolls >= CLT_MIN_COUNT
    assert z_row.any() and not z_row.all()  # both kinds of row are checked
    impossible = {str(lab) for lab, x, n in zip(ds["location"].values, exact, counts.sum(0)) if x == 0 and n == 0}
    possible = np.array([str(v) not in impossible for v in ds["location"].values])
    assert impossible == {"G2J"} and set(row["estimates"]["frequency"]) == {str(v) for v in
                                                                            ds["location"].values} - impossible
    for j, label in enumerate(ds["location"].values):
        if str(label) in impossible:
            continue
        e = row["estimates"]["frequency"][str(label)]
        assert e["estimate"] == pytest.approx(estimate[j], rel=1e-9)
        assert e["se"] == pytest.approx(se[j], rel=1e-9)
        # the row's test's own interval (one procedure per row): the z test's, estimate -+ z(0.975) times the
        # exact CLT s.e., where the label expects CLT_MIN_COUNT counts; elsewhere the t test's, on the s.e. above
        half = norm.ppf(0.975) * clt_se[j] if z_row[j] else t.ppf(0.975, 3) * se[j]
        assert e["high"] - e["estimate"] == pytest.approx(half, rel=1e-9, abs=1e-15)
        assert e["exact"] == pytest.approx(exact[j], rel=1e-9)
    z = (estimate - exact)[possible] / se[possible]
    assert row["max_abs_z"] == pytest.approx(np.nanmax(np.abs(z)), rel=1e-9)
    freq_csv = pd.read_csv(out / "frequencies.csv")
    mine = freq_csv[(freq_csv.dice_sides == 6) & (freq_csv.deck_policy == "independent")]
    assert np.allclose(mine["estimate"].values, estimate, rtol=1e-9)
    assert np.allclose(mine["se"].values, se, rtol=1e-9)
    heads = pd.read_csv(out / "headlines.csv", keep_default_na=False)  # the same numbers under the same names
    mine = heads[(heads.dice_sides == 6) & (heads.deck_policy == "independent")].set_index("label")
    labels = [str(v) for v in ds["location"].values[possible]]
    assert np.allclose(mine.loc[labels, "estimate"].astype(float), estimate[possible], rtol=1e-9)
    assert np.allclose(mine.loc[labels, "se"].astype(float), se[possible], rtol=1e-9)
    # a label counts as different between variants at the verdict's level (1%), not at 5%: in the maps
    report_meta = json.loads((out / "report.json").read_text())
    maps = {k: v for k, v in report_meta["figures"].items() if k.startswith("difference_")}
    notes = [n for n in report_meta["notes"] if n.startswith("difference_")]
    assert maps or notes
    assert all(f"Holm-adjusted p < {headlines.ALPHA:.0%}" in text and "5%" not in text
               for text in [*maps.values(), *notes])
    for c in report_meta["comparisons"]:
        res = comparisons.compare_axis(ds, c["axis"], c["a"] if c["axis"] != "dice_sides" else int(c["a"]),
                                    c["b"] if c["axis"] != "dice_sides" else int(c["b"]), "counts")
        where = {k: c[k] for k in ("dice_sides", "deck_policy") if k in res["p_holm"].dims}
        p_holm = res["p_holm"].sel(where)
        assert c["significant_labels"] == [str(lab) for lab, p in zip(p_holm["location"].values, p_holm.values)
                                           if p < headlines.ALPHA]
    meta = check_tables(out, 4, 41)
    assert meta["decomposition"] and meta["comparisons"]
    assert meta["headlines"]["frequency"]["basis"] == "replicates"
    assert "df = replicates - 1" in meta["headlines"]["frequency"]["basis_text"]
    assert "df = replicates - 1" in (out / "index.html").read_text()
    for c in meta["comparisons"]:  # no Cohen's d: difference / replicate sd measures run size, not effect
        assert "effect_size" not in c and c["t_at_label"] is not None
        assert c["relative_difference"] is not None and abs(c["relative_difference"]) < 1
    # one verdict for one store: the report's is run's and query's (the independent points); the
    # shuffled points' deck check is beside it, its own Holm family
    assert meta["verdict"]["with_reference"] == 2 and meta["verdict"]["agree"] <= 2
    same = headlines.verdict(ds)["text"]  # what run and query print
    assert meta["verdict"]["text"].startswith(same[0].upper() + same[1:] + ".")
    assert "Deck check, not part of the verdict: 2 points" in meta["verdict"]["text"]
    assert "Power: 80% to see a bias of " in meta["verdict"]["text"]
    check_figures(out, MONOPOLY_FIGURES)
    # the shuffled points' reference is the mean exact answer of each replicate's decks
    dec = pd.read_csv(out / "decomposition.csv")  # per label, shuffled points only
    assert set(dec["deck_policy"]) == {"shuffled_cycle"} and len(dec) == 2 * 41
    assert (dec["between_share"].dropna() > 0).any() and dec["paired_sd"].notna().any()
    # the share's printed interval and its kind travel with it (issue 42: the ANOVA's, or none and why)
    has = dec["between_share"].notna()
    assert set(dec.loc[has, "between_share_interval"]) <= {"anova", "none"}
    assert (dec.loc[has, "between_share_low"].isna() == (dec.loc[has, "between_share_interval"] == "none")).all()
    # the deck check is the paired test: each replicate against its own decks, the s.d. of the differences
    pairs = decks.deck_pairs(ds.load(), decks.shuffle_decomposition(ds.load()))
    shuffled = {"dice_sides": 6, "deck_policy": "shuffled_cycle"}
    freq = (ds["counts"].isel(checkpoint=-1).sel(shuffled) / ds["events"].isel(checkpoint=-1).sel(shuffled)).values
    own = decks.shuffle_decomposition(ds.load())["replicate_exact"].sel(shuffled)
    own = own.transpose("replicate", "location").values
    diff = freq - own
    cc1 = list(ds["location"].values).index("CC1")
    t_cc1 = diff[:, cc1].mean() / (diff[:, cc1].std(ddof=1) / 2)
    assert float(pairs["t"].sel(shuffled).isel(location=cc1)) == pytest.approx(t_cc1, rel=1e-9)
    deck = pd.read_csv(out / "tests.csv")
    deck = deck[(deck["family"] == "deck check") & (deck["dice_sides"] == 6) & (deck["label"] == "CC1")]
    assert len(deck) == 1 and deck["statistic"].iloc[0] == pytest.approx(t_cc1, rel=1e-9)
    # variance per label: every label of every point, its own variance ratio and deck parts
    var = pd.read_csv(out / "variance.csv")
    assert len(var) == 4 * 41
    mine = var[(var.dice_sides == 6) & (var.deck_policy == "independent")].set_index("label")
    assert mine["mcse"].to_numpy() == pytest.approx(mine["replicate_sd"].to_numpy() / 2, nan_ok=True)
    ratio = variance.variance_ratio(ds.load())["ratio"].isel(checkpoint=-1).sel(at)
    assert mine.loc["JAIL", "variance_ratio"] == pytest.approx(float(ratio.sel(location="JAIL")), rel=1e-9)
    assert mine["between_share"].isna().all() and mine["deck_t"].isna().all()
    jail = mine.loc["JAIL"]
    assert jail["ess"] == pytest.approx(jail["estimate"] * (1 - jail["estimate"]) / jail["mcse"] ** 2)
    theirs = var[(var.dice_sides == 6) & (var.deck_policy == "shuffled_cycle")]
    assert theirs["between_share"].notna().any() and theirs["clt_sd"].isna().all()
    assert {"between_share_interval", "anova_share", "anova_F"} <= set(var.columns)


@pytest.mark.skipif("monopoly" not in game_names(), reason="monopoly not registered")
def test_deck_orders_are_solved_only_when_asked(tmp_path, mono_full):
    """The deck-order chains (a solve per game) are opt-in: without them the
    shuffled points are compared with nothing and the notes name the option."""
    said: list[str] = []
    write_report(mono_full, tmp_path / "r", progress=said.append)
    meta = json.loads((tmp_path / "r" / "report.json").read_text())
    assert not said and not (tmp_path / "r" / "decomposition.csv").exists()
    assert any("compared with nothing" in n and "--deck-orders" in n for n in meta["notes"])
    assert "Deck check" not in meta["verdict"]["text"]
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert all(v["reference"] is None for k, v in summary.items() if "shuffled" in k)


@pytest.mark.skipif("monopoly" not in game_names(), reason="monopoly not registered")
def test_figure_count_does_not_grow_with_the_grid(tmp_path, cluster2):
    """A grid 3x larger gives the same figures, and a panel with no exact answer says so."""
    text = mono(grid={**MONO_GRID, "dice_sides": [3, 4, 5, 6, 7, 8]},  # 9 games per replicate:
                run={**MONO_RUN, "replicates": 2, "turns": 300, "games": 9})  # too many deck solves
    store = str(tmp_path / "wide.zarr")
    assert run_sweep(parse_spec(text, "wide.toml"), store, scheduler=cluster2).complete
    out = tmp_path / "w"
    summary = write_report(store, out)
    assert len(summary) == 12
    check_figures(out, MONOPOLY_FIGURES)
    meta = check_tables(out, 12, 41)
    assert meta["layout"] == {"x": "dice_sides", "facets": ["deck_policy"], "panels_per_figure": 2}
    shuffled = [v for k, v in summary.items() if "shuffled" in k]
    assert all(v["exact"] == "none" and v["reference"] is None and v["max_abs_z"] is None for v in shuffled)
    assert any("compared with nothing" in n for n in meta["notes"])
    assert "shuffle" in meta["panels_without_exact"]["deck_policy=shuffled_cycle"]
    assert list(meta["panels_without_exact"]) == ["deck_policy=shuffled_cycle"]
    assert meta["verdict"]["exact_none"] == 6 and meta["verdict"]["with_reference"] == 6


def test_report_on_toy_game(tmp_path, cluster2, toy_spec_text):
    store = str(tmp_path / "toy.zarr")
    assert run_sweep(parse_spec(toy_spec_text, "toy.toml"), store, scheduler=cluster2).complete
    summary = write_report(store, tmp_path / "t")
    assert len(summary) == 4
    assert all(v["variance_ratio"] is None for v in summary.values())
    assert all(v["slope"] is not None for v in summary.values())
    sticky = [v for k, v in summary.items() if "rule=sticky" in k]
    assert all(v["max_abs_error"] is None and v["slope_basis"] == "sd" for v in sticky)
    check_pngs(tmp_path / "t")
    check_summary_first(tmp_path / "t", check_tables(tmp_path / "t", 4, 8))


@pytest.mark.skipif("hk_monopoly" not in game_names(), reason="hk_monopoly not registered")
def test_report_on_hk_monopoly(tmp_path, cluster2, monkeypatch):
    text = spec_toml("hk_monopoly", name="hk", seed=4, params={"players": 2}, grid={"dice_sides": [4, 6]},
                     run={"replicates": 2, "games": 10}, checkpoints={"count": 3})
    store = str(tmp_path / "hk.zarr")
    assert run_sweep(parse_spec(text, "hk.toml"), store, scheduler=cluster2).complete
    from boardsweep.pipeline.views.report import forest

    monkeypatch.setattr(forest, "FOREST_ROWS", 3)  # 4 win shares: one cannot be drawn
    summary = write_report(store, tmp_path / "h")
    assert set(summary) == {"dice_sides=4", "dice_sides=6"}
    caption = json.loads((tmp_path / "h" / "report.json").read_text())["figures"]["forest.png"]
    assert "win_share shows 3 of its 4 rows" in caption and "Every row is in headlines.csv" in caption
    assert all(v["variance_ratio"] is None and v["top3"] for v in summary.values())
    assert all(v["modal"] is None for v in summary.values())  # PE84's string is Monopoly's
    applies = bool(np.isfinite(load_sweep(store).boardsweep.estimate("landing_frequency")["exact"]).any())
    assert {p.name for p in check_pngs(tmp_path / "h")} == {  # one axis; z only where an exact answer applies
        "answer.png", "forest.png", "frequency_heatmap.png", "convergence.png", "diagnostics.png",
        *(["z_heatmap.png"] * applies)}
    meta = check_tables(tmp_path / "h", 2, 21)
    check_summary_first(tmp_path / "h", meta)
    assert meta["verdict"]["exact_stored"] == 2
    # win shares: only the 2 seats in play; estimate = pooled wins / games from the raw store, its
    # s.e. pooled per game (a 0/1 outcome: s^2 = p (1 - p) N / (N - 1)), the exact binomial interval
    import zarr

    wins = zarr.open_array(store, path="wins", mode="r")[...]
    games = zarr.open_array(store, path="games", mode="r")[...]
    for i, key in enumerate(("dice_sides=4", "dice_sides=6")):
        shares = summary[key]["estimates"]["win_share"]
        assert set(shares) == {"P1", "P2"}
        n = games[i, :, -1].sum()
        for seat, e in enumerate(shares.values()):
            p_hat = wins[i, :, -1, seat].sum() / n
            se = np.sqrt(p_hat * (1 - p_hat) / (n - 1))
            assert e["estimate"] == pytest.approx(p_hat, abs=1e-12)
            assert e["se"] == pytest.approx(se, rel=1e-9)
            exact = st.binomtest(int(wins[i, :, -1, seat].sum()), int(n)).proportion_ci(0.95, method="exact")
            assert e["low"] == pytest.approx(exact.low, rel=1e-7) and e["high"] == pytest.approx(exact.high, rel=1e-7)
    page = (tmp_path / "h" / "index.html").read_text()
    assert "Headline answers" in page and " ± " in page and "-+" not in page


def test_report_on_shut_the_box_mean_rolls(tmp_path, cluster2):
    """Mean rolls with a replicate-based interval, beside the exact expectation."""
    import zarr

    text = spec_toml("shut_the_box", name="stb", seed=640, params={"dice_sides": 3},
                     grid={"policy": ["optimal", "greedy"]}, run={"replicates": 4, "games": 2000},
                     checkpoints={"count": 4})
    store = str(tmp_path / "stb.zarr")
    assert run_sweep(parse_spec(text, "stb.toml"), store, scheduler=cluster2).complete
    summary = write_report(store, tmp_path / "s")
    # the histogram converges in games (its own entries), not against another variable such as rolls_sum
    import xarray as xr

    from boardsweep.pipeline.analysis import convergence as analysis

    conv = analysis.convergence(xr.open_zarr(store), "hist")
    assert conv.attrs["steps"] == "games (counted in hist)"
    np.testing.assert_array_equal(conv["steps"].values, np.broadcast_to(conv["checkpoint"].values, (2, 4)))
    # mean rolls pooled over the 8,000 games, its s.e. from the stored sums of squares (df = N - 1)
    total = zarr.open_array(store, path="rolls_sum", mode="r")[...][:, :, -1].sum(1)
    squares = zarr.open_array(store, path="rolls_sq_sum", mode="r")[...][:, :, -1].sum(1)
    n = 8000
    for i, policy in enumerate(("optimal", "greedy")):
        e = summary[f"policy={policy}"]["estimates"]["mean_rolls"]["value"]
        se = np.sqrt((squares[i] - total[i] ** 2 / n) / (n - 1) / n)
        assert e["estimate"] == pytest.approx(total[i] / n, rel=1e-12)
        assert e["se"] == pytest.approx(se, rel=1e-9)
        t_half = st.t.ppf(0.975, n - 1) * se  # Hall's skewness-corrected interval: the t one, shifted up a shade
        assert e["high"] - e["estimate"] > t_half > e["estimate"] - e["low"]
        assert e["high"] - e["low"] == pytest.approx(2 * t_half, rel=0.01)
        assert abs(e["estimate"] - e["exact"]) < 5 * se  # 5 standard errors
    assert summary["policy=optimal"]["estimates"]["mean_rolls"]["value"]["exact"] < \
        summary["policy=greedy"]["estimates"]["mean_rolls"]["value"]["exact"]
    meta = check_tables(tmp_path / "s", 2, 1024)
    check_summary_first(tmp_path / "s", meta)
    # the rolls drawn as distributions (one panel per point), not as 1,024-row heatmaps
    assert {p.name for p in check_pngs(tmp_path / "s")} == {"answer.png", "forest.png", "rolls_distribution.png",
                                                            "convergence.png", "diagnostics.png"}
    assert (tmp_path / "s" / "forest.svg").read_text().lstrip().startswith("<?xml")
    import pandas as pd

    # the headline table leads: mean rolls with the pooled per-game s.e. (8,000 games, df 7,999)
    heads = pd.read_csv(tmp_path / "s" / "headlines.csv")
    means = heads[heads["headline"] == "mean_rolls"]
    assert list(means["policy"]) == ["optimal", "greedy"] and (means["se_basis"] == "units").all()
    assert (means["df"] == 7999).all() and (means["level"] == 0.95).all()
    page = (tmp_path / "s" / "index.html").read_text()
    # the headline table is the first section after the summary, before the figures and the other tables
    assert page.index('<h2 id="headlines"') < page.index('<h2 id="figures"') < page.index('<h2 id="points"')
    assert meta["verdict"]["text"].startswith(("AGREE at family-wise 1%", "DISAGREE at family-wise 1%"))
    tests = pd.read_csv(tmp_path / "s" / "tests.csv")
    assert set(tests["test"]) == {"skew_t", "chi2"} and len(tests) == 4 and (tests["p_holm"] >= tests["p"]).all()

    # the histogram: one row per point on the page, its goodness of fit with the Holm-adjusted p
    dists = pd.read_csv(tmp_path / "s" / "distributions.csv")
    assert list(dists["policy"]) == ["optimal", "greedy"] and (dists["test"] == "chi2").all()
    chi2 = tests[tests["test"] == "chi2"].set_index("policy")
    assert np.allclose(dists.set_index("policy").loc[chi2.index, "p_holm"], chi2["p_holm"], rtol=1e-12)
    assert page.count("<tr") < 40  # compact: no row per histogram bin


def test_report_cli_errors(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", str(tmp_path / "nothing.zarr"), "--out", str(tmp_path / "o")])
    assert exc.value.code == 2
    assert "no sweep store" in capsys.readouterr().err


def test_the_summary_says_where_more_turns_will_not_shrink_an_error():
    """A shuffled point whose between-deck share is at least one half at some
    labels: one sentence names it, its worst label, and that only replicates help."""
    from boardsweep.pipeline.views.report import variance_words

    assert variance_words({"decomposition": {}}) == ""
    quiet = {"label": "GO", "between_share": 0.3, "labels_between_dominates": []}
    loud = {"label": "CH1", "between_share": 0.994, "labels_between_dominates": ["CH1", "CH2"]}
    text = variance_words({"decomposition": {"dice_sides=6,deck_policy=shuffled_cycle": loud,
                                              "dice_sides=4,deck_policy=shuffled_cycle": quiet}})
    assert text.startswith("More turns will not shrink the error at 1 point with shuffled decks")
    assert "for 2 labels at dice_sides=6,deck_policy=shuffled_cycle (largest: 0.99 at CH1)" in text
    assert "only more replicates (deck orders) shrink it" in text
