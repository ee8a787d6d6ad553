"""``--scheduler`` at something that is not a working Dask scheduler ends in
one line, exit 1, within Dask's connect timeout, before the store is made:
a real listener that accepts and never answers, one that answers like a web
server, a real Dask worker; and a real scheduler with no workers says that it waits for
them and gives up after ``--start-timeout``.

Each client is a subprocess (``finish`` kills it if it overruns: a hang fails
the test instead of stalling the suite).
"""

from __future__ import annotations

import socket
import threading

import pytest

from localdask import finish, start_client

#: Dask's connect timeout for the listener that never answers.
TIMEOUT = {"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"}


class _Listener:
    """A real TCP listener on 127.0.0.1; ``reply`` is written back after the
    first bytes a connection sends (None: it never writes a byte)."""

    def __init__(self, reply: bytes | None) -> None:
        self.reply, self.stop, self.conns = reply, threading.Event(), []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()
        self.address = f"tcp://127.0.0.1:{self.server.getsockname()[1]}"

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn = self.server.accept()[0]
            except (TimeoutError, OSError):
                continue
            self.conns.append(conn)
            if self.reply is not None:
                conn.recv(65536)
                conn.sendall(self.reply)

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        for conn in self.conns:
            conn.close()
        self.server.close()


@pytest.fixture
def silent_listener():
    """A listener that accepts connections and never answers."""
    listener = _Listener(None)
    yield listener.address
    listener.close()


@pytest.fixture
def http_server():
    """A listener that answers like a web server given bytes that are not HTTP
    (a 400 reply: what a dashboard port or a proxy says)."""
    listener = _Listener(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n"
                         b"Connection: close\r\n\r\nBad Request")
    yield listener.address
    listener.close()


def _run(tmp_path, write_spec, toy_spec_text, address, *extra, env=None):
    url = tmp_path / "store.zarr"
    proc = start_client(tmp_path, "run", str(write_spec(toy_spec_text)), "--store", str(url),
                        "--scheduler", address, *extra, env=env)
    rc, out, err = finish(proc, timeout=90)
    return rc, out, err.strip().splitlines(), url


def test_a_listener_that_never_answers_is_refused_within_the_connect_timeout(tmp_path, write_spec, toy_spec_text,
                                                                           silent_listener):
    rc, out, err, url = _run(tmp_path, write_spec, toy_spec_text, silent_listener, env=TIMEOUT)
    assert rc == 1 and len(err) == 1, err
    assert err[0].startswith(f"boardsweep: error: cannot reach the Dask scheduler at {silent_listener}: "), err
    assert "no answer to Dask's handshake within 1 s" in err[0] and "nothing was created" in err[0], err
    assert not url.exists()


def test_an_http_server_is_refused_in_one_line(tmp_path, write_spec, toy_spec_text, http_server):
    rc, out, err, url = _run(tmp_path, write_spec, toy_spec_text, http_server)
    assert rc == 1 and len(err) == 1, err
    assert "not in Dask's protocol" in err[0] and http_server in err[0], err
    assert not url.exists()


def test_a_worker_address_is_refused_as_not_a_scheduler(tmp_path, write_spec, toy_spec_text):
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, processes=False, protocol="tcp://", host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster:
        worker = next(iter(cluster.scheduler_info["workers"]))
        rc, out, err, url = _run(tmp_path, write_spec, toy_spec_text, worker)
    assert rc == 1 and len(err) == 1, err
    assert "that is a Dask Worker, not a Dask scheduler" in err[0], err
    assert not url.exists()


def test_a_scheduler_without_workers_says_so_and_gives_up(tmp_path, write_spec, toy_spec_text):
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=False, protocol="tcp://", host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster:
        address = cluster.scheduler_address
        rc, out, err, url = _run(tmp_path, write_spec, toy_spec_text, address, "--start-timeout", "1")
    assert f"waiting for workers at {address}" in out and "Ctrl-C stops" in out, out
    assert rc == 1 and len(err) == 1, err
    assert err[0] == (f"boardsweep: error: no worker joined the Dask scheduler at {address} within 1 s; start "
                      f"workers (dask worker {address}) or raise --start-timeout; nothing was computed"), err
