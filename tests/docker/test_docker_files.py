"""docker/: compose.yaml runs commands the installed CLIs accept, publishes
ports on 127.0.0.1 only and shares the results volume; the Dockerfile copies
paths that exist, takes its base image as an argument and installs from a
wheelhouse when there is one; requirements.lock pins exactly what is installed.

No Docker engine is needed: commands are validated with the click commands
themselves (``make_context`` parses and converts every option and argument
without running anything).  That the topology works is tested with real
processes in tests/pipeline/cluster/test_processes.py and test_faults.py, and with real
containers by docker/test-compose.sh (tests/docker/test_compose_script.py).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from importlib.metadata import PackageNotFoundError, distribution, entry_points
from pathlib import Path

import click
import pytest
import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
INTERPOLATION = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}")


def interpolate(value, env: dict):
    """Compose's ${VAR}/${VAR:-default} substitution, applied to every string."""
    if isinstance(value, str):
        return INTERPOLATION.sub(lambda m: env.get(m.group(1)) or (m.group(2) or ""), value)
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    return value


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())


def services(compose: dict, env: dict | None = None) -> dict:
    return interpolate(compose["services"], env or {})


def dask_command(name: str) -> click.Command:
    for ep in entry_points(group="dask_cli"):
        if ep.name == name:
            return ep.load()
    raise AssertionError(f"`dask {name}` is not an installed dask CLI command")


def validate(argv: list[str]) -> click.Context:
    """Parse ``argv`` with the click command it names; raises on any bad option."""
    program, *args = argv
    if program == "dask":
        sub, *rest = args
        return dask_command(sub).make_context(f"dask {sub}", list(rest))
    if program == "boardsweep":
        from boardsweep.pipeline.cli.commands import cli

        sub, *rest = args
        assert sub in cli.commands, f"boardsweep has no command {sub!r}"
        return cli.commands[sub].make_context(f"boardsweep {sub}", list(rest))
    raise AssertionError(f"unexpected program {program!r} in compose.yaml")


def test_topology(compose):
    svc = services(compose)
    assert set(svc) == {"scheduler", "worker", "runner"}
    assert len({s["image"] for s in svc.values()}) == 1
    assert svc["worker"]["deploy"]["replicas"] >= 2
    for name in ("worker", "runner"):
        assert "results:/results" in svc[name]["volumes"], name
    assert "results" in compose["volumes"]


@pytest.mark.parametrize("name", ["scheduler", "worker", "runner"])
def test_every_command_is_accepted_by_the_installed_cli(compose, name):
    argv = services(compose)[name]["command"]
    ctx = validate(argv)
    params = ctx.params
    if name == "scheduler":
        assert params["port"] == "8786" and params["dashboard_address"] == ":8787"
    if name == "worker":
        assert params["nthreads"] == 1
        assert ctx.params["scheduler"] == "tcp://scheduler:8786"
    if name == "runner":
        assert params["scheduler"] == "tcp://scheduler:8786"
        assert params["store_url"].startswith("/results/")


@pytest.mark.parametrize("sweep", ["quickstart", "pe84", "stats102a", "nightly"])
def test_runner_spec_exists_and_parses(compose, sweep):
    from boardsweep.pipeline.spec.parse import load_spec

    env = {} if sweep == "quickstart" else {"SWEEP": sweep}
    ctx = validate(services(compose, env)["runner"]["command"])
    spec_path = ROOT / ctx.params["spec_path"]  # the image's WORKDIR holds sweeps/, like the repository root
    assert spec_path.is_file()
    assert load_spec(spec_path).name == sweep
    assert ctx.params["store_url"] == f"/results/{sweep}.zarr"


def test_bad_commands_are_caught():
    with pytest.raises(click.UsageError):
        validate(["dask", "worker", "tcp://scheduler:8786", "--nthread", "1"])
    with pytest.raises(click.UsageError):
        validate(["boardsweep", "run", "sweeps/quickstart.toml", "--schedular", "tcp://scheduler:8786"])
    with pytest.raises(click.BadParameter):
        validate(["dask", "worker", "tcp://scheduler:8786", "--nthreads", "one"])


def test_ports_published_on_loopback_only(compose):
    for name, svc in services(compose).items():
        for port in svc.get("ports", []):
            assert isinstance(port, str) and port.startswith("127.0.0.1:"), (name, port)
    assert services(compose)["scheduler"]["ports"] == ["127.0.0.1:8786:8786", "127.0.0.1:8787:8787"]


def test_healthcheck_is_valid_python(compose):
    test = services(compose)["scheduler"]["healthcheck"]["test"]
    assert test[:3] == ["CMD", "python", "-c"]
    compile(test[3], "<healthcheck>", "exec")


def context_allowlist() -> list[str]:
    """The paths .dockerignore lets into the build context (its ``!`` lines)."""
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    assert "*" in [x.strip() for x in lines], ".dockerignore must keep everything out by default"
    return [x[1:].strip() for x in lines if x.startswith("!")]


def test_dockerfile_copies_existing_paths_and_installs_the_lock():
    text = (DOCKER / "Dockerfile").read_text()
    allowed = context_allowlist()
    for path in allowed:
        assert (ROOT / path).exists(), f".dockerignore lets in {path}, which does not exist"
    for source in ("pyproject.toml", "setup.py", "README.md", "__init__.py", "__main__.py",
                   "core", "pipeline", "sweeps", "docker/wheelhouse", "docker/requirements.lock",
                   "docker/warm_numba.py"):
        assert source in allowed, f"{source} is not in the build context"
    copies = re.findall(r"^COPY\s+(.+)$", text, flags=re.M)
    assert "COPY . /tmp/src" in text
    for line in copies:
        if line.startswith("--from="):
            continue  # from the build stage, not the context
        *sources, _dest = line.split()
        for source in sources:
            assert source == "." or any(source == a or source.startswith(a + "/") for a in allowed), source
            assert (ROOT / source).exists(), source
    assert "pip install -r /tmp/requirements.lock" in text
    assert "pip install --no-deps /tmp/src" in text
    build = yaml.safe_load((DOCKER / "compose.yaml").read_text())["x-boardsweep"]["build"]
    assert (DOCKER / build["context"] / build["dockerfile"]).resolve() == (DOCKER / "Dockerfile").resolve()


def test_dockerfile_base_image_wheelhouse_user_init():
    """The base is a build argument (public slim image by default, used by both
    stages); a wheelhouse switches pip to --no-index; non-root; dumb-init is
    PID 1 and is pinned; the revision argument reaches setup.py; numba's cache
    is warmed as the user that runs the kernels."""
    text = (DOCKER / "Dockerfile").read_text()
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert lines[0].startswith("ARG BASE_IMAGE=python:3.11")
    froms = [line for line in lines if line.startswith("FROM ")]
    assert len(froms) == 2 and all(line.split()[1] == "${BASE_IMAGE}" for line in froms)
    assert "no-index = true" in text and "find-links = /tmp/wheelhouse" in text
    assert 'BOARDSWEEP_REVISION="$BOARDSWEEP_REVISION"' in text
    user = lines.index("USER sweep")
    warm = lines.index("RUN python /opt/warm_numba.py")
    assert user < warm and warm == len(lines) - 1 and "NUMBA_CACHE_DIR=/opt/numba-cache" in text
    assert 'ENTRYPOINT ["dumb-init", "--"]' in lines
    assert re.search(r"^dumb-init==", (DOCKER / "requirements.lock").read_text(), flags=re.M)
    assert (DOCKER / "wheelhouse" / "README.md").is_file()  # COPY docker/wheelhouse needs the folder


def test_compose_file_works_with_compose_v1_and_v2(compose):
    """No top-level ``name:`` (Compose v1 rejects it); only keys both accept."""
    assert set(compose) - {"services", "volumes", "networks"} <= {"x-boardsweep"}
    for name, svc in services(compose).items():
        assert "image" in svc and "build" in svc, name


def test_compose_settings_are_interpolated(compose):
    env = {"BOARDSWEEP_IMAGE": "bs:test", "BOARDSWEEP_SCHEDULER_PORT": "18786",
           "BOARDSWEEP_DASHBOARD_PORT": "18787", "BOARDSWEEP_SWEEPS": "/tmp/specs", "SWEEP": "nightly"}
    svc = services(compose, env)
    assert {s["image"] for s in svc.values()} == {"bs:test"}
    assert svc["scheduler"]["ports"] == ["127.0.0.1:18786:8786", "127.0.0.1:18787:8787"]
    assert "/tmp/specs:/app/sweeps:ro" in svc["runner"]["volumes"]
    assert svc["runner"]["command"][2] == "sweeps/nightly.toml"


@pytest.mark.skipif(shutil.which("docker-compose") is None, reason="docker-compose (v1) not installed")
def test_docker_compose_v1_accepts_the_file():
    """Compose v1's own schema check; needs no Docker engine."""
    out = subprocess.run(["docker-compose", "-p", "boardsweep", "-f", str(DOCKER / "compose.yaml"), "config", "-q"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr


def _runtime_closure() -> dict[str, str]:
    """name -> installed version of every runtime dependency of boardsweep."""
    found: dict[str, str] = {}

    def key(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    def walk(name: str, extras: frozenset = frozenset()) -> None:
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            return
        marker = (key(name), extras)
        if marker in seen:
            return
        seen.add(marker)
        if key(name) != "boardsweep":
            found[key(name)] = dist.version
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in {"", *extras}):
                walk(req.name, frozenset(req.extras))

    seen: set = set()
    walk("boardsweep")
    return found


def test_requirements_lock_pins_the_installed_runtime():
    pins = {}
    for line in (DOCKER / "requirements.lock").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    closure = _runtime_closure()
    missing = sorted(set(closure) - set(pins))
    assert not missing, f"runtime dependencies not pinned in docker/requirements.lock: {missing}"
    wrong = {n: (pins[n], v) for n, v in closure.items() if pins[n] != v}
    assert not wrong, f"pinned vs installed: {wrong} (regenerate docker/requirements.lock)"


def test_readme_mentions_what_the_lead_links(tmp_path):
    text = (DOCKER / "README.md").read_text()
    for needle in ("docker compose -p boardsweep -f docker/compose.yaml up", "docker-compose",
                   "wheelhouse", "BASE_IMAGE", "test-compose.sh", "--scheduler", "dask-jobqueue",
                   "Kubernetes", "--tls-ca-file", "boardsweep verify", "127.0.0.1"):
        assert needle in text, needle
    assert os.path.exists(ROOT / ".github" / "workflows" / "nightly.yml")
