"""The report's files written block by block (:mod:`boardsweep.pipeline.views.report.stream`):
the same bytes as the whole table or object written at once."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from boardsweep.pipeline.views.report.stream import CsvParts, JsonObject, SortedCsv


def _blocks(seed: int = 3, n: int = 4) -> list[pd.DataFrame]:
    rng = np.random.default_rng(seed)
    out = []
    for b in range(n):
        p = rng.choice([0.5, 0.25, np.nan, 1e-300, 0.1 + b], size=40)  # ties and NaN across blocks
        out.append(pd.DataFrame({"point": np.arange(40) + 40 * b, "headline": rng.choice(["a", "b, c"], 40),
                                 "p": p}))
    return out


def test_a_json_object_written_entry_by_entry_is_json_dump_of_the_whole():
    whole = {"x=1": {"slope": 0.5, "top3": [{"label": "GO", "f": 1e-17}], "none": None},
             "x=2": {"estimates": {}, "s": "é \"q\""}, "x=3": []}
    for entries in ({}, whole):
        f = io.StringIO()
        obj = JsonObject(f)
        for key, value in entries.items():
            obj.add({key: value})
        obj.close()
        assert f.getvalue() == json.dumps(entries, indent=2)


@pytest.mark.parametrize("most_open", [200, 2, 3])  # one merge; merged in rounds (ties across rounds)
def test_rows_sorted_block_by_block_are_one_stable_sort_of_all(tmp_path, most_open):
    parts = SortedCsv(tmp_path, "tests", "p", most_open=most_open)
    for df in _blocks(n=7):
        parts.add(df)
    parts.add(pd.DataFrame())  # a block without tests
    assert parts.join(tmp_path / "tests.csv") is not None
    whole = pd.concat(_blocks(n=7), ignore_index=True).sort_values("p", kind="stable")
    assert (tmp_path / "tests.csv").read_text() == whole.to_csv(index=False)
    assert not list(tmp_path.glob(".*.part"))


def test_sections_appended_block_by_block_are_joined_in_their_order(tmp_path):
    parts = CsvParts(tmp_path, "headlines")
    blocks = _blocks()
    for df in blocks:
        for name in ("b, c", "a"):
            parts.add(df[df["headline"] == name], name)
    parts.join(tmp_path / "headlines.csv")
    whole = pd.concat(blocks, ignore_index=True)
    expected = pd.concat([whole[whole["headline"] == name] for name in ("b, c", "a")])
    assert (tmp_path / "headlines.csv").read_text() == expected.to_csv(index=False)
    dropped = CsvParts(tmp_path, "d")
    dropped.add(blocks[0])
    assert dropped.join(tmp_path / "d.csv", drop=["p"]) == ["point", "headline"]
    assert pd.read_csv(tmp_path / "d.csv").equals(blocks[0].drop(columns="p"))
    assert CsvParts(tmp_path, "empty").join(tmp_path / "empty.csv") is None
    ordered = CsvParts(tmp_path, "o", order=["never written", "a"])  # a section named first, never written
    a = blocks[0][blocks[0]["headline"] == "a"]
    ordered.add(a, "a")
    assert ordered.join(tmp_path / "o.csv", drop=["p"]) == ["point", "headline"]
    assert pd.read_csv(tmp_path / "o.csv").equals(a.drop(columns="p").reset_index(drop=True))
    assert not list(tmp_path.glob(".*.part"))  # every section's file removed once joined
