"""``-v`` and ``-q``: the output's verbosity and the log messages shown, given before or after a command."""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

import click

from ..errors import InputError

__all__ = ["Command", "Group", "set_verbosity"]


def _verbosity_options() -> list[click.Option]:
    """``-v`` and ``-q``, taken by the group and, again, by every subcommand."""
    return [click.Option(["-v", "--verbose"], count=True, help="More output: -v Dask's log messages, -vv debug."),
            click.Option(["-q", "--quiet"], is_flag=True,
                         help="Only results and errors: no banner, progress or timings.")]


#: ``-h`` and ``--help`` on every command, however it is invoked: click keeps the help option of a
#: command's first context, so a command first parsed alone (documentation, a test) must not lose ``-h``.
HELP_NAMES = {"help_option_names": ["-h", "--help"]}


class Command(click.Command):
    """A subcommand that also takes ``-q`` and ``-v`` after its name
    (``boardsweep run SPEC -q``), added to those given before it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["context_settings"] = {**HELP_NAMES, **(kwargs.get("context_settings") or {})}
        super().__init__(*args, **kwargs)
        self.params += _verbosity_options()

    def invoke(self, ctx: click.Context) -> Any:
        verbose, quiet = ctx.params.pop("verbose", 0), ctx.params.pop("quiet", False)
        if verbose or quiet:
            before_v, before_q = ctx.meta.get("boardsweep.verbosity", (0, False))
            set_verbosity(before_v + verbose, before_q or quiet)
        return super().invoke(ctx)


class Group(click.Group):
    command_class = Command

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["context_settings"] = {**HELP_NAMES, **(kwargs.get("context_settings") or {})}
        super().__init__(*args, **kwargs)
        self.params += _verbosity_options()

def set_verbosity(verbose: int, quiet: bool) -> None:
    """``-q`` / ``-v`` / ``-vv``, given before or after the subcommand: the
    output's verbosity and the log messages shown."""
    from ..views import set_verbosity

    if verbose and quiet:
        raise InputError("-v and -q exclude each other")
    set_verbosity(-1 if quiet else verbose)
    if verbose:
        logging.basicConfig(level=logging.DEBUG if verbose > 1 else logging.INFO,
                            format="%(asctime)s %(name)s %(levelname)s: %(message)s")
        logging.getLogger().setLevel(logging.DEBUG if verbose > 1 else logging.INFO)  # -v, then -v again
        logging.getLogger("distributed").setLevel(logging.DEBUG if verbose > 1 else logging.INFO)
        logging.getLogger("asyncio").setLevel(logging.NOTSET)
    elif not logging.getLogger().handlers:
        _quiet_library_logs()


def _quiet_library_logs() -> None:
    """Without ``-v``, the command names every fault itself, in one line:
    Dask's records (its own stderr handler; the embedded cluster silences it
    only while it lives, and a comm closing after that logs "Batched Comm
    Closed" with a traceback) and asyncio's ("Task exception was never
    retrieved": a lost S3 server's requests left in zarr's and fsspec's
    loops) would print tracebacks around that line."""
    for name in ("distributed", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    # distributed sets its logger's level from Dask's configuration as it loads (later, for a run):
    # the same level there, unless the user's environment sets one
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "critical")
    if "dask.config" in sys.modules:  # loaded already (a program calling the CLI's function): told directly
        import dask.config

        if os.environ["DASK_LOGGING__DISTRIBUTED"] == "critical":
            dask.config.set({"logging.distributed": "critical"})

