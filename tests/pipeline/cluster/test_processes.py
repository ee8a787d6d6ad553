"""The cluster path with real processes: the compose topology (a ``dask
scheduler`` and two ``dask worker`` processes on 127.0.0.1, ``boardsweep run
--scheduler``) writes the same store, bit for bit, as the embedded
LocalCluster; TLS end to end; the embedded cluster listens on loopback only."""

from __future__ import annotations

import shutil
import subprocess
import sys

import psutil
import pytest

from localdask import assert_bitwise_equal, done_count, finish, local_dask, start_client, toy_delay, wait_for
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from clirun import run_cli  # tests/support is on sys.path (conftest)
from specs import spec_toml  # tests/support is on sys.path

# A real game (the compose runner's quickstart, shrunk): 4 grid points x 2 tasks.
MONOPOLY_SPEC = spec_toml(
    "monopoly", name="cluster", seed=20240601,
    params={"chance_deck": "standard", "tally": "per_roll", "jail_strategy": "long"},
    grid={"dice_sides": [4, 6], "deck_policy": ["independent", "shuffled_cycle"]},
    run={"replicates": 4, "games": 2, "players": 1, "turns": 3000}, checkpoints={"count": 4},
    tasks={"replicates_per_task": 2},
)


def test_compose_topology_matches_local_cluster(tmp_path, write_spec):
    """``boardsweep run SPEC --scheduler tcp://127.0.0.1:P`` on separately
    started scheduler/worker processes == the embedded LocalCluster run."""
    spec_path = write_spec(MONOPOLY_SPEC)
    remote = tmp_path / "remote.zarr"
    with local_dask(tmp_path / "logs", workers=2) as cluster:
        proc = start_client(tmp_path, "run", str(spec_path), "--scheduler", cluster.address,
                            "--store", str(remote), real=True)
        rc, out, err = finish(proc)
        assert rc == 0, f"{out}\n{err}\n{cluster.log_text()}"
        assert "workers: 2" in out and "store complete" in out
        # the work really ran on the separate worker processes
        with cluster.client() as client:
            assert len(client.scheduler_info()["workers"]) == 2
    local = tmp_path / "local.zarr"
    report = run_sweep(parse_spec(MONOPOLY_SPEC), str(local), workers=2)
    assert report.complete
    assert_bitwise_equal(remote, local)


def _openssl(*args: str, cwd) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture
def certificates(tmp_path):
    """A throwaway CA and one certificate for 127.0.0.1 signed by it (openssl CLI)."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make test certificates")
    d = tmp_path / "tls"
    d.mkdir()
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
             "-subj", "/CN=boardsweep test CA", cwd=d)
    _openssl("req", *ec, "-keyout", "node.key", "-out", "node.csr", "-subj", "/CN=127.0.0.1", cwd=d)
    (d / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _openssl("x509", "-req", "-in", "node.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "node.pem", "-days", "2", "-extfile", "ext.cnf", cwd=d)
    return {"ca": d / "ca.pem", "cert": d / "node.pem", "key": d / "node.key"}


def test_tls_scheduler_and_worker(tmp_path, certificates, toy_spec_text, write_spec, cluster2):
    """A TLS-only scheduler and worker; the client needs --tls-* to reach it."""
    spec_path = write_spec(toy_spec_text)
    url = tmp_path / "tls.zarr"
    tls_args = ["--tls-ca-file", str(certificates["ca"]), "--tls-cert", str(certificates["cert"]),
                "--tls-key", str(certificates["key"])]
    with local_dask(tmp_path / "logs", workers=1, tls=certificates) as cluster:
        assert cluster.address.startswith("tls://127.0.0.1:")
        # without certificates: refused before anything runs, one line, exit 2
        rc, out, err = finish(start_client(tmp_path, "run", str(spec_path), "--scheduler",
                                           cluster.address, "--store", str(url)))
        assert rc == 2 and err.strip().count("\n") == 0 and "--tls-ca-file" in err, err
        rc, out, err = finish(start_client(tmp_path, "run", str(spec_path), "--scheduler", cluster.address,
                                           "--store", str(url), *tls_args))
        assert rc == 0, f"{out}\n{err}\n{cluster.log_text()}"
        assert "store complete" in out
    reference = tmp_path / "reference.zarr"
    run_sweep(parse_spec(toy_spec_text), str(reference), scheduler=cluster2)
    assert_bitwise_equal(url, reference, names=["counts", "events", "rolls", "done", "exact_frequency"])


def test_tls_options_come_together(tmp_path, toy_spec_text, write_spec, certificates, capsys):
    spec_path = str(write_spec(toy_spec_text))
    tls = {"--tls-ca-file": str(certificates["ca"]), "--tls-cert": str(certificates["cert"]),
           "--tls-key": str(certificates["key"])}
    assert run_cli("run", spec_path, "--scheduler", "tls://127.0.0.1:1", "--tls-ca-file", tls["--tls-ca-file"]) == 2
    assert "missing --tls-cert, --tls-key" in capsys.readouterr().err
    assert run_cli("run", spec_path, *(x for kv in tls.items() for x in kv)) == 2
    assert "give --scheduler tls://HOST:PORT" in capsys.readouterr().err
    assert run_cli("run", spec_path, "--scheduler", "tls://127.0.0.1:1") == 2
    assert "uses TLS: give --tls-ca-file" in capsys.readouterr().err
    assert not (tmp_path / "results").exists()


def _listening(pids) -> list[tuple[int, str, int]]:
    found = []
    for pid in pids:
        try:
            conns = psutil.Process(pid).net_connections(kind="inet")
        except psutil.NoSuchProcess:
            continue
        found += [(pid, c.laddr.ip, c.laddr.port) for c in conns if c.status == psutil.CONN_LISTEN]
    return found


@pytest.mark.parametrize("processes", [False, True], ids=["threads", "processes"])
def test_embedded_cluster_listens_on_loopback_only(tmp_path, toy_spec_text, write_spec, processes):
    """Scheduler, nannies, workers and dashboards of ``boardsweep run``'s own
    LocalCluster bind 127.0.0.1 and nothing else, and the printed dashboard
    link names 127.0.0.1 (observed from outside while
    the run is under way), with its workers as threads of the client's
    process (the default) or as processes."""
    spec_path = write_spec(toy_spec_text)
    url = tmp_path / "s.zarr"
    slow, delay = toy_delay(tmp_path, 0.3)
    proc = start_client(tmp_path, "run", str(spec_path), "--store", str(url), "--workers", "2",
                        env={**slow, "DASK_BOARDSWEEP__PROCESSES": str(processes)})
    try:
        wait_for(lambda: done_count(url) >= 2 or proc.poll() is not None, what="first task")
        assert proc.poll() is None, proc.communicate()
        tree = psutil.Process(proc.pid)
        sockets = _listening([proc.pid, *(p.pid for p in tree.children(recursive=True))])
        delay.unlink()  # observed: the rest at full speed
    finally:
        rc, out, err = finish(proc)
    assert rc == 0, f"{out}\n{err}"
    # processes: scheduler, dashboard and two workers at least; threads talk in-process (inproc://),
    # so only the web servers listen: the dashboard and the two workers'
    assert len(sockets) >= (4 if processes else 3), sockets
    assert {ip for _, ip, _ in sockets} == {"127.0.0.1"}, sockets
    assert "dashboard: http://127.0.0.1:" in out


FIRST_VISIT = """
import sys, urllib.error, urllib.request
from distributed import Client
from boardsweep.pipeline.cluster.dashboard import dashboard_link
from boardsweep.pipeline.cluster.embedded import embedded_cluster
with embedded_cluster(1) as cluster, Client(cluster) as client:
    base = dashboard_link(client).rsplit("/", 1)[0]
    print("before", "bokeh" in sys.modules)
    for path in ["/status", "/", "/workers", "/no-such-page"]:
        try:
            with urllib.request.urlopen(base + path, timeout=60) as page:
                print(path, page.status, page.url[len(base):], "bokeh" in page.read().decode().lower())
        except urllib.error.HTTPError as exc:
            print(path, exc.code)
    print("after", "bokeh" in sys.modules)
"""


def test_dashboard_pages_load_on_the_first_visit(tmp_path):
    """The embedded cluster's scheduler imports no Bokeh until someone opens
    the dashboard; the first visit then gets Dask's pages (after one
    redirect to the same address), ``/`` leads to ``/status``, and an
    unknown page is a 404 rather than a redirect loop."""
    out = subprocess.run([sys.executable, "-c", FIRST_VISIT], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n") == ["before False", "/status 200 /status True", "/ 200 /status True",
                                      "/workers 200 /workers True", "/no-such-page 404", "after True", ""]
