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
from importlib import resources
from pathlib import Path

import click

from ..errors import InputError
from .verbosity import Group, set_verbosity

__all__ = ["examples", "example_names", "example_file", "spec_path"]


def _folder() -> Path:
    """The installed folder of example specs (``boardsweep/sweeps``)."""
    return Path(str(resources.files("boardsweep") / "sweeps"))


def example_names() -> list[str]:
    """The names of the shipped example sweeps, sorted (``quickstart``, ...)."""
    folder = _folder()
    return sorted(p.stem for p in folder.glob("*.toml")) if folder.is_dir() else []


def example_file(name: str) -> Path:
    """The installed spec file of example ``name`` (:class:`InputError` naming the examples if none)."""
    stem = name[:-5] if name.endswith(".toml") else name
    if stem not in example_names():
        raise InputError(f"no example named {name!r}; expected one of {', '.join(example_names()) or '(none installed)'}"
                         " (`boardsweep examples` lists them)")
    return _folder() / f"{stem}.toml"


def spec_path(given: str) -> str:
    """The spec file a command reads for SPEC ``given``: ``given`` itself where
    such a file exists or it names a folder; else, for a bare example name
    (``quickstart`` or ``quickstart.toml``), the shipped example's file; a
    bare name that is neither: :class:`InputError` naming the examples."""
    path = Path(given)
    if path.exists() or len(path.parts) != 1:
        return given
    stem = given[:-5] if given.endswith(".toml") else given
    if stem in example_names():
        return str(_folder() / f"{stem}.toml")
    raise InputError(f"{given}: no such spec file here, and no example of that name (examples: "
                     f"{', '.join(example_names())}; `boardsweep examples` lists them)")


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
        game, description = _description(_folder() / f"{name}.toml")
        click.echo(f"{name:<{width}}  {game:<12}  {description}")
    click.echo("run one: boardsweep run quickstart; copy one to edit: boardsweep examples copy quickstart")


@examples.command("copy")
@click.argument("name", metavar="NAME")
@click.argument("folder", metavar="[DIR]", required=False, default=".", type=click.Path(file_okay=False))
def copy(name: str, folder: str) -> None:
    """Copy the spec of example NAME into DIR (default: the current folder) as NAME.toml.

    A file of that name already there is never replaced (exit 2)."""
    source = example_file(name)
    target = Path(folder) / source.name
    if target.exists():
        raise InputError(f"{target}: exists already; remove it or copy into another folder")
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    except OSError as exc:
        raise InputError(f"{target}: cannot write the spec there ({exc.strerror or exc})") from None
    click.echo(f"{target} (run it: boardsweep run {target})")


@examples.command("show")
@click.argument("name", metavar="NAME")
def show(name: str) -> None:
    """Print the spec of example NAME."""
    click.echo(example_file(name).read_text(encoding="utf-8"), nl=False)
