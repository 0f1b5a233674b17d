"""A real Prometheus scraping a real node-exporter for the whole test session.

Load with ``pytest_plugins = ["fixtures_prometheus"]`` in ``tests/conftest.py`` (or
``-p fixtures_prometheus`` with ``tests/`` on ``PYTHONPATH``).

* ``prometheus_url``: the base URL of a Prometheus started by ``scripts/prometheus.sh`` in a
  temporary directory, on free ports of 127.0.0.1, already scraping node-exporter (``up{job="node"}``
  is 1) and evaluating the always-firing test alert ``DevOpsAgentTestAlwaysFiring``.

When the binaries are missing and cannot be installed (no root, no apt, offline) the tests that
use it skip with the reason, unless ``DEVOPS_AGENT_REQUIRE_PROMETHEUS=1`` (CI), where they fail.
Teardown stops exactly the processes whose PID files the script wrote and waits until they are
gone; these fixtures must not touch any Prometheus they did not start.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

REQUIRE_PROMETHEUS_ENV = "DEVOPS_AGENT_REQUIRE_PROMETHEUS"
SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "prometheus.sh"
START_TIMEOUT_S = 600  # includes apt-get install on a fresh machine
READY_TIMEOUT_S = 60  # Prometheus hands static targets to the scraper after ~5 s


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    # Field 3, after the parenthesized command name, is the state; Z = exited, not yet reaped.
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def stop_processes(directory: Path, timeout_s: float = 10.0) -> list[int]:
    """SIGTERM every process named by a ``*.pid`` file in ``directory``, SIGKILL what is left after
    ``timeout_s``; returns the PIDs that are still running afterwards (normally none)."""
    pids = []
    for pid_file in sorted(directory.glob("*.pid")):
        text = pid_file.read_text().strip()
        if text.isdigit():
            pids.append(int(text))
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            if _running(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
        deadline = time.monotonic() + timeout_s
        while any(_running(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
    return [p for p in pids if _running(p)]


def start_prometheus(directory: Path, ports: dict[str, int], alertmanager: bool = False) -> str:
    """Run ``scripts/prometheus.sh`` for ``directory``; returns the URL or raises ``RuntimeError``."""
    env = {
        **os.environ,
        "DEVOPS_AGENT_PROM_PORT": str(ports["prometheus"]),
        "DEVOPS_AGENT_NODE_EXPORTER_PORT": str(ports["node"]),
        "DEVOPS_AGENT_ALERTMANAGER_PORT": str(ports.get("alertmanager", free_port())),
        "DEVOPS_AGENT_PROM_ALERTMANAGER": "1" if alertmanager else "0",
    }
    try:
        proc = subprocess.run(
            ["bash", str(SCRIPT), str(directory)],
            capture_output=True,
            text=True,
            env=env,
            timeout=START_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"scripts/prometheus.sh did not finish within {START_TIMEOUT_S}s") from None
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = " | ".join(proc.stderr.strip().splitlines()[-5:])
        raise RuntimeError(f"scripts/prometheus.sh failed (exit {proc.returncode}): {tail}")
    return lines[-1]


def wait_until_scraping(url: str, timeout_s: float = READY_TIMEOUT_S) -> None:
    """Block until node-exporter has been scraped and the test alert fires; raises ``RuntimeError``."""
    deadline = time.monotonic() + timeout_s
    checks = {
        'up{job="node"} == 1': "node-exporter scraped",
        'ALERTS{alertname="DevOpsAgentTestAlwaysFiring",alertstate="firing"}': "test alert firing",
        # rate() over 30s needs two samples; a few seconds of history keeps range tests meaningful.
        'count_over_time(up{job="node"}[30s]) >= 3': "a few scrapes of history",
    }
    pending = dict(checks)
    with httpx.Client(base_url=url, timeout=5) as client:
        while pending and time.monotonic() < deadline:
            for query in list(pending):
                try:
                    answer = client.get("/api/v1/query", params={"query": query}).json()
                except (httpx.HTTPError, ValueError):
                    continue
                if answer.get("data", {}).get("result"):
                    del pending[query]
            if pending:
                time.sleep(0.5)
    if pending:
        raise RuntimeError(
            f"Prometheus at {url} not ready after {timeout_s}s: waiting for {list(pending.values())}"
        )


@pytest.fixture(scope="session")
def prometheus_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a real Prometheus scraping a real node-exporter, stopped at the end of the session."""
    required = os.environ.get(REQUIRE_PROMETHEUS_ENV) == "1"
    directory = tmp_path_factory.mktemp("prometheus")
    try:
        try:
            url = start_prometheus(directory, {"prometheus": free_port(), "node": free_port()})
        except RuntimeError as exc:
            if shutil.which("prometheus") is None and not required:
                pytest.skip(f"Prometheus not available and not installable here: {exc}")
            pytest.fail(str(exc))
        try:
            wait_until_scraping(url)
        except RuntimeError as exc:
            pytest.fail(f"{exc} (logs in {directory})")
        yield url
    finally:
        left = stop_processes(directory)
        assert not left, f"processes still running after SIGKILL: {left}"
