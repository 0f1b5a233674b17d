"""DevOps Agent as an MCP server, driven by the official ``mcp`` Python client over stdio and
Streamable HTTP (``devops-agent mcp serve`` in a subprocess), in both protocol generations: the
handshake-era one (``mode="legacy"``) and 2026-07-28 (``mode="auto"`` picks it)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as t
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from devops_agent.store import Store

pytestmark = pytest.mark.slow
TOKEN = "mcp-test-token-8f2c1d"


def server_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DEVOPS_AGENT_DATABASE_URL"}
    env["DEVOPS_AGENT_HOME"] = str(tmp_path / "data")
    env["DEVOPS_AGENT_PRIVACY__NER"] = "off"
    env["DEVOPS_AGENT_SAFETY__SANDBOX"] = "off"  # the sandbox has its own tests
    return env


def stdio(tmp_path: Path, *flags: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "devops_agent", "mcp", "serve", *flags],
        env=server_env(tmp_path),
        cwd=str(tmp_path),
    )


class Elicitation:
    """The client's user: answers each elicitation with ``answers`` in turn, recording the forms."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.asked: list[t.ElicitRequestFormParams] = []

    async def __call__(self, ctx: Any, params: Any) -> t.ElicitResult:
        self.asked.append(params)
        answer = self.answers.pop(0)
        if answer is None:
            return t.ElicitResult(action="decline")
        return t.ElicitResult(action="accept", content={"answer": answer})


def text(result: t.CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, t.TextContent)
    return first.text


def audit(tmp_path: Path) -> set[tuple[str, str, str]]:
    with Store(f"sqlite:///{tmp_path / 'data' / 'devops-agent.db'}") as store:
        return {(a.tool, a.outcome, a.actor) for a in store.list_audit(limit=100)}


def test_stdio_read_only_server_tools_prompts_and_resources(tmp_path: Path) -> None:
    async def go() -> None:
        async with Client(stdio(tmp_path), mode="legacy") as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            for name in ("investigate", "search_knowledge", "search_memory", "system_memory", "logs_errors"):
                assert name in tools
            assert all(tool.annotations and tool.annotations.read_only_hint for tool in tools.values()), (
                "without --allow-mutating only read-only tools are offered"
            )
            assert "shell_run" not in tools
            assert "k8s_delete_pod" not in tools
            memory = await client.call_tool("system_memory", {})
            assert not memory.is_error
            assert json.loads(text(memory))["status"] == "success"
            refused = await client.call_tool("shell_run", {"command": "touch x"})
            assert refused.is_error
            assert "without --allow-mutating" in text(refused)
            recalled = await client.call_tool("search_memory", {"query": "disk full"})
            assert json.loads(text(recalled))["status"] == "no_data"

            prompts = {p.name: p for p in (await client.list_prompts()).prompts}
            assert "host-health" in prompts
            prompt = await client.get_prompt("host-health", {"question": "is web-1 healthy?"})
            body = prompt.messages[0].content
            assert isinstance(body, t.TextContent)
            assert "is web-1 healthy?" in body.text
            assert 'runbooks=["host-health"]' in body.text

            report = await client.call_tool(
                "investigate", {"question": "Is this host healthy?", "runbooks": ["host-health"]}
            )
            assert not report.is_error, text(report)
            assert "## Summary" in text(report)
            session_id = text(report).rsplit("session ", 1)[1].split(" ", 1)[0]
            listed = [str(r.uri) for r in (await client.list_resources()).resources]
            assert f"devops-agent://reports/{session_id}" in listed
            assert f"devops-agent://sessions/{session_id}" in listed
            read = await client.read_resource(f"devops-agent://reports/{session_id}")
            content = read.contents[0]
            assert isinstance(content, t.TextResourceContents)
            assert "## Summary" in content.text
            session = json.loads(
                (await client.read_resource(f"devops-agent://sessions/{session_id}")).contents[0].text  # type: ignore[union-attr]
            )
            assert session["status"] == "completed"
            assert session["tool_calls"], "the investigation's tool calls are in the session"
            templates = (await client.list_resource_templates()).resource_templates
            assert {x.uri_template for x in templates} == {
                "devops-agent://sessions/{session_id}",
                "devops-agent://reports/{session_id}",
            }

    asyncio.run(go())
    assert ("system_memory", "executed", "policy") in audit(tmp_path)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_stdio_mutating_tools_need_the_client_users_approval(tmp_path: Path, mode: str) -> None:
    target = tmp_path / "work"
    target.mkdir()
    (target / "old").mkdir()
    user = Elicitation(True, "CONFIRM", None)

    async def go() -> None:
        async with Client(
            stdio(tmp_path, "--allow-mutating"), mode=mode, elicitation_callback=user
        ) as client:
            assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
            tools = {tool.name: tool.annotations for tool in (await client.list_tools()).tools}
            shell = tools["shell_run"]
            assert shell is not None
            assert (shell.read_only_hint, shell.destructive_hint, shell.open_world_hint) == (
                False,
                True,
                True,
            )
            assert tools["system_memory"].read_only_hint is True  # type: ignore[union-attr]
            touched = await client.call_tool("shell_run", {"command": f"touch {target / 'made'}"})
            assert not touched.is_error, text(touched)
            assert user.asked[0].requested_schema["properties"]["answer"]["type"] == "boolean"
            removed = await client.call_tool("shell_run", {"command": f"rm -rf {target / 'old'}"})
            assert not removed.is_error, text(removed)
            assert "type CONFIRM" in user.asked[1].message, "a destructive call asks for CONFIRM"
            declined = await client.call_tool("shell_run", {"command": f"touch {target / 'declined'}"})
            assert declined.is_error
            assert "denied this call" in text(declined)

    asyncio.run(go())
    assert (target / "made").exists()
    assert not (target / "old").exists()
    assert not (target / "declined").exists()
    entries = audit(tmp_path)
    assert ("shell_run", "executed", "mcp:mcp-client") in entries
    assert ("shell_run", "denied", "mcp:mcp-client") in entries


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "devops_agent",
            "mcp",
            "serve",
            "--http",
            f"127.0.0.1:{port}",
            "--allow-mutating",
        ],
        env={**server_env(tmp_path), "DEVOPS_AGENT_MCP_TOKEN": TOKEN},
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"mcp serve --http exited: {(tmp_path / 'serve.log').read_text()}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()


def test_http_needs_the_token_and_asks_approval_by_elicitation(http_server: str, tmp_path: Path) -> None:
    no_token = httpx2.post(http_server, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=30)
    assert no_token.status_code == 401
    target = tmp_path / "made-over-http"

    async def session(mode: str, user: Elicitation | None) -> list[t.CallToolResult]:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            transport = streamable_http_client(http_server, http_client=http)
            async with Client(transport, mode=mode, elicitation_callback=user) as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                assert {"investigate", "shell_run", "system_memory"} <= names
                read = await client.call_tool("system_memory", {})
                wrote = await client.call_tool("shell_run", {"command": f"touch {target}"})
                return [read, wrote]

    read, refused = asyncio.run(session("legacy", None))
    assert not read.is_error
    assert refused.is_error
    assert "cannot ask its user" in text(refused), "no elicitation: refused, not run"
    assert not target.exists()
    for mode in ("legacy", "auto"):
        user = Elicitation(True)
        _read, wrote = asyncio.run(session(mode, user))
        assert not wrote.is_error, text(wrote)
        assert len(user.asked) == 1
        assert target.exists()
        target.unlink()
    entries = audit(tmp_path)
    assert ("shell_run", "executed", "mcp:token") in entries
    assert ("shell_run", "denied", "policy") in entries


def test_http_on_a_public_address_needs_a_token(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "devops_agent", "mcp", "serve", "--http", "0.0.0.0:8765"],
        env=server_env(tmp_path), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "needs a bearer token" in proc.stderr


def test_a_forged_approval_for_other_arguments_is_not_taken(tmp_path: Path) -> None:
    """2026 sessions carry the approval in the retried call; it counts only for the call it was
    asked about: the sealed request_state names the tool and its arguments."""
    from devops_agent.mcp_server.approval import seal, unseal

    state = seal("shell_run", {"command": "touch a"})
    assert unseal(state, "shell_run", {"command": "touch a"})
    assert not unseal(state, "shell_run", {"command": "rm -rf /"})
    assert not unseal(state, "docker_rm", {"command": "touch a"})
    assert not unseal(state + "x", "shell_run", {"command": "touch a"})
    assert not unseal(state, "shell_run", {"command": "touch a"}, now=time.time() + 3600), "expired"
    assert not unseal(None, "shell_run", {"command": "touch a"})


def test_the_http_app_mounts_in_another_app_with_its_users_and_roles(tmp_path: Path) -> None:
    """How the service (``serve``) hosts the endpoint: mounted beside its own routes, its lifespan
    entered in the service's, its users behind the TokenAuth protocol; a viewer may only read."""
    import contextlib
    import threading

    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Mount, Route

    from devops_agent.config import Settings
    from devops_agent.mcp_server.http import Principal, mcp_http_app
    from devops_agent.mcp_server.server import AgentMcpServer

    class Users:
        tokens = {"tok-ops": Principal("olga", frozenset({"operator"})), "tok-view": Principal("vic")}

        def authenticate(self, token: str) -> Principal | None:
            return self.tokens.get(token)

    settings = Settings(data_dir=tmp_path / "data", privacy={"ner": "off"}, safety={"sandbox": "off"})
    store = Store.from_settings(settings)
    mcp = mcp_http_app(AgentMcpServer(settings, store, allow_mutating=True), auth=Users(), path="/")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        async with mcp.lifespan():
            yield

    async def health(request: Any) -> PlainTextResponse:
        return PlainTextResponse("ok")

    app = Starlette(routes=[Route("/health", health), Mount("/mcp", app=mcp.app)], lifespan=lifespan)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    target = tmp_path / "made-by-olga"
    try:
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)

        async def as_user(token: str) -> tuple[set[str], t.CallToolResult]:
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
                transport = streamable_http_client(f"http://127.0.0.1:{port}/mcp/", http_client=http)
                async with Client(transport, mode="legacy", elicitation_callback=Elicitation(True)) as client:
                    names = {tool.name for tool in (await client.list_tools()).tools}
                    return names, await client.call_tool("shell_run", {"command": f"touch {target}"})

        viewer_tools, viewer_call = asyncio.run(as_user("tok-view"))
        assert "shell_run" not in viewer_tools
        assert "system_memory" in viewer_tools
        assert viewer_call.is_error
        assert "vic may not change things" in text(viewer_call)
        assert not target.exists()
        operator_tools, operator_call = asyncio.run(as_user("tok-ops"))
        assert "shell_run" in operator_tools
        assert not operator_call.is_error, text(operator_call)
        assert target.exists()
        assert httpx2.get(f"http://127.0.0.1:{port}/health", timeout=10).text == "ok"
    finally:
        server.should_exit = True
        thread.join(20)
        store.close()
    with Store.from_settings(settings) as again:
        entries = {(a.tool, a.outcome, a.actor) for a in again.list_audit(limit=20)}
    assert ("shell_run", "executed", "mcp:olga") in entries


def test_the_mcp_inspector_cli_drives_our_server(tmp_path: Path, npm_bin: Path) -> None:
    """The MCP inspector's CLI mode (installed by scripts/mcp_servers.sh; it runs offline) as a
    third-party client of ``devops-agent mcp serve``."""
    # The inspector gives the server it starts only a default environment, not its own: the
    # agent's settings travel as -e options (else the server opens the user's real data dir).
    env = server_env(tmp_path)
    passed = [f"-e{key}={value}" for key, value in env.items() if key.startswith("DEVOPS_AGENT_")]
    serve = [*passed, sys.executable, "-m", "devops_agent", "mcp", "serve"]

    def inspect(*args: str) -> Any:
        proc = subprocess.run(
            # The server's start (Python, our imports) took over the default 15 s on a loaded machine.
            [str(npm_bin / "mcp-inspector"), "--cli", "--connect-timeout", "120000", *serve, *args],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=180, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout)

    tools = {tool["name"]: tool for tool in inspect("--method", "tools/list")["tools"]}
    assert tools["system_memory"]["annotations"]["readOnlyHint"] is True
    assert "shell_run" not in tools
    called = inspect("--method", "tools/call", "--tool-name", "search_memory", "--tool-arg", "query=disk")
    assert called["structuredContent"]["status"] == "no_data"
    prompts = {p["name"] for p in inspect("--method", "prompts/list")["prompts"]}
    assert "host-health" in prompts
    assert (tmp_path / "data").is_dir(), "the server kept to the test's data dir"
