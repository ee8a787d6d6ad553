"""Processes racing for a store's lock, for the lock tests (a folder or an s3:// store)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

#: Each racer waits for the start file to appear, tries the lock once, prints WON or LOST and
#: holds a won lock until the end file appears (so no loser can take a released one).  With a
#: fourth argument, a racer that finds the lock stale waits that many seconds before taking it
#: over: with waits staggered, every racer has read the stale lock before the first takes it,
#: and each acts after the one before has taken it (the race a takeover must survive).
RACER = """
import os, sys, time
from boardsweep.pipeline.store.lock import StoreLock, StoreLocked
url, start, end = sys.argv[1:4]
if len(sys.argv) > 4:
    stale = StoreLock._stale
    def slow(self, holder):
        found = stale(self, holder)
        if found:
            time.sleep(float(sys.argv[4]))
        return found
    StoreLock._stale = slow
while not os.path.exists(start):
    time.sleep(0.005)
try:
    with StoreLock(url):
        print("WON", flush=True)
        while not os.path.exists(end):
            time.sleep(0.01)
except StoreLocked as exc:
    print("LOST", exc, flush=True)
"""


def race(url: str, folder, racers: int = 4, waits: list[float] | None = None) -> list[str]:
    """Start ``racers`` processes that try the lock of ``url`` at the same instant (``waits``:
    each one's wait once it finds the lock stale): their lines."""
    start, end = folder / "start", folder / "end"
    procs = [subprocess.Popen([sys.executable, "-c", RACER, url, str(start), str(end),
                               *([str(waits[i])] if waits else [])],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
             for i in range(racers)]
    try:
        time.sleep(3)  # every racer has imported boardsweep and is polling for the start file
        start.touch()
        lines = [p.stdout.readline().strip() for p in procs]
        end.touch()
        for p in procs:
            p.wait(timeout=60)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    return lines


