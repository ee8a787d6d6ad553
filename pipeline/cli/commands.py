"""The ``boardsweep`` command.

Every command reaches games only through :mod:`boardsweep.core.games`.  A wrong option or
value prints one line ``boardsweep: error: ...`` on stderr and exits with 2.
"""

from __future__ import annotations

import logging
import os
import sys

import click

from ...core.games import ParameterError
from ..errors import BoardsweepError, InputError, causes, SpecError
from . import check, examples, games, interrupt, run, stores
from .diagnose import diagnose
from ..errors import one_line
from ..words import unexpected_line
from .verbosity import Group, set_verbosity

__all__ = ["main", "cli"]


@click.group(cls=Group, invoke_without_command=True)  # -h and --help: verbosity.HELP_NAMES
@click.version_option(None, "-V", "--version", package_name="boardsweep", message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx: click.Context, verbose: int, quiet: bool) -> None:
    """Exact and Monte Carlo odds of dice-driven board games.

    `boardsweep games` lists the installed games and `boardsweep games NAME`
    their parameters.  Shell completion: eval "$(_BOARDSWEEP_COMPLETE=bash_source boardsweep)".
    """
    if ctx.invoked_subcommand is None:  # a bare `boardsweep`: its help, and success
        if verbose and quiet:
            raise InputError("-v and -q exclude each other")
        click.echo(ctx.get_help())
        ctx.exit(0)
    ctx.meta["boardsweep.verbosity"] = (verbose, quiet)
    set_verbosity(verbose, quiet)




for _module in (games, run, stores, check):
    for _name in _module.__all__:
        cli.add_command(getattr(_module, _name))
cli.add_command(examples.examples)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI, turning user errors into one line and exit code 2.
    An output stream that cannot encode a character (``PYTHONIOENCODING=ascii``)
    gets its ASCII spelling (``±`` as ``+/-``)."""
    from ..views import fit_streams, restore_streams

    changed = fit_streams()
    try:
        _main(argv)
    finally:
        restore_streams(changed)


def _main(argv: list[str] | None) -> None:
    interrupt.starts(argv)
    try:
        code = cli.main(args=argv, prog_name="boardsweep", standalone_mode=False)
        if interrupt.RECEIVED.is_set():  # a Ctrl-C whose KeyboardInterrupt some library caught: still an interruption
            raise KeyboardInterrupt
        if isinstance(code, int) and code:
            sys.exit(code)  # a command's click.exceptions.Exit(code), e.g. status on an incomplete store
    except (click.UsageError, ParameterError, SpecError) as exc:
        message = exc.format_message() if isinstance(exc, click.ClickException) else str(exc)
        click.echo(f"boardsweep: error: {message}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:  # click's form of a Ctrl-C while it parses or runs a command
        _say_interrupted(interrupt.line())
        sys.exit(130)
    except click.ClickException as exc:
        click.echo(f"boardsweep: error: {exc.format_message()}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except BoardsweepError as exc:  # the one place a user-facing error becomes a line and an exit code
        click.echo(f"boardsweep: error: {one_line(exc, named=False)}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        _say_interrupted(interrupt.line())
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - never a traceback for users; -v shows it
        if any(isinstance(e, KeyboardInterrupt) for e in causes(exc)):  # a Ctrl-C wrapped by what it interrupted
            _say_interrupted(interrupt.line())
            sys.exit(130)
        known = diagnose(exc)
        if known is not None:  # a cause in the environment, named: not a bug
            click.echo(f"boardsweep: error: {known[0]}", err=True)
            sys.exit(known[1])
        if _verbose():
            raise
        click.echo(unexpected_line(exc, one_line(exc, named=False)), err=True)
        sys.exit(1)


def _verbose() -> bool:
    """Whether ``-v`` was given (False where the display module itself cannot be loaded)."""
    try:
        from ..views import verbosity

        return verbosity() > 0
    except Exception:  # noqa: BLE001 - the error being reported may be the reason
        return False


def _say_interrupted(line: str) -> None:
    """The interruption's one line (once: :mod:`boardsweep.pipeline.cli.entry` ends a
    process whose cleanup overruns its grace, and then prints none)."""
    from ..errors import INTERRUPTION_REPORTED

    INTERRUPTION_REPORTED.set()
    try:
        click.echo(line, err=True)
    except OSError:  # a closed stderr: the exit code says it
        pass


def _last_line(exc: Exception) -> int:
    """The one line for an error whose report itself failed, and exit code 1.  Without it the
    process fell into the interpreter's own exit, whose wait for the threads hung for good where
    one of them could not start a thread (450 MB of address space: a worker's close)."""
    try:
        sys.stderr.write(unexpected_line(exc) + "\n")
    except Exception:  # noqa: BLE001 - a closed stderr or no memory left: the exit code says it
        pass
    return 1


def command_line() -> None:
    """The ``boardsweep`` command (and ``python -m boardsweep``): :func:`main`,
    then the process ends at once.

    When a command has said its last word, its store is written and closed and
    its cluster shut down; what is left is the interpreter tearing down numba,
    Dask and xarray module by module (0.7 s of CPU).  So stdout, stderr and the
    log handlers are flushed and the process exits with :func:`os._exit`, as
    some other command-line tools do.  An exception :func:`main` lets through
    (under ``-v``) ends the process the usual way, with its traceback; Python
    code calling :func:`main` keeps its interpreter."""
    try:
        main()
        code = 0
    except SystemExit as exc:
        if exc.code is not None and not isinstance(exc.code, int):
            raise  # sys.exit("message"): Python prints it
        code = exc.code or 0
    except KeyboardInterrupt:  # a Ctrl-C before :func:`_main` can catch it (as main imports what it needs)
        _say_interrupted(interrupt.line())
        code = 130
    except Exception as exc:  # the error's own report failed (under ``ulimit -v``: a MemoryError in the diagnosis)
        if _verbose():
            raise
        code = _last_line(exc)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away (`| head`), a closed stream
            pass
    logging.shutdown()
    os._exit(code)


if __name__ == "__main__":
    command_line()

