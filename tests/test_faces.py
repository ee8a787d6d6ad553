"""The package's faces: every name ``boardsweep`` and ``boardsweep.pipeline``
promise resolves to the one function that owns it."""

from __future__ import annotations

import boardsweep
import boardsweep.pipeline as pipeline


def test_the_top_level_names_resolve_to_their_owners():
    from boardsweep.pipeline import api
    from boardsweep.pipeline.analysis.power import plan_run
    from boardsweep.pipeline.store.open import load_sweep, open_sweep

    assert boardsweep.open_sweep is open_sweep and boardsweep.load_sweep is load_sweep
    assert pipeline.open_sweep is open_sweep and pipeline.load_sweep is load_sweep
    assert boardsweep.plan_run is plan_run
    assert (boardsweep.Spec, boardsweep.run, boardsweep.Result) == (api.Spec, api.run, api.Result)
    assert set(boardsweep.__all__) <= set(dir(boardsweep))
