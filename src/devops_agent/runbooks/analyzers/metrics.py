"""Metric-alert analyzer: the anomalous series, when it started, and what lines up with it.

Reads ``prom_anomalies`` (series with detected events), and — when the runbook gathered them —
``logs_errors`` groups and ``git_log`` commits. For each anomalous series it reports the event
with its explanation, the log-error groups that first appeared or spiked near the start
(correlated templates), and the commits shortly before it. Must not query anything itself.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from devops_agent.agent.report import Finding
from devops_agent.runbooks.analyzers.base import (
    Evidence,
    as_records,
    first_result,
    list_field,
    register_analyzer,
    shorten,
    source_of,
    structured,
)

_KIND_WORDS = {
    "spike": "spiked",
    "level_shift": "shifted level",
    "trend": "started trending",
    "seasonal_deviation": "left its usual daily pattern",
}


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _log_groups(evidence: Evidence) -> list[dict[str, Any]]:
    result = first_result(evidence, "logs_errors")
    if result is None or result.status != "success":
        return []
    return as_records(structured(result), "groups")


def _commits(evidence: Evidence) -> list[dict[str, Any]]:
    result = first_result(evidence, "git_log")
    if result is None or result.status != "success":
        return []
    return as_records(structured(result), "commits")


def correlated_groups(
    groups: list[dict[str, Any]], start: datetime, window: timedelta
) -> list[dict[str, Any]]:
    """Log-error groups that first appeared, or spiked, within ``window`` of ``start``."""
    out = []
    for g in groups:
        first = _when(g.get("first_seen"))
        spike = _when(g.get("spike_start")) if g.get("spike") else None
        if any(t is not None and abs(t - start) <= window for t in (first, spike)):
            out.append(g)
    return out


def commits_before(commits: list[dict[str, Any]], start: datetime, window: timedelta) -> list[dict[str, Any]]:
    """Commits made in the ``window`` before ``start`` (and up to 5 minutes after), newest first."""
    out = []
    for c in commits:
        when = _when(c.get("date") or c.get("committed") or c.get("authored"))
        if when is not None and start - window <= when <= start + timedelta(minutes=5):
            out.append(c)
    return out


@register_analyzer("metric_alert")
def metric_alert(evidence: Evidence, params: dict[str, Any], inputs: dict[str, Any]) -> list[Finding]:
    """One finding per anomalous series, with the log templates and changes that line up."""
    result = first_result(evidence, "prom_anomalies")
    if result is None:
        return []
    query = inputs.get("query") or "the query"
    if result.status == "no_data":
        return [
            Finding(
                severity="info",
                title=f"No anomaly in {shorten(query, 80)}",
                detail=result.hint or "",
                source=source_of(result),
            )
        ]
    if result.status != "success":
        return []
    series = as_records(structured(result), "anomalous")
    log_window = timedelta(minutes=float(params.get("log_window_minutes", 15)))
    change_window = timedelta(hours=float(params.get("change_window_hours", 2)))
    groups, commits = _log_groups(evidence), _commits(evidence)
    findings: list[Finding] = []
    for s in series:
        events = list_field(s, "anomalies")
        if not events:
            continue
        event = max(events, key=lambda e: float(e.get("score") or 0))
        start = _when(event.get("start"))
        verb = _KIND_WORDS.get(str(event.get("kind")), "became anomalous")
        when = start.strftime("%Y-%m-%d %H:%M UTC") if start else "an unknown time"
        evidence_lines = [str(event.get("explanation", ""))]
        next_steps: list[str] = []
        related = correlated_groups(groups, start, log_window) if start else []
        for g in related[:5]:
            evidence_lines.append(
                f"log template {g.get('count')}x {shorten(g.get('shape'), 120)} "
                f"(first seen {g.get('first_seen')})"
            )
            examples = list_field(g, "examples")
            if examples:
                evidence_lines.append(f"  e.g. {shorten(examples[0], 200)}")
        changes = commits_before(commits, start, change_window) if start else []
        for c in changes[:5]:
            evidence_lines.append(
                f"change {c.get('short_sha') or str(c.get('sha', ''))[:7]} "
                f"{c.get('date') or c.get('committed')} {c.get('author')}: {shorten(c.get('subject'), 90)}"
            )
        if related:
            next_steps.append(
                "Read the correlated log lines around the start; they are where the failure shows first."
            )
        if changes:
            next_steps.append(
                "Check whether the change just before the start is deployed; roll it back if it is suspect."
            )
        next_steps.append(f"Query the series around {when} at a finer step to see the exact onset.")
        correlation = []
        if related:
            correlation.append(f"{len(related)} log template(s) appeared or spiked within {log_window} of it")
        if changes:
            correlation.append(f"{len(changes)} commit(s) landed in the {change_window} before")
        detail = f"{event.get('explanation')}." + (" " + "; ".join(correlation) + "." if correlation else "")
        score = float(event.get("score") or 0)
        findings.append(
            Finding(
                severity="high" if related or changes or score >= 0.9 else "medium",
                title=f"{shorten(s.get('series'), 90)} {verb} at {when}",
                detail=detail,
                evidence=evidence_lines,
                source=source_of(result),
                next_steps=next_steps,
            )
        )
    return findings
