"""Commands that check a sweep: ``digest`` and ``verify``."""

from __future__ import annotations

import click

from ..errors import BoardsweepError, Fault, InputError
from ..urls import local_root
from ..words import json_text
from .options import JSON_FORMAT, quiet_for_json, TLS_CA, TLS_CERT, TLS_KEY, WORKERS, SCHEDULER, load_spec, reads_here, scheduler_address, tls_options
from .stores import refuse_lock_only
from .verbosity import Command

__all__ = ["digest", "verify"]


@click.command(cls=Command)
@click.argument("store_url", metavar="STORE")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write the digest to this file (default: stdout).")
@click.option("--partial", is_flag=True, help="Record the digest of an unfinished store too, marked partial "
              "in the file (verify refuses it as a reference).")
@reads_here()
def digest(store_url: str, out: str | None, partial: bool) -> None:
    """Print the digest of the finished sweep store STORE: per-variable SHA-256 (JSON)."""
    from ..store import answers, normalize_url, store_exists, creating_line, inspect, rootless_line
    from ..errors import StoreDamaged
    from ..run import write_digest
    from ..analysis import steadily

    try:
        url = normalize_url(store_url)
        answers(url)  # storage that does not answer: one line within the read's deadline
        found = inspect(url)
        if found == "rootless":
            raise StoreDamaged(rootless_line(url))
        if found == "creating":
            raise Fault(creating_line(url))
        if not store_exists(url):
            refuse_lock_only(url)  # a run interrupted before it made the store: not bad input
            raise InputError(f"no sweep store at {url}")
        with steadily(url):  # a run packing, growing or creating it meanwhile: one line, read again
            text = write_digest(url, out, partial)
    except OSError as exc:
        raise InputError(f"--out {out}: cannot write the digest there ({exc.strerror or exc})") from None
    if out is None:
        click.echo(text, nl=False)
    else:
        click.echo(f"digest of {url} written to {out}")


@click.command(cls=Command)
@click.argument("spec_path", metavar="SPEC", type=click.Path(dir_okay=False))
@click.option("--against", required=True, metavar="STORE_OR_DIGEST",
              help="A sweep store (compared cell by cell), a digest file from `boardsweep digest`, or the "
              "name of a shipped example with a recorded digest (nightly).")
@click.option("--store", "rerun_store", default=None,
              help="Keep the re-run in this new store (default: a temporary directory, removed).")
@WORKERS
@SCHEDULER
@TLS_CA
@TLS_CERT
@TLS_KEY
@JSON_FORMAT
def verify(
    spec_path: str,
    against: str,
    rerun_store: str | None,
    workers: int | None,
    scheduler: str | None,
    tls_ca_file: str | None,
    tls_cert: str | None,
    tls_key: str | None,
    fmt: str,
) -> None:
    """Re-run SPEC into a fresh store and compare it with --against.

    Integers (counts, events, rolls) must be equal bit for bit; floats (exact
    answers) within relative 1e-9, since solvers round differently per CPU.
    Exits 0 when they agree, 1 naming the first differing variable and cell
    (`--format json`: the outcome as JSON on stdout, with every difference).
    """
    from ..views import console, info, TaskBar
    from ..run import rerun_and_compare
    from ..spec import resolve_digest

    quiet_for_json(fmt)
    scheduler = scheduler_address(scheduler)
    security = tls_options(scheduler, tls_ca_file, tls_cert, tls_key)
    spec = load_spec(spec_path)
    against = resolve_digest(against)  # a shipped example's digest by its name: --against nightly
    local = local_root(against)
    if local is not None and not local.exists():
        raise InputError(f"--against {against}: no such store or digest file")
    refuse_lock_only(against)
    console = console()
    info(console, f"verify: re-running sweep [bold]{spec.name}[/bold] and comparing with {against}")
    bar = TaskBar(console)
    try:
        with bar:
            result = rerun_and_compare(spec, against, rerun_store=rerun_store, workers=workers, scheduler=scheduler,
                                       security=security, on_start=bar.start, on_progress=bar.update)
    except ValueError as exc:  # not boardsweep's own (those have their line and exit code, in main): bad input
        if isinstance(exc, BoardsweepError):
            raise
        raise InputError(str(exc)) from None
    if fmt == "json":
        click.echo(json_text({"ok": result.ok, "against": against, "spec": spec.source, "message": result.message,
                              "variables": result.variables, "differences": result.differences}))
    if not result.ok:
        for line in result.differences[1:]:
            click.echo(f"  also: {line}", err=True)
        raise Fault(f"verify failed: {result.message}")
    if fmt != "json":
        console.print(f"verify: OK, {result.message}")
