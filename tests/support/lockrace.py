"""Processes racing for a store's lock, for the lock tests (a folder or an s3:// store)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

#: One process imports boardsweep, then forks the racers: each is a process of its own (its own
#: pid in the lock it takes), and none pays Python's start-up and imports again.  Each racer says
#: READY, waits for the start file to appear, tries the lock once, prints WON or LOST and holds a
#: won lock until the end file appears (so no loser can take a released one); the start file is
#: made once every racer is READY.  Lines are prefixed with the racer's index.  With waits, a
#: racer that finds the lock stale waits its number of seconds before taking it over: with waits
#: staggered, every racer has read the stale lock before the first takes it, and each acts after
#: the one before has taken it (the race a takeover must survive).
RACER = """
import os, sys, time
from boardsweep.pipeline.store.lock import StoreLock, StoreLocked
url, start, end, racers = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
waits = [float(w) for w in sys.argv[5:]]

def say(i, text):
    os.write(1, f"{i} {text}\\n".encode())  # one write: the racers' lines never mix

def race(i):
    if waits:
        stale = StoreLock.is_stale
        def slow(self, holder):
            found = stale(self, holder)
            if found:
                time.sleep(waits[i])
            return found
        StoreLock.is_stale = slow
    say(i, "READY")
    while not os.path.exists(start):
        time.sleep(0.005)
    try:
        with StoreLock(url):
            say(i, "WON")
            while not os.path.exists(end):
                time.sleep(0.01)
    except StoreLocked as exc:
        say(i, f"LOST {exc}")

children = []
for i in range(racers):
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            race(i)
        except BaseException:
            import traceback
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    children.append(pid)
sys.exit(max(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0 for pid in children))
"""


def race(url: str, folder, racers: int = 4, waits: list[float] | None = None) -> list[str]:
    """Start ``racers`` processes that try the lock of ``url`` at the same instant (``waits``:
    each one's wait once it finds the lock stale): their lines, in racer order."""
    start, end = folder / "start", folder / "end"
    proc = subprocess.Popen([sys.executable, "-c", RACER, url, str(start), str(end), str(racers),
                             *map(str, waits or [])],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
                            start_new_session=True)  # the racers are in its process group

    def answers(what: str) -> dict[int, str]:
        """Each racer's next line (racers write whole lines, each at once)."""
        got: dict[int, str] = {}
        while len(got) < racers:
            line = proc.stdout.readline()
            assert line, f"a racer ended before saying {what}: {got}\n{proc.stderr.read()[-3000:]}"
            index, _, text = line.strip().partition(" ")
            assert index.isdigit(), line
            got[int(index)] = text
        return got

    try:
        assert set(answers("READY").values()) == {"READY"}  # each has imported boardsweep and polls
        start.touch()
        lines = answers("WON or LOST")
        end.touch()
        assert proc.wait(timeout=60) == 0, proc.stderr.read()[-3000:]
    finally:
        if proc.poll() is None:  # a failed race: no racer is left polling
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return [lines[i] for i in range(racers)]
