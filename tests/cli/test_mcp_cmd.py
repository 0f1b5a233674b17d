"""``devops-agent mcp list|tools|call`` and MCP in ``doctor``, as a user runs them (subprocesses,
a real ops server process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures_cli import cli as run_cli
from fixtures_mcp import OPS_SERVER

pytestmark = pytest.mark.slow


@pytest.fixture
def cli(tmp_path: Path) -> object:
    config = tmp_path / "devops-agent.toml"
    config.write_text(
        f'data_dir = "{tmp_path / "data"}"\n'
        "[mcp]\nproject_file = false\n"
        "[mcp.servers.ops]\n"
        f"command = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(OPS_SERVER))}]\ntimeout_s = 30\n"
        "[mcp.servers.stuck]\n"
        f'command = {json.dumps(sys.executable)}\nargs = ["-c", "import time; time.sleep(60)"]\ntimeout_s = 1.5\n'
    )
    env: dict[str, str | None] = {"DEVOPS_AGENT_DATABASE_URL": None, "DEVOPS_AGENT_CONFIG": str(config)}

    def run(
        *args: str, extra_env: dict[str, str] | None = None, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, env={**env, **(extra_env or {})}, stdin=stdin, cwd=tmp_path)

    return run


def test_mcp_list_and_tools_show_states_and_ratings(cli: object) -> None:
    listed = cli("mcp", "list", "--json")  # type: ignore[operator]
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["ops"]["state"] == "ready"
    assert rows["ops"]["breaker"] == "closed"
    assert rows["stuck"]["state"] == "down"
    assert rows["stuck"]["error"] == "did not start within 1.5s"
    ratings = {t["tool"]: t["rating"] for t in rows["ops"]["tool_list"]}
    assert ratings["service_status"] == "read-only"
    assert ratings["wipe_cache"] == "destructive"
    assert ratings["add_note"] == "changes"
    assert ratings["restart_service"] == "destructive"
    assert ratings["fetch_url"] == "changes"
    table = cli("mcp", "list")  # type: ignore[operator]
    assert table.returncode == 0, table.stderr
    assert "ops" in table.stdout
    assert "stuck" in table.stdout
    assert "down" in table.stdout
    tools = cli("mcp", "tools", "ops", "--json")  # type: ignore[operator]
    assert tools.returncode == 0, tools.stderr
    by_name = {t["name"]: t for t in json.loads(tools.stdout)}
    assert by_name["ops_fetch_url"]["why"] == "annotated read-only but open-world: it may send data out"


def test_mcp_call_goes_through_modes_approvals_and_audit(cli: object) -> None:
    ok = cli("mcp", "call", "ops", "service_status", "--args", '{"service": "api"}')  # type: ignore[operator]
    assert ok.returncode == 0, ok.stderr
    assert "api: running" in ok.stdout
    refused = cli("mcp", "call", "ops", "restart_service", "--args", '{"service": "api"}')  # type: ignore[operator]
    assert refused.returncode == 1
    assert "not available in ask mode" in refused.stderr
    destructive = ["mcp", "call", "ops", "ops_wipe_cache", "--args", '{"path": "/tmp/c"}', "--mode", "agent"]
    no_confirm = cli(*destructive, "--yes")  # type: ignore[operator]
    assert no_confirm.returncode == 2
    assert "--yes --confirm CONFIRM" in no_confirm.stderr
    done = cli(*destructive, "--yes", "--confirm", "CONFIRM", "--approver", "carol")  # type: ignore[operator]
    assert done.returncode == 0, done.stderr
    assert "wiped /tmp/c" in done.stdout
    audit = cli("audit", "--json")  # type: ignore[operator]
    entries = {(a["tool"], a["outcome"], a["actor"]) for a in json.loads(audit.stdout)}
    assert ("ops_wipe_cache", "executed", "carol") in entries
    assert ("ops_restart_service", "rejected", "policy") in entries


def test_mcp_call_errors_name_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from devops_agent.cli.app import app

    config = tmp_path / "c.toml"
    config.write_text(
        f'data_dir = "{tmp_path / "data"}"\n[mcp]\nproject_file = false\n[mcp.servers.ops]\n'
        f"command = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(OPS_SERVER))}]\ntimeout_s = 30\n"
    )
    monkeypatch.setenv("DEVOPS_AGENT_CONFIG", str(config))

    def run(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(app, list(args))
        return result.exit_code, result.stderr

    code, err = run("mcp", "call", "ops", "nope")
    assert code == 2
    assert "offers no tool 'nope'" in err
    assert "service_status" in err, "the hint lists the server's tools"
    code, err = run("mcp", "call", "ghost", "x")
    assert code == 2
    assert "no MCP server named 'ghost'" in err
    code, err = run("mcp", "call", "ops", "service_status", "--args", "[1]")
    assert code == 2
    assert "give a JSON object" in err


def test_doctor_reports_each_server(cli: object) -> None:
    env = {
        "DEVOPS_AGENT_MCP__SERVERS__GONE__COMMAND": "/nonexistent/mcp-server",
        "DEVOPS_AGENT_MCP__SERVERS__NEEDS__COMMAND": "x",
        "DEVOPS_AGENT_MCP__SERVERS__NEEDS__ARGS": '["${NOT_SET_ANYWHERE}"]',
    }
    doctor = cli("doctor", "--json", extra_env=env)  # type: ignore[operator]
    checks = {c["name"]: c for c in json.loads(doctor.stdout)}
    assert checks["mcp ops"]["level"] == "ok"
    assert "11 tools" in checks["mcp ops"]["detail"]
    assert checks["mcp stuck"]["level"] == "warn", "runs go on without a server that does not start"
    assert "runs go on without it" in checks["mcp stuck"]["hint"]
    assert checks["mcp gone"]["level"] == "warn"
    assert checks["mcp needs"]["level"] == "fail", "a server that cannot be configured fails doctor"
    assert "NOT_SET_ANYWHERE is not set" in checks["mcp needs"]["detail"]
    assert doctor.returncode == 1


def test_no_server_configured_is_a_clear_error(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEVOPS_AGENT_CONFIG")}
    proc = subprocess.run(
        [sys.executable, "-m", "devops_agent", "mcp", "list"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "no MCP server is configured" in proc.stderr
    assert "docs/mcp.md" in proc.stderr


def test_chat_preloads_the_servers_and_names_those_that_did_not_start(cli: object) -> None:
    done = cli("chat", stdin="/exit\n")  # type: ignore[operator]
    assert done.returncode == 0, done.stderr
    assert "MCP servers ready: ops" in done.stderr
    assert "MCP server stuck unavailable: did not start within 1.5s" in done.stderr
