"""``devops-agent serve`` and ``devops-agent users`` as a person runs them: tokens shown once and
stored hashed, the server answering real clients, OpenTelemetry traces over OTLP (one trace per
run, a span per tool call) received by a real OTLP/HTTP endpoint, and a SIGTERM that ends cleanly."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from devops_agent.cli.app import app as cli_app

pytestmark = pytest.mark.slow


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "devops_agent", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", **env},
        timeout=120,
        check=False,
    )


def test_users_are_added_with_a_token_shown_once_and_stored_hashed(tmp_path: Path) -> None:
    env = {"DEVOPS_AGENT_HOME": str(tmp_path)}
    added = cli("users", "add", "alice", "--role", "operator", env=env)
    assert added.returncode == 0, added.stderr
    token = added.stdout.strip()
    assert token.startswith("dat_")
    assert len(token) > 40
    assert "shown once" in added.stderr
    listed = cli("users", "list", "--json", env=env)
    (user,) = json.loads(listed.stdout)
    assert (user["name"], user["role"]) == ("alice", "operator")
    assert token not in listed.stdout
    db = (tmp_path / "devops-agent.db").read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.glob("*.db-wal")
    )
    assert token.encode() not in db, "the token itself is stored nowhere"
    assert hashlib.sha256(token.encode()).hexdigest().encode() in db
    again = cli("users", "add", "alice", env=env)
    assert again.returncode == 2
    assert "already exists" in again.stderr
    bad_role = cli("users", "add", "bob", "--role", "root", env=env)
    assert bad_role.returncode == 2
    assert "viewer" in bad_role.stderr
    assert cli("users", "remove", "alice", env=env).returncode == 0
    gone = cli("users", "remove", "alice", env=env)
    assert gone.returncode == 2
    assert "no user 'alice'" in gone.stderr


def test_serve_names_the_extra_to_install_when_it_is_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import typer.main

    from devops_agent.cli import serve_cmd

    monkeypatch.setattr(serve_cmd, "missing_server_modules", lambda: ["uvicorn"])
    code = typer.main.get_command(cli_app).main(["serve"], standalone_mode=False)
    assert code == 2
    err = capsys.readouterr().err
    assert "pip install 'devops-agent[server]'" in err
    assert "uvicorn" in err


class _Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP traces endpoint: keeps every span it is sent."""

    spans: list[Any] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest.FromString(body)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                self.spans.extend(scope.spans)
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def otlp() -> Iterator[str]:
    _Receiver.spans = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_serve_answers_clients_and_exports_one_trace_per_run(tmp_path: Path, otlp: str) -> None:
    env = {"DEVOPS_AGENT_HOME": str(tmp_path)}
    token = cli("users", "add", "alice", "--role", "operator", env=env).stdout.strip()
    port = _free_port()
    server_env = {
        **os.environ,
        **env,
        "OTEL_EXPORTER_OTLP_ENDPOINT": otlp,
        "OTEL_BSP_SCHEDULE_DELAY": "200",
        "DEVOPS_AGENT_MODEL__NAME": "scripted",  # the built-in script: three host tools, then an answer
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "devops_agent", "serve", "--port", str(port)],
        env=server_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(url + "/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "serve did not start"
            time.sleep(0.2)
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, headers=headers, timeout=30) as c:
            run = c.post("/v1/runs", json={"question": "is this host healthy?"}).json()
            for _ in range(300):
                if c.get(f"/v1/runs/{run['run_id']}").json()["status"] != "running":
                    break
                time.sleep(0.1)
            events = c.get(f"/v1/runs/{run['run_id']}/events").json()["events"]
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, stderr = proc.communicate(timeout=60)
    # 143 = 128 + SIGTERM: the CLI's exit code for a command ended by SIGTERM, after a clean shutdown.
    assert proc.returncode == 143, stderr
    assert "Traceback" not in stderr
    assert events[-1]["status"] == "completed"
    tools = [e["tool"] for e in events if e["type"] == "tool_result"]
    assert len(tools) == 3
    (run_span,) = [s for s in _Receiver.spans if s.name == "run"]
    tool_spans = [s for s in _Receiver.spans if s.name.startswith("tool ")]
    assert sorted(s.name.removeprefix("tool ") for s in tool_spans) == sorted(tools)
    assert all(s.trace_id == run_span.trace_id for s in tool_spans), "one trace per run"
    assert all(s.parent_span_id == run_span.span_id for s in tool_spans)
    attributes = {a.key: a.value.string_value for a in run_span.attributes}
    assert attributes["devops_agent.run_id"] == run["run_id"]
    access = [
        json.loads(line) for line in stderr.splitlines() if line.startswith('{"ts"') and '"access"' in line
    ]
    assert any(a["path"] == "/v1/runs" and a["status"] == 202 and a["user"] == "alice" for a in access)
    assert token not in stderr


def test_serve_help_explains_tokens_and_settings_and_the_config_file_is_read(tmp_path: Path) -> None:
    """A new user learns from --help how to get a token and where the settings go; the [server]
    table of devops-agent.toml in the working directory is what serve listens by."""
    env = {"DEVOPS_AGENT_HOME": str(tmp_path)}
    helped = cli("serve", "--help", env=env)
    assert helped.returncode == 0, helped.stderr
    for needed in ("users add NAME", "[server]", "DEVOPS_AGENT_SERVER__PORT", "/mcp", "resumable"):
        assert needed in helped.stdout, needed
    port = _free_port()
    (tmp_path / "devops-agent.toml").write_text(f"[server]\nport = {port}\nauth = true\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "devops_agent", "serve"],
        cwd=tmp_path,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/v1/me", timeout=5)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline, "serve did not listen on the configured port"
                time.sleep(0.2)
        assert answer.status_code == 401, "auth is on: no token, no answer"
        assert "users add" in answer.json()["hint"]
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, stderr = proc.communicate(timeout=60)
    assert "no users yet" in stderr, "serve says how to make the first user"
    assert f"serving on http://127.0.0.1:{port}" in stderr
