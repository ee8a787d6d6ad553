"""Games as plugins, with real processes: a game from another distribution,
found only through its ``boardsweep.games`` entry point, runs on a real Dask
cluster; a worker that lacks the distribution fails the game's tasks with one
line naming the game and the distribution."""

from __future__ import annotations

import os
from pathlib import Path

from specs import spec_toml  # tests/support is on sys.path
from localdask import finish, local_dask, start_client

HERE = Path(__file__).resolve().parents[2] / "support"  # toy games and helpers

SPEC = spec_toml("plugtoy", name="plug", seed=3, grid={"dice_sides": [2, 3]},
                 run={"replicates": 2, "games": 1, "turns": 20}, checkpoints={"count": 2})


def make_distribution(site: Path) -> Path:
    """An installed distribution ``plugtoy-dist`` (dist-info and a package)
    whose only link to boardsweep is its entry point."""
    pkg = site / "plugtoy_pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "game.py").write_text(
        "from dataclasses import replace\nimport toy_game\n"
        "GAME = replace(toy_game.GAME, name='plugtoy')\n"
    )
    info = site / "plugtoy_dist-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plugtoy-dist\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[boardsweep.games]\nplugtoy = plugtoy_pkg.game\n")
    return site


def _path(*parts: Path) -> str:
    return os.pathsep.join([*map(str, parts), os.environ.get("PYTHONPATH", "")])


def test_plugin_game_runs_and_a_worker_without_it_fails_in_one_line(tmp_path):
    site = make_distribution(tmp_path / "site")
    spec = tmp_path / "plug.toml"
    spec.write_text(SPEC)
    with_plugin = {"PYTHONPATH": _path(site, HERE)}

    # every process has the distribution: the sweep completes
    with local_dask(tmp_path / "logs-ok", workers=1, env=with_plugin) as cluster:
        proc = start_client(tmp_path, "run", str(spec), "--scheduler", cluster.address,
                            "--store", str(tmp_path / "ok.zarr"), env=with_plugin, real=True)
        code, out, err = finish(proc)
    assert code == 0, out + err + cluster.log_text()
    assert "store complete" in out

    # the client and scheduler have it, the worker does not
    with local_dask(tmp_path / "logs-bad", workers=1, env={"PYTHONPATH": _path(HERE)}) as cluster:
        proc = start_client(tmp_path, "run", str(spec), "--scheduler", cluster.address,
                            "--store", str(tmp_path / "bad.zarr"), env=with_plugin, real=True)
        code, out, err = finish(proc)
    assert code == 1, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "game 'plugtoy' is not installed on host" in lines[0]
    assert "'plugtoy-dist'" in lines[0]
    assert "Traceback" not in out + err
