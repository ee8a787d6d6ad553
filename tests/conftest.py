"""The quick subset: tests that take many seconds are marked ``slow``.

``pytest -m "not slow"`` leaves them out (the README's quick subset);
``pytest`` (CI) runs everything.  Whole modules are listed here, in one
place, rather than marked in each file: each of them starts Dask clusters or
processes, kills them, builds wheels or compiles kernels from an empty cache.
A single slow test in another module carries ``@pytest.mark.slow`` itself.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: Dask's own monitors, sampled less often in every cluster the tests start (schedulers, workers
#: and nannies, in this process or in processes that inherit its environment): its statistical
#: profiler samples every 10 ms, its event-loop tick every 20 ms, its memory monitor every 100 ms
#: and its system monitor every 500 ms, about 0.1 core for an idle cluster, whereas no test reads
#: what they record.  A variable already set is kept.
DASK_MONITORS = {
    "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
    "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "500ms",
    "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL": "2s",
    "DASK_DISTRIBUTED__WORKER__MEMORY__MONITOR_INTERVAL": "1s",
}
for _key, _value in DASK_MONITORS.items():
    os.environ.setdefault(_key, _value)

import dask  # noqa: E402

dask.config.refresh()  # in case a plugin imported dask before these were set

# Dask's loggers get their stream handler when distributed is first imported:
# import it here, before any test's capsys, so that the handler writes to the
# session's stream and never to one a finished test has closed.
import distributed  # noqa: F401,E402

ROOT = Path(__file__).resolve().parent.parent

SLOW_MODULES = {
    "examples/chutes_ladders/tests/test_sweep_cli.py",
    "tests/core/monopoly/test_cache.py",
    "tests/docker/test_compose_script.py",
    "tests/pipeline/analysis/test_convergence.py",
    "tests/pipeline/cli/test_explain.py",
    "tests/pipeline/cli/test_games.py",
    "tests/pipeline/cli/test_output.py",
    "tests/pipeline/cli/test_run.py",
    "tests/pipeline/cluster/test_processes.py",
    "tests/pipeline/test_api.py",
    "tests/pipeline/cluster/test_dashboard.py",
    "tests/pipeline/cluster/test_slurm.py",
    "tests/pipeline/run/test_false_complete.py",
    "tests/pipeline/run/test_faults_cluster.py",
    "tests/pipeline/run/test_deadlines.py",
    "tests/pipeline/run/test_kernel_deadlines.py",
    "tests/pipeline/run/test_growth.py",
    "tests/pipeline/store/test_integrity.py",
    "tests/pipeline/store/test_packing.py",
    "tests/pipeline/run/test_plugins.py",
    "tests/pipeline/plan/test_precision.py",
    "tests/pipeline/run/test_real_games.py",
    "tests/pipeline/views/test_report.py",
    "tests/pipeline/views/test_report_folder.py",
    "tests/pipeline/run/test_end_to_end.py",
    "tests/pipeline/store/s3/test_lock.py",
    "tests/pipeline/run/test_scale.py",
    "tests/pipeline/cluster/test_scheduler_handshake.py",
    "tests/pipeline/store/test_safety.py",
    "tests/pipeline/run/test_verify.py",
    "tests/test_package.py",
}

#: Single tests (node ids, parameters included) of other modules that take many seconds.
SLOW_TESTS = {
    "tests/core/shut_the_box/test_exact.py::test_bellman_equation_holds[8]",
}


#: The costliest modules, costliest first (their tests' seconds summed, measured with -n 2).
#: ``--dist loadfile`` hands whole modules to the workers in collection order: these start
#: first, the many short modules fill in at the end, and no worker is left running a long
#: module alone while the other idles.  Unlisted modules follow, in their usual order.
COSTLY_FIRST = [
    "tests/pipeline/store/test_lock_extend.py",  # the long single-process modules of this round first: none last
    "tests/test_install.py",
    "tests/pipeline/analysis/test_detection.py",
    "tests/pipeline/run/test_kernel_deadlines.py",
    "tests/pipeline/store/test_reading_during_a_run.py",
    "tests/pipeline/analysis/test_variance_diagnostics.py",
    "tests/pipeline/views/test_report_sample.py",
    "tests/pipeline/store/test_soak.py",
    "tests/pipeline/store/test_creation_killed.py",
    "tests/pipeline/views/test_overview.py",
    "tests/pipeline/analysis/test_verdict_calibration.py",
    "tests/pipeline/analysis/test_decks.py",
    "tests/pipeline/store/s3/test_silent_reads.py",
    "tests/pipeline/views/test_commands_during_a_run.py",
    "tests/pipeline/store/s3/test_packing.py",
    "tests/pipeline/run/test_faults_cluster.py",
    "tests/pipeline/run/test_growth.py",
    "tests/pipeline/cluster/test_slurm.py",
    "tests/pipeline/plan/test_precision.py",
    "tests/pipeline/cluster/test_processes.py",
    "tests/pipeline/cli/test_explain.py",
    "examples/chutes_ladders/tests/test_sweep_cli.py",
    "tests/pipeline/store/s3/test_lost_server.py",
    "tests/pipeline/analysis/test_headlines.py",
    "tests/pipeline/cli/test_games.py",
    "tests/pipeline/run/test_verify.py",
    "tests/pipeline/views/test_report.py",
    "tests/pipeline/store/test_urls.py",
    "tests/pipeline/store/test_metadata.py",
    "tests/pipeline/test_api.py",
    "tests/test_package.py",
    "tests/pipeline/cli/test_output.py",
    "tests/pipeline/run/test_execute.py",
    "tests/pipeline/run/test_end_to_end.py",
    "tests/pipeline/store/test_safety.py",
    "tests/pipeline/run/test_plugins.py",
    "tests/pipeline/store/test_packing.py",
    "tests/pipeline/store/s3/test_lock.py",
    "tests/pipeline/cluster/test_dashboard.py",
    "tests/pipeline/store/s3/test_growth.py",
]


def pytest_configure(config) -> None:
    # pytest-xdist would order the modules by their number of tests (--loadscope-reorder),
    # which puts the long modules of few tests last: keep the order below instead.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        warm_numba_cache()


def warm_numba_cache() -> None:
    """Compile every shipped game's kernels into numba's disk cache before the test processes start
    (``docker/warm_numba.py``, as the image does), a process per game, all at once: about 25 s of CPU
    on an empty cache, 2 s on a warm one.  On an empty cache the test processes starting together each
    compiled the same kernels: four modules at -n 3 took 242-253 s of CPU cold, 179 s warm, 214 s
    with this first.  Tests of compiling itself use caches of their own (``NUMBA_CACHE_DIR``); a
    game that fails to compile here fails its own tests, with the reason."""
    import subprocess
    import sys

    script = ROOT / "docker" / "warm_numba.py"
    try:
        from boardsweep.core.games import game_names

        names = game_names()
    except Exception:  # no games: the tests say why
        return
    if not script.is_file():
        return
    code = "import runpy, sys; runpy.run_path(sys.argv[1])['warm'](sys.argv[2])"
    procs = [subprocess.Popen([sys.executable, "-c", code, str(script), name], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for name in names]
    for proc in procs:
        try:
            proc.wait(timeout=600)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _module(item) -> str | None:
    try:
        return Path(item.fspath).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return None


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        module = _module(item)
        if module in SLOW_MODULES or f"{module}::{item.name}" in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
    rank = {module: i for i, module in enumerate(COSTLY_FIRST)}
    items.sort(key=lambda item: rank.get(_module(item), len(rank)))  # stable: the rest keep their order


@pytest.fixture(autouse=True)
def _logging_as_it_was():
    """Undo what an in-process ``boardsweep -v`` did to logging: its root
    handler writes to the stream pytest captured for that test, which is
    closed once the test ends, and later tests' log records would fail on it."""
    import logging

    root = logging.getLogger()
    for logger in [root, *(v for v in logging.Logger.manager.loggerDict.values() if isinstance(v, logging.Logger))]:
        for handler in list(logger.handlers):  # a handler left on a stream an earlier test's capture closed
            if getattr(getattr(handler, "stream", None), "closed", False):
                logger.removeHandler(handler)
    handlers, level = list(root.handlers), root.level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)
