"""Canary with configured MCP servers: the scripted model drives a run that uses one of our tools
and the tools of two real MCP servers (our ops server and the npm filesystem server), with the
privacy guard on. Secrets and identifiers in the MCP results never reach the model; the tools get
the real values back from the placeholders the model uses."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from devops_agent.agent.scripted import Script
from devops_agent.agent.session import SessionService
from devops_agent.privacy import Anonymizer
from devops_agent.store import Store
from devops_agent.tools.mcp import pool_for
from fixtures_canary import DB_HOST, EMAIL, KEY, TOOL_PASSWORD, RecordingModel, canary_registry
from fixtures_mcp import mcp_settings, ops

pytestmark = pytest.mark.slow

OPS_HOST = "ledger-db-3.canary-ops.example"  # in the ops server's ledger_lookup result
OPS_TOKEN = "ghp_Op5Zq8Lm2Xc7Vb4Nw1Rt9Ky3Hd6Gs0Fa2eUj"
FILE_HOST = "vault-7.canary-files.example"
FILE_SECRET = "AKIAQ4BXR7TZLM2KWN5Q"


def test_secrets_in_mcp_results_never_reach_the_model(
    tmp_path: Path, pools: list[Any], npm_bin: Path
) -> None:
    root = tmp_path / "files"
    root.mkdir()
    notes = root / "runbook.txt"
    notes.write_text(f"failover to {FILE_HOST}\naws_access_key_id={FILE_SECRET}\n")
    settings = mcp_settings(
        tmp_path,
        {
            "ops": ops(),
            "fs": {"command": str(npm_bin / "mcp-server-filesystem"), "args": [str(root)], "timeout_s": 30},
        },
        privacy={"enabled": "on", "hmac_key": KEY},
    )
    pool = pool_for(settings)
    assert pool is not None
    pools.append(pool)
    with Store.from_settings(settings) as store:
        session = store.create_session(title="canary", mode="ask", model="scripted")
        placeholder = Anonymizer(KEY.encode(), session.id).placeholder
        host, email = placeholder("HOST", DB_HOST), placeholder("EMAIL", EMAIL)
        turns = [
            {
                "tool_calls": [
                    {"tool": "deploy_status", "args": {"host": host, "owner_email": email}},
                    {"tool": "ops_ledger_lookup", "args": {"account": "7"}},
                    {"tool": "fs_read_text_file", "args": {"path": str(notes)}},
                ]
            },
            {"text": f"{host} checked; ledger and runbook read.\n{{results}}"},
        ]
        model = RecordingModel(Script.model_validate({"turns": turns}))
        service = SessionService(settings, store, registry=canary_registry(), model=model, mcp=pool)
        events, final = asyncio.run(service.run(f"Is {DB_HOST} ok? Ask {EMAIL}.", session_id=session.id))
        stored = "\n".join(store.load_messages(session.id))
    assert final.status == "completed", final
    results = {e.tool: e for e in events if e.type == "tool_result"}
    assert {t: r.status for t, r in results.items()} == dict.fromkeys(
        ["deploy_status", "ops_ledger_lookup", "fs_read_text_file"], "success"
    )
    sent = "\n".join(model.requests)
    assert len(model.requests) == 2
    for value in (OPS_TOKEN, FILE_SECRET, TOOL_PASSWORD, OPS_HOST, FILE_HOST, DB_HOST, EMAIL):
        i = sent.find(value)
        assert i < 0, f"{value!r} reached the model: …{sent[max(0, i - 200) : i + 60]}…"
    for secret in (OPS_TOKEN, FILE_SECRET):
        assert secret not in stored, f"{secret!r} was stored"
    assert "[REDACTED_SECRET]" in sent
    assert placeholder("HOST", OPS_HOST) in sent, (
        "the MCP result's host is masked with this session's placeholder"
    )
    # the MCP tools' definitions went to the model too, masked like the rest
    assert "ops_ledger_lookup" in sent
    output = final.output or ""
    assert DB_HOST in output, "the user gets the identifiers back"
    for secret in (OPS_TOKEN, FILE_SECRET):
        assert secret not in output
