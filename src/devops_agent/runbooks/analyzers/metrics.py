"""Metric-alert analyzer: the anomalous series, when it started, and what lines up with it.

Reads ``prom_anomalies`` (series with detected events), and — when the runbook gathered them —
``logs_errors`` groups and ``git_log`` commits, plus the runbook inputs ``onset`` (the alert's
``startsAt``), ``threshold`` (the comparison the alert applies, e.g. ``> 50``) and
``alert_title``. For each anomalous series it reports one event — the strongest of those that
began in the hour before the alert started, else the strongest — with the log-error groups that
were new or spiked near the event's start (correlated templates) and the commits shortly before
it. Without a query (an alert that carries no expression) it says so and lines the logs and
commits up with the alert's start instead. Must not query anything itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from devops_agent.evidence import parse_time
from devops_agent.report import Finding, Gap, Severity
from devops_agent.results import ToolResult
from devops_agent.runbooks.analyzers.base import (
    CannotAnalyze,
    Evidence,
    Item,
    as_records,
    checked,
    dict_field,
    first_result,
    list_field,
    number,
    register_analyzer,
    results_for,
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
_ONSET_LAG = timedelta(minutes=5)
"""An event may start this long after ``startsAt`` and still be the alert's: the detector
alarms a step or two into a change, and steps are up to a few minutes long."""


def _utc(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _log_summary(evidence: Evidence) -> tuple[list[dict[str, Any]], datetime | None]:
    """The log-error groups, and when the lines read start (``None`` when unknown)."""
    result = first_result(evidence, "logs_errors")
    if result is None or result.status != "success":
        return [], None
    data = structured(result)
    read_from = parse_time(dict_field(data, "time_range").get("start")) if isinstance(data, dict) else None
    return as_records(data, "groups"), read_from


def _commits(evidence: Evidence) -> list[dict[str, Any]]:
    result = first_result(evidence, "git_log")
    if result is None or result.status != "success":
        return []
    return as_records(structured(result), "commits")


def _commit_time(commit: dict[str, Any]) -> datetime | None:
    return parse_time(commit.get("date") or commit.get("committed") or commit.get("authored"))


@dataclass
class _Read:
    """Which sources were read: ``True`` read, ``False`` given but not read (its step failed and
    the report's gaps say why), ``None`` not given. ``commits_cut`` is where a ``git_log`` that
    stopped at its limit reaches back to (older commits were not listed)."""

    logs: bool | None = None
    commits: bool | None = None
    commits_cut: datetime | None = None


def _what_was_read(evidence: Evidence, inputs: dict[str, Any]) -> _Read:
    logs = first_result(evidence, "logs_errors")
    git = first_result(evidence, "git_log")
    cut = None
    if git is not None and git.status == "success":
        data = structured(git)
        if isinstance(data, dict) and data.get("limit_reached"):
            times = [t for c in as_records(data, "commits") if (t := _commit_time(c)) is not None]
            cut = min(times, default=None)
    return _Read(
        logs=logs is not None if inputs.get("logs") else None,
        commits=git is not None if inputs.get("repo") else None,
        commits_cut=cut,
    )


def is_new(group: dict[str, Any], read_from: datetime | None, window: timedelta) -> bool:
    """Whether the logs read show where ``group`` started rather than a template already there.

    Its first line must come after a quiet stretch of the logs read longer than twice its usual
    gap between lines (``window`` for a single line): a template logged every 30 minutes whose
    first line is 10 minutes into the logs was simply between two lines when they begin.
    """
    first = parse_time(group.get("first_seen"))
    if first is None or read_from is None:
        return first is not None
    last = parse_time(group.get("last_seen")) or first
    count = int(number(group.get("count")) or 1)
    gap = (last - first) / (count - 1) if count > 1 and last > first else window
    return first - read_from > 2 * gap


def correlated_groups(
    groups: list[dict[str, Any]], start: datetime, window: timedelta, read_from: datetime | None = None
) -> list[dict[str, Any]]:
    """Log-error groups that were new (:func:`is_new`), or spiked, within ``window`` of ``start``.

    ``read_from`` is where the lines read begin; without it every first line counts as new.
    """
    out = []
    for g in groups:
        first = parse_time(g.get("first_seen"))
        spike = parse_time(g.get("spike_start")) if g.get("spike") else None
        new = first is not None and abs(first - start) <= window and is_new(g, read_from, window)
        if new or (spike is not None and abs(spike - start) <= window):
            out.append(g)
    return out


def commits_before(commits: list[dict[str, Any]], start: datetime, window: timedelta) -> list[dict[str, Any]]:
    """Commits made in the ``window`` before ``start`` (and up to 5 minutes after), newest first."""
    out = []
    for c in commits:
        when = _commit_time(c)
        if when is not None and start - window <= when <= start + timedelta(minutes=5):
            out.append(c)
    return out


@dataclass
class _LinedUp:
    """What lines up with one moment: log groups, commits, and how to say it."""

    related: list[dict[str, Any]] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)

    def sentence(self) -> str:
        text = "; ".join(self.words)
        return text[:1].upper() + text[1:] + "." if text else ""


def _line_up(
    start: datetime,
    logs: tuple[list[dict[str, Any]], datetime | None],
    commits: list[dict[str, Any]],
    params: dict[str, Any],
    read: _Read | None = None,
) -> _LinedUp:
    log_window = timedelta(minutes=float(params.get("log_window_minutes", 15)))
    change_window = timedelta(hours=float(params.get("change_window_hours", 2)))
    groups, read_from = logs
    out = _LinedUp(
        correlated_groups(groups, start, log_window, read_from), commits_before(commits, start, change_window)
    )
    for g in out.related[:5]:
        spike = parse_time(g.get("spike_start")) if g.get("spike") else None
        how = (
            f"spiked from {g.get('spike_start')}, first seen {g.get('first_seen')}"
            if spike is not None and abs(spike - start) <= log_window
            else f"new: first seen {g.get('first_seen')}"
        )
        out.evidence.append(f"log template {g.get('count')}x {shorten(g.get('shape'), 120)} ({how})")
        examples = list_field(g, "examples")
        if examples:
            out.evidence.append(f"  e.g. {shorten(examples[0], 200)}")
    # imported here: the change analyzer imports this module (is_new)
    from devops_agent.runbooks.analyzers.changes import Onset, commit_line

    for c in out.changes[:5]:
        out.evidence.append(f"change {commit_line(c, Onset(start, 'the onset'))}")
    if out.related:
        out.next_steps.append(
            "Read the correlated log lines around the start; they are where the failure shows first."
        )
        out.words.append(f"{len(out.related)} log template(s) were new or spiked within {log_window} of it")
    if out.changes:
        out.next_steps.append(
            "Check whether the change just before the start is deployed; roll it back if it is suspect."
        )
        out.words.append(f"{len(out.changes)} commit(s) landed in the {change_window} before")
    # Silence is only an all-clear for a source that was read: say which were and which were not.
    read = read or _Read()
    if read.logs and not out.related:
        out.words.append(f"no log template was new or spiked within {log_window} of it")
    elif read.logs is False:
        out.words.append("the logs could not be read (see what could not be gathered)")
    if read.commits and not out.changes:
        out.words.append(f"no commit landed in the {change_window} before")
    elif read.commits is False:
        out.words.append("the commits could not be read (see what could not be gathered)")
    if read.commits_cut is not None and read.commits_cut > start - change_window:
        out.words.append(
            f"git_log stopped at its commit limit, reaching back only to {_utc(read.commits_cut)}: "
            "older commits in that window were not seen"
        )
    return out


def _pick_event(
    events: list[dict[str, Any]], onset: datetime | None, lead: timedelta, lag: timedelta
) -> tuple[dict[str, Any], bool]:
    """The event to report and whether it began near the alert's start (``lead`` before ``onset``
    to ``lag`` after): the strongest of those that did, else the strongest of all."""

    def score(e: dict[str, Any]) -> float:
        return number(e.get("score")) or 0.0

    if onset is not None:
        near = [
            e
            for e in events
            if (t := parse_time(e.get("start"))) is not None and onset - lead <= t <= onset + lag
        ]
        if near:
            return max(near, key=score), True
    return max(events, key=score), onset is None


def _fires_when(inputs: dict[str, Any]) -> str:
    threshold, query = inputs.get("threshold"), inputs.get("query")
    if not threshold or not query:
        return ""
    return (
        f"The alert fires when {shorten(query, 80)} {threshold}; the series was analysed without that filter."
    )


def _no_query(inputs: dict[str, Any], onset: datetime | None, lined: _LinedUp | None) -> Finding:
    title = str(inputs.get("alert_title") or "").rstrip(": ")
    if title:
        head = f"{title}: the metric could not be analysed, the alert carries no expression"
        why = (
            "The alert has no generatorURL with a PromQL expression (g0.expr), so there is nothing to query."
        )
        how = "`devops-agent investigate --alert FILE --query 'PROMQL'`"
    else:
        head = "The metric could not be analysed: no PromQL was given"
        why = "No query was given, so there is no series to run the anomaly detector on."
        how = "`--query 'PROMQL'`"
    detail = f"{why} Give the PromQL of the metric as the `query` input ({how}) to find when it went wrong."
    if onset is not None and lined is not None:
        detail += f" The logs and commits below are lined up with the alert's start ({_utc(onset)}) instead."
        if lined.words:
            detail += " " + lined.sentence()
    # From an alert, a firing alert went unexplained; otherwise it is only a hint to add a query.
    quiet: Severity = "medium" if title else "info"
    return Finding(
        severity="high" if lined and (lined.related or lined.changes) else quiet,
        title=head,
        detail=detail,
        evidence=lined.evidence if lined else [],
        next_steps=[
            *(lined.next_steps if lined else []),
            "Find the alert's rule (prom_rules, or the rule files) and rerun with its expression as --query.",
        ],
    )


_SIDE_EVIDENCE = {"logs_errors": "groups", "git_log": "commits"}
"""The tools whose results are lined up with the metric, and the list each holds."""


def _readable(evidence: Evidence) -> tuple[Evidence, list[Gap]]:
    """``evidence`` without the log or commit results that cannot be read (text cut by the size
    cap, an unexpected shape), and a gap for each: they are then "given but not read", and the
    metric's own finding is still made."""
    kept: Evidence = {}
    gaps: list[Gap] = []
    for step, result in evidence.items():
        tool = str(result.metadata.get("tool"))
        if tool in _SIDE_EVIDENCE and result.status == "success":
            try:
                as_records(structured(result), _SIDE_EVIDENCE[tool])
            except CannotAnalyze as exc:
                gaps.append(
                    Gap(
                        step=str(result.metadata.get("step") or step),
                        tool="analyzer:metric_alert",
                        reason=f"the {tool} output could not be read: {exc.reason}",
                        hint=exc.hint,
                    )
                )
                continue
        kept[step] = result
    return kept, gaps


def _firing(inputs: dict[str, Any]) -> bool:
    """Whether the run investigates an alert that is still firing (it has a start, no end)."""
    return bool(inputs.get("onset")) and not inputs.get("until")


def _no_data_gap(result: ToolResult, inputs: dict[str, Any]) -> Gap:
    """The metric returned no series: a gap to explain, never an all-clear (an alert that fires
    is evidence; "the query returns nothing now" is not evidence that nothing is wrong)."""
    meta = result.metadata
    query = shorten(inputs.get("query") or meta.get("query") or "the query", 120)
    start, end = parse_time(meta.get("start")), parse_time(meta.get("end"))
    between = f" between {_utc(start)} and {_utc(end)}" if start and end else ""
    reasons = [
        "the selector may not match (a metric name or label that differs from the series)",
        "the series may be gone (its target is down or no longer scraped, the metric was renamed)",
    ]
    onset = parse_time(inputs.get("onset"))
    if onset is not None and start is not None and onset < start:
        reasons.append(f"the range starts after the alert did ({_utc(onset)})")
    elif onset is not None:
        reasons.append("the data may have aged out of retention, or the alert was evaluated elsewhere")
    who = str(inputs.get("alert_title") or "").rstrip(": ")
    head = f"{who} fires, but its" if who and _firing(inputs) else "The"
    return Gap(
        step=str(meta.get("step") or "prom_anomalies"),
        tool="prom_anomalies",
        reason=f"{head} metric {query} returned no data{between}: " + "; ".join(reasons),
        hint="open the query in Prometheus (or `devops-agent metrics anomalies 'QUERY' --since 6h`) "
        "and compare its labels with the alert's; rerun with --query when the alert's expression is wrong",
    )


def _side_checks(evidence: Evidence) -> list[Item]:
    """What the log and commit steps read, for the verdict."""
    out: list[Item] = []
    for result in results_for(evidence, "logs_errors"):
        data = structured(result) if result.status == "success" else result.metadata
        lines = number(data.get("matched_lines")) if isinstance(data, dict) else None
        out.append(checked(result, int(lines or 0), "log lines"))
    for result in results_for(evidence, "git_log"):
        commits = as_records(structured(result), "commits") if result.status == "success" else []
        out.append(checked(result, len(commits), "commits", empty_is_answer=True))
    return out


def _metric_checks(evidence: Evidence, inputs: dict[str, Any]) -> list[Item]:
    """What the metric step read, and the gap when it read nothing or judged nothing of a firing
    alert; a run without a query says the metric was not analysed."""
    result = first_result(evidence, "prom_anomalies")
    if result is None:
        if inputs.get("query"):
            return []  # the step failed: its gap says why
        return [
            Gap(
                step="metric-alert/metric",
                tool="prom_anomalies",
                reason="no PromQL was given, so the metric was not analysed",
                hint="give the metric's PromQL with --query",
            )
        ]
    meta = result.metadata
    if result.status == "no_data" and meta.get("series_total") == 0:
        return [checked(result, 0, "series"), _no_data_gap(result, inputs)]
    analyzed = int(number(meta.get("series_analyzed")) or 0)
    if result.status == "success" and isinstance(data := structured(result), dict):
        analyzed = int(number(data.get("series_analyzed")) or analyzed or len(as_records(data, "anomalous")))
    judged = max(0, analyzed - int(number(meta.get("series_too_short")) or 0))
    out: list[Item] = [checked(result, judged, "series")]
    if analyzed and not judged:
        query = shorten(inputs.get("query") or meta.get("query") or "the query", 120)
        out.append(
            Gap(
                step=str(meta.get("step") or "prom_anomalies"),
                tool="prom_anomalies",
                reason=f"could not judge {query}: too few points — "
                + (result.hint or "every series was too short for the detector").rstrip(". ")
                + (". " + _fires_when(inputs) if _fires_when(inputs) else ""),
                hint="widen --since so the detector has history from before the alert, or use a finer step",
            )
        )
    if result.status == "no_data" and judged and _firing(inputs):
        who = str(inputs.get("alert_title") or "the alert").rstrip(": ")
        threshold = f" (it fires when the value is {inputs['threshold']})" if inputs.get("threshold") else ""
        out.append(
            Gap(
                step=str(meta.get("step") or "prom_anomalies"),
                tool="prom_anomalies",
                reason=f"{who} fires, but no anomaly was found in its {judged} series{threshold}: "
                "the value may have been past the threshold for the whole range, or the rule "
                "reads something else",
                hint="compare the latest values with the alert's threshold, and widen --since "
                "to give the detector history from before the alert",
            )
        )
    return out


@register_analyzer("metric_alert")
def metric_alert(evidence: Evidence, params: dict[str, Any], inputs: dict[str, Any]) -> list[Item]:
    """One finding per anomalous series, with the log templates and changes that line up.

    Log or commit output that cannot be read becomes a gap; the metric is still reported. A
    metric that returns no data, or a firing alert whose series shows no anomaly, is a gap:
    the report cannot say all clear about an alert it could not explain.
    """
    readable, gaps = _readable(evidence)
    findings: list[Item] = list(_metric_alert(readable, params, inputs))
    if inputs.get("future_start"):
        # the payload's start is after this machine's clock: the onset was taken as now
        gaps.append(
            Gap(
                step="metric-alert/onset",
                tool="alertmanager_intake",
                reason=str(inputs["future_start"]),
                hint="check the clocks of the Alertmanager that sent it and of this machine (NTP), "
                "or the startsAt of a hand-made payload",
            )
        )
    return [*findings, *gaps, *_metric_checks(readable, inputs), *_side_checks(readable)]


def _metric_alert(evidence: Evidence, params: dict[str, Any], inputs: dict[str, Any]) -> list[Finding]:
    result = first_result(evidence, "prom_anomalies")
    onset = parse_time(inputs.get("onset"))
    logs, commits = _log_summary(evidence), _commits(evidence)
    read = _what_was_read(evidence, inputs)
    if result is None:
        # The metric step was skipped (no query) or failed (its gap says why); the alert's own
        # start is still a moment to line the logs and commits up with.
        lined = _line_up(onset, logs, commits, params, read) if onset is not None else None
        if not inputs.get("query"):
            return [_no_query(inputs, onset, lined)]
        if onset is None or lined is None or not (lined.related or lined.changes):
            return []
        return [
            Finding(
                severity="high",
                title=f"What lined up with the alert's start at {_utc(onset)} (the metric was not read)",
                detail=lined.sentence(),
                evidence=lined.evidence,
                next_steps=lined.next_steps,
            )
        ]
    query = inputs.get("query") or "the query"
    fires_when = _fires_when(inputs)
    if result.status == "no_data":
        meta = result.metadata
        unmatched = meta.get("series_total") == 0  # nothing matched, vs. nothing anomalous
        # every analysed series was too short for the detector: nothing was judged, so this is
        # not an all-clear (from an alert, the firing alert is left unexplained)
        unjudged = not unmatched and meta.get("series_too_short", 0) >= (meta.get("series_analyzed") or 1)
        if unmatched or unjudged:
            return []  # gaps, not findings: see _metric_checks
        hint = (result.hint or "").rstrip(". ")
        return [
            Finding(
                severity="info",
                title=f"No anomaly in {shorten(query, 80)}",
                detail=" ".join(p for p in (f"{hint}." if hint else "", fires_when) if p),
                source=source_of(result),
            )
        ]
    if result.status != "success":
        return []
    data = structured(result)
    series = as_records(data, "anomalous")
    step = timedelta(seconds=(number(data.get("step_s")) if isinstance(data, dict) else None) or 0)
    lead = timedelta(minutes=float(params.get("onset_lead_minutes", 60)))
    findings: list[Finding] = []
    for s in series:
        events = list_field(s, "anomalies")
        if not events:
            continue
        event, near = _pick_event(events, onset, lead, max(_ONSET_LAG, 2 * step))
        start = parse_time(event.get("start"))
        verb = _KIND_WORDS.get(str(event.get("kind")), "became anomalous")
        when = _utc(start) if start else "an unknown time"
        lined = _line_up(start, logs, commits, params, read) if start else _LinedUp()
        evidence_lines = [str(event.get("explanation", "")), *lined.evidence]
        notes = [fires_when] if fires_when else []
        if onset is not None and not near:
            notes.append(
                f"The alert started at {_utc(onset)}, but no anomaly of this series began in the "
                f"{lead} before it; this is the strongest one in the range."
            )
        detail = f"{event.get('explanation')}." + (" " + lined.sentence() if lined.words else "")
        detail += "".join(f" {n}" for n in notes)
        score = number(event.get("score")) or 0.0
        findings.append(
            Finding(
                severity="high" if lined.related or lined.changes or score >= 0.9 else "medium",
                title=f"{shorten(s.get('series'), 90)} {verb} at {when}",
                detail=detail,
                evidence=evidence_lines,
                source=source_of(result),
                next_steps=[
                    *lined.next_steps,
                    f"Query the series around {when} at a finer step to see the exact onset.",
                ],
            )
        )
    return findings
