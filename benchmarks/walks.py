"""How many of boardsweep's modules a query and a run cross, traced as they run.

A walk is the set of boardsweep modules whose functions are called (``sys.setprofile``
and ``threading.setprofile``: every thread of the process, the embedded cluster's
workers included) while the command runs, imports excluded (a module's own
top-level code, nor anything called while a boardsweep module is being
imported: a dataclass's generated ``__init__`` made as its class is defined,
a module a lazy import brings in; nor a lazy face's ``__getattr__`` handing on
a name).  Two walks:

* ``query STORE`` of a finished quickstart store (the command to its printed rows);
* ``run quickstart`` into a new store (a grid axis from the spec to the kernel and back
  to the store; the embedded cluster's threads).

Each runs in a process of the interpreter given (``--python``, default this one;
``--before-python`` another checkout's, side by side): modules are counted by their
name below ``boardsweep.``, so two checkouts compare whatever their layout.

Usage::

    python benchmarks/walks.py [--python PY] [--before-python OLD_PY] [--show]

``--show`` lists each walk's stops, and with ``--before-python`` the stops only one of the two
checkouts' walks has.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from sweep_million import cpu_model, uptime  # noqa: E402  (the benchmarks' one CPU and load helpers)

#: The child: the command run under a profiler that records each boardsweep module a call enters.
TRACER = r"""
import json, sys, threading
seen = set()
def importing(frame):  # a boardsweep module's top-level code on the stack: frame runs as it is imported
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__", "").startswith("boardsweep."):
            return True
        frame = frame.f_back
    return False
def profile(frame, event, arg):
    if event == "call":
        name = frame.f_globals.get("__name__", "")
        if (name.startswith("boardsweep.") and name not in seen and not frame.f_code.co_name.startswith("<")
                and frame.f_code.co_name != "__getattr__" and not importing(frame.f_back)):
            seen.add(name)
from boardsweep.pipeline.cli.commands import main as command_line
sys.argv = ["boardsweep", *sys.argv[2:]]
threading.setprofile(profile)
sys.setprofile(profile)
try:
    command_line()
except SystemExit:
    pass
finally:
    sys.setprofile(None)
    threading.setprofile(None)
    with open(sys.argv_out, "w") as f:
        json.dump(sorted(seen), f)
"""


def walk(python: str, args: list[str], cwd: Path) -> list[str]:
    """The boardsweep modules a command (``boardsweep ARGS``) crosses, run by ``python`` in ``cwd``."""
    out = cwd / "walk.json"
    script = TRACER.replace("sys.argv_out", repr(str(out)))
    subprocess.run([python, "-c", script, "boardsweep", *args], cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.loads(out.read_text())


def walks(python: str) -> dict[str, list[str]]:
    """The query's and the run's walks under ``python``."""
    with tempfile.TemporaryDirectory(prefix="walks-") as name:
        tmp = Path(name)
        store = str(tmp / "qs.zarr")
        ran = walk(python, ["run", "quickstart", "--store", store, "-q"], tmp)
        queried = walk(python, ["query", store], tmp)
    return {"query": queried, "run": ran}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--before-python", default=None)
    parser.add_argument("--show", action="store_true", help="list the modules of each walk")
    args = parser.parse_args()
    now = walks(args.python)
    before = walks(args.before_python) if args.before_python else None
    for kind in ("query", "run"):
        line = f"{kind}: {len(now[kind])} modules"
        if before:
            line += f" (before: {len(before[kind])})"
        print(line)
        if args.show:
            print("  " + "\n  ".join(now[kind]))
            if before:  # what the two checkouts' walks do not share, by module name
                for label, names in (("only before", set(before[kind]) - set(now[kind])),
                                     ("only now", set(now[kind]) - set(before[kind]))):
                    print(f"  {label}: {', '.join(sorted(n.removeprefix('boardsweep.') for n in names)) or '-'}")
    print(f"CPU: {cpu_model()}; {uptime()}")


if __name__ == "__main__":
    main()
