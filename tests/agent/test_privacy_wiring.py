"""Review of the privacy guard's wiring into the agent loop: paths by which text reached the model.

Each test is a full scripted-model run with the guard on (the canary's recording model, a real
SQLite vault, and a real MCP server process where MCP matters); every request the model receives
is searched for the values that must not reach it.
"""

from __future__ import annotations

import asyncio
import base64
import sys
from pathlib import Path
from typing import Any

import pytest
from fastmcp.client.transports.stdio import StdioTransport
from pydantic_ai.mcp import MCPToolset

from devops_agent.agent.scripted import Script
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.privacy import Anonymizer
from devops_agent.store import Store
from devops_agent.tools.base import SPEC_KEY, ToolResult, ToolsetBuilder, ToolSpec
from devops_agent.tools.registry import ToolRegistry
from fixtures_canary import DB_HOST, EMAIL, KEY, TOOL_PASSWORD, RecordingModel

MCP_HOST = "billing-db-7.canary-corp.example"
MCP_OWNER = "mcp.owner@canary-corp.example"
NOTES = f"notes: host {MCP_HOST} password={TOOL_PASSWORD}"
PICTURE = b"\x89PNG\r\n\x1a\n" + f"dashboard of {MCP_HOST}".encode() + bytes(range(256))

# A real MCP server (stdio), written out by the tests that need it: a tool described in the server's
# own words (host, owner), and a tool answering with a text resource sent as a base64 blob and an image.
MCP_SERVER = f'''
import base64
from mcp.server.mcpserver import MCPServer
from mcp.types import BlobResourceContents, EmbeddedResource, ImageContent, TextContent

server = MCPServer("wiring")


@server.tool(description="Query the billing database on {MCP_HOST}; owner {MCP_OWNER}.")
def billing_query(sql: str) -> str:
    return "1 row"


@server.tool()
def customer_notes(customer_id: str) -> list:
    """A customer's notes and dashboard."""
    notes = base64.b64encode({NOTES.encode()!r}).decode()
    picture = base64.b64encode({PICTURE!r}).decode()
    return [
        TextContent(type="text", text="attached"),
        EmbeddedResource(
            type="resource",
            resource=BlobResourceContents(uri="file:///notes.txt", mimeType="text/plain", blob=notes),
        ),
        ImageContent(type="image", mimeType="image/png", data=picture),
    ]


if __name__ == "__main__":
    server.run()
'''


def guarded(store_url: str) -> Settings:
    return Settings(database_url=store_url, privacy={"enabled": "on", "hmac_key": KEY})


def auth_registry(received: list[dict[str, Any]]) -> ToolRegistry:
    def build(settings: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("auth")

        @ts.tool(read_only=True)
        def auth_log(pattern: str) -> ToolResult:
            """Search the auth log."""
            received.append({"pattern": pattern})
            return ToolResult.ok(
                {"lines": ["Accepted publickey for jdoe42 from bastion"], "by_user": {"jdoe42": 3}}
            )

        @ts.tool(read_only=True)
        def auth_ping() -> ToolResult:
            """Whether the auth service answers."""
            received.append({})
            return ToolResult.ok("pong")

        return ts

    registry = ToolRegistry()
    registry.add_toolset("auth", build)
    return registry


def mcp_server(tmp_path: Path) -> MCPToolset[Any]:
    source = tmp_path / "wiring_server.py"
    source.write_text(MCP_SERVER)
    spec = ToolSpec(category="mcp", read_only=True).model_dump()
    return MCPToolset(StdioTransport(sys.executable, [str(source)])).with_metadata(**{SPEC_KEY: spec})  # type: ignore[return-value]


def assert_not_sent(model: RecordingModel, *values: str) -> str:
    sent = "\n".join(model.requests)
    for value in values:
        i = sent.find(value)
        assert i < 0, f"{value!r} reached the model: …{sent[max(0, i - 200) : i + 80]}…"
    return sent


@pytest.mark.parametrize("earlier", ["offline runbook", "guard off"])
def test_an_answer_given_earlier_in_the_session_without_the_guard_is_masked(
    store_url: str, earlier: str
) -> None:
    """A session can go on with a hosted model after an offline report or a local model's answer;
    those answers hold the identifiers in clear and must not reach the hosted model."""
    question = f"errors in the payment service on {DB_HOST}? ask {EMAIL}"
    with Store(store_url) as store:
        if earlier == "offline runbook":
            first = SessionService(guarded(store_url), store, use_configured_model=False)
        else:
            local = RecordingModel(Script.model_validate({"turns": [{"text": "You asked: {prompt}"}]}))
            settings = Settings(database_url=store_url, privacy={"enabled": "off"})
            first = SessionService(settings, store, model=local)
        _events, done = asyncio.run(first.run(question))
        assert done.status == "completed"
        assert DB_HOST in (done.output or ""), "the earlier answer names the host"
        (session,) = store.list_sessions()
        model = RecordingModel(Script.model_validate({"turns": [{"text": "noted"}]}))
        service = SessionService(guarded(store_url), store, model=model)
        _events, final = asyncio.run(service.run("and what next?", session_id=session.id))
    assert final.status == "completed"
    sent = assert_not_sent(model, DB_HOST, EMAIL)
    placeholder = Anonymizer(KEY.encode(), session.id).placeholder
    assert placeholder("HOST", DB_HOST) in sent, "the earlier answer is there, masked"


def test_a_value_masked_in_an_earlier_run_stays_masked_in_a_form_no_recognizer_knows(
    store_url: str,
) -> None:
    """Each run has a new guard; the values behind the stored history's placeholders are known to
    it too, so ``Accepted publickey for jdoe42`` in the second run does not unmask ``jdoe42``."""
    received: list[dict[str, Any]] = []
    script = Script.model_validate(
        {
            "runs": [
                [{"text": "noted"}],
                [
                    {"tool_calls": [{"tool": "auth_log", "args": {"pattern": "publickey"}}]},
                    {"text": "{results}"},
                ],
            ]
        }
    )
    model = RecordingModel(script)
    with Store(store_url) as store:
        session = store.create_session(title="two runs", mode="ask", model="scripted")
        for prompt in ("Is user=jdoe42 locked out?", "What does the auth log say?"):
            service = SessionService(guarded(store_url), store, registry=auth_registry(received), model=model)
            _events, final = asyncio.run(service.run(prompt, session_id=session.id))
            assert final.status == "completed"
    assert received == [{"pattern": "publickey"}]
    sent = assert_not_sent(model, "jdoe42")
    user = Anonymizer(KEY.encode(), session.id).placeholder("USERNAME", "jdoe42")
    assert f"publickey for {user} from" in sent
    assert f'"{user}":3' in sent, "a result keyed by a masked value has the key masked too"
    assert "jdoe42" in (final.output or ""), "the user sees it restored"


def test_a_result_keyed_by_a_value_the_run_masked_masks_the_key(store_url: str) -> None:
    """``{"jdoe42": 3}``: an identifier-shaped key is a field name unless the session masked it."""
    received: list[dict[str, Any]] = []
    script = Script.model_validate(
        {"turns": [{"tool_calls": [{"tool": "auth_log", "args": {"pattern": "x"}}]}, {"text": "{results}"}]}
    )
    model = RecordingModel(script)
    with Store(store_url) as store:
        service = SessionService(guarded(store_url), store, registry=auth_registry(received), model=model)
        _events, final = asyncio.run(service.run("Who is user=jdoe42?"))
    assert final.status == "completed"
    sent = assert_not_sent(model, "jdoe42")
    assert '"by_user":{"<<USERNAME_' in sent
    assert '"lines":' in sent, "field names stay"


def test_mcp_blobs_are_masked_as_text_and_images_withheld(store_url: str, tmp_path: Path) -> None:
    """An MCP resource sent as a base64 blob would carry its text past every recognizer (a model
    reads base64); an image cannot be masked at all."""
    script = Script.model_validate(
        {
            "turns": [
                {"tool_calls": [{"tool": "customer_notes", "args": {"customer_id": "42"}}]},
                {"text": "{results}"},
            ]
        }
    )
    model = RecordingModel(script)
    with Store(store_url) as store:
        service = SessionService(
            guarded(store_url), store, model=model, extra_toolsets=[mcp_server(tmp_path)]
        )
        _events, final = asyncio.run(service.run("What do the notes of customer 42 say?"))
    assert final.status == "completed"
    encoded = (base64.b64encode(NOTES.encode()).decode(), base64.b64encode(PICTURE).decode())
    sent = assert_not_sent(model, MCP_HOST, TOOL_PASSWORD, *(e[:40] for e in encoded))
    assert "notes: host <<HOST_" in sent
    assert "password=[REDACTED_SECRET]" in sent
    assert "image/png content of" in sent
    assert "withheld" in sent


def test_mcp_tool_descriptions_are_masked_and_the_tool_still_works(store_url: str, tmp_path: Path) -> None:
    received: list[dict[str, Any]] = []
    script = Script.model_validate(
        {
            "turns": [
                {"tool_calls": [{"tool": "billing_query", "args": {"sql": "select 1"}}]},
                {"text": "{results}"},
            ]
        }
    )
    model = RecordingModel(script)
    with Store(store_url) as store:
        service = SessionService(
            guarded(store_url), store, registry=auth_registry(received), model=model,
            extra_toolsets=[mcp_server(tmp_path)],
        )  # fmt: skip
        _events, final = asyncio.run(service.run("How many invoices are there?"))
    assert final.status == "completed"
    sent = assert_not_sent(model, MCP_HOST, MCP_OWNER)
    assert "Query the billing database on <<HOST_" in sent
    assert "billing_query: success: 1 row" in (final.output or "")
    assert "Search the auth log." in sent, "our own tools' descriptions are left as written"


def test_a_tool_without_parameters_runs_when_the_model_adds_keys(store_url: str) -> None:
    """Keys the schema lacks are stripped; for a tool with no parameters that is every key (they
    used to reach validation, which bounced the call)."""
    received: list[dict[str, Any]] = []
    with Store(store_url) as store:
        session = store.create_session(title="ping", mode="ask", model="scripted")
        email = Anonymizer(KEY.encode(), session.id).placeholder("EMAIL", EMAIL)
        script = Script.model_validate(
            {
                "turns": [
                    {"tool_calls": [{"tool": "auth_ping", "args": {"cc": email}}]},
                    {"text": "{results}"},
                ]
            }
        )
        model = RecordingModel(script)
        service = SessionService(guarded(store_url), store, registry=auth_registry(received), model=model)
        _events, final = asyncio.run(service.run(f"Is auth up? tell {EMAIL}", session_id=session.id))
    assert final.status == "completed"
    assert received == [{}], "the tool ran, without the smuggled key"
    assert "auth_ping: success: pong" in (final.output or "")


@pytest.mark.parametrize("privacy", ["on", "off"])
def test_evidence_on_the_event_is_masked_as_the_output_is(
    store_url: str, tmp_path: Path, privacy: str
) -> None:
    """A log's template table travels to the viewers on the ``tool_result`` event. With the guard on
    it holds the placeholders the model read, never the host or address; a secret is scrubbed in
    either case (the guard off still scrubs secrets); without the guard the identifiers stay."""
    log = tmp_path / "app.log"
    log.write_text(
        "".join(
            f"2026-11-27T14:0{i}:00Z ERROR login for {EMAIL} to {DB_HOST} failed password={TOOL_PASSWORD}\n"
            for i in range(3)
        )
    )
    script = Script.model_validate(
        {
            "turns": [
                {"tool_calls": [{"tool": "logs_patterns", "args": {"paths": [str(log)]}}]},
                {"text": "done"},
            ]
        }
    )
    settings = Settings(
        database_url=store_url,
        files={"roots": [str(tmp_path)]},
        privacy={"enabled": privacy, "hmac_key": KEY},
    )
    with Store(store_url) as store:
        model = RecordingModel(script)
        service = SessionService(settings, store, model=model)
        events, final = asyncio.run(service.run("what do the logs say?"))
    assert final.status == "completed"
    (result,) = [e for e in events if e.type == "tool_result"]
    assert result.evidence is not None
    assert result.evidence.templates is not None
    (row,) = result.evidence.templates.rows
    shown = result.evidence.model_dump_json()
    assert row.count == 3
    assert TOOL_PASSWORD not in shown
    if privacy == "on":
        assert DB_HOST not in shown
        assert EMAIL not in shown
        host = Anonymizer(KEY.encode(), final.session_id).placeholder("HOST", DB_HOST)
        assert host in row.sample
        assert host in assert_not_sent(model, DB_HOST, EMAIL), "the model read the same placeholder"
    else:
        assert DB_HOST in row.sample
        assert EMAIL in row.sample
