"""``boardsweep examples``: the example sweeps that ship inside the package.

The specs of ``sweeps/`` in the repository are package data (``boardsweep/sweeps/*.toml``),
so an installed boardsweep, without a clone, lists them (``boardsweep examples``),
copies one to edit (``boardsweep examples copy quickstart [DIR]``) and runs one by
its bare name (``boardsweep run quickstart``: :func:`spec_path`, where no file of
that name exists).
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import click

from ..errors import InputError
from ..spec import example_digest_file, example_file, example_names, examples_folder, resolve_spec
from .verbosity import Group, set_verbosity

__all__ = ["examples", "example_names", "example_file", "spec_path"]

spec_path = resolve_spec


def _description(path: Path) -> tuple[str, str]:
    """(game, description) of the example spec at ``path``."""
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    return str(raw.get("game", "")), str(raw.get("description", ""))


@click.group(cls=Group, invoke_without_command=True)
@click.pass_context
def examples(ctx: click.Context, verbose: int, quiet: bool) -> None:
    """List the example sweeps that ship with boardsweep.

    `boardsweep run NAME` runs one as it is (results/NAME.zarr in the current
    folder); `boardsweep examples copy NAME [DIR]` copies its spec to edit.
    """
    if verbose or quiet:
        before_v, before_q = ctx.meta.get("boardsweep.verbosity", (0, False))
        set_verbosity(before_v + verbose, before_q or quiet)
    if ctx.invoked_subcommand is None:
        _list()


def _list() -> None:
    names = example_names()
    width = max((len(n) for n in names), default=0)
    for name in names:
        game, description = _description(examples_folder() / f"{name}.toml")
        click.echo(f"{name:<{width}}  {game:<12}  {description}")
    click.echo("run one: boardsweep run quickstart; copy one to edit: boardsweep examples copy quickstart")


@examples.command("copy")
@click.argument("name", metavar="NAME")
@click.argument("folder", metavar="[DIR]", required=False, default=".", type=click.Path(file_okay=False))
def copy(name: str, folder: str) -> None:
    """Copy the spec of example NAME into DIR (default: the current folder) as NAME.toml.

    An example with a recorded digest (nightly) comes with it, as NAME.digest.json.
    A file of either name already there is never replaced (exit 2)."""
    source = example_file(name)
    digest = example_digest_file(name)
    pairs = [(source, Path(folder) / source.name)] + ([(digest, Path(folder) / digest.name)] if digest else [])
    for _, target in pairs:
        if target.exists():
            raise InputError(f"{target}: exists already; remove it or copy into another folder")
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        for origin, target in pairs:
            shutil.copyfile(origin, target)
    except OSError as exc:
        raise InputError(f"{pairs[0][1]}: cannot write the spec there ({exc.strerror or exc})") from None
    click.echo(f"{pairs[0][1]} (run it: boardsweep run {pairs[0][1]})")
    if digest:
        click.echo(f"{pairs[1][1]} (its recorded digest: boardsweep verify {pairs[0][1]} --against {pairs[1][1]})")


@examples.command("show")
@click.argument("name", metavar="NAME")
def show(name: str) -> None:
    """Print the spec of example NAME."""
    click.echo(example_file(name).read_text(encoding="utf-8"), nl=False)
