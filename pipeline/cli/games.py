"""Commands about games, no store: ``games``, ``exact``, ``simulate`` and ``replay``."""

from __future__ import annotations

import click
import numpy as np

from ..errors import InputError
from .options import FORMAT, SET, complete_game, emit, load_game, parse_sets
from .verbosity import Command

__all__ = ["games", "exact", "simulate", "replay"]


@click.command(cls=Command)
@click.argument("game_name", metavar="[GAME]", required=False, shell_complete=complete_game)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def games(game_name: str | None, fmt: str) -> None:
    """List the installed games, or describe GAME: its parameters (type, allowed
    values, default), run shape, output variables and whether an exact answer exists."""
    from ..views import print_game, print_games

    if game_name is None:
        print_games(fmt)
    else:
        print_game(load_game(game_name), fmt)


@click.command(cls=Command)
@click.argument("game_name", metavar="GAME", shell_complete=complete_game)
@SET
@FORMAT
def exact(game_name: str, sets: tuple[str, ...], fmt: str) -> None:
    """Print the exact answer of GAME for one parameter set."""
    game = load_game(game_name)
    params = parse_sets(game, sets)
    if game.summarize_exact is None:
        raise InputError(f"game {game.name!r} has no exact solver")
    emit(game.summarize_exact(params), fmt, game, params)


@click.command(cls=Command)
@click.argument("game_name", metavar="GAME", shell_complete=complete_game)
@SET
@click.option("--games", type=int, default=None, help="Games in the run.")
@click.option("--players", type=int, default=None, help="Tokens per game.")
@click.option("--turns", type=int, default=None, help="Turns per game.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Root seed (an integer >= 0).")
@FORMAT
def simulate(
    game_name: str,
    sets: tuple[str, ...],
    games: int | None,
    players: int | None,
    turns: int | None,
    seed: int,
    fmt: str,
) -> None:
    """Run one Monte Carlo simulation of GAME (no store) and print a summary."""
    game = load_game(game_name)
    params = parse_sets(game, sets)
    given = {k: v for k, v in (("games", games), ("players", players), ("turns", turns)) if v is not None}
    for key in given:
        if key not in game.run_shape:
            raise InputError(
                f"--{key} does not apply to game {game.name!r}; "
                f"its run shape is {', '.join('--' + k for k in game.run_shape)}"
            )
    run_shape = game.resolve_run_shape(given)
    checkpoints = np.array([run_shape[game.checkpoint_of]], dtype=np.int64)
    sim = game.simulate(params, seed, run_shape, checkpoints)
    emit(game.summarize(params, sim, run_shape), fmt, game, params)


@click.command(cls=Command)
@click.argument("game_name", metavar="GAME", shell_complete=complete_game)
@click.option("--dice", required=True, help="Comma-separated die faces, two per roll.")
@click.option(
    "--cards",
    default="",
    help="Comma-separated card draws in the order they happen (see the game's replay docs).",
)
@click.option("--turns", type=int, default=None, help="Stop after this many turns.")
@SET
@FORMAT
def replay(
    game_name: str, dice: str, cards: str, turns: int | None, sets: tuple[str, ...], fmt: str
) -> None:
    """Replay a scripted game of GAME from given dice faces and card draws."""
    game = load_game(game_name)
    if "replay" not in game.extras:
        raise InputError(f"game {game.name!r} has no scripted replay")
    params = parse_sets(game, sets)
    try:
        faces = [int(x) for x in dice.replace(" ", "").split(",") if x]
    except ValueError:
        raise InputError(f"--dice {dice!r}: expected comma-separated integers") from None
    draws = [c for c in cards.replace(" ", "").split(",") if c]
    emit(game.extras["replay"](params, faces, draws, turns), fmt, game, params)
