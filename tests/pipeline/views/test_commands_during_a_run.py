"""The commands' reads (``status``, ``query``, ``query --summary``,
``digest --partial``) and the API's, looped hundreds of times while real
runs create a store, write it, pack it, and grow it in place (``run
--extend`` with a larger spec, again and again): every outcome is a read
(exit 0, or ``status``'s exit 1 of an incomplete store, nothing on standard
error) or one of the lines that say a run is at work and to read again;
never "damaged", never a raw error."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import traceback

import pytest

from clirun import run_cli
from specs import spec_toml

from boardsweep.pipeline.errors import StoreBeingRewritten
from boardsweep.pipeline.store.open import load_sweep, open_sweep

pytestmark = pytest.mark.slow

_TOY_MAIN = ("import sys; from boardsweep.core import games; games.register('toy', 'toy_game'); "
             "from boardsweep.pipeline.cli.commands import command_line; sys.argv[0] = 'boardsweep'; command_line()")

#: What a read may be told while a run is at work on the store: read (it) again, in a moment.
TOLD = re.compile(r"read it again|read again|rerun in a moment")


def _spec(dice: int) -> str:
    """A toy sweep over dice of 2 .. ``dice`` sides, one replicate per task: many small tasks."""
    return spec_toml("toy", params={"size": 8}, grid={"dice_sides": list(range(2, dice + 1)),
                                                       "rule": ["plain", "sticky"]},
                     run={"replicates": 8, "games": 2, "turns": 60}, checkpoints={"count": 5},
                     tasks={"replicates_per_task": 1})


def _readers(store: str, tmp_path):
    """The reads looped, each ``() -> (code, standard error)``."""
    def cli(*args):
        return lambda capsys: (run_cli(*args), capsys.readouterr().err)

    def api(read):
        def call(capsys):
            try:
                read()
            except StoreBeingRewritten as exc:
                return 1, f"boardsweep: error: {exc}\n"
            except Exception as exc:  # noqa: BLE001 - a raw error: counted, with where it came from
                where = traceback.extract_tb(exc.__traceback__)[-3:]
                return 1, f"raw {type(exc).__name__}: {exc} at {[(f.name, f.lineno) for f in where]}\n"
            return 0, ""
        return call

    return [("status", cli("status", store, "--format", "json")), ("query", cli("query", store)),
            ("summary", cli("query", store, "--summary")),
            ("digest", cli("digest", store, "--partial", "--out", str(tmp_path / "d.json"))),
            ("load_sweep", api(lambda: load_sweep(store))),
            ("open_sweep", api(lambda: open_sweep(store).compute()))]


def _outcome(name: str, code: int, err: str) -> str | None:
    """What was wrong with a read's outcome, or None: a read, or a line saying a run is at work."""
    if code == 0 or (name == "status" and code == 1 and not err.strip()):
        return None
    lines = err.strip().splitlines()
    if len(lines) == 1 and TOLD.search(lines[0]):
        return None
    return f"{name} exit {code}: {err.strip()[:300]}"


#: Reads of the store each run waits for (its tasks slowed until then), then it ends at full speed and packs.
READS_PER_RUN = 20


def test_every_command_reads_or_is_told_while_runs_create_pack_and_grow_a_store(tmp_path, capsys):
    store, flag = str(tmp_path / "s.zarr"), tmp_path / "slow"
    specs = []
    for dice in (3, 4, 5, 6, 7):  # a run that creates it, then four that grow it, each packing at its end
        specs.append(tmp_path / f"d{dice}.toml")
        specs[-1].write_text(_spec(dice))
    readers = _readers(store, tmp_path)
    reads, told, wrong, made = 0, 0, [], False
    for i, spec in enumerate(specs):
        flag.touch()  # each task a second while it is there: no run ends before its reads
        run = subprocess.Popen([sys.executable, "-c", _TOY_MAIN, "-q", "run", str(spec), "--store", store,
                                "--workers", "1", *(["--extend"] if i else [])],
                               env={**os.environ, "TOY_DELAY_S": "1", "TOY_DELAY_WHILE": str(flag)},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        began = reads + told
        try:
            while run.poll() is None:
                if reads + told - began >= READS_PER_RUN:
                    flag.unlink(missing_ok=True)  # the rest at full speed, then its packing: read across it
                name, read = readers[(reads + told) % len(readers)]
                made = made or os.path.exists(os.path.join(store, "zarr.json"))  # before the read began
                code, err = read(capsys)
                if not made:
                    continue  # no store yet when it began: not a read of one
                problem = _outcome(name, code, err)
                if problem is not None:
                    wrong.append(problem)
                    reads += 1
                elif code and err.strip():
                    told += 1
                else:
                    reads += 1
        finally:
            flag.unlink(missing_ok=True)
            if run.poll() is None:
                run.kill()
            _, run_err = run.communicate(timeout=120)
        assert run.returncode == 0, run_err[-2000:]
    kinds = sorted({w[:90] for w in wrong})
    assert not wrong, f"{len(wrong)} of {reads + told} reads neither read nor were told, of kinds {kinds}: {wrong[:3]}"
    assert reads >= len(specs) * READS_PER_RUN // 2, f"{told} of {reads + told} reads were told a run is at work"
    assert run_cli("status", store) == 0
