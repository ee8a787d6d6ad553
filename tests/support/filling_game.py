"""A test-only game that fills the store's disk as it simulates its first full-length run.

A disk that fills up while a run stores its results (the head start's, in the
``boardsweep`` process, or a worker's) must end the run in one line naming the
full disk, never "unexpected".  ``FILL_DISK`` names a file on the store's file
system: the first full-length run (the warm-up's short runs of 4 turns do
not), once the store is made (its root ``zarr.json`` with the consolidated
metadata, ``FILL_WHEN``), writes it until the disk is full; the test removes
it, and a rerun completes.  Everything else is the toy game.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import replace

import toy_game
from diskfill import fill_disk

_FILLED = threading.Lock()


def _made(path: str | None) -> bool:
    try:
        return path is None or "consolidated_metadata" in json.loads(open(path).read())
    except (OSError, ValueError):
        return False


def _fill(path: str) -> None:
    with _FILLED:
        if os.path.exists(path):
            return
        t0 = time.monotonic()
        while not _made(os.environ.get("FILL_WHEN")) and time.monotonic() - t0 < 30:
            time.sleep(0.05)
        fill_disk(path)


def simulate(params, seed, run_shape, checkpoints):
    path = os.environ.get("FILL_DISK")
    if path and run_shape["turns"] > 4:
        try:
            _fill(path)
        except OSError:  # the file's own close on the full disk: it is full, as wanted
            pass
    return toy_game.simulate(params, seed, run_shape, checkpoints)


GAME = replace(toy_game.GAME, name="filling", simulate=simulate)
