"""What a user sees: every shipped sweep's run summary fits one screen (45
lines at 100 columns) and counts the tasks its progress bar counted; one
estimate and one standard error per quantity, whichever way it is read
(``query``, ``query --summary`` as CSV, the accessor, the summary table)."""

from __future__ import annotations

import io
import json
import re
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from clirun import run_cli

from boardsweep.pipeline.analysis import accessor, headlines, query  # noqa: F401  (accessor: ds.boardsweep)
from boardsweep.pipeline import store
from boardsweep.pipeline.analysis import dataset
from boardsweep.pipeline.analysis.headtohead import head_to_head
from boardsweep.pipeline.views import overview

ROOT = Path(__file__).resolve().parents[3]

#: Run shapes small enough for a test; the grids are the shipped ones.
SMALL_RUNS = {"games": 20, "turns": 400}


def _small(path: Path) -> dict:
    spec = tomllib.loads(path.read_text())
    run = spec["run"]
    for key, most in SMALL_RUNS.items():
        if key in run:
            run[key] = min(run[key], most)
    run["replicates"] = min(run["replicates"], 4)
    spec.setdefault("tasks", {})["replicates_per_task"] = 2
    spec.pop("store", None)
    return spec


def _value(v) -> str:
    """A TOML value: an inline table for a dict (``[answer] at``), JSON for the rest."""
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {_value(x)}" for k, x in v.items()) + "}"
    return json.dumps(v)


def _toml(spec: dict) -> str:
    lines = [f"{k} = {_value(v)}" for k, v in spec.items() if not isinstance(v, dict)]
    for table, content in spec.items():
        if isinstance(content, dict):
            lines += ["", f"[{table}]", *(f"{k} = {_value(v)}" for k, v in content.items())]
    return "\n".join(lines) + "\n"


SWEEPS = {path.stem: path for path in sorted((ROOT / "sweeps").glob("*.toml"))}
SWEEPS["chutes_ladders"] = ROOT / "examples" / "chutes_ladders" / "sweep.toml"


def _per_seat() -> dict:
    """A money-game sweep with per-seat strategies (a grid value per seat)."""
    spec = _small(SWEEPS["hk_monopoly"])
    spec["name"] = "per_seat"
    spec["grid"] = {"buy_policy": ["always,never,reserve:300", "never,always,always", "always"],
                    "jail_strategy": ["short", "long"], "players": [3]}
    for axis in spec["grid"]:
        spec["params"].pop(axis, None)  # the shipped sweep fixes them: here they are grid axes
    return spec


@pytest.fixture(scope="module")
def summaries(tmp_path_factory, cluster2):
    """Every shipped sweep (grids as shipped, tiny runs) and a per-seat money
    game, run by the CLI at 100 columns: name -> (printed text, store)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("COLUMNS", "100")
    folder = tmp_path_factory.mktemp("overview")
    found = {}
    specs = {name: _small(path) for name, path in SWEEPS.items()}
    specs["per_seat"] = _per_seat()
    try:
        for name, spec in specs.items():
            path = folder / f"{name}.toml"
            path.write_text(_toml(spec))
            url = str(folder / f"{name}.zarr")
            out = io.StringIO()
            with pytest.MonkeyPatch.context() as m:
                m.setattr("sys.stdout", out)
                code = run_cli("run", str(path), "--store", url, "--scheduler", cluster2)
            assert code == 0, out.getvalue()
            found[name] = (out.getvalue(), url)
    finally:
        mp.undo()
    return found


@pytest.mark.parametrize("name", [*SWEEPS, "per_seat"])
def test_run_summary_fits_one_screen_and_counts_the_bar(summaries, name):
    text, url = summaries[name]
    lines = text.splitlines()
    assert len(lines) <= overview.MAX_LINES, text
    assert max(len(line) for line in lines if url not in line) <= 100  # a path is never cut
    assert "verdict: " in text and "-+" not in text and "1 grid points" not in text
    words = " ".join(text.split())  # as read, not as wrapped
    planned = re.search(r"tasks to run: (\d+) \((\d+) simulation, (\d+) exact\)", words)
    ran = re.search(r"this run: (\d+) tasks? \((\d+) simulation, (\d+) exact(?:, \d+ exact solves?)?\)", words)
    assert planned and ran, text
    assert planned.groups() == ran.groups()  # what the bar counted is what the last lines count
    assert int(ran[1]) == int(ran[2]) + int(ran[3])
    assert re.search(r"store complete: (\d+) of \1 replicates? and (\d+) of \2 exact answers? done", words)


def _answer_rows(text: str, question: str) -> tuple[list[str], list[str]]:
    """The lines of the summary's first table (from the question to the first
    verdict line) and the lines after it."""
    words = question.split()
    start = next(i for i, line in enumerate(text.splitlines()) if line.startswith(" ".join(words[:3])))
    lines = text.splitlines()[start:]
    end = next(i for i, line in enumerate(lines) if line.startswith("verdict: "))
    return lines[:end], lines[end:]


@pytest.mark.parametrize("name", [*SWEEPS])
def test_the_summary_answers_the_specs_question_first(summaries, name):
    """The question, then a row for every grid point it asks (whatever the
    cut), then the verdict in one line and where the details are."""
    from boardsweep.pipeline.analysis.answer import answer_of, asked_points

    text, url = summaries[name]
    ds = store.load_sweep(url)
    answer = answer_of(ds)
    title = answer.question if answer.given or overview._asks(ds, answer.headline) else f"{answer.headline}:"
    assert " ".join(title.split()[:2]) in " ".join(text.split())  # a plugin's headline without a question: its name
    block, after = _answer_rows(text, title)
    assert after[0].startswith("verdict: ") and after[1].startswith("details: ")
    versus = head_to_head(ds, answer.axis)
    if versus is not None:  # strategies head to head: one row per pair, not per grid point
        rows = [line for line in block if re.match(r"\S+ vs \S+ +\d", line)]
        assert len(rows) == len(versus) and all(re.search(r"\[-?[\d.]+, -?[\d.]+\]", r) for r in rows), block
        return
    asked = dataset.grid_points_at(ds, asked_points(ds, answer))
    assert len(asked) == len(list(dataset.grid_points(ds.sel({a: list(v) for a, v in answer.at.items()}))))
    shown = []
    flat = " ".join(text.split())
    said = dict(re.findall(r"(\w+) = (\S+) at every row", flat))  # an axis of one value: in the legend, not the rows
    for point in asked if ds.attrs["grid_axes"] else ():
        assert all(str(point[a]) == v for a, v in said.items()), (said, point)
        cells = [str(v) for a, v in point.items() if a not in said]
        rows = [line for line in block if re.split(r"[,\s]+", line)[:len(cells)] == cells]
        assert len(rows) <= 1, (point, block)
        shown += [point] * len(rows)
    if answer.given:  # every point the spec asks, whatever the cut
        assert shown == (asked if ds.attrs["grid_axes"] else [])
    else:  # no [answer] (a plugin's sweep): as many points as fit, the first ones (none disagrees here)
        assert len(shown) >= 3 and shown == asked[:len(shown)], block
    assert after[0].startswith("verdict: ") and after[1].startswith("details: ")
    if answer.label:
        assert any(f"{answer.label} ± 95%" in line for line in block)  # its column
    assert ("modal" in text) == answer.modal  # PE84's modal string only where asked (not in stats102a)


def test_the_summary_says_a_capped_value_is_the_cap(summaries):
    """hk_monopoly's rounds cap: a mean of 100 with no spread is every game reaching it
    (three players: games of 100 rounds end at the cap)."""
    text, url = summaries["per_seat"]
    est = store.load_sweep(url).boardsweep.estimate("mean_rounds")
    capped = int(((est["estimate"] == 100) & (est["se"] == 0)).sum())
    words = " ".join(text.split())
    assert capped > 0  # 20 games of 100 rounds: most tables end at the cap
    assert f"mean_rounds 100 ± 0 at {capped} points: every game reached the cap rounds = 100" in words


def test_an_empty_column_is_left_out(summaries):
    """The money game's mean rounds have no exact answer: no exact, z or agree column."""
    text, _ = summaries["per_seat"]
    block = text.split("mean_rounds: ")[1].split("\n± ")[0]
    header = block.splitlines()[1]
    assert "mean_rounds ± 95%" in header and "exact" not in header and " z " not in header + " "
    assert "agree" not in header


@pytest.mark.parametrize("name", ["quickstart", "shut_the_box", "hk_monopoly", "chutes_ladders"])
def test_one_estimate_and_se_whichever_way_it_is_read(summaries, name, capsys):
    _, url = summaries[name]
    ds = store.load_sweep(url)
    table = headlines.summary(ds)
    by_accessor = ds.boardsweep.summary()
    pd.testing.assert_frame_equal(table, by_accessor)
    capsys.readouterr()
    assert run_cli("query", url, "--summary", "--format", "csv") == 0
    csv = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(csv.columns[: len(headlines.COLUMNS) + 2])[2:] == list(headlines.COLUMNS) or \
        set(headlines.COLUMNS) <= set(csv.columns)
    assert len(csv) == len(table)
    for column in ("estimate", "se"):
        np.testing.assert_allclose(csv[column].to_numpy(float), table[column].to_numpy(float),
                                   rtol=1e-12, atol=0, equal_nan=True)
    if name == "shut_the_box":  # a scalar pooled per game and a distribution: the report's CSV holds both kinds
        _same_as_the_reports_csv(url, table, ds)
    for headline in ds.boardsweep.headlines:  # the accessor's Dataset: the same numbers
        est = ds.boardsweep.estimate(headline)
        mine = table[table["headline"] == headline]
        values = est["estimate"].broadcast_like(est["estimate"]).values
        finite = np.sort(values[np.isfinite(values)].ravel())
        np.testing.assert_allclose(np.sort(mine["estimate"].dropna().to_numpy(float)), finite, rtol=1e-12)
    variables = dataset.distribution_variables(ds)
    if variables:  # `query` rows of a distribution: its headline's estimate and se
        variable = next(iter(variables))
        capsys.readouterr()
        assert run_cli("query", url, "--variable", variable, "--format", "json") == 0
        rows = json.loads(capsys.readouterr().out)
        est = ds.boardsweep.estimate(variable)
        dim = variables[variable]
        axes = list(ds.attrs["grid_axes"])
        for row in rows[:50]:
            cell = est.sel({a: row[a] for a in axes}).sel({dim: row[dim]})
            for column in ("estimate", "se"):
                want = float(cell[column])
                assert (row[column] is None and not np.isfinite(want)) or \
                    np.isclose(row[column], want, rtol=1e-12, atol=0)


def _same_as_the_reports_csv(url: str, table: pd.DataFrame, ds) -> None:
    """The report's headlines.csv: the summary's estimate and se, row by row
    (it leaves out the bins nothing can fall in)."""
    from boardsweep.pipeline.api import report as write_report

    out = Path(url).with_name(Path(url).stem + ".report")
    write_report(url, out)
    csv = pd.read_csv(out / "headlines.csv", dtype={"label": str}, keep_default_na=False,
                      na_values=[""])
    keys = [*ds.attrs["grid_axes"], "headline"]
    mine = table.assign(label=table["label"].astype(str).str.removeprefix(">="))
    csv = csv.assign(label=csv["label"].fillna("").astype(str).str.removeprefix(">=").str.removesuffix(".0"))
    for frame in (mine, csv):
        for key in keys:
            frame[key] = frame[key].astype(str)
    joined = csv.merge(mine, on=[*keys, "label"], suffixes=("_csv", ""))
    assert len(joined) == len(csv) > 0
    for column in ("estimate", "se"):
        np.testing.assert_allclose(joined[f"{column}_csv"].to_numpy(float), joined[column].to_numpy(float),
                                   rtol=1e-12, atol=0, equal_nan=True)


def test_the_accessor_and_the_package_api(summaries):
    import boardsweep

    assert {"run", "Spec", "open_sweep", "load_sweep", "Result"} <= set(dir(boardsweep))
    _, url = summaries["per_seat"]
    one = boardsweep.load_sweep(url, sel={"players": 3})  # a scalar, as xarray's sel takes it
    listed = boardsweep.load_sweep(url, sel={"players": [3]})
    assert one.sizes["players"] == 1 and int(one["players"][0]) == 3
    np.testing.assert_array_equal(one["wins"].values, listed["wins"].values)
    share = one.boardsweep.estimate("win_share")
    assert {"estimate", "se", "low", "high", "df", "exact", "z", "p"} <= set(share.data_vars)
    assert share["estimate"].sel(seat=share["seat"][3:]).isnull().all()  # seats 4 to 6 do not play
    verdict = one.boardsweep.verdict()
    assert verdict["alpha"] == headlines.ALPHA and verdict["text"].startswith(("AGREE", "DISAGREE", "nothing"))
    with pytest.raises(KeyError, match="no headline or simulated variable 'nope'"):
        one.boardsweep.estimate("nope")


def test_an_uneven_interval_is_written_low_high():
    """A t interval reads ``estimate ± half-width``; an exact binomial one near
    0 or 1 (a seat that won every game, a bin nothing fell in) reads
    ``estimate [low, high]``, never ``1 ± 0``."""
    from boardsweep.pipeline.analysis import half_width
    from boardsweep.pipeline.words import fmt_interval

    assert fmt_interval(0.5, 0.48, 0.52, 0.0102) == "0.500 ± 0.020"
    assert fmt_interval(1.0, 0.99908, 1.0, 0.0) == "1.00000 [0.99908, 1.00000]"
    assert fmt_interval(0.0, 0.0, 0.00092, 0.0) == "0.00000 [0.00000, 0.00092]"
    assert fmt_interval(0.01, 0.005, 0.018, 0.003) == "0.0100 [0.0050, 0.0180]"
    assert half_width(0.005, 0.01, 0.018) == pytest.approx(0.008)


def test_the_accessor_gives_the_variance_per_label(summaries):
    """``ds.boardsweep.variance()``: every label of every point, arviz's MCSE
    and ESS on the replicates, and Monopoly's exact CLT variance beside them;
    ``boardsweep.plan_run`` is in the package's API."""
    import boardsweep

    assert "plan_run" in dir(boardsweep) and callable(boardsweep.plan_run)
    ds = boardsweep.load_sweep(summaries["pe84"][1])
    var = ds.boardsweep.variance()
    est = ds.boardsweep.estimate("frequency")
    assert len(var) == est["estimate"].size and (var["headline"] == "frequency").all()
    assert np.allclose(var["mcse"], var["replicate_sd"] / np.sqrt(var["replicates"]), equal_nan=True)
    tested = var.dropna(subset=["clt_sd"])
    assert len(tested) and np.allclose(tested["variance_ratio"], (tested["replicate_sd"] / tested["clt_sd"]) ** 2,
                                       equal_nan=True)  # G2J: never counted, 0 / 0
    ok = tested[tested["mcse"] > 0]
    assert np.allclose(ok["ess"], ok["estimate"] * (1 - ok["estimate"]) / ok["mcse"] ** 2)


#: The smallest text a report figure may show, in pixels of the page (1250 pixels wide): 9 points at 100 dpi.
MIN_PAGE_PX = 12


def _panels(fig) -> list:
    """The panels of a figure: visible axes that draw axes, colour bars and the
    residual panels under the answer figure's panels left out."""
    return [ax for ax in fig.axes if ax.get_visible() and ax.axison and not hasattr(ax, "_colorbar")
            and not getattr(ax, "boardsweep_under", False)]


def _layout_faults(fig, name: str, dpi: float) -> list[str]:
    """What a reader would trip over: titles that overlap, text too small at
    the page's width, axis labels in snake_case."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    titles = [t for t in [fig._suptitle, *(ax.title for ax in fig.axes if ax.get_visible())]
              if t is not None and t.get_text()]
    boxes = [t.get_window_extent(renderer) for t in titles]
    faults = [f"{name}: titles {titles[i].get_text()!r} and {titles[j].get_text()!r} overlap"
              for i in range(len(boxes)) for j in range(i + 1, len(boxes)) if boxes[i].overlaps(boxes[j])]
    scale = min(1.0, 1250 / (fig.get_size_inches()[0] * dpi))  # the page shows the PNG at most 1250 pixels wide
    for ax in _panels(fig):
        for text in [*ax.get_xticklabels(), *ax.get_yticklabels(), ax.xaxis.label, ax.yaxis.label, ax.title]:
            px = text.get_fontsize() * dpi / 72 * scale
            if text.get_text() and px < MIN_PAGE_PX:
                faults.append(f"{name}: {text.get_text()!r} is {px:.1f} px on the page")
        for label in (ax.get_xlabel(), ax.get_ylabel()):
            if re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)+", label):
                faults.append(f"{name}: axis label {label!r} in snake_case")
    return faults


@pytest.mark.slow
@pytest.mark.parametrize("name", [*SWEEPS])
def test_every_shipped_report_leads_with_the_answer_and_reads_cleanly(summaries, name, tmp_path, monkeypatch):
    """Every shipped sweep's report (grids as shipped, tiny runs): the answer
    figure first on the page, every caption's panel count the panels drawn,
    no two titles overlapping, no text under 12 page pixels, no snake_case
    axis; checked on the matplotlib figures as they are saved."""
    import matplotlib.figure

    from boardsweep.pipeline.api import report as write_report

    _, url = summaries[name]
    seen: dict[str, tuple[int, list[str]]] = {}
    save = matplotlib.figure.Figure.savefig

    def checked(fig, fname, *args, **kwargs):
        path = Path(fname)
        if path.suffix == ".png":
            seen[path.name] = (len(_panels(fig)), _layout_faults(fig, path.name, kwargs.get("dpi", 100)))
        return save(fig, fname, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", checked)
    out = tmp_path / "r"
    write_report(url, out)
    meta = json.loads((out / "report.json").read_text())
    page = (out / "index.html").read_text()
    assert page[page.index("<img"):].startswith('<img src="answer.png"')
    from boardsweep.pipeline.analysis.answer import answer_of

    assert ("<th>modal" in page) == answer_of(store.load_sweep(url)).modal  # PE84's string: pe84's, not stats102a's
    assert list(meta["figures"])[0] == "answer.png" and set(meta["figures"]) == set(seen)
    faults = [f for _, found in seen.values() for f in found]
    assert not faults, faults
    for fname, caption in meta["figures"].items():
        for said in re.findall(r"(\d+) panels?\b", caption):
            assert int(said) == seen[fname][0], (fname, caption)
    if "frequency_heatmap.png" in seen:  # the page's line on the heatmaps counts their panels
        assert meta["layout"]["panels_per_figure"] == seen["frequency_heatmap.png"][0]
    _captions_name_the_interval_and_test(url, meta)


#: The interval each headline's attrs name (``interval_kind``, else the rule of
#: analysis.intervals.INTERVAL_TEXT) -> words its captions must use.
INTERVAL_WORDS = {"t": "t interval", "share": "exact binomial interval", "frequency": "count interval",
                  "count": "count interval", "mixed": "count interval", "skew_t": "skewness-corrected t interval",
                  "z": "z interval", "mixed_z": "z interval"}


def _captions_name_the_interval_and_test(url: str, meta: dict) -> None:
    """The answer figure's caption names the interval the answer's estimates
    use, as their attrs say (a frequency: t, else a count interval; a share:
    exact binomial), never a bare "t interval" for another; the z map's
    caption names the exact CLT s.e. where the verdict's test uses it."""
    from boardsweep.pipeline.analysis.answer import answer_of
    from boardsweep.pipeline.analysis.clt import TEST_TEXT
    from boardsweep.pipeline.analysis.intervals import INTERVAL_TEXT

    ds = store.load_sweep(url)
    if head_to_head(ds, answer_of(ds).axis) is not None:  # strategies head to head: the difference's t interval
        assert "95% t interval" in meta["figures"]["answer.png"]
        return
    found = headlines.estimates(ds)
    est = found[answer_of(ds).headline]
    kind = est.attrs.get("interval_kind") or next(k for k, v in INTERVAL_TEXT.items() if v == est.attrs["interval"])
    answer = meta["figures"]["answer.png"]
    assert INTERVAL_WORDS[kind] in answer, (kind, answer)
    if kind != "t":
        assert "95% t interval;" not in answer and "95% t interval)" not in answer, answer
    z_map = meta["figures"].get("z_heatmap.png", "")
    clt = any(e.attrs.get("test") == TEST_TEXT["z"] for e in found.values())
    assert ("exact CLT s.e." in z_map) == (clt and bool(z_map)), z_map


def test_a_selection_without_the_asked_points_keeps_the_question(summaries):
    """``query --sel dice_sides=6`` of pe84, which asks 4 sides: the question
    stays, every selected point answers it."""
    from boardsweep.pipeline.analysis.answer import answer_of, asked_points

    ds = store.load_sweep(summaries["pe84"][1])
    whole, part = answer_of(ds), answer_of(ds.sel(dice_sides=[6]))
    assert whole.at == {"dice_sides": (4,)} and part.given and part.question == whole.question and part.modal
    assert not part.at  # 4 sides is not in the selection: every selected point is asked
    assert len(asked_points(ds.sel(dice_sides=[6]), part)) == 2  # both deck policies at 6 sides


def test_the_accessor_draws_the_answer(summaries):
    """``ds.boardsweep.plot_answer()``: the other axis of a few values overlaid
    in one panel (Shut the Box's policies, one colour each), the estimate along
    the studied axis with its interval and the exact curve, and under it the
    residual panel of z = (estimate - exact) / s.e., as the report draws it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ds = store.load_sweep(summaries["shut_the_box"][1])
    fig = ds.boardsweep.plot_answer()
    panels = _panels(fig)
    under = [ax for ax in fig.axes if ax.get_visible() and getattr(ax, "boardsweep_under", False)]
    assert len(panels) == 1 and len(under) == 1 and fig.boardsweep_series == "policy"
    assert under[0].get_xlabel() == "dice sides" and "rolls" in panels[0].get_ylabel().lower()
    lines = {x.get_label(): x for x in panels[0].get_lines()}
    assert {"policy optimal", "policy greedy", "policy random", "exact"} <= set(lines)
    for k, policy in enumerate(("optimal", "greedy", "random")):
        est = ds.boardsweep.estimate("mean_rolls").sel(policy=policy)
        np.testing.assert_array_equal(lines[f"policy {policy}"].get_xdata(), est["dice_sides"].values)
        np.testing.assert_allclose(lines[f"policy {policy}"].get_ydata(), est["estimate"].values, rtol=1e-12)
        z = under[0].get_lines()[1 + k]  # after the line at 0
        np.testing.assert_allclose(z.get_ydata(), est["z"].values, rtol=1e-12)
    optimal = ds.boardsweep.estimate("mean_rolls").sel(policy="optimal")
    np.testing.assert_allclose(lines["exact"].get_ydata(), optimal["exact"].values, rtol=1e-12)
    plt.close(fig)
    quick = store.load_sweep(summaries["quickstart"][1])
    fig = quick.boardsweep.plot("frequency", axis="dice_sides", label="IN_JAIL", at={"deck_policy": "independent"})
    assert len(_panels(fig)) == 1 and fig.boardsweep_series == "jail_strategy"  # both strategies in one panel
    assert {"jail strategy short", "jail strategy long"} <= {x.get_label() for x in _panels(fig)[0].get_lines()}
    plt.close(fig)
    with pytest.raises(KeyError, match="no headline 'nope'"):
        quick.boardsweep.plot("nope")


@pytest.mark.slow
def test_the_money_games_six_seat_answer_fits_80_columns(tmp_path, cluster2, monkeypatch):
    """hk_monopoly with one policy for every seat and 2, 4, 6 players, its run
    shape cut as the report benchmark cuts it (200 games a replicate: the
    6-seat shares' s.e. under 0.01, so four decimals), asked by ``query
    --summary`` at 80 columns: every share is printed whole (the grid axis of
    one value, jail_strategy = short, goes to the legend), no line of the
    table wider than the terminal."""
    spec = _small(SWEEPS["hk_monopoly"])
    spec["run"].update(games=200, replicates=8)
    spec["grid"] = {"jail_strategy": ["short"], "buy_policy": ["always", "reserve:300", "never"],
                    "players": [2, 4, 6]}
    for axis in spec["grid"]:
        spec["params"].pop(axis, None)
    path, url = tmp_path / "hk.toml", str(tmp_path / "hk.zarr")
    path.write_text(_toml(spec))
    monkeypatch.setenv("COLUMNS", "80")
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    assert run_cli("run", str(path), "--store", url, "--scheduler", cluster2, "-q") == 0
    out.truncate(0), out.seek(0)
    assert run_cli("query", url, "--summary") == 0
    lines = out.getvalue().splitlines()
    head = next(i for i, line in enumerate(lines) if line.split()[:2] == ["grid", "point"])
    rows = lines[head + 2:head + 11]  # 3 buy policies x 3 player counts
    assert all(len(line) <= 80 for line in lines[head:head + 11]), lines
    assert not [line for line in rows if "…" in line], rows
    six = [line.split()[-7:] for line in rows if line.split()[1] == "6"]
    assert len(six) == 3 and all(re.fullmatch(r"0\.\d{4}", cell) for row in six for cell in row), six
    assert "jail_strategy = short at every row" in out.getvalue()


def test_stats102a_shows_every_square_by_name_most_frequent_first(summaries):
    """The assignment asks for the long-run table of all 40 squares: the
    summary's first table lists every location by its name in the store
    (``location_name``; a shared name with its code), ranks 1..41 in order of
    the estimate, largest first."""
    from boardsweep.pipeline.views.every_label import label_names

    text, url = summaries["stats102a"]
    ds = store.load_sweep(url)
    names = label_names(ds, "location")
    assert len(set(names)) == 41 and "Boardwalk" in names and "Chance (CH2)" in names
    head = text.splitlines().index(next(line for line in text.splitlines() if line.startswith("Stats 102A")))
    rows = text.splitlines()[head + 3:head + 3 + 21]
    found = {}
    for line in rows:  # columns are two spaces apart at least, words within a cell one
        cells = re.split(r"\s{2,}", line.strip())
        for rank, name, value in zip(cells[0::3], cells[1::3], cells[2::3]):
            found[int(rank)] = (name, float(value.split()[0]))
    assert sorted(found) == list(range(1, 42)), rows
    assert {name for name, _ in found.values()} == set(names)
    values = [found[k][1] for k in range(1, 42)]
    assert values == sorted(values, reverse=True)
    est = ds.boardsweep.estimate("frequency")["estimate"].values.ravel()
    top = names[int(np.nanargmax(est))]
    assert found[1][0] == top


def test_the_classic_answers_are_in_their_answer_tables(summaries):
    """Project Euler 640's answer at the 6 decimals it asks (50.317928) and
    Chutes and Ladders' classic 39.2251 expected spins (one player, 6-sided
    spinner, exact landing) stand in the row of the summary's first table,
    from the exact values the store holds (computed by the solvers)."""
    text, url = summaries["shut_the_box"]
    exact = store.load_sweep(url).boardsweep.estimate("mean_rolls")["exact"].sel(dice_sides=6, policy="optimal")
    assert f"{float(exact):.6f}" == "50.317928"
    block, _ = _answer_rows(text, "Project Euler 640")
    assert any(line.split()[:2] == ["6", "optimal"] and "50.317928" in line.split() for line in block), block
    text, url = summaries["chutes_ladders"]
    exact = store.load_sweep(url).boardsweep.estimate("mean_rounds")["exact"].sel(sides=6, overshoot="stay",
                                                                                   players=1)
    assert f"{float(exact):.4f}" == "39.2251"
    block, _ = _answer_rows(text, "Chutes and Ladders")
    assert any(line.split()[:3] == ["6", "stay", "1"] and "39.2251" in line.split() for line in block), block
