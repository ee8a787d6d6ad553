"""Every numba kernel releases the GIL (``nogil=True``), so that the embedded
cluster's worker threads simulate in parallel; only functions inlined into
their callers (``inline="always"``, never called from Python) are exempt."""

from __future__ import annotations

import importlib
import itertools
import pkgutil

from numba.core.registry import CPUDispatcher

import boardsweep.core
from boardsweep.core.monopoly.kernel import run_kernel


def _dispatchers():
    for info in pkgutil.walk_packages(boardsweep.core.__path__, "boardsweep.core."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value.__module__ == module.__name__:
                yield f"{module.__name__}.{name}", value
    for flags in itertools.product([False, True], repeat=3):
        yield f"run_kernel{flags}", run_kernel(*flags)


def test_every_kernel_releases_the_gil():
    found = dict(_dispatchers())
    assert len(found) > 20 and any(n.startswith("run_kernel") for n in found)
    holding = [name for name, d in found.items()
               if d.targetoptions.get("inline", "never") != "always" and not d.targetoptions.get("nogil")]
    assert holding == []
