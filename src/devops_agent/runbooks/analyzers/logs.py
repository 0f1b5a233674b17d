"""Log analyzers: error groups from ``logs_errors`` and error-priority entries from ``logs_journal``.

Grouping, shapes and spike detection happen in the logs tool; these analyzers only rank what it
found and word it for the report. Must not read log files or call tools.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from devops_agent.report import Checked, Finding, Gap, Severity
from devops_agent.results import ToolResult
from devops_agent.runbooks.analyzers.base import (
    Evidence,
    Item,
    as_mapping,
    as_records,
    checked,
    dict_field,
    fmt_duration,
    list_field,
    number,
    register_analyzer,
    results_for,
    shorten,
    source_of,
    structured,
)

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


def _name(path: Any) -> str:
    return str(path).rsplit("/", 1)[-1] or str(path)


def _age(seconds: Any) -> str:
    value = number(seconds)
    return fmt_duration(value) if value is not None and value >= 0 else "?"


def _window_text(inputs: dict[str, Any], facts: dict[str, Any]) -> str:
    since = facts.get("since") or inputs.get("since")
    until = facts.get("until") or inputs.get("until")
    parts = [f"since {since}" if since else "", f"until {until}" if until else ""]
    return " ".join(p for p in parts if p) or "in the window"


def _nothing_in_window(result: ToolResult, facts: dict[str, Any], inputs: dict[str, Any]) -> Gap:
    """Zero lines in the window: a gap that says why, never "no errors"."""
    window = _window_text(inputs, facts)
    quiet = [q for q in list_field(facts, "quiet_files") if isinstance(q, dict)]
    empty = [str(e) for e in list_field(facts, "empty_files")]
    if facts.get("window_in_future"):
        reason = f"the window starts in the future ({window}): no log line can be in it"
    elif quiet:
        top = quiet[0]
        reason = (
            f"no log line {window}; the newest line, in {_name(top.get('path'))}, is "
            f"{_age(top.get('newest_age_s'))} old and says: {shorten(top.get('newest_line'), 200)}"
        )
    elif empty and len(empty) >= int(number(facts.get("files_scanned")) or len(empty)):
        reason = "the log file(s) are empty: " + ", ".join(_name(e) for e in empty[:5])
    else:
        reason = f"no log line {window} in what was read"
    return Gap(
        step=str(result.metadata.get("step") or "logs_errors"),
        tool="logs_errors",
        reason=reason + " — nothing read is not nothing wrong",
        hint="widen the window (--since) to read the lines before it; a service that stopped "
        "logging has often stopped working",
    )


def _quiet_items(result: ToolResult, facts: dict[str, Any], params: dict[str, Any]) -> list[Finding | Gap]:
    """A finding for each live log that went quiet (worded by what it said last), a gap for one
    whose stamps may be in another zone (quiet or not, it cannot tell)."""
    quiet_severity: Severity = params.get("quiet_severity", "low")
    source = source_of(result)
    out: list[Finding | Gap] = []
    for q in list_field(facts, "quiet_files"):
        if not isinstance(q, dict) or q.get("rotated"):
            continue  # a rotated file is old by design
        name, age = _name(q.get("path")), _age(q.get("newest_age_s"))
        errors = [e for e in list_field(q, "last_errors") if isinstance(e, dict)]
        line = shorten(q.get("newest_line"), 300)
        said = f"The newest line, at {q.get('newest')} ({age} ago), says: {line}"
        if q.get("undated"):
            said = f"It was last written at {q.get('newest')} ({age} ago), without timestamps; "
            said += f"its last line: {line}"
        evidence = [f"{e.get('count')}× {shorten(e.get('example'), 300)}" for e in errors[:5]]
        evidence += [f"{'last' if q.get('undated') else 'newest'}: {line}"]
        zone = q.get("zone_note")
        if zone:
            out.append(
                Gap(
                    step=str(result.metadata.get("step") or "logs_errors"),
                    tool="logs_errors",
                    reason=f"{name}: cannot tell whether it went quiet {age} ago: {zone}",
                    hint="read it with --since as an absolute time in the writer's zone, or fix the "
                    "writer to stamp its zone (ISO 8601 with an offset)",
                )
            )
            if not errors:
                continue
        if errors:
            group = {"shape": errors[-1].get("shape"), "examples": [e.get("example") for e in errors]}
            severity: Severity = "high" if group_severity(group, 10**9) == "high" else "medium"
            top = max(errors, key=lambda e: number(e.get("count")) or 0)
            shape = shorten(top.get("shape"), 80)
            if zone:
                title = f"{name}: errors in its newest lines, stamped {age} ago: {shape}"
                detail = f"{said}. Its stamps may be off ({zone}), so these errors may be recent."
            else:
                title = f"{name}: errors, then nothing for {age}: {shape}"
                detail = f"{said}. Errors came just before it stopped: a service that stops logging "
                detail += "has often died."
            detail += f" Counted among its last {q.get('lines_considered') or 'few'} lines before the window."
        else:
            severity = quiet_severity
            title = f"{name} has logged nothing for {age}"
            detail = f"{said}. Nothing was written in the window; check that the service still runs."
        out.append(
            Finding(
                severity=severity,
                title=title,
                detail=detail,
                evidence=evidence,
                source=source,
                next_steps=[
                    f"Check whether the process writing {name} still runs (systemctl status, "
                    "kubectl get pods, docker ps) and read the lines before it went quiet"
                ],
            )
        )
    future = [f for f in list_field(facts, "future_files") if isinstance(f, dict)]
    if future:
        out.append(
            Finding(
                severity="info",
                title=f"{len(future)} log file(s) have lines stamped in the future",
                detail="Up to "
                + _age(max(number(f.get("ahead_s")) or 0 for f in future))
                + " ahead of this host's clock: stamps without a zone from a host ahead of this one, "
                "or a wrong clock. Those lines were counted as inside the window.",
                evidence=[f"{_name(f.get('path'))}: {_age(f.get('ahead_s'))} ahead" for f in future[:5]],
                source=source,
            )
        )
    return out


def _read_check(result: ToolResult, facts: dict[str, Any]) -> Checked:
    # lines_in_window (this tool), matched_lines (grouping's count in the window), else every
    # line read (an output from before windows were counted, with no window)
    in_window = next(
        (
            n
            for key in ("lines_in_window", "matched_lines", "total_lines")
            if (n := number(facts.get(key))) is not None
        ),
        0.0,
    )
    outside = int(number(facts.get("lines_outside_window")) or 0)
    detail = f"{outside:,} lines read outside the window were not counted" if outside else ""
    older = dict_field(facts, "older_files")
    if older:
        detail += (
            "; " if detail else ""
        ) + f"{older.get('count')} compressed file(s) rotated before it not read"
    return checked(result, int(in_window), "log lines", detail=detail)


@register_analyzer("log_error_groups")
def log_error_groups(evidence: Evidence, params: dict[str, Any], inputs: dict[str, Any]) -> list[Item]:
    """One finding per top error group (``max_findings``, 5), plus an info finding on what was read.

    What was read is the lines inside the window. None is a gap that says why (a log that went
    quiet: how old its newest line is and what it says; an empty file; a window in the future),
    never "no errors"; a live log with nothing in the window is a finding of its own (medium, or
    high when its last lines were fatal errors; ``quiet_severity``, low, when they were not). A
    read the tool cut short (``partial``: its time ran out) is a gap, and its "no errors" says
    "in the lines read", never "in the logs".
    """
    max_findings = int(params.get("max_findings", 5))
    medium_count = int(params.get("medium_count", 10))
    skipped_severity: Severity = params.get("skipped_severity", "low")
    findings: list[Item] = []
    for result in results_for(evidence, "logs_errors"):
        source = source_of(result)
        facts = result.metadata if result.status == "no_data" else as_mapping(structured(result))
        read = _read_check(result, facts)
        findings.append(read)
        findings += _quiet_items(result, facts, params)
        if read.read == 0:
            findings.append(_nothing_in_window(result, facts, inputs))
        if result.status == "no_data":  # the tool says "no errors in N lines …" in its hint
            partial = bool(result.metadata.get("partial"))
            if read.read:
                title = _NO_ERRORS_READ if partial else _NO_ERRORS
                findings.append(
                    Finding(severity="info", title=title, detail=result.hint or "", source=source)
                )
            findings += _skipped_finding(list_field(result.metadata, "skipped"), source, skipped_severity)
            if partial:
                findings.append(_partial_gap(result, None))
            continue
        data = facts
        findings += _skipped_finding(list_field(data, "skipped"), source, skipped_severity)
        partial = bool(data.get("partial") or result.metadata.get("partial"))
        if partial:
            findings.append(_partial_gap(result, data.get("note")))
        groups = as_records(data.get("groups") or [], "groups")
        errors = number(data.get("error_lines"))
        window = _fmt_range(data.get("time_range"))
        windowed = result.metadata.get("since") or result.metadata.get("until")
        scope = f"{read.read:,} lines in the window" if windowed else ""
        scope = scope or f"{read.read:,} lines read"
        if read.detail:
            scope += f" ({read.detail})"
        scope += (f", {window}" if window else "") + "."
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


def _skipped_finding(skipped: list[Any], source: str, severity: Severity = "low") -> list[Finding]:
    """A finding (low, unless the runbook says otherwise) naming the inputs that could not be
    read: what was read is not all there is."""
    if not skipped:
        return []
    n = len(skipped)
    return [
        Finding(
            severity=severity,
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
def journal_errors(evidence: Evidence, params: dict[str, Any], inputs: dict[str, Any]) -> list[Item]:
    """Repeated error-priority journal messages: emerg/alert/crit → high, ``medium_count`` (20)+ → medium.

    A host without journald is "not checked" (and a gap), never "no error-priority entries" —
    unless the runbook read log files instead (a ``logs_errors`` step among the evidence, e.g.
    /var/log), whose error groups are then reported as :func:`log_error_groups` does.
    """
    medium_count = int(params.get("medium_count", 20))
    since = f" since {inputs['since']}" if inputs.get("since") else ""
    files = {step: r for step, r in evidence.items() if r.metadata.get("tool") == "logs_errors"}
    findings: list[Item] = []
    for result in results_for(evidence, "logs_journal"):
        data = structured(result) if result.status == "success" else None
        entries: list[Any] = (
            data if isinstance(data, list) else as_records(data, "entries", "lines") if data else []
        )
        if not entries and result.metadata.get("journald") is False:
            why = str(result.hint)
            instead = ", ".join(
                str(dict_field(r.metadata, "args").get("paths") or "") for r in files.values()
            )
            findings.append(
                Finding(
                    severity="info",
                    title="Not checked: journal" + (f"; read {instead} instead" if files else ""),
                    detail=f"journal: {why}.",
                    source=source_of(result),
                )
            )
            if not files:
                reason, _, hint = why.partition("; ")
                step = str(result.metadata.get("step") or "logs_journal")
                findings.append(Gap(step=step, tool="logs_journal", reason=reason, hint=hint or None))
            continue
        findings.append(checked(result, len(entries), "journal entries", empty_is_answer=True))
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
    if files:
        findings += log_error_groups(files, params, inputs)
    return findings
