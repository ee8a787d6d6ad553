"""The game registry: entry points, run-time registration, pickling by name."""

from __future__ import annotations

import pickle
import sys
from dataclasses import replace

import numpy as np
import pytest

from boardsweep.core import games
from boardsweep.core.games import GameNotInstalled, ParameterError


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A folder on sys.path where tests 'install' distributions (dist-info +
    package), as pip would; removed again afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("plug_")]:
        del sys.modules[name]


def install(site, dist: str, package: str, entries: dict[str, str], game_code: str | None = None):
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = "".join(f"{k} = {v}\n" for k, v in entries.items())
    (info / "entry_points.txt").write_text(f"[{games.ENTRY_POINT_GROUP}]\n{lines}")
    if game_code is not None:
        (site / package).mkdir()
        (site / package / "__init__.py").write_text("")
        (site / package / "game.py").write_text(game_code)


PLUGIN = """\
from dataclasses import replace
from boardsweep.core.games import get_game
GAME = replace(get_game("shut_the_box"), name="{name}")
"""


def test_builtin_games_come_from_entry_points():
    assert {"monopoly", "shut_the_box", "hk_monopoly"} <= set(games.game_names())
    for name in ("monopoly", "shut_the_box", "hk_monopoly"):
        target, dist = games.game_source(name)
        assert dist == "boardsweep" and target == f"boardsweep.core.{name}.game"
        assert games.get_game(name).name == name


def test_unknown_game_lists_the_known_ones():
    with pytest.raises(ParameterError, match=r"unknown game 'nope'; known games: .*monopoly"):
        games.get_game("nope")


def test_a_distribution_registers_a_game_by_entry_point_only(site):
    install(site, "plug-one", "plug_one", {"plug_one": "plug_one.game"}, PLUGIN.format(name="plug_one"))
    assert "plug_one" in games.game_names()
    game = games.get_game("plug_one")
    assert game.name == "plug_one" and game.origin == ("plug_one.game", "plug-one")
    assert pickle.loads(pickle.dumps(game)) is game


def test_a_game_is_found_without_a_new_scan_and_one_installed_since_by_one(site, monkeypatch):
    """Issue 44 (the warm first run): a game is looked up in the entry points
    as last scanned (a scan reads every installed distribution's metadata,
    and a run looks its game up several times); a name the last scan lacks
    is looked up in a new one, so a game installed since is found."""
    games.get_game("monopoly")
    scans = []
    real = games.importlib.metadata.entry_points
    monkeypatch.setattr(games.importlib.metadata, "entry_points", lambda **kw: scans.append(1) or real(**kw))
    assert games.get_game("monopoly").name == games.get_game("monopoly").name == "monopoly"
    assert scans == []
    install(site, "plug-late", "plug_late", {"plug_late": "plug_late.game"}, PLUGIN.format(name="plug_late"))
    assert games.get_game("plug_late").name == "plug_late" and scans == [1]


def test_entry_point_to_a_missing_module_names_game_and_distribution(site):
    install(site, "plug-gone", "plug_gone", {"plug_gone": "plug_gone.game"})
    assert "plug_gone" not in games.game_names()
    with pytest.raises(GameNotInstalled, match=r"game 'plug_gone' .*distribution 'plug-gone'.*pip install plug-gone"):
        games.get_game("plug_gone")


def test_two_distributions_claiming_one_name_are_refused(site):
    install(site, "plug-a", "plug_a", {"plug_dup": "plug_a.game"}, PLUGIN.format(name="plug_dup"))
    install(site, "plug-b", "plug_b", {"plug_dup": "plug_b.game"}, PLUGIN.format(name="plug_dup"))
    with pytest.raises(ParameterError, match=r"'plug_dup' is registered by both 'plug-a' and 'plug-b'"):
        games.get_game("plug_dup")


def test_entry_point_must_name_a_game_of_that_name(site):
    install(site, "plug-wrong", "plug_wrong", {"plug_wrong": "plug_wrong.game"}, PLUGIN.format(name="other"))
    with pytest.raises(ParameterError, match=r"not a boardsweep Game named 'plug_wrong'"):
        games.get_game("plug_wrong")


def test_register_adds_a_game_by_module_name(site, monkeypatch):
    (site / "plug_rt.py").write_text(PLUGIN.format(name="plug_rt"))
    monkeypatch.setitem(games.GAME_MODULES, "plug_rt", "plug_rt")
    games.register("plug_rt", "plug_rt")
    assert games.get_game("plug_rt").origin == ("plug_rt", "plug_rt")


def test_a_pickled_game_whose_distribution_is_missing_fails_on_use_in_one_line():
    blob = pickle.dumps(games.get_game("monopoly"))
    fake = blob.replace(b"boardsweep.core.monopoly.game", b"boardsweep.core.monopoly.gone")
    missing = pickle.loads(fake)
    assert isinstance(missing, games.MissingGame)
    assert not hasattr(missing, "__dask_graph__")  # dask's probes see a plain object
    assert pickle.loads(pickle.dumps(missing))._ref == ("monopoly", "boardsweep.core.monopoly.gone", "boardsweep")
    with pytest.raises(GameNotInstalled) as info:
        getattr(missing, "simulate")  # noqa: B009 - the attribute access is the test
    assert "game 'monopoly'" in str(info.value) and "'boardsweep'" in str(info.value)
    assert "\n" not in str(info.value)


def test_a_derived_game_does_not_inherit_its_origin():
    derived = replace(games.get_game("monopoly"), name="derived")
    assert derived.origin is None
    copy = pickle.loads(pickle.dumps(derived))
    assert copy.name == "derived" and copy.simulate is derived.simulate


def test_every_game_declares_headlines_from_its_stored_outputs():
    from boardsweep.core.games import Headline, headlines_of

    for name in ("monopoly", "shut_the_box", "hk_monopoly"):
        game = games.get_game(name)
        assert game.headlines and all(isinstance(h, Headline) for h in game.headlines)
        for h in game.headlines:
            assert h.numerator in game.variables
            assert h.denominator in (None, "checkpoint", *game.variables)
            assert h.squares is None or h.squares in game.variables
            assert h.exact is None or h.exact in game.exact_variables
            assert h.kind in ("mean", "distribution")
        assert headlines_of(game) == game.headlines
    assert games.get_game("shut_the_box").headlines[0].name == "mean_rolls"
    assert games.get_game("hk_monopoly").headlines[0].name == "win_share"


def test_a_game_without_headlines_falls_back_to_its_ratios_and_distributions():
    from boardsweep.core.games import headlines_of

    bare = replace(games.get_game("shut_the_box"), name="bare", headlines=())
    found = {h.name: h for h in headlines_of(bare)}
    assert set(found) == {"mean_rolls", "hist_frequency"}
    assert found["mean_rolls"].basis == "replicates" and found["mean_rolls"].exact == "exact_expected_rolls"
    assert found["hist_frequency"].kind == "distribution" and found["hist_frequency"].exact == "exact_pmf"
    hk = replace(games.get_game("hk_monopoly"), name="bare_hk", headlines=())
    shares = {h.name: h for h in headlines_of(hk)}["win_share"]
    assert shares.squares == "wins" and shares.basis == "units"  # a share: 0/1 per game


@pytest.mark.parametrize("shape, high", [((1, 1), 1), ((50, 1), 3), ((2_000, 3), [2, 7, 40]), ((500, 2), [1, 1]),
                                         ((300, 4), [2 ** 20, 2 ** 20, 2 ** 20, 2 ** 10])])
def test_column_groups_are_numpys_unique_rows(shape, high):
    """The rows, order, inverse and members of ``np.unique(axis=0)``, also
    where the key would overflow int64 (the last case: numpy's own path)."""
    from boardsweep.core.games import column_groups

    codes = np.random.default_rng(7).integers(0, high, size=shape)
    rows, inverse, runs = column_groups(codes)
    want_rows, want_inverse = np.unique(codes, axis=0, return_inverse=True)
    assert np.array_equal(rows, want_rows) and np.array_equal(inverse, want_inverse.reshape(-1))
    assert len(runs) == len(rows) and all(np.array_equal(r, np.flatnonzero(inverse == g)) for g, r in enumerate(runs))
    assert np.array_equal(codes[np.concatenate(runs)], rows[inverse[np.concatenate(runs)]])


def test_a_deferred_function_is_imported_at_its_first_call_and_is_one_object():
    """:class:`games.Deferred`: a game's heavy functions (numba kernels, scipy solvers) are
    imported when first called, then called directly; one object per function, pickled as itself."""
    import subprocess
    import sys

    code = ("import sys; from boardsweep.core.monopoly.game import GAME; "
            "print('boardsweep.core.monopoly.variance' in sys.modules, "
            "callable(GAME.extras['asymptotic_variance']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"]  # reading a game's labels imports no variance theory
    made = games.Deferred("math", "hypot")
    assert made is games.Deferred("math", "hypot") and pickle.loads(pickle.dumps(made)) is made
    assert made(3.0, 4.0) == 5.0
