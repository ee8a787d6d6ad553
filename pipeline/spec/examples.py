"""The example sweeps that ship inside the package (``boardsweep/sweeps``).

The specs of ``sweeps/`` in the repository are package data, with the digest
of any that has one (``nightly.toml`` and ``nightly.digest.json``), so an
installed boardsweep, without a clone, finds a sweep and its recorded digest
by the example's bare name: ``boardsweep run quickstart``,
``boardsweep.run("quickstart")``, ``boardsweep verify nightly --against nightly``.
A file of that name in the current folder always comes first.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ..errors import InputError
from ..urls import local_root

__all__ = ["DIGEST_SUFFIX", "folder", "names", "spec_file", "digest_file", "resolve_spec", "resolve_digest",
           "is_bare", "is_example"]

#: The shipped digest of example NAME is ``NAME`` + this, beside ``NAME.toml``.
DIGEST_SUFFIX = ".digest.json"


def folder() -> Path:
    """The installed folder of example specs (``boardsweep/sweeps``)."""
    return Path(str(resources.files("boardsweep") / "sweeps"))


def names() -> list[str]:
    """The names of the shipped example sweeps, sorted (``quickstart``, ...)."""
    where = folder()
    return sorted(p.stem for p in where.glob("*.toml")) if where.is_dir() else []


def _stem(name: str) -> str:
    return name[:-5] if name.endswith(".toml") else name


def spec_file(name: str) -> Path:
    """The installed spec file of example ``name`` (:class:`InputError` naming the examples if none)."""
    if _stem(name) not in names():
        raise InputError(f"no example named {name!r}; expected one of {', '.join(names()) or '(none installed)'}"
                         " (`boardsweep examples` lists them)")
    return folder() / f"{_stem(name)}.toml"


def digest_file(name: str) -> Path | None:
    """The shipped digest of example ``name`` (``nightly`` -> ``nightly.digest.json``), None if it has none."""
    path = folder() / f"{_stem(name)}{DIGEST_SUFFIX}"
    return path if path.is_file() else None


def is_bare(given: str) -> bool:
    """``given`` is one name, no folder, and no file or folder of that name exists here."""
    path = Path(given)
    return local_root(given) == path and len(path.parts) == 1 and not path.exists()


def resolve_spec(given: str) -> str:
    """The spec file for SPEC ``given``: ``given`` itself where such a file exists
    or it names a folder; else, for a bare example name (``quickstart`` or
    ``quickstart.toml``), the shipped example's file; a bare name that is
    neither: :class:`InputError` naming the examples."""
    if not is_bare(given):
        return given
    if _stem(given) in names():
        return str(folder() / f"{_stem(given)}.toml")
    raise InputError(f"{given}: no such spec file here, and no example of that name (examples: "
                     f"{', '.join(names())}; `boardsweep examples` lists them)")


def resolve_digest(given: str) -> str:
    """The store or digest for ``--against given``: ``given`` itself where it
    exists (or is a URL or a path with folders); else, for a bare example
    name with a shipped digest (``nightly``), that digest's file; else
    :class:`InputError` in one line."""
    if not is_bare(given):
        return given
    shipped = digest_file(given) if _stem(given) in names() else None
    if shipped is None:
        with_digest = [n for n in names() if digest_file(n) is not None]
        raise InputError(f"--against {given}: no such store or digest file, and no shipped digest of that name"
                         f" (examples with one: {', '.join(with_digest) or 'none'})")
    return str(shipped)


def is_example(name: str) -> bool:
    """``name`` (``quickstart`` or ``quickstart.toml``) is a shipped example."""
    return _stem(name) in names()
