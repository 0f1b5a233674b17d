"""Canary across delegation: with the privacy guard on, no request of any agent of a reasoning
run — orchestrator, specialist, critic, synthesizer — carries a secret or an identifier, while
the tools still get real values and the user gets them back."""

from __future__ import annotations

import asyncio
from typing import Any

from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.privacy import Anonymizer
from devops_agent.store import Store
from fixtures_reasoning import Canary, ReasoningKit


def test_no_agent_of_a_reasoning_run_sees_a_secret_or_identifier(
    sqlite_store: Store, kit: ReasoningKit, canary: Canary
) -> None:
    settings = Settings(privacy={"enabled": "on", "hmac_key": canary.key})
    session = sqlite_store.create_session(title="canary", mode="ask", model="scripted")
    placeholder = Anonymizer(canary.key.encode(), session.id).placeholder
    host, email = placeholder("HOST", canary.host), placeholder("EMAIL", canary.email)
    finding = {
        "severity": "high",
        "title": f"{host} degraded since 14:05",
        "evidence": ["degraded since 14:05"],
    }
    ops = {
        "turns": [
            {"tool_calls": [{"tool": "deploy_status", "args": {"host": host, "owner_email": email}}]},
            {
                "output": {
                    "summary": "degraded",
                    "findings": [{**finding, "citations": ["{call:deploy_status}"]}],
                    "likely_cause": "db",
                }
            },
        ]
    }
    script = {
        "turns": [
            {"tool_calls": [{"tool": "ask_ops", "args": {"task": f"check {host}; its owner is {email}"}}]},
            {
                "output": {
                    "summary": f"{host} is degraded.",
                    "findings": [{**finding, "citations": ["{call:ask_ops}"]}],
                }
            },
        ],
        "agents": {
            "ops": ops,
            "second": {
                **ops,
                "turns": [ops["turns"][0], {"output": {"summary": "fine", "likely_cause": "network"}}],
            },
            "synthesizer": {
                "turns": [
                    {
                        "output": {
                            "summary": f"{host} is degraded.",
                            "findings": [{**finding, "citations": ["{call:ops/deploy_status}"]}],
                        }
                    }
                ]
            },
        },
    }
    model = kit.scripted(script, record=True)
    registry = canary.registry()
    for name in ("ops", "second"):
        registry.add_specialist(
            {
                "name": name,
                "description": "Reads deployments.",
                "instructions": "Check it.",
                "tools": ["deploy_status"],
            }
        )
    service = SessionService(
        settings, sqlite_store, registry=registry, model=model, use_configured_model=False
    )
    prompt = f"Why is {canary.host} slow? Ask {canary.email}. My token is {canary.user_token}."
    _events, delegated = asyncio.run(service.run(prompt, session_id=session.id, inputs={"plan": "never"}))
    _events, council = asyncio.run(
        service.run(prompt, session_id=session.id, inputs={"council": ["ops", "second"]})
    )

    roles: dict[str, int] = {}
    for request in model.requests:
        for role in ("orchestrator", "ops", "second", "critic", "synthesizer"):
            if f"You are the `{role}` agent" in request:
                roles[role] = roles.get(role, 0) + 1
    assert set(roles) == {"orchestrator", "ops", "second", "critic", "synthesizer"}, roles
    sent = "\n".join(model.requests)
    for value in canary.secrets + canary.identifiers:
        assert value not in sent, f"{value!r} reached a model"
    assert host in sent
    assert "[REDACTED_SECRET]" in sent
    assert {"host": canary.host, "owner_email": canary.email} in canary.received, (
        "the tool got the real values"
    )

    for final in (delegated, council):
        assert final.status == "completed"
        report: dict[str, Any] = final.report or {}
        assert [f["title"] for f in report["findings"]] == [f"{canary.host} degraded since 14:05"], (
            "restored for the user"
        )
        output = final.output or ""
        assert canary.host in output
        for secret in canary.secrets:
            assert secret not in output
