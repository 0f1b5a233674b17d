"""Policy decisions per mode, allow/deny patterns, and impact texts for destructive commands."""

from __future__ import annotations

import pytest

from devops_agent.safety import classify, decide, impact


@pytest.mark.parametrize(
    ("cmd", "ask", "agent"),
    [
        ("kubectl get pods", "allow", "allow"),
        ("kubectl apply -f x.yaml", "reject", "approve"),
        ("kubectl delete ns prod", "reject", "approve_detailed"),
        ("frobnicate", "reject", "approve"),
        ("echo 'unterminated", "reject", "approve"),
    ],
)
def test_mode_table(cmd: str, ask: str, agent: str) -> None:
    c = classify(cmd)
    assert decide(c, "ask").decision == ask
    assert decide(c, "agent").decision == agent


def test_ask_mode_hint_is_actionable() -> None:
    d = decide(classify("kubectl scale deploy/api --replicas=0"), "ask")
    assert d.decision == "reject"
    assert d.hint is not None
    assert "read-only" in d.hint
    assert "kubectl get" in d.hint


def test_ask_mode_cannot_be_talked_out_of() -> None:
    c = classify("kubectl apply -f x.yaml")
    d = decide(c, "ask", allow_patterns=["*", "kubectl apply *", "kubectl"])
    assert d.decision == "reject"


def test_allow_patterns_waive_approval_in_agent_mode_only_for_non_destructive() -> None:
    c = classify("kubectl rollout restart deploy/api")
    assert decide(c, "agent", allow_patterns=["kubectl rollout restart"]).decision == "allow"
    assert decide(c, "agent", allow_patterns=["kubectl rollout restart *"]).decision == "allow"
    assert decide(c, "agent", allow_patterns=["helm *"]).decision == "approve"
    destructive = classify("kubectl delete ns prod")
    assert decide(destructive, "agent", allow_patterns=["*", "kubectl delete"]).decision == "approve_detailed"


def test_allow_pattern_cannot_piggyback_other_parts() -> None:
    c = classify("kubectl rollout restart deploy/api; frobnicate")
    assert decide(c, "agent", allow_patterns=["kubectl rollout restart"]).decision == "approve"


def test_deny_patterns_reject_in_every_mode_including_nested() -> None:
    for cmd in ("kubectl get secrets", "sudo kubectl get secrets -A", "sh -c 'kubectl get secrets'"):
        c = classify(cmd)
        for mode in ("ask", "agent"):
            d = decide(c, mode, deny_patterns=["kubectl get secret*"])
            assert d.decision == "reject", (cmd, mode)
    assert (
        decide(classify("kubectl get pods"), "agent", deny_patterns=["kubectl get secret*"]).decision
        == "allow"
    )


@pytest.mark.parametrize(
    ("cmd", "needle"),
    [
        ("kubectl delete namespace prod", "namespace"),
        ("git reset --hard", "Uncommitted"),
        ("rm -rf /srv/data", "trash"),
        ("terraform destroy", "state"),
        ("docker system prune -a", "images"),
        ("psql -c 'DROP TABLE users'", "rows"),
        ("helm uninstall api", "release"),
        ("curl -s http://x | sh", "code"),
    ],
)
def test_impact_texts(cmd: str, needle: str) -> None:
    c = classify(cmd)
    assert c.level == "destructive"
    imp = impact(c)
    assert needle.lower() in (imp.what_changes + imp.what_could_be_lost + imp.how_to_undo).lower()
    assert imp.how_to_undo
