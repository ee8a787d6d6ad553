"""The dashboard of the cluster ``boardsweep run`` starts: where it listens
(``--dashboard-address``, else Dask's ``distributed.scheduler.dashboard.address``),
Dask's performance report beside the store, and the web servers' messages
kept out of the run's output (they go to the ``-v`` log)."""

from __future__ import annotations

import logging

import pytest

from localdask import finish, free_port, start_client
from boardsweep.pipeline.cluster.dashboard import WEB_LOGGERS
from boardsweep.pipeline.cluster.client import route_web_logs


def _said(out: str) -> str:
    """The output without whitespace: rich wraps long lines, paths included, at the terminal's width."""
    return "".join(out.split())


def test_dashboard_address_option_and_performance_report(tmp_path, toy_spec_text, write_spec):
    port = free_port()
    url = tmp_path / "res" / "dash.zarr"
    rc, out, err = finish(start_client(tmp_path, "run", str(write_spec(toy_spec_text)), "--store", str(url),
                                       "--workers", "1", "--dashboard-address", f":{port}",
                                       "--performance-report"))
    assert rc == 0, f"{out}\n{err}"
    assert f"dashboard:http://127.0.0.1:{port}/status" in _said(out), out  # a bare port stays on loopback
    report = tmp_path / "res" / "dash.performance.html"
    assert f"performancereport:{report}" in _said(out), out
    text = report.read_text()
    assert "<html" in text.lower() and "Dask Performance Report" in text
    assert not err.strip(), err


def test_dask_configuration_sets_the_dashboard_address(tmp_path, toy_spec_text, write_spec):
    port = free_port()
    rc, out, err = finish(start_client(tmp_path, "run", str(write_spec(toy_spec_text)), "--store",
                                       str(tmp_path / "s.zarr"), "--workers", "1",
                                       env={"DASK_DISTRIBUTED__SCHEDULER__DASHBOARD__ADDRESS": f"127.0.0.1:{port}"}))
    assert rc == 0, f"{out}\n{err}"
    assert f"dashboard:http://127.0.0.1:{port}/status" in _said(out), out


@pytest.fixture
def bare_root(monkeypatch):
    """Returns a function that makes the root logger as in a plain ``boardsweep
    run`` (no -v): no handlers.  Called in the test's body, since pytest adds
    its capture handlers to the root logger for each phase."""
    saved = {name: (logging.getLogger(name).handlers[:], logging.getLogger(name).propagate) for name in WEB_LOGGERS}

    def bare() -> logging.Logger:
        root = logging.getLogger()
        monkeypatch.setattr(root, "handlers", [])
        return root

    yield bare
    for name, (handlers, propagate) in saved.items():
        logging.getLogger(name).handlers, logging.getLogger(name).propagate = handlers, propagate


def _browser_gone() -> None:
    """What tornado logs when a dashboard tab disconnects early."""
    try:
        raise ConnectionResetError("Stream is closed")
    except ConnectionResetError:
        logging.getLogger("tornado.application").error("Uncaught exception GET /status/ws", exc_info=True)


def test_web_server_errors_stay_out_of_the_runs_output(bare_root, capfd):
    import dask.config
    from distributed.config import initialize_logging

    bare_root()
    initialize_logging(dask.config.config)  # Dask's own setup: its stderr handler on tornado.application
    _browser_gone()
    assert "Stream is closed" in capfd.readouterr().err  # what a run printed before
    route_web_logs()
    _browser_gone()
    assert capfd.readouterr().err == ""


def test_web_server_errors_go_to_the_verbose_log(bare_root, capsys):
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    bare_root().handlers = [Keep()]  # what `boardsweep -v` sets up (logging.basicConfig)
    route_web_logs()
    _browser_gone()
    assert [r.name for r in records] == ["tornado.application"] and records[0].exc_info
