"""The ``boardsweep`` command.

Every command reaches games only through :mod:`core.games`.  A wrong option or
value prints one line ``boardsweep: error: ...`` on stderr and exits with 2.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click
import numpy as np

from core.games import Game, ParameterError, get_game
from pipeline.spec import SpecError

__all__ = ["main", "cli"]


class UserError(click.UsageError):
    """A user-facing error reported in one line with exit code 2."""


def parse_sets(game: Game, sets: tuple[str, ...]) -> dict[str, Any]:
    """Turn ``--set name=value`` options into a validated parameter dict."""
    given: dict[str, Any] = {}
    for item in sets:
        if "=" not in item:
            raise UserError(f"--set {item!r}: expected NAME=VALUE")
        name, text = item.split("=", 1)
        given[name.strip()] = game.param(name.strip()).parse(text.strip())
    return game.resolve_params(given)


def load_spec(path: str):
    """Parse and validate a sweep spec (SpecError -> one-line error, exit 2)."""
    from pipeline.spec import load_spec as _load

    return _load(path)


def load_game(name: str) -> Game:
    try:
        return get_game(name)
    except ParameterError as exc:
        raise UserError(str(exc)) from None


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def emit(summary: dict, fmt: str) -> None:
    """Print a JSON-ready summary as JSON or as plain tables."""
    summary = _jsonable(summary)
    if fmt == "json":
        click.echo(json.dumps(summary, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for key, value in summary.items():
        if isinstance(value, dict) and value and all(
            not isinstance(v, (dict, list)) for v in value.values()
        ):
            table = Table(title=key)
            table.add_column("label")
            table.add_column(key, justify="right")
            for label, v in value.items():
                table.add_row(str(label), f"{v:.6g}" if isinstance(v, float) else str(v))
            console.print(table)
        elif isinstance(value, (dict, list)):
            console.print(f"[bold]{key}[/bold]: {json.dumps(value)}")
        else:
            console.print(f"[bold]{key}[/bold]: {value}")


FORMAT = click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
SET = click.option(
    "--set", "sets", multiple=True, metavar="NAME=VALUE", help="Set a game parameter."
)


@click.group()
@click.version_option(package_name="boardsweep")
def cli() -> None:
    """Exact and Monte Carlo odds of dice-driven board games."""


@cli.command()
@click.argument("game_name", metavar="GAME")
@SET
@FORMAT
def exact(game_name: str, sets: tuple[str, ...], fmt: str) -> None:
    """Print the exact answer of GAME for one parameter set."""
    game = load_game(game_name)
    params = parse_sets(game, sets)
    if game.summarize_exact is None:
        raise UserError(f"game {game.name!r} has no exact solver")
    emit(game.summarize_exact(params), fmt)


@cli.command()
@click.argument("game_name", metavar="GAME")
@SET
@click.option("--games", type=int, default=None, help="Games in the run.")
@click.option("--players", type=int, default=None, help="Tokens per game.")
@click.option("--turns", type=int, default=None, help="Turns per game.")
@click.option("--seed", type=int, default=0, show_default=True)
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
            raise UserError(
                f"--{key} does not apply to game {game.name!r}; "
                f"its run shape is {', '.join('--' + k for k in game.run_shape)}"
            )
    run_shape = game.resolve_run_shape(given)
    checkpoints = np.array([run_shape[game.checkpoint_of]], dtype=np.int64)
    sim = game.simulate(params, seed, run_shape, checkpoints)
    emit(game.summarize(params, sim, run_shape), fmt)


@cli.command()
@click.argument("game_name", metavar="GAME")
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
        raise UserError(f"game {game.name!r} has no scripted replay")
    params = parse_sets(game, sets)
    try:
        faces = [int(x) for x in dice.replace(" ", "").split(",") if x]
    except ValueError:
        raise UserError(f"--dice {dice!r}: expected comma-separated integers") from None
    draws = [c for c in cards.replace(" ", "").split(",") if c]
    emit(game.extras["replay"](params, faces, draws, turns), fmt)


@cli.command()
@click.argument("spec_path", metavar="SPEC", type=click.Path(dir_okay=False))
@click.option("--store", "store_url", default=None, help="Store path or fsspec URL (default: the spec's, else results/<name>.zarr).")
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Local worker processes (default: CPU count).")
@click.option("--scheduler", default=None, metavar="ADDRESS", help="Use an existing Dask scheduler.")
@click.option("--overwrite", is_flag=True, help="Replace a store made by a different spec.")
@click.option("--max-tasks", type=click.IntRange(min=0), default=None, hidden=True)
@click.option("--report-json", type=click.Path(dir_okay=False), default=None, hidden=True)
def run(
    spec_path: str,
    store_url: str | None,
    workers: int | None,
    scheduler: str | None,
    overwrite: bool,
    max_tasks: int | None,
    report_json: str | None,
) -> None:
    """Run (or resume) the sweep described by the spec file SPEC."""
    from pipeline import display
    from pipeline.execute import run_sweep
    from pipeline.lock import StoreLocked
    from pipeline.store import StoreMismatch

    spec = load_spec(spec_path)
    console = display.console()
    display.announce(console, spec, store_url or spec.default_store())
    bar = display.TaskBar(console)
    try:
        with bar:
            report = run_sweep(
                spec, store_url, workers=workers, scheduler=scheduler, overwrite=overwrite,
                max_tasks=max_tasks, on_start=bar.start, on_progress=bar.update,
            )
    except (StoreMismatch, StoreLocked) as exc:
        raise UserError(str(exc)) from None
    display.run_summary(console, report)
    if report_json:
        from dataclasses import asdict

        with open(report_json, "w") as f:
            json.dump(asdict(report), f, indent=2)


@cli.command()
@click.argument("store_url", metavar="STORE")
@click.option("--sel", "sels", multiple=True, metavar="AXIS=VALUE", help="Select grid points.")
@click.option("--variable", default=None, help="Simulated variable (default: the first distribution).")
@click.option("--top", type=click.IntRange(min=1), default=None, help="Rows per grid point (table default 5).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
def query(store_url: str, sels: tuple[str, ...], variable: str | None, top: int | None, fmt: str) -> None:
    """Estimates, standard errors and exact values from the sweep store STORE."""
    from pipeline import display

    ds = display.open_store(store_url, UserError)
    ds = display.select(ds, sels, UserError)
    variable = display.pick_variable(ds, variable, UserError)
    display.print_rows(ds, variable, top, fmt)


@cli.command()
@click.argument("store_url", metavar="STORE")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def status(store_url: str, fmt: str) -> None:
    """Show done/total replicates per grid point of the sweep store STORE."""
    from pipeline import display

    ds = display.open_store(store_url, UserError)
    display.print_status(ds, fmt)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI, turning user errors into one line and exit code 2."""
    try:
        cli.main(args=argv, prog_name="boardsweep", standalone_mode=False)
    except (click.UsageError, ParameterError, SpecError) as exc:
        message = exc.format_message() if isinstance(exc, click.ClickException) else str(exc)
        click.echo(f"boardsweep: error: {message}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("boardsweep: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        click.echo(f"boardsweep: error: {exc.format_message()}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
