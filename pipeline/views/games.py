"""What ``games`` prints: the installed games, and one game's parameters and outputs."""

from __future__ import annotations

import json

import click

from .terminal import verbosity, wrap_to_width


def print_games(fmt: str) -> None:
    """The installed games: name, distribution, exact answer, description."""
    from ...core.games import game_names, game_source, get_game

    found = []
    for name in game_names():
        try:
            game = get_game(name)
        except Exception as exc:  # noqa: BLE001 - one broken plugin must not hide the other games
            text = " ".join(str(exc).split()) or type(exc).__name__
            click.echo(f"boardsweep: warning: game {name!r} cannot be loaded ({type(exc).__name__}: {text})",
                       err=True)
            continue
        found.append({"name": name, "distribution": game_source(name)[1],
                      "exact": "yes" if game.has_exact else "no", "description": game.description})
    if fmt == "json":
        print(json.dumps(found, indent=2))
        return
    for g in found:
        click.echo(f"{g['name']}  (from {g['distribution']}; exact answer: {g['exact']})")
        click.echo(wrap_to_width(g["description"], "    "))
    if verbosity() >= 0:
        click.echo("\n`boardsweep games NAME` lists a game's parameters and outputs.")


def print_game(game, fmt: str) -> None:
    """One game: parameters (type, allowed values, default), run shape, outputs."""
    from ...core.games import game_source

    described = {
        "name": game.name,
        "distribution": game_source(game.name)[1],
        "description": game.description,
        "exact": game.has_exact,
        "parameters": [{"name": p.name, "type": p.kind.__name__, "allowed": p.allowed(),
                        "default": p.default, "help": p.help} for p in game.params],
        "run_shape": {"entries": dict(game.run_shape), "checkpoints_count": game.checkpoint_of},
        "variables": {n: {"dims": list(v.dims), "dtype": v.dtype, "description": v.description}
                      for n, v in game.variables.items()},
        "exact_variables": {n: {"dims": list(v.dims), "dtype": v.dtype, "description": v.description}
                            for n, v in game.exact_variables.items()},
    }
    if fmt == "json":
        print(json.dumps(described, indent=2))
        return
    echo = click.echo
    echo(wrap_to_width(f"{game.name} (from {described['distribution']}): {game.description}", "", "    "))
    echo(f"exact answer: {'yes' if game.has_exact else 'no'}")
    echo("\nparameters (--set NAME=VALUE, or [params] / [grid] in a spec):")
    for p in described["parameters"]:
        echo(wrap_to_width(f"{p['name']} ({p['type']}, default {p['default']!r}): {p['allowed']}", "  ", "    "))
        if p["help"]:
            echo(wrap_to_width(p["help"], "        "))
    echo(f"\nrun shape ([run] in a spec; checkpoints count {game.checkpoint_of}):")
    for key, default in game.run_shape.items():
        echo(f"  {key} (int, default {default})")
    for title, variables in (("outputs", described["variables"]),
                             ("exact outputs", described["exact_variables"])):
        echo(f"\n{title}:" if variables else f"\n{title}: none")
        for name, v in variables.items():
            dims = ", ".join(v["dims"]) or "scalar"
            echo(wrap_to_width(f"{name} ({v['dtype']}; {dims}): {v['description']}", "  ", "    "))
