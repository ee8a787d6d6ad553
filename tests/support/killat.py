"""Processes killed at the n-th change they make to a store, for the crash tests.

A server process imports boardsweep once, then forks one fresh child per
request; the child runs the test's ``run(step, url, limit)`` (which counts
the store changes and calls ``os._exit(9)`` just before the ``limit``-th: no
clean-up of any kind) and reports its count when it is not killed.  Every
kill lands in a process of its own, as with one ``python -c`` per kill point;
only Python's start-up and the imports (about 2 s of CPU each) are paid once
per module instead of once per kill point.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

#: Reads JSON requests (the arguments of ``run``) from stdin; answers each with
#: ``{"calls": n}`` from the child when it ends normally, then ``{"exit": code}``.
SERVER = """
import json, os, sys, traceback
exec(compile(sys.argv[1], "<kill-at>", "exec"))
for line in sys.stdin:
    pid = os.fork()
    if pid == 0:
        try:
            calls = run(*json.loads(line))
            sys.stdout.write(json.dumps({"calls": calls}) + "\\n")
            sys.stdout.flush()
            os._exit(0)
        except BaseException:
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"exit": os.waitstatus_to_exitcode(status)}), flush=True)
"""


class KillServer:
    """``run(*args) -> (exit code, calls or None)``: one forked child of the server per call."""

    def __init__(self, code: str, log: Path) -> None:
        self.log = Path(log)
        with open(self.log, "w") as err:
            self.proc = subprocess.Popen([sys.executable, "-c", SERVER, code], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=err, text=True, env=os.environ.copy())

    def run(self, *args) -> tuple[int, int | None]:
        self.proc.stdin.write(json.dumps([str(a) if isinstance(a, Path) else a for a in args]) + "\n")
        self.proc.stdin.flush()
        calls = None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the kill-at server ended:\n{self.log.read_text()[-3000:]}")
            answer = json.loads(line)
            if "exit" in answer:
                return answer["exit"], calls
            calls = answer["calls"]

    def errors(self) -> str:
        """What the children wrote to stderr so far (the end of it)."""
        return self.log.read_text()[-3000:]

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
