"""Running a sweep: the orchestration, dispatch to Dask, what a worker does, the
kernels' warm-up, the run's record, and reproducibility checks.

Code outside this folder imports from here (``from ..run import RunRequest``),
never from its modules: ``__all__`` is what the other folders use of it
(:func:`.execute.execute` as ``execute_request`` and :func:`.verify.verify` as
``rerun_and_compare``: a face cannot hand on a name one of its modules bears).
The face is lazy (PEP 562): a name's module (Dask, xarray and zarr with
``execute_request``) is imported when the name is first asked for, so that the
command's entry point imports ``writable_numba_cache`` alone (the policy of
what is imported when: :mod:`.startup`).
"""

# ruff: noqa: F401 - the TYPE_CHECKING imports are this face's declaration of what it hands on

from __future__ import annotations

from typing import TYPE_CHECKING

from ..faces import lazy

if TYPE_CHECKING:  # what type checkers and readers follow; at run time each name is imported on first use
    from .calibration import CALIBRATION_POINTS, recorded_layout, time_here
    from .execute import execute as execute_request
    from .numba_cache import writable_numba_cache
    from .record import RunReport
    from .request import API_ARGUMENTS, CLI_OPTIONS, cluster_target, RunRequest
    from .startup import begin, Hooks, layout_known_now
    from .verify import verify as rerun_and_compare, store_above, write_digest

#: This folder's modules -> the public names each gives the folder (the list above, for the run time).
_HOME = {
    "calibration": ("CALIBRATION_POINTS", "recorded_layout", "time_here"),
    "execute": ("execute_request",),
    "numba_cache": ("writable_numba_cache",),
    "record": ("RunReport",),
    "request": ("API_ARGUMENTS", "CLI_OPTIONS", "cluster_target", "RunRequest"),
    "startup": ("begin", "Hooks", "layout_known_now"),
    "verify": ("rerun_and_compare", "store_above", "write_digest"),
}
#: Names this face gives under a name of its own (clearer outside their module, or one a module
#: of this folder bears): public name -> the module's.
_AS = {"execute_request": "execute", "rerun_and_compare": "verify"}
__all__, __getattr__ = lazy(__name__, _HOME, _AS)

