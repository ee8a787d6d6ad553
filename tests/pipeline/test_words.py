"""pipeline/words.py: numpy values as Python's, in one place (issue 55: four copies beside ``json_ready``)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from boardsweep.pipeline.words import json_default, json_ready, python_value


def test_json_default_writes_numpy_as_python_and_refuses_the_rest():
    attrs = {"n": np.int64(3), "x": np.float32(0.5), "ok": np.bool_(True), "a": np.arange(3), "nan": np.float64("nan")}
    back = json.loads(json.dumps(attrs, default=json_default))
    assert back["n"] == 3 and back["x"] == 0.5 and back["ok"] is True and back["a"] == [0, 1, 2]
    assert math.isnan(back["nan"])  # kept (json_ready writes it null): what the store's attributes hold
    with pytest.raises(TypeError, match="set is not JSON"):
        json.dumps({"s": {1}}, default=json_default)


def test_python_value_keeps_the_type_the_seeds_hash():
    """A point's seed hashes its values' JSON: ``6`` and ``6.0`` differ, numpy's or Python's alike."""
    assert json.dumps(python_value(np.int64(6))) == "6" and json.dumps(python_value(np.float64(6))) == "6.0"
    assert json_ready({"v": np.array([1.5, np.inf])}) == {"v": [1.5, None]}


def test_an_unexpected_error_has_one_wording():
    """The CLI's line for an error it did not expect, and its last line where that report failed."""
    from boardsweep.pipeline.words import unexpected_line

    assert unexpected_line(ValueError("x"), "bad value") == \
        "boardsweep: error: unexpected ValueError: bad value (rerun with -v for the traceback)"
    assert unexpected_line(OSError()) == "boardsweep: error: unexpected OSError (rerun with -v for the traceback)"
    assert unexpected_line(MemoryError()) == "boardsweep: error: out of memory (rerun with -v for the traceback)"
