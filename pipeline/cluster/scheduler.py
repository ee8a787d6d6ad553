"""Connecting to an existing Dask scheduler (``--scheduler ADDRESS``): the
handshake that checks a scheduler answers there, and the wait for its first worker."""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from contextlib import ExitStack
from typing import Any, Callable

from ..errors import NoWorkers, NotAScheduler, SchedulerLost, one_line
from .settings import Target, connect_timeout

__all__ = ["handshake", "scheduler_client", "wait_for_workers", "LOOK_EVERY_S"]

_HANDSHAKE_GRACE_S = 2.0


def handshake(address: str, security: Any = None, timeout: float | None = None) -> dict:
    """Dask's ``identity`` of the scheduler at ``address``, asked with one
    deadline for connecting, the handshake and the answer together.

    Raises :class:`NotAScheduler` (one line) when nothing listens there, when
    the listener does not answer within ``timeout`` seconds (default
    :func:`connect_timeout`), or answers something that is not a Dask
    scheduler (a web server, a Dask worker): without it, ``Client`` waits
    forever on a listener that never answers and runs out of memory reading
    an HTTP reply as a Dask frame length."""
    timeout = connect_timeout() if timeout is None else timeout
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="boardsweep-handshake") as pool:
        found = pool.submit(asyncio.run, _identity(address, security, timeout))
        try:
            reply = found.result()
        except (asyncio.TimeoutError, TimeoutError):
            raise NotAScheduler(f"no answer to Dask's handshake within {timeout:g} s (Dask's "
                                "distributed.comm.timeouts.connect); is a Dask scheduler listening there?") from None
        except OSError as exc:
            raise NotAScheduler(" ".join(str(exc).split()) or type(exc).__name__) from None
        except Exception as exc:  # noqa: BLE001 - whatever a foreign listener's bytes decode to
            raise NotAScheduler(f"the listener there answered, but not in Dask's protocol ({type(exc).__name__}); "
                                "is it a Dask scheduler, not a web server or the dashboard?") from None
    kind = reply.get("type") if isinstance(reply, dict) else None
    if kind != "Scheduler":
        what = f"a Dask {kind}" if isinstance(kind, str) and kind else "something else"
        raise NotAScheduler(f"that is {what}, not a Dask scheduler; give the scheduler's address "
                            "(it listens on 8786 by default)")
    return reply


async def _identity(address: str, security: Any, timeout: float):
    from distributed.comm import connect as comm_connect

    args = security.get_connection_args("client") if security is not None else {}

    async def ask():
        comm = await comm_connect(address, timeout=timeout, **args)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    # Dask's connect raises its own, more precise error ("Timed out trying to
    # connect ... after N s: ConnectionRefusedError") at ``timeout``; the
    # outer deadline only catches a listener that accepts and then says
    # nothing, so it waits a little longer to never race that error.
    return await asyncio.wait_for(ask(), timeout + _HANDSHAKE_GRACE_S)


#: Seconds between two looks for a worker on a scheduler that has none.
LOOK_EVERY_S = 0.5


def wait_for_workers(client, address: str, timeout: float, on_wait: Callable[[str], None] | None = None) -> None:
    """Return once the scheduler at ``address`` has a worker; meanwhile say so
    through ``on_wait``; raise :class:`NoWorkers` after ``timeout`` seconds."""
    t0 = time.monotonic()
    while not client.nthreads():
        waited = time.monotonic() - t0
        if waited > timeout:
            raise NoWorkers(f"no worker joined the Dask scheduler at {address} within {timeout:g} s; start "
                            f"workers (dask worker {address}) or raise --start-timeout; nothing was computed")
        if on_wait:
            on_wait(f"waiting for workers at {address}: none has joined yet; start some with `dask worker "
                    f"{address}`, or Ctrl-C stops ({waited:.0f} s of {timeout:g} s)")
        time.sleep(LOOK_EVERY_S)




def scheduler_client(stack: ExitStack, target: Target):
    """A client of the scheduler at ``target.scheduler`` (closed by ``stack``),
    once it has a worker; :class:`SchedulerLost` where it cannot be reached."""
    from distributed import Client

    try:
        client = Client(target.scheduler, timeout=connect_timeout(), security=target.security)
    except (OSError, TimeoutError) as exc:
        raise SchedulerLost(f"cannot reach the Dask scheduler at {target.scheduler}: {one_line(exc)}") from None
    stack.enter_context(client)
    wait_for_workers(client, target.scheduler, target.start_timeout, target.on_wait)
    return client
