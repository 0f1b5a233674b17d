"""Log analyzers: error groups from ``logs_errors`` and error-priority entries from ``logs_journal``.

Grouping, shapes and spike detection happen in the logs tool; these analyzers only rank what it
found and word it for the report. Must not read log files or call tools.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from devops_agent.agent.report import Finding, Gap, Severity
from devops_agent.runbooks.analyzers.base import (
    Evidence,
    as_mapping,
    as_records,
    dict_field,
    list_field,
    number,
    register_analyzer,
    results_for,
    shorten,
    source_of,
    structured,
)
from devops_agent.tools.base import ToolResult

_FATAL_LEVELS = {"FATAL", "CRITICAL", "CRIT", "EMERG", "EMERGENCY", "ALERT", "PANIC"}
_FATAL_WORDS = re.compile(  # "non-fatal" / "non fatal" says the opposite
    r"(?<!non-)(?<!non )"
    r"\b(panic|oom|out of memory|oomkilled|segfault|segmentation fault|killed process|fatal)\b",
    re.I,
)
_ERROR_LEVELS = {"ERROR", "ERR", "SEVERE"}
_JOURNAL_SEVERE = {"EMERG", "EMERGENCY", "ALERT", "CRIT", "CRITICAL", "0", "1", "2"}
_NO_ERRORS = "No errors found in the logs"
_JOURNAL_DEFAULT_LINES = 200
"""``logs_journal``'s own default for ``lines`` (the most entries it returns)."""
_NO_ERRORS_READ = "No errors in the part of the logs read (reading stopped early)"


def _fmt_range(value: Any) -> str:
    if isinstance(value, dict):
        start = value.get("start") or value.get("from") or value.get("first")
        end = value.get("end") or value.get("to") or value.get("last")
        return f"{start} to {end}" if start or end else ""
    if isinstance(value, list | tuple) and len(value) == 2:
        return f"{value[0]} to {value[1]}"
    return str(value) if value else ""


def _fmt_sources(value: Any) -> str:
    if isinstance(value, dict):
        names = [str(k) for k in value]
    elif isinstance(value, list):
        names = [str(v.get("path", v)) if isinstance(v, dict) else str(v) for v in value]
    else:
        names = [str(value)] if value else []
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return ", ".join(names[:3]) + more


def _spike_text(group: dict[str, Any]) -> str:
    spike = group.get("spike")
    if not spike:
        return ""
    if group.get("spike_description"):
        return str(group["spike_description"])
    if isinstance(spike, dict):
        if spike.get("description"):
            return str(spike["description"])
        return "rate spiked: " + ", ".join(f"{k}={v}" for k, v in spike.items())
    return "its rate spiked above the baseline"


def group_severity(group: dict[str, Any], medium_count: int) -> Severity:
    """Spike or fatal level/words → high; errors with ``medium_count`` or more lines → medium; else low.

    A group without a level (a traceback, an exception, "connection refused") is an error too:
    ``logs_errors`` only groups error records, so its count counts like an ERROR group's.
    """
    level = str(group.get("level") or "").upper()
    examples = list_field(group, "examples")
    text = " ".join([str(group.get("shape", "")), *(str(e) for e in examples[:3])])
    if group.get("spike") or level in _FATAL_LEVELS or _FATAL_WORDS.search(text):
        return "high"
    count = number(group.get("count")) or 0
    if (not level or level in _ERROR_LEVELS) and count >= medium_count:
        return "medium"
    return "low"


def _partial_gap(result: ToolResult, note: Any) -> Gap:
    """The rest of the logs, which the tool did not read because its time ran out."""
    text = str(note or result.hint or "")
    said = text[text.find("partial:") :].removeprefix("partial: ").rstrip(")") if "partial:" in text else ""
    return Gap(
        step=str(result.metadata.get("step") or "logs_errors"),
        tool="logs_errors",
        reason="only part of the logs was read: "
        + (said or "the tool's time ran out")
        + "; errors after that point are not counted",
        hint="narrow the window (--since) or give fewer log files",
    )


@register_analyzer("log_error_groups")
def log_error_groups(
    evidence: Evidence, params: dict[str, Any], inputs: dict[str, Any]
) -> list[Finding | Gap]:
    """One finding per top error group (``max_findings``, 5), plus an info finding on what was read.

    A read the tool cut short (``partial``: its time ran out) is a gap, and its "no errors" says
    "in the lines read", never "in the logs".
    """
    max_findings = int(params.get("max_findings", 5))
    medium_count = int(params.get("medium_count", 10))
    findings: list[Finding | Gap] = []
    for result in results_for(evidence, "logs_errors"):
        source = source_of(result)
        if result.status == "no_data":  # the tool says "no errors in N lines …" in its hint
            detail = result.hint or ""
            partial = bool(result.metadata.get("partial"))
            title = _NO_ERRORS_READ if partial else _NO_ERRORS
            findings.append(Finding(severity="info", title=title, detail=detail, source=source))
            findings += _skipped_finding(list_field(result.metadata, "skipped"), source)
            if partial:
                findings.append(_partial_gap(result, None))
            continue
        data = as_mapping(structured(result))
        findings += _skipped_finding(list_field(data, "skipped"), source)
        partial = bool(data.get("partial") or result.metadata.get("partial"))
        if partial:
            findings.append(_partial_gap(result, data.get("note")))
        groups = as_records(data.get("groups") or [], "groups")
        total, errors = number(data.get("total_lines")), number(data.get("error_lines"))
        window = _fmt_range(data.get("time_range"))
        scope = f"{total or 0:.0f} lines read" + (f", {window}" if window else "") + "."
        if partial:
            scope += " Reading stopped before the end of the logs: the counts cover only the lines read."
        if not groups or errors == 0:
            title = _NO_ERRORS_READ if partial else _NO_ERRORS
            findings.append(Finding(severity="info", title=title, detail=scope, source=source))
            continue
        spikes = [str(s) for s in list_field(data, "spikes")]
        if spikes:
            scope += " Spikes: " + "; ".join(spikes[:3]) + "."
        group_total = int(number(data.get("groups_total")) or len(groups))
        noun = "group" if group_total == 1 else "groups"
        findings.append(
            Finding(
                severity="info",
                title=f"{errors or 0:.0f} error lines in {group_total} {noun}",
                detail=scope,
                source=source,
            )
        )
        ranked = sorted(groups, key=lambda g: number(g.get("count")) or 0, reverse=True)
        # Spiking groups are news even when small: keep them among the findings.
        shown = ranked[:max_findings] + [g for g in ranked[max_findings:] if g.get("spike")][:3]
        findings += [_group_finding(group, medium_count, source) for group in shown]
        rest = [g for g in ranked if not any(g is s for s in shown)]
        hidden = group_total - len(groups)
        if rest or hidden > 0:
            more = len(rest) + max(hidden, 0)
            lines = [f"{g.get('count', '?')}× {shorten(g.get('shape', '?'), 120)}" for g in rest[:10]]
            if hidden > 0:
                records = data.get("records_in_hidden_groups")
                lines.append(f"{hidden} more groups not returned by the tool ({records or '?'} errors)")
            findings.append(
                Finding(
                    severity="info",
                    title=f"{more} smaller error group{'s' if more != 1 else ''} not shown",
                    evidence=lines,
                    source=source,
                )
            )
    return findings


def _skipped_finding(skipped: list[Any], source: str) -> list[Finding]:
    """A low finding naming the inputs that could not be read: what was read is not all there is."""
    if not skipped:
        return []
    n = len(skipped)
    return [
        Finding(
            severity="low",
            title=f"{n} log input{'s' if n != 1 else ''} could not be read",
            detail="Errors in them are not counted above (binary, unreadable or corrupt).",
            evidence=[str(s) for s in skipped[:10]],
            source=source,
        )
    ]


def _group_finding(group: dict[str, Any], medium_count: int, source: str) -> Finding:
    count = number(group.get("count")) or 0
    first, last = group.get("first_seen"), group.get("last_seen")
    parts = [f"Level {group.get('level') or 'unknown'}"]
    if first or last:
        parts.append(f"first seen {first or '?'}, last seen {last or '?'}")
    if srcs := _fmt_sources(group.get("sources")):
        parts.append(f"in {srcs}")
    detail = "; ".join(parts) + "."
    steps = [f"Read the lines around the first occurrence ({first or 'earliest'}) for what triggered it"]
    if spike := _spike_text(group):
        detail += f" Spike: {spike}."
        steps.append("Line the spike window up with deploys, traffic and dependency health")
    steps.append("Check whether a change landed just before the first occurrence (runbook recent-changes)")
    examples = list_field(group, "examples")
    return Finding(
        severity=group_severity(group, medium_count),
        title=f"{count:.0f}× {shorten(group.get('shape', '?'), 90)}",
        detail=detail,
        evidence=[shorten(e, 300) for e in examples[:3]],
        source=source,
        next_steps=steps,
    )


def _entry_fields(entry: Any) -> tuple[str, str, str]:
    """``(unit, message, priority)``; priority upper-cased, a syslog number or a level name."""
    if not isinstance(entry, dict):
        return "?", str(entry), ""
    unit = entry.get("unit") or entry.get("_SYSTEMD_UNIT") or entry.get("SYSLOG_IDENTIFIER")
    unit = unit or entry.get("identifier") or "?"
    message = entry.get("message") or entry.get("MESSAGE") or entry.get("msg") or ""
    priority = entry.get("priority", entry.get("PRIORITY"))
    return str(unit), str(message), str(priority if priority is not None else "").strip().upper()


@register_analyzer("journal_errors")
def journal_errors(evidence: Evidence, params: dict[str, Any], inputs: dict[str, Any]) -> list[Finding | Gap]:
    """Repeated error-priority journal messages: emerg/alert/crit → high, ``medium_count`` (20)+ → medium.

    A host without journald is "not checked" (and a gap), never "no error-priority entries".
    """
    medium_count = int(params.get("medium_count", 20))
    since = f" since {inputs['since']}" if inputs.get("since") else ""
    findings: list[Finding | Gap] = []
    for result in results_for(evidence, "logs_journal"):
        data = structured(result) if result.status == "success" else None
        entries: list[Any] = (
            data if isinstance(data, list) else as_records(data, "entries", "lines") if data else []
        )
        if not entries and result.metadata.get("journald") is False:
            why = str(result.hint)
            findings.append(
                Finding(
                    severity="info",
                    title="Not checked: journal",
                    detail=f"journal: {why}.",
                    source=source_of(result),
                )
            )
            reason, _, hint = why.partition("; ")
            step = str(result.metadata.get("step") or "logs_journal")
            findings.append(Gap(step=step, tool="logs_journal", reason=reason, hint=hint or None))
            continue
        if not entries:
            detail = result.hint or "journald returned nothing at this priority"
            findings.append(
                Finding(
                    severity="info",
                    title=f"Journal: no error-priority entries returned{since}",
                    detail=detail,
                    source=source_of(result),
                )
            )
            continue
        groups: Counter[tuple[str, str]] = Counter()
        severe = False
        for entry in entries:
            unit, message, priority = _entry_fields(entry)
            groups[(unit, re.sub(r"\d+", "#", shorten(message, 200)))] += 1
            severe = severe or priority in _JOURNAL_SEVERE
        severity: Severity = "high" if severe else "low"
        if severity == "low" and len(entries) >= medium_count:
            severity = "medium"
        units = Counter(unit for unit, _ in groups.elements())
        detail = "Most from: " + ", ".join(f"{u} ({n})" for u, n in units.most_common(3)) + "."
        # journalctl -n stops at the step's limit: that many entries is a floor, not the count.
        limit = number(dict_field(result.metadata, "args").get("lines", _JOURNAL_DEFAULT_LINES))
        at_limit = limit is not None and len(entries) >= limit
        if at_limit:
            detail += (
                f" Only the newest {len(entries)} were read (the step's `lines` limit): "
                "there are probably more, and older ones are not counted."
            )
        findings.append(
            Finding(
                severity=severity,
                title=f"{len(entries)}{'+' if at_limit else ''} error-priority journal entries{since}",
                detail=detail,
                evidence=[f"{n}× [{unit}] {msg}" for (unit, msg), n in groups.most_common(5)],
                source=source_of(result),
                next_steps=["`journalctl -p err -S -1h -u <unit> --no-pager` for the full context of a unit"],
            )
        )
    return findings
