"""MCP servers as tools, with real server processes: our ops server (tests/mcp_servers) and the npm
servers (filesystem, memory, everything). Every call goes through the run pipeline, so ask mode,
approvals, audit, the breaker, the output cap and gaps apply to MCP tools as to ours."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from devops_agent.agent.approvals import ApprovalDecision
from devops_agent.agent.scripted import Script, ScriptedModel
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings, load_settings
from devops_agent.store import Store
from devops_agent.tools import system
from devops_agent.tools.base import ToolResult
from devops_agent.tools.mcp import pool_for
from devops_agent.tools.mcp.pool import McpPool
from devops_agent.tools.registry import ToolRegistry
from fixtures_mcp import OPS_SERVER, hanging, mcp_settings, ops

pytestmark = pytest.mark.slow


def make_pool(
    settings: Settings, pools: list[Any], *, cwd: Path | None = None, backoff_base_s: float = 1.0
) -> McpPool:
    pool = pool_for(settings, cwd=cwd, backoff_base_s=backoff_base_s)
    assert pool is not None
    pools.append(pool)
    return pool


def service_for(settings: Settings, store: Store, pool: McpPool, **kwargs: Any) -> SessionService:
    registry = kwargs.pop("registry", ToolRegistry())  # our tools are not the subject here
    return SessionService(settings, store, registry=registry, use_configured_model=False, mcp=pool, **kwargs)


def call(
    service: SessionService, tool: str, args: dict[str, Any], *, mode: str = "ask", ask: Any = None
) -> ToolResult:
    session = service.store.create_session(title="t", mode=mode, model=None)
    return asyncio.run(service.call_tool(session.id, tool, args, mode=mode, ask=ask))  # type: ignore[arg-type]


async def offered(service: SessionService, mode: str = "ask") -> list[str]:
    """The tool names a run in ``mode`` is offered (after the mode filter)."""
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    from devops_agent.agent.journal import Journal
    from devops_agent.agent.toolbox import RunIds

    run = RunIds("s", "r", mode, Journal(service.store))  # type: ignore[arg-type]
    pipeline = service.toolbox.pipeline(run, approvals="deny", privacy=None)
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    return sorted(await pipeline.get_tools(ctx))


def test_servers_from_our_toml_and_mcp_json_with_prefix_include_exclude(
    tmp_path: Path, pools: list[Any]
) -> None:
    (tmp_path / "devops-agent.toml").write_text(
        f'data_dir = "{tmp_path / "data"}"\n'
        f'database_url = "sqlite:///{tmp_path / "s.db"}"\n'
        "[mcp.servers.ops]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(OPS_SERVER))}]\n"
        'include = ["service_*", "restart_*", "wipe_*"]\nexclude = ["wipe_*"]\nprefix = "o"\ntimeout_s = 30\n'
    )
    (tmp_path / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "ops2": {
                        "command": sys.executable,
                        "args": [str(OPS_SERVER)],
                        "env": {"OPS_LABEL": "${OPS_TEST_LABEL:-from-default}"},
                    }
                }
            }
        )
    )
    settings = load_settings(cwd=tmp_path).settings
    pool = make_pool(settings, pools, cwd=tmp_path)
    with Store.from_settings(settings) as store:
        service = service_for(settings, store, pool)
        agent_tools = asyncio.run(offered(service, "agent"))
        assert [t for t in agent_tools if t.startswith("o_")] == ["o_restart_service", "o_service_status"]
        assert "ops2_ledger_lookup" in agent_tools
        assert "ops2_crash" in agent_tools
        result = call(service, "ops2_service_status", {"service": "api"})
    assert result.status == "success", result
    assert "label from-default" in result.data, "${VAR:-default} was expanded when the server started"
    statuses = {s.name: s for s in pool.status()}
    assert statuses["ops"].source == "config"
    assert statuses["ops2"].source == str(tmp_path / ".mcp.json")


def test_a_variable_that_is_not_set_fails_only_its_server(tmp_path: Path, pools: list[Any]) -> None:
    settings = mcp_settings(tmp_path, {"ops": ops(env={"OPS_LABEL": "${OPS_UNSET_VAR}"}), "fine": ops()})
    pool = make_pool(settings, pools)
    statuses = pool.preload_sync()
    assert statuses["ops"].state == "failed"
    assert "OPS_UNSET_VAR is not set" in (statuses["ops"].error or "")
    assert statuses["fine"].state == "ready"


def test_ask_mode_runs_read_only_tools_and_refuses_the_rest_with_an_audit(
    tmp_path: Path, pools: list[Any]
) -> None:
    settings = mcp_settings(tmp_path, {"ops": ops()})
    pool = make_pool(settings, pools)
    with Store.from_settings(settings) as store:
        service = service_for(settings, store, pool)
        ask_tools = asyncio.run(offered(service, "ask"))
        assert "ops_service_status" in ask_tools
        for hidden in ("ops_restart_service", "ops_wipe_cache", "ops_add_note", "ops_fetch_url"):
            assert hidden not in ask_tools, f"{hidden} offered in ask mode"
        assert call(service, "ops_service_status", {"service": "api"}).status == "success"
        for tool in ("ops_restart_service", "ops_fetch_url"):  # unannotated; read-only but open-world
            refused = call(service, tool, {"service": "api"} if "restart" in tool else {"url": "http://x"})
            assert refused.status == "error"
            assert "not available in ask mode" in (refused.error or "")
        audit = store.list_audit(limit=20)
    outcomes = {(a.tool, a.outcome) for a in audit}
    assert ("ops_restart_service", "rejected") in outcomes
    assert ("ops_service_status", "executed") in outcomes


def test_agent_mode_asks_approval_and_a_destructive_tool_needs_confirm(
    tmp_path: Path, pools: list[Any]
) -> None:
    settings = mcp_settings(tmp_path, {"ops": ops()})
    pool = make_pool(settings, pools)
    asked: list[dict[str, Any]] = []

    def answer(approved: bool) -> Any:
        async def ask(pending: dict[str, Any]) -> ApprovalDecision:
            asked.append(pending)
            return ApprovalDecision(approved, "" if approved else "not now", "alice")

        return ask

    with Store.from_settings(settings) as store:
        service = service_for(settings, store, pool)
        done = call(service, "ops_wipe_cache", {"path": "/var/cache/app"}, mode="agent", ask=answer(True))
        assert done.status == "success"
        assert done.data == "wiped /var/cache/app"
        assert asked[-1]["decision"] == "approve_detailed", "destructive: the approver must type CONFIRM"
        assert asked[-1]["impact"]["what_changes"]
        noted = call(service, "ops_add_note", {"text": "hi"}, mode="agent", ask=answer(True))
        assert noted.status == "success"
        assert asked[-1]["decision"] == "approve", "only adds: a plain approval"
        unannotated = call(
            service, "ops_restart_service", {"service": "api"}, mode="agent", ask=answer(False)
        )
        assert unannotated.status == "error"
        assert "alice denied this call: not now" in (unannotated.error or "")
        assert asked[-1]["decision"] == "approve_detailed", "no annotations: destructive by MCP's defaults"
        without_person = call(service, "ops_add_note", {"text": "x"}, mode="agent")
        assert without_person.status == "error", "no one to ask: refused"
        audit = [(a.tool, a.outcome, a.actor) for a in store.list_audit(limit=50)]
    assert ("ops_wipe_cache", "executed", "alice") in audit
    assert ("ops_restart_service", "denied", "alice") in audit
    assert ("ops_wipe_cache", "pending", "policy") in audit


def scripted_service(
    settings: Settings, store: Store, pool: McpPool, turns: list[dict[str, Any]], **kwargs: Any
) -> SessionService:
    model = ScriptedModel(Script.model_validate({"turns": turns}))
    registry = kwargs.pop("registry", ToolRegistry())
    return SessionService(settings, store, registry=registry, model=model, mcp=pool, **kwargs)


def test_a_server_killed_mid_run_leaves_a_gap_opens_its_breaker_and_is_reconnected(
    tmp_path: Path, pools: list[Any]
) -> None:
    settings = mcp_settings(tmp_path, {"ops": ops()}, privacy={"enabled": "off"})
    pool = make_pool(settings, pools, backoff_base_s=4.0)
    turns = [
        {"tool_calls": [{"tool": "ops_service_status", "args": {"service": "api"}}]},
        {"tool_calls": [{"tool": "ops_crash", "args": {}}]},
        {"tool_calls": [{"tool": "ops_service_status", "args": {"service": "api"}}]},
        {"text": "done\n{results}"},
    ]
    with Store.from_settings(settings) as store:
        service = scripted_service(settings, store, pool, turns)
        events, final = asyncio.run(service.run("is the api up?"))
        results = [e for e in events if e.type == "tool_result"]
        breakers = {b.tool: b for b in store.load_breakers()}
        first_pid = re.search(r"pid (\d+)", str(results[0].summary) + str(final.output))
        assert final.status == "completed", final
        assert [r.status for r in results] == ["success", "error", "error"]
        assert "unavailable" in (results[1].error or "")
        assert "unavailable" in (results[2].error or "")
        output = final.output or ""
        assert "## Not checked" in output, output
        assert "**mcp/ops**" in output
        assert "MCP server ops was unavailable: stopped answering" in output
        assert pool.servers["ops"].status().breaker == "open"
        assert breakers["mcp:ops"].state == "open"
        # The server comes back on its own (backoff), and the next run uses it again.
        deadline = time.monotonic() + 30
        while pool.servers["ops"].state != "ready" and time.monotonic() < deadline:
            time.sleep(0.2)
        assert pool.servers["ops"].connects == 2
        again = call(service_for(settings, store, pool), "ops_service_status", {"service": "api"})
        assert again.status == "success"
        assert first_pid is None or first_pid.group(1) not in again.data, "a new server process"
        assert {b.tool: b.state for b in store.load_breakers()}["mcp:ops"] == "closed"


def test_a_server_that_never_starts_costs_its_timeout_not_the_others(
    tmp_path: Path, pools: list[Any]
) -> None:
    servers = {
        "ops": ops(),
        "stuck": hanging(2.0),
        "stuck2": hanging(2.0),
        "missing": {"command": "/nonexistent/mcp"},
    }
    settings = mcp_settings(tmp_path, servers)
    pool = make_pool(settings, pools)
    started = time.monotonic()
    statuses = pool.preload_sync()
    elapsed = time.monotonic() - started
    assert statuses["ops"].state == "ready"
    assert statuses["stuck"].state == "down"
    assert statuses["stuck"].error == "did not start within 2s"
    assert statuses["missing"].state == "down"
    assert "No such file" in (statuses["missing"].error or "")
    ops_start = (statuses["ops"].start_ms or 0) / 1000
    assert statuses["stuck2"].state == "down"
    # in parallel: the slowest of (ops' own start, the stuck ones' 2 s timeouts), not their sum (5 s+)
    assert elapsed < max(ops_start, 2.0) + 1.5, (elapsed, ops_start)
    # A run in scope of the stuck server goes on, and its report names the gap.
    turns = [
        {"tool_calls": [{"tool": "ops_service_status", "args": {"service": "db"}}]},
        {"text": "ok\n{results}"},
    ]
    with Store.from_settings(settings) as store:
        _events, final = asyncio.run(scripted_service(settings, store, pool, turns).run("status?"))
    assert final.status == "completed"
    assert "**mcp/stuck**" in (final.output or "")
    assert "**mcp/missing**" in (final.output or "")


def test_huge_results_are_capped_and_binary_content_is_described(tmp_path: Path, pools: list[Any]) -> None:
    settings = mcp_settings(tmp_path, {"ops": ops()}, tools={"output_cap_chars": 2_000})
    pool = make_pool(settings, pools)
    with Store.from_settings(settings) as store:
        service = service_for(settings, store, pool)
        huge = call(service, "ops_huge", {"lines": 20_000})
        picture = call(service, "ops_dashboard", {})
        failed = call(service, "ops_backend_check", {})
        record = next(c for c in store.list_tool_calls(limit=10) if c.tool == "ops_huge")
        assert record.session_id is not None
        kept = store.tool_output(record.session_id, record.tool_call_id) or ""
    assert huge.status == "success"
    assert huge.metadata["truncated"] is True
    assert len(json.dumps(huge.data)) < 3_000
    assert "characters dropped" in huge.data
    assert len(kept) > 1_000_000, "the whole output is kept in the session for the user"
    assert "line 19999: " in kept
    text = json.dumps(picture.data)
    assert "image/png content of 1032 bytes withheld" in text
    assert "notes: p99 latency 840 ms" in text, "a text blob is decoded"
    assert "iVBOR" not in text, "no base64 passed on"
    assert failed.status == "error"
    assert "backend said no: quota exceeded" in (failed.error or "")
    assert pool.servers["ops"].state == "ready", "a tool's own error is not the server's failure"


def test_an_unreachable_server_with_a_fallback_offers_the_builtin_toolset(
    tmp_path: Path, pools: list[Any]
) -> None:
    settings = mcp_settings(
        tmp_path,
        {"hostinfo": {"command": "/nonexistent/host-mcp", "fallback": "system"}},
        tools={"disabled": ["system"]},
    )
    registry = ToolRegistry()
    system.register(registry)
    pool = make_pool(settings, pools)
    turns = [{"tool_calls": [{"tool": "system_memory", "args": {}}]}, {"text": "ok\n{results}"}]
    with Store.from_settings(settings) as store:
        service = scripted_service(settings, store, pool, turns, registry=registry)
        assert "system_memory" not in service.catalog.entries, "disabled: offered only in the server's place"
        tools = asyncio.run(offered(service))
        assert "system_memory" in tools
        events, final = asyncio.run(service.run("memory?"))
    assert [e.status for e in events if e.type == "tool_result"] == ["success"]
    assert "the built-in system tools were offered in its place" in (final.output or "")


@pytest.fixture
def npm_servers(npm_bin: Path, tmp_path: Path) -> dict[str, Any]:
    root = tmp_path / "files"
    root.mkdir()
    (root / "notes.txt").write_text("deploy window: Tuesday\n")
    return {
        "fs": {"command": str(npm_bin / "mcp-server-filesystem"), "args": [str(root)], "timeout_s": 30},
        "memory": {
            "command": str(npm_bin / "mcp-server-memory"),
            "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")},
            "timeout_s": 30,
        },
        "everything": {"command": str(npm_bin / "mcp-server-everything"), "timeout_s": 30},
    }


def test_npm_servers_through_the_pipeline(
    tmp_path: Path, pools: list[Any], npm_servers: dict[str, Any]
) -> None:
    settings = mcp_settings(tmp_path, npm_servers)
    pool = make_pool(settings, pools)
    statuses = pool.preload_sync()
    assert {n: s.state for n, s in statuses.items()} == dict.fromkeys(npm_servers, "ready")
    root = tmp_path / "files"
    asked: list[dict[str, Any]] = []

    async def approve(pending: dict[str, Any]) -> ApprovalDecision:
        asked.append(pending)
        return ApprovalDecision(True, "", "bob")

    with Store.from_settings(settings) as store:
        service = service_for(settings, store, pool)
        read = call(service, "fs_read_text_file", {"path": str(root / "notes.txt")})
        assert read.status == "success"
        assert "deploy window: Tuesday" in json.dumps(read.data)
        write = call(service, "fs_write_file", {"path": str(root / "x.txt"), "content": "x"})
        assert write.status == "error"
        assert "not available in ask mode" in (write.error or "")
        assert not (root / "x.txt").exists()
        assert call(service, "memory_read_graph", {}).status == "success"
        entity = {"entities": [{"name": "api", "entityType": "service", "observations": ["slow"]}]}
        assert call(service, "memory_create_entities", entity).status == "error", "ask mode: no writes"
        created = call(service, "memory_create_entities", entity, mode="agent", ask=approve)
        assert created.status == "success", created
        assert asked[-1]["decision"] == "approve", "destructiveHint false: a plain approval, no CONFIRM"
        deleted = call(service, "memory_delete_entities", {"entityNames": ["api"]}, mode="agent", ask=approve)
        assert deleted.status == "success"
        assert asked[-1]["decision"] == "approve_detailed"
        echo = call(service, "everything_echo", {"message": "hello"})
        assert echo.status == "success"
        assert "hello" in json.dumps(echo.data)
        image = call(service, "everything_get-tiny-image", {})
        assert image.status == "success"
        assert "image/png content of" in json.dumps(image.data)


def test_binary_content_is_described_without_the_privacy_guard(through_pipeline: Any) -> None:
    """With no guard at all (privacy and secret scrubbing off) a foreign tool's image still reaches
    no reader as bytes, and a text blob is decoded."""
    from pydantic_ai import BinaryContent

    def picture() -> list[Any]:
        return [
            BinaryContent(data=b"\x89PNG\r\n\x1a\n" + bytes(96), media_type="image/png"),
            BinaryContent(data=b'{"p99_ms": 840}', media_type="application/json"),
        ]

    result = through_pipeline("picture", picture)
    assert result.status == "success"
    assert result.data == [
        "[image/png content of 104 bytes withheld: binary content is described, not passed on]",
        '{"p99_ms": 840}',
    ]


def test_clashing_tool_names_hide_the_later_tool_instead_of_failing_the_run(
    tmp_path: Path, pools: list[Any]
) -> None:
    from devops_agent.tools.base import ToolsetBuilder

    def build(settings: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("ours")

        @ts.tool(read_only=True)
        def huge(lines: int) -> ToolResult:
            """Our own tool that happens to share a server tool's name."""
            return ToolResult.ok(f"ours: {lines}")

        return ts

    registry = ToolRegistry()
    registry.add_toolset("ours", build)
    settings = mcp_settings(tmp_path, {"a": ops(prefix="", env={"OPS_LABEL": "A"}), "b": ops(prefix="")})
    pool = make_pool(settings, pools)
    turns = [
        {
            "tool_calls": [
                {"tool": "service_status", "args": {"service": "x"}},
                {"tool": "huge", "args": {"lines": 2}},
            ]
        },
        {"text": "{results}"},
    ]
    with Store.from_settings(settings) as store:
        service = scripted_service(settings, store, pool, turns, registry=registry)
        tools = asyncio.run(offered(service))
        _events, final = asyncio.run(service.run("status?"))
    assert tools.count("service_status") == 1
    assert final.status == "completed", final
    assert "label A" in (final.output or ""), "the first server in config order keeps the name"
    assert "ours: 2" in (final.output or ""), "our tool keeps its name"
