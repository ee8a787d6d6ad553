"""The dashboard of a cluster started here: where it listens, its link, its
Bokeh pages added on the first visit, its web servers' logs, and the path of
Dask's performance report."""

from __future__ import annotations

import logging
from pathlib import Path

from ..errors import BadDashboardAddress

__all__ = ["dashboard_address", "check_dashboard_address", "dashboard_link", "pages_on_first_visit",
           "route_web_logs", "performance_report_path", "WEB_LOGGERS"]

def check_dashboard_address(address: str | None, option: str = "--dashboard-address") -> None:
    """Raise :class:`BadDashboardAddress` (one line, before anything starts)
    unless ``address`` is None or ``[HOST]:PORT`` with a port from 0 to 65535
    and a host this machine can listen on (a port in use is left to Dask,
    which then picks a free one and says so)."""
    import socket

    if address is None:
        return
    host, colon, port = str(address).rpartition(":")
    if not colon:
        host, port = "", str(address)
    host = host.strip("[]")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise BadDashboardAddress(f"{option} {address!r}: expected [HOST]:PORT with a port from 0 to 65535, "
                                  "e.g. :8787 or 127.0.0.1:8787")
    try:
        infos = socket.getaddrinfo(host or "127.0.0.1", 0, type=socket.SOCK_STREAM)
        family, kind, proto, _, where = infos[0]
        with socket.socket(family, kind, proto) as probe:
            probe.bind(where)
    except OSError as exc:
        raise BadDashboardAddress(f"{option} {address!r}: cannot listen on host {host!r} here "
                                  f"({' '.join(str(exc).split())}); give an address of this machine, "
                                  "e.g. :8787 or 0.0.0.0:8787") from None



def configured_dashboard() -> str | None:
    """Dask's ``distributed.scheduler.dashboard.address``, when configured."""
    import dask.config

    value = dask.config.get("distributed.scheduler.dashboard.address", None)
    return str(value) if value not in (None, "") else None


def dashboard_address(given: str | None = None) -> str:
    """Where the embedded cluster's dashboard listens: ``given``, else Dask's
    configuration, else a free port on 127.0.0.1.  A bare port (``8787`` or
    ``:8787``) listens on 127.0.0.1, like the rest of the embedded cluster;
    ``0.0.0.0:8787`` listens on every interface."""
    address = given or configured_dashboard()
    if not address:
        return "127.0.0.1:0"
    host, _, port = address.rpartition(":")
    return f"{host or '127.0.0.1'}:{port}"


#: Loggers of the dashboard's web servers, which Dask sends to stderr on its own.
WEB_LOGGERS = ("tornado", "tornado.access", "tornado.application", "tornado.general", "bokeh")


def route_web_logs() -> None:
    """Send the dashboard's web-server messages (Bokeh and tornado: a browser
    tab that disconnects early logs a long traceback) to the application's log
    when it has one (``boardsweep -v``, or a script's ``logging`` setup), and
    nowhere otherwise: never into a run's output."""
    configured = bool(logging.getLogger().handlers)
    for name in WEB_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers = [] if configured else [logging.NullHandler()]
        logger.propagate = configured


def performance_report_path(url: str, folder: Path | None) -> str:
    """``STORE.performance.html`` beside a local store (``results/x.zarr`` ->
    ``results/x.performance.html``); a store behind a URL: in the working folder.

    ``folder``: the store's local folder, as the store answers it
    (``boardsweep.pipeline.store.local_root(url)``), ``None`` for object storage.
    """
    name = Path(url.rstrip("/")).name.removesuffix(".zarr") + ".performance.html"
    if folder is None:
        return str(Path(name).resolve())
    return str(folder.expanduser().resolve().with_name(name))


def dashboard_link(client) -> str:
    """The link to the dashboard of ``client``'s scheduler ('' if none).

    Dask's own, except for a scheduler whose workers talk in-process
    (``inproc://``, :func:`embedded_cluster`): its address names the
    machine's IP, where nothing listens, so the link names the address its
    web server is bound to (127.0.0.1 when it listens on every interface).
    Dask's ``distributed.dashboard.link`` template applies either way (a
    Jupyter proxy's, for example)."""
    from distributed.utils import format_dashboard_link

    scheduler = getattr(getattr(client, "cluster", None), "scheduler", None)
    server = getattr(scheduler, "http_server", None)
    if not str(getattr(scheduler, "address", "")).startswith("inproc://") or not getattr(server, "port", None):
        return client.dashboard_link or ""
    host = str(server.address)
    return format_dashboard_link("127.0.0.1" if host in ("", "0.0.0.0", "::") else host, server.port)


def pages_on_first_visit(scheduler) -> None:
    """Serve the dashboard's Bokeh pages from the first request for them.

    Until then, a stand-in answers every address the scheduler's web server
    does not serve itself (``/status``, ``/workers``, ...): it adds Dask's
    pages (:func:`distributed.dashboard.scheduler.connect`), steps aside,
    and redirects the browser to the address it asked for, which the pages
    now serve (or answer 404)."""
    from tornado import web

    routing = scheduler.http_application

    class FirstVisit(web.RequestHandler):
        def get(self, *args) -> None:
            if stand_in in routing.applications:  # one attach, whichever request comes first
                routing.applications.remove(stand_in)
                import distributed.dashboard.scheduler as pages

                # on the scheduler's event loop (tornado handlers run there): Bokeh's server takes that loop
                pages.connect(routing, scheduler.http_server, scheduler, prefix="/")
            self.redirect(self.request.uri)

        head = get

    stand_in = web.Application([(r"/.*", FirstVisit)])
    routing.add_application(stand_in)


