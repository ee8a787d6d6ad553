"""Every report caption that names a colour says what its colour map draws.

The report of a small Monopoly sweep (two dice sizes x two jail strategies,
per-landing tally: In Jail stands far above the other locations, so the
frequency heatmap's caption names the colour of the scale's top; exact
answers, so a z heatmap; jail strategies differ, so a difference heatmap) is
built once; each caption's colour words are checked against the colours the
figure's colour map (:data:`COLOUR_MAPS`) really has at its ends, read from
matplotlib here: the hue's angle and the luminance, not the words the report
code derives.
"""

from __future__ import annotations

import colorsys
import json
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.api import report as write_report
from boardsweep.pipeline.views.report.panels import COLOUR_MAPS, MISSING

from specs import spec_toml

#: Hue angles (degrees, HSV) each colour word may name.
HUES = {"red": [(330, 360), (0, 15)], "orange": [(15, 45)], "yellow": [(45, 70)], "green": [(70, 170)],
        "cyan": [(170, 200)], "blue": [(200, 260)], "purple": [(260, 330)]}
#: Colours drawn outside the colour maps: grey (a missing cell, the |z| < 1.96 band), black (the exact answer).
FIXED = {"grey", "black"}
WORDS = re.compile(r"\b(darkest|brightest|darker|brighter|lightest|lighter|" + "|".join(HUES) + r"|grey|black)\b")


def _hue(cmap: str, end: float) -> float:
    h, _, _ = colorsys.rgb_to_hsv(*plt.get_cmap(cmap)(end)[:3])
    return 360 * h


def _is(word: str, cmap: str, end: float) -> bool:
    return any(lo <= _hue(cmap, end) < hi for lo, hi in HUES[word])


def _luminance(cmap: str, end: float) -> float:
    return float(np.dot(plt.get_cmap(cmap)(end)[:3], (0.2126, 0.7152, 0.0722)))


def _cmap_of(figure: str) -> str | None:
    stem = figure.rsplit(".", 1)[0]
    return COLOUR_MAPS.get(stem) or COLOUR_MAPS.get(stem.split("_")[0])


@pytest.fixture(scope="module")
def captions(tmp_path_factory, cluster2) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("colours")
    text = spec_toml("monopoly", name="colours", seed=11, params={"tally": "per_landing", "chance_deck": "classic15"},
                     grid={"dice_sides": [4, 6], "jail_strategy": ["short", "long"]},
                     run={"replicates": 4, "games": 2, "players": 1, "turns": 3000}, checkpoints={"count": 4},
                     tasks={"replicates_per_task": 2})
    store = str(folder / "c.zarr")
    assert run_sweep(parse_spec(text, "c.toml"), store, scheduler=cluster2).complete
    write_report(store, folder / "r")
    return json.loads((folder / "r" / "report.json").read_text())["figures"]


def test_the_heatmaps_are_there_to_check(captions):
    assert {"frequency_heatmap.png", "z_heatmap.png", "difference_jail_strategy.png"} <= set(captions)
    assert "above it, in the" in captions["frequency_heatmap.png"]  # IN_JAIL above the scale: its colour named


def test_every_colour_word_of_a_caption_matches_its_colour_map(captions):
    """A hue word names a colour at one end of the figure's colour map (or a
    fixed colour: grey, black); the words tied to an end say that end's hue
    and lightness: viridis' top is the brightest, yellow (it said darkest)."""
    assert all(c == MISSING[1:3] for c in (MISSING[3:5], MISSING[5:7]))  # the missing cells' colour is a grey
    for figure, caption in captions.items():
        cmap = _cmap_of(figure)
        for word in set(WORDS.findall(caption)) - FIXED:
            assert cmap is not None, (figure, word, caption)
            if word in HUES:
                assert _is(word, cmap, 0.0) or _is(word, cmap, 1.0), (figure, word, cmap)
        if cmap is None:
            continue
        top, low = _luminance(cmap, 1.0), _luminance(cmap, 0.0)
        for light in re.findall(r"above it, in the (\w+) colour", caption):  # the scale's top, whatever follows
            assert light == ("brightest" if top > low else "darkest"), (figure, caption)
        for light, hue in re.findall(r"in the (\w+) colour, (\w+)", caption):
            assert light == ("brightest" if top > low else "darkest") and _is(hue, cmap, 1.0), (figure, caption)
        for light, hue in re.findall(r"Larger \w+ are (\w+) \((\w+)\)", caption):
            assert light == ("brighter" if top > low else "darker") and _is(hue, cmap, 1.0), (figure, caption)
        for light, hue in re.findall(r"smaller ones (\w+) \((\w+)\)", caption):
            assert light == ("darker" if top > low else "brighter") and _is(hue, cmap, 0.0), (figure, caption)
        for below, above in re.findall(r"(\w+) below and (\w+) above", caption):
            assert _is(below, cmap, 0.0) and _is(above, cmap, 1.0), (figure, caption)
        for hue, _ in re.findall(r"(\w+): (\S+) above", caption):
            if hue in HUES:
                assert _is(hue, cmap, 1.0), (figure, caption)


def test_the_words_checked_are_the_ones_written(captions):
    """The patterns above find what the captions say (a changed wording must change the test)."""
    assert re.search(r"in the brightest colour, yellow", captions["frequency_heatmap.png"])
    assert re.search(r"Larger frequencies are brighter \(yellow\), smaller ones darker \(purple\)",
                     captions["frequency_heatmap.png"])
    assert re.search(r"blue below and red above", captions["z_heatmap.png"])
    assert re.search(r"orange: \w+ above", captions["difference_jail_strategy.png"])
