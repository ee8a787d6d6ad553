"""Integer values a game returns are checked against the stored type's range
before anything is written: counts above int64's largest (a uint64 of 2^63 + 5,
or 2^64 - 1) fail their task in one line naming the game, the variable and
the grid point, and store nothing for it (they used to be stored wrapped:
-9223372036854775803 and -1, and the run said "complete")."""

from __future__ import annotations

import numpy as np
import pytest

from localdask import raw_arrays
from boardsweep.core import games
from boardsweep.pipeline.errors import TasksFailed
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import FILL

games.register("overflow_int64", "overflow_game:ABOVE_INT64")
games.register("overflow_uint64", "overflow_game:UINT64_MAX")


@pytest.mark.parametrize("game, value", [("overflow_int64", 2**63 + 5), ("overflow_uint64", 2**64 - 1)])
def test_counts_beyond_int64_fail_their_task_and_store_nothing(game, value, tmp_path, cluster2):
    from specs import TOY_SPEC  # tests/support is on sys.path

    url = tmp_path / "store.zarr"
    with pytest.raises(TasksFailed) as caught:
        run_sweep(parse_spec(TOY_SPEC.replace('game = "toy"', f'game = "{game}"'), "big.toml"), str(url),
                  scheduler=cluster2)
    message = str(caught.value)
    assert "\n" not in message, message
    assert f"game {game!r}" in message and "output 'rolls'" in message and str(value) in message, message
    assert "outside int64" in message and "dice_sides=3" in message, message
    assert len(caught.value.failures) == 4  # 2 rules x 2 task blocks at dice_sides=3
    stored = raw_arrays(url)
    assert not stored["done"][1].any() and (stored["rolls"][1] == FILL).all()  # nothing stored at dice_sides=3
    assert stored["done"][0].all() and (stored["rolls"][0] >= 0).all()  # dice_sides=2 as a good run
    assert not ((np.asarray(stored["rolls"]) < 0) & (np.asarray(stored["rolls"]) != FILL)).any()  # none wrapped
