"""The MCP endpoint the service mounts at /mcp/: the official ``mcp`` client over Streamable HTTP
against a real uvicorn, with the service's own tokens; each user sees only their own sessions."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import mcp_types as t
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from api_harness import Service, running_service, scripted
from devops_agent.config import Settings

pytestmark = pytest.mark.slow


def mcp_call(svc: Service, token: str | None, action: Any, path: str = "/mcp/") -> Any:
    """Run ``action(client)`` in an MCP session at the service's endpoint, as ``token``'s holder."""

    async def go() -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            transport = streamable_http_client(svc.url + path, http_client=http)
            async with Client(transport, mode="legacy") as client:
                return await action(client)

    return asyncio.run(go())


async def tool_names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


def text(result: t.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, t.TextContent))


def test_an_mcp_client_lists_tools_with_a_token_and_is_refused_without(store_url: str) -> None:
    with running_service(store_url) as svc:
        names = mcp_call(svc, svc.tokens["alice"], tool_names)
        assert {"investigate", "search_memory", "probe"} <= names
        assert "restart" not in names, "mutating tools are off unless server.mcp_allow_mutating"
        # /mcp without the slash too (clients are often configured so; a redirect would lose the POST)
        assert "probe" in mcp_call(svc, svc.tokens["vic"], tool_names, path="/mcp"), "a viewer may read"
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        for token in (None, "dat_not-a-token", svc.tokens["am"]):  # none, unknown, an alerting system's
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            refused = httpx2.post(svc.url + "/mcp/", json=listing, headers=headers, timeout=30)
            assert refused.status_code == 401, (token, refused.text)
        with pytest.raises(ExceptionGroup) as refused_client:  # the client's task group re-raises
            mcp_call(svc, None, tool_names)
        assert refused_client.group_contains(MCPError), "the client sees the server's refusal"


def test_mcp_sessions_belong_to_their_user(store_url: str) -> None:
    """A tool call over MCP is recorded in a session of the caller's; another user neither lists
    nor reads it (over MCP or REST), an admin does."""
    with running_service(store_url) as svc:

        async def probe(client: Client) -> tuple[t.CallToolResult, list[str]]:
            result = await client.call_tool("probe", {"name": "disk"})
            return result, [str(r.uri) for r in (await client.list_resources()).resources]

        result, alice_sees = mcp_call(svc, svc.tokens["alice"], probe)
        assert not result.is_error, text(result)
        assert len(alice_sees) == 1
        uri = alice_sees[0]
        session_id = uri.rsplit("/", 1)[1]
        with svc.client("alice") as alice, svc.client("bob") as bob:
            assert alice.get(f"/v1/sessions/{session_id}").status_code == 200
            assert bob.get(f"/v1/sessions/{session_id}").status_code == 404

        async def look(client: Client) -> tuple[list[str], str]:
            listed = [str(r.uri) for r in (await client.list_resources()).resources]
            try:
                read = await client.read_resource(uri)
            except MCPError as exc:
                return listed, f"error: {exc}"
            return listed, "".join(c.text for c in read.contents if isinstance(c, t.TextResourceContents))

        bob_lists, bob_reads = mcp_call(svc, svc.tokens["bob"], look)
        assert uri not in bob_lists
        assert bob_reads.startswith("error:"), bob_reads
        assert "no session" in bob_reads, bob_reads
        carol_lists, carol_reads = mcp_call(svc, svc.tokens["carol"], look)
        assert uri in carol_lists, "an admin sees everyone's sessions"
        assert "probe" in carol_reads


def test_an_mcp_investigation_is_a_run_of_its_user_under_their_limit(store_url: str) -> None:
    """``investigate`` over /mcp starts one of the service's runs: the user's, counted in /metrics,
    and refused over the user's limit of concurrent runs like any other."""
    sleepy = scripted(turns=[{"tool_calls": [{"tool": "wait_sleep"}]}, {"text": "slept"}])
    settings = Settings(database_url=store_url, server={"max_runs_per_user": 1})
    with running_service(store_url, model=sleepy, settings=settings) as svc, svc.client("alice") as alice:
        busy = alice.post("/v1/runs", json={"question": "wait"}).json()

        async def investigate(client: Client) -> t.CallToolResult:
            return await client.call_tool("investigate", {"question": "is the disk full?"})

        refused = mcp_call(svc, svc.tokens["alice"], investigate)
        assert refused.is_error
        assert "already has 1 runs going (limit 1)" in text(refused)
        assert alice.post(f"/v1/runs/{busy['run_id']}/cancel").json()["cancelled"] is True
        svc.wait_run("alice", busy["run_id"])
        tokens = svc.tokens
    quick = scripted(turns=[{"text": "The disk has room."}])
    with (
        running_service(store_url, model=quick, users={}, tokens=tokens) as svc,
        svc.client("alice") as alice,
    ):
        done = mcp_call(svc, svc.tokens["alice"], investigate)
        assert not done.is_error, text(done)
        assert "The disk has room." in text(done)
        mine = {s["title"] for s in alice.get("/v1/sessions").json()["items"]}
        assert mine == {"wait", "is the disk full?"}
        with svc.client("bob") as bob:
            assert bob.get("/v1/sessions").json()["total"] == 0
        metrics = alice.get("/metrics").text
        assert 'devops_agent_runs_started_total{path="model"} 1.0' in metrics
