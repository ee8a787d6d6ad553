"""``ds.boardsweep``: a Dataset that is not a sweep, a variable dropped, a
level outside (0, 1) are refused in one line naming what is accepted; a
scalar ``sel`` of a grid axis answers as the length-1 list ``sel`` does."""

from __future__ import annotations

import pandas as pd
import pytest
import xarray as xr

import boardsweep
from boardsweep.pipeline.errors import InputError, NotASweep
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec


@pytest.fixture(scope="module")
def ds(tmp_path_factory, cluster2):
    from specs import TOY_SPEC  # tests/support is on sys.path

    url = tmp_path_factory.mktemp("accessor") / "toy.zarr"
    assert run_sweep(parse_spec(TOY_SPEC, "toy.toml"), str(url), scheduler=cluster2).complete
    return boardsweep.load_sweep(str(url))


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text and isinstance(exc, InputError), repr(exc)
    return text


@pytest.mark.parametrize("call", ["verdict", "estimate", "summary", "headlines"])
def test_a_dataset_that_is_not_a_sweep_is_refused(call):
    plain = xr.Dataset({"x": ("a", [1, 2, 3])}, attrs={"title": "not a sweep"})
    for candidate in (plain, xr.Dataset()):
        with pytest.raises(NotASweep) as raised:
            answer = getattr(candidate.boardsweep, call)
            answer() if callable(answer) else None
        assert _one_line(raised.value).startswith("not a boardsweep sweep: the Dataset has no spec_canonical")


def test_a_dataset_without_its_headline_variables_names_them(ds):
    names = ds.boardsweep.headlines
    assert names  # the toy game has headlines
    numerators = {ds.boardsweep.estimate(n).attrs["numerator"] for n in names}
    with pytest.raises(NotASweep) as raised:
        ds.drop_vars(sorted(numerators)).boardsweep.estimate()
    line = _one_line(raised.value)
    assert line.startswith("no headline can be estimated: the Dataset lacks") and all(n in line for n in numerators)
    with pytest.raises(NotASweep, match="lacks the variable done"):
        ds.drop_vars("done").boardsweep.estimate()


@pytest.mark.parametrize("level", [1.5, 0, 1, -0.5, float("nan"), "0.95", True])
def test_a_level_outside_0_1_is_refused(level, ds):
    with pytest.raises(NotASweep) as raised:
        ds.boardsweep.estimate(level=level)
    assert _one_line(raised.value) == (f"level={level!r}: expected a number strictly between 0 and 1 "
                                       "(e.g. 0.95 for a level, 0.01 for alpha)")
    with pytest.raises(NotASweep, match=r"^alpha=2: expected a number strictly between 0 and 1"):
        ds.boardsweep.verdict(alpha=2)
    assert ds.boardsweep.estimate(level=0.9)["low"].notnull().any()


def test_the_verdict_after_a_scalar_sel_is_that_of_a_length_1_sel(ds):
    scalar, listed = ds.sel(dice_sides=3), ds.sel(dice_sides=[3])
    assert "dice_sides" not in scalar.dims
    got, want = scalar.boardsweep.verdict(), listed.boardsweep.verdict()
    assert got["text"] == want["text"] and got["text"].startswith(("AGREE", "DISAGREE"))
    for key in ("alpha", "tests", "points", "tested_points", "agree", "point_agree", "min_p_holm", "flagged"):
        assert got[key] == want[key], key
    pd.testing.assert_frame_equal(got["p_holm"], want["p_holm"])
    name = ds.boardsweep.headlines[0]
    xr.testing.assert_identical(scalar.boardsweep.estimate(name), listed.boardsweep.estimate(name))
    both = ds.sel(dice_sides=3, rule="plain").boardsweep.verdict()
    assert both["points"] == 1 and both["text"] == ds.sel(dice_sides=[3], rule=["plain"]).boardsweep.verdict()["text"]
