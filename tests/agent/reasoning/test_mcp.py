"""A specialist's MCP servers follow the pool's profiles: it gets the global servers and those of
its own profiles, never a general run's other servers; the orchestrator (a general run) does not
get servers exclusive to a profile. Real MCP server processes (our ops server over stdio)."""

from __future__ import annotations

from pathlib import Path

from devops_agent.agent.session import SessionService
from devops_agent.store import Store
from devops_agent.tools.mcp import pool_for
from fixtures_mcp import mcp_settings, ops
from fixtures_reasoning import ReasoningKit


def test_a_specialist_gets_the_servers_of_its_profiles_only(
    tmp_path: Path, sqlite_store: Store, kit: ReasoningKit
) -> None:
    settings = mcp_settings(
        tmp_path,
        {
            "everyone": ops(),
            "dbops": ops(profiles=["db"], exclusive=True),
            "webops": ops(profiles=["web"]),
        },
    )
    registry = kit.registry()
    registry.add_specialist(
        {
            "name": "db",
            "description": "Reads the database's service.",
            "instructions": "Look.",
            "tools": ["svc_status"],
            "mcp_profiles": ["db"],
        }
    )
    model = kit.scripted(
        {
            "turns": [{"tool_calls": [{"tool": "ask_db", "args": {"task": "is the db up?"}}]}],
            "agents": {"db": {"turns": [{"output": {"summary": "up"}}]}},
        },
        record=True,
    )
    pool = pool_for(settings)
    assert pool is not None
    try:
        service = SessionService(
            settings, sqlite_store, registry=registry, model=model, use_configured_model=False, mcp=pool
        )
        assert service.toolbox.specialist_servers(["db"]) == ["everyone", "dbops"]
        assert service.toolbox.specialist_servers([]) == ["everyone"], "no profile: global ones only"
        events = kit.drain(service, "is the db up?", mode="ask", inputs={"plan": "never"})
        assert kit.final(events).status == "completed", [e for e in events if e.type == "error"]
    finally:
        pool.close()
    servers = {
        role: {t.split("_", 1)[0] for t in tools if t.endswith("service_status")}
        for role, tools in model.offered.items()
    }
    assert servers["db"] == {"everyone", "dbops"}
    assert servers["orchestrator"] == {"everyone", "webops"}, "exclusive servers only for their profile"
    assert "svc_status" in model.offered["db"]
