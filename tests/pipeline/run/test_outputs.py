"""Every output a game returns is checked against its declared dtype and
shape before anything is stored: NaN in an integer output, fractional counts,
a wrong shape or a missing output fail that task in one line, store nothing
for it, and leave every other cell done and equal to a good run's."""

from __future__ import annotations

import numpy as np
import pytest

from localdask import raw_arrays
from boardsweep.core import games
from boardsweep.pipeline.errors import TasksFailed
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.run.worker import OutputInvalid, checked_outputs
from boardsweep.pipeline.store import FILL
from specs import TOY_SPEC  # tests/support is on sys.path

for _name, _attr in (("nan", "NAN"), ("fraction", "FRACTION"), ("shape", "SHAPE"), ("missing", "MISSING")):
    games.register(f"bad_{_name}", f"bad_output_game:{_attr}")

#: The checkpoints a run stops at: the spec's 5 and its equal batches' ends (the series).
STOPS = len(parse_spec(TOY_SPEC, "toy.toml").simulated_checkpoints)
SPOILED = {
    "nan": "output 'events' is float64, int64 declared",
    "fraction": "output 'rolls' is float64, int64 declared",
    "shape": f"output 'counts' has shape ({STOPS}, 7), ({STOPS}, 8) declared",
    "missing": "output 'rolls' missing",
}


@pytest.fixture(scope="module")
def good(tmp_path_factory, cluster2):
    from specs import TOY_SPEC  # tests/support is on sys.path

    url = tmp_path_factory.mktemp("outputs") / "good.zarr"
    assert run_sweep(parse_spec(TOY_SPEC, "toy.toml"), str(url), scheduler=cluster2, pack=False).complete
    return raw_arrays(url)


@pytest.mark.parametrize("case", list(SPOILED))
def test_a_spoiled_output_fails_its_task_and_stores_nothing(case, good, tmp_path, cluster2):
    from specs import TOY_SPEC  # tests/support is on sys.path

    text = TOY_SPEC.replace('game = "toy"', f'game = "bad_{case}"')
    url = tmp_path / "store.zarr"
    with pytest.raises(TasksFailed) as caught:
        run_sweep(parse_spec(text, "bad.toml"), str(url), scheduler=cluster2)
    message = str(caught.value)
    assert "\n" not in message and SPOILED[case] in message and "dice_sides=3" in message, message
    assert len(caught.value.failures) == 4  # 2 rules x 2 task blocks at dice_sides=3
    stored = raw_arrays(url)
    assert not stored["done"][1].any()  # dice_sides=3: nothing marked done
    assert (stored["counts"][1] == FILL).all() and (stored["events"][1] == FILL).all()  # nothing stored
    for name in ("counts", "events", "rolls", "done"):
        np.testing.assert_array_equal(stored[name][0], good[name][0])  # dice_sides=2: as a good run


def test_values_outside_the_declared_type_are_refused():
    game = games.get_game("toy")
    checkpoints = np.array([10], dtype=np.int64)
    out = game.simulate({"dice_sides": 2, "rule": "plain", "size": 8}, 1, {"games": 1, "turns": 10}, checkpoints)
    out["rolls"] = out["rolls"].astype(np.uint64) + np.uint64(2**63)
    with pytest.raises(OutputInvalid, match="outside int64"):
        checked_outputs(game, {"dice_sides": 2, "rule": "plain", "size": 8}, out, checkpoints)
    out["rolls"] = np.array(["10"])
    with pytest.raises(OutputInvalid, match="declared"):
        checked_outputs(game, {"dice_sides": 2, "rule": "plain", "size": 8}, out, checkpoints)
