"""What the commands share: their common options, reading a spec or a game, printing a summary."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import click
import numpy as np

from ...core.games import Game, ParameterError, game_names, get_game
from ..errors import InputError
from ..spec import load_spec as parse_spec_file
from ..words import json_text, python_value
from .examples import spec_path

__all__ = ["parse_sets", "load_spec", "load_game", "complete_game", "scheduler_address", "emit", "FORMAT", "SET",
           "JSON_FORMAT", "quiet_for_json", "WORKERS", "SCHEDULER", "TLS_CA", "TLS_CERT", "TLS_KEY", "tls_options",
           "reads_here"]


def parse_sets(game: Game, sets: tuple[str, ...]) -> dict[str, Any]:
    """Turn ``--set name=value`` options into a validated parameter dict."""
    given: dict[str, Any] = {}
    for item in sets:
        if "=" not in item:
            raise InputError(f"--set {item!r}: expected NAME=VALUE")
        name, text = item.split("=", 1)
        given[name.strip()] = game.param(name.strip()).parse(text.strip())
    return game.resolve_params(given)


def load_spec(path: str, overrides: tuple[str, ...] = ()):
    """Parse and validate a sweep spec, with ``--set KEY=VALUE`` overrides
    (SpecError -> one-line error, exit 2).  A bare name that is no file
    (``quickstart``) is the shipped example of that name (:func:`.examples.spec_path`)."""
    return parse_spec_file(spec_path(path), overrides)


def load_game(name: str) -> Game:
    try:
        return get_game(name)
    except ParameterError as exc:
        raise InputError(str(exc)) from None


def complete_game(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Shell completion of a GAME argument: the installed games."""
    return [name for name in game_names() if name.startswith(incomplete)]


def scheduler_address(given: str | None) -> str | None:
    """``--scheduler``, else Dask's own configuration (``scheduler-address``,
    e.g. from ``DASK_SCHEDULER_ADDRESS``), else None (an embedded cluster)."""
    if given:
        return given
    import dask.config

    return dask.config.get("scheduler-address", None) or None


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    return python_value(value)


def emit(summary: dict, fmt: str, game: Game | None = None, params: dict | None = None) -> None:
    """Print a JSON-ready summary as JSON or as plain tables (one per set of labels)."""
    if fmt == "json":
        click.echo(json_text(summary))  # full precision; NaN as null
        return
    summary = _jsonable(summary)
    from ..views import print_summary

    dims: dict[str, tuple] = {}
    if game is not None:
        coords = game.coords_for(params or {p.name: p.default for p in game.params})
        dims = {**coords, **{d: (*coords.get(d, ()), *names) for d, names in game.label_names.items()}}
    print_summary(summary, dims)


FORMAT = click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
#: ``--format json`` of the commands that otherwise print for people (run, report, verify).
JSON_FORMAT = click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
                           show_default=True, help="json: only the result, as JSON, every number at full precision "
                           "(no banner or progress; errors still on stderr).")


def quiet_for_json(fmt: str) -> None:
    """``--format json``: nothing but the JSON on stdout (as ``-q``, and quieter: no summary lines)."""
    if fmt == "json":
        from ..views import set_verbosity

        set_verbosity(-1)


SET = click.option(
    "--set", "sets", multiple=True, metavar="NAME=VALUE", help="Set a game parameter."
)

WORKERS = click.option("--workers", type=click.IntRange(min=1), default=None, help=(
    "Workers of the local cluster (default: one per CPU, at most 4 per CPU or 16): single-threaded workers "
    "in this process (worker processes with Dask's boardsweep.processes setting, DASK_BOARDSWEEP__PROCESSES=True)."))
TLS_CA = click.option("--tls-ca-file", type=click.Path(exists=True, dir_okay=False), default=None,
                      help="TLS: CA certificate(s) to trust (PEM), with --scheduler tls://...")
TLS_CERT = click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False), default=None,
                        help="TLS: this client's certificate (PEM).")
TLS_KEY = click.option("--tls-key", type=click.Path(exists=True, dir_okay=False), default=None,
                       help="TLS: this client's private key (PEM).")

SCHEDULER = click.option("--scheduler", default=None, metavar="ADDRESS", help=(
    "Use an existing Dask scheduler (default: Dask's scheduler-address config, e.g. DASK_SCHEDULER_ADDRESS; "
    "else a local cluster)."))


def tls_options(scheduler: str | None, ca_file: str | None, cert: str | None, key: str | None):
    """A Security object (encryption required) from the --tls-* options, or None."""
    given = {"--tls-ca-file": ca_file, "--tls-cert": cert, "--tls-key": key}
    if not any(given.values()):
        if scheduler and scheduler.startswith("tls://"):
            raise InputError(f"scheduler {scheduler} uses TLS: give --tls-ca-file, --tls-cert and --tls-key")
        return None
    missing = [name for name, value in given.items() if not value]
    if missing:
        raise InputError(f"TLS needs --tls-ca-file, --tls-cert and --tls-key together; missing {', '.join(missing)}")
    if not scheduler:
        raise InputError("the --tls-* options secure the connection to --scheduler; give --scheduler tls://HOST:PORT")
    from ..cluster import tls_security

    return tls_security(ca_file, cert, key)


@contextmanager
def reads_here() -> Iterator[None]:
    """Dask's threaded scheduler, given as the function itself, for a command
    that only reads a store (``status``, ``query``, ``digest``, ``report``).

    Without a scheduler given, or given by name, dask's first compute imports
    ``distributed`` (0.3-0.6 s) to ask whether a client is running; none is in
    a command that reads, and the threaded scheduler is what dask then picks:
    the same reads, without that import."""
    import dask
    from dask.threaded import get as threads

    with dask.config.set(scheduler=threads):
        yield
