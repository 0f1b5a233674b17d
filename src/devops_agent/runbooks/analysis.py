"""After the tools ran: feed each runbook's analyzers their evidence and merge everything into a Report.

Only evidence that was actually gathered (status ``success`` or ``no_data``) reaches an
analyzer; an analyzer whose steps all failed is not run, so no finding is invented. An analyzer
that cannot read its evidence (or fails) becomes a gap instead of ending the run, as does what an
analyzer reports as not gathered (a :class:`Gap` among its findings).

What each analyzer read (its :class:`Checked` items) goes into the report, and the report's
verdict is derived from it: an analyzer that ran but did not say what it read, or read nothing
in the window, leaves a gap here, so it can never make an all-clear.

This module must not call tools or emit events.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from devops_agent.report import (
    Checked,
    Finding,
    Gap,
    Report,
    rank_findings,
    severity_rank,
    summarize,
)
from devops_agent.runbooks.analyzers import ANALYZERS, CannotAnalyze, Evidence
from devops_agent.runbooks.model import Runbook
from devops_agent.runbooks.plan import PlannedCall
from devops_agent.runbooks.templating import (
    TemplateError,
    is_empty,
    placeholder_values,
    render,
    template_names,
)

USABLE = ("success", "no_data")
_ADVICE_UP_TO = severity_rank("medium")
_MAX_FINDING_ADVICE = 5


def evidence_for(runbook: Runbook, calls: Sequence[PlannedCall], step_ids: Sequence[str]) -> Evidence:
    """The gathered results of ``step_ids``, each stamped with ``tool``, ``args`` and ``step`` metadata.

    ``other/step`` is a step of the runbook ``other``, there when that runbook ran too.
    """
    index = {(rb.name, step.id): call for call in calls for rb, step in call.refs}
    evidence: Evidence = {}
    for step_id in step_ids:
        owner, _, own_id = step_id.rpartition("/")
        call = index.get((owner or runbook.name, own_id))
        if call is None or call.result is None or call.result.status not in USABLE:
            continue
        meta = {
            **call.result.metadata,
            "tool": call.tool,
            "args": call.args,
            "step": f"{owner or runbook.name}/{own_id}",
        }
        evidence[step_id] = call.result.model_copy(update={"metadata": meta})
    return evidence


def analyze(
    runbook: Runbook, calls: Sequence[PlannedCall], context: dict[str, Any]
) -> tuple[list[Finding], list[Gap], list[Checked]]:
    """Run ``runbook``'s analyzers over its gathered evidence: findings, analysis gaps, what was read."""
    findings: list[Finding] = []
    gaps: list[Gap] = []
    checks: list[Checked] = []
    for use in runbook.analyzers:
        evidence = evidence_for(runbook, calls, use.on)
        if not evidence:
            continue  # the tool-failure gaps already say why
        where = ", ".join(s if "/" in s else f"{runbook.name}/{s}" for s in use.on)
        tool = f"analyzer:{use.use}"
        found: list[Checked] = []
        explained = False
        try:
            for item in ANALYZERS[use.use](evidence, dict(use.params), context):
                if isinstance(item, Gap):
                    gaps.append(item)
                    explained = True
                elif isinstance(item, Checked):
                    found.append(item)
                else:
                    findings.append(item)
        except CannotAnalyze as exc:
            gaps.append(Gap(step=where, tool=tool, reason=exc.reason, hint=exc.hint))
            continue
        except Exception as exc:  # a broken analyzer must not cost the user the rest of the report
            gaps.append(
                Gap(
                    step=where,
                    tool=tool,
                    reason=f"analyzer failed: {type(exc).__name__}: {exc}",
                    hint="this is a bug in the analyzer; the raw tool output is in the tool_result events",
                )
            )
            continue
        if not found and not explained:
            gaps.append(
                Gap(
                    step=where,
                    tool=tool,
                    reason="the analyzer did not say what it read, so finding nothing there is no all-clear",
                    hint="analyzers return a Checked item per source they read (analyzers.base.checked)",
                )
            )
        checks += found
    return findings, gaps, checks


def unread_gaps(checks: Sequence[Checked], gaps: Sequence[Gap]) -> list[Gap]:
    """A gap for each check that read nothing in the window and has no gap of its own saying why."""
    explained = {gap.step for gap in gaps}
    out: list[Gap] = []
    for check in checks:
        if check.counts_as_read or check.step in explained:
            continue
        explained.add(check.step)
        out.append(
            Gap(
                step=check.step,
                tool=check.tool,
                reason=f"read no {check.unit} in the window" + (f" ({check.detail})" if check.detail else ""),
                hint="nothing read is not nothing wrong: widen the window or check the source",
            )
        )
    return out


def _dedupe(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _unique_findings(findings: Sequence[Finding]) -> list[Finding]:
    # Runbooks sharing a deduplicated call and an analyzer produce the same finding twice.
    seen: set[tuple[str, str, str, tuple[str, ...]]] = set()
    out: list[Finding] = []
    for f in findings:
        key = (f.severity, f.title, f.detail, tuple(f.evidence))
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


_HOLE = re.compile(r"\s\s|^\s|\s$|[(\[]\s|\s[)\]]|[(\[][)\]]|[:,;]$")
"""What an empty placeholder leaves in a title: doubled or dangling spaces, empty brackets,
a trailing separator (``Crashing pod  in `` for ``Crashing pod {{ pod }} in {{ namespace }}``)."""


def _value_text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return " ".join(str(value).split()).rstrip(":,; ")


def runbook_title(runbook: Runbook, context: Mapping[str, Any]) -> str:
    """The runbook's report title rendered from ``context``.

    When an input the title names is missing and rendering it would leave a hole, the title is
    the runbook's plain ``title`` followed by the placeholders that were given, e.g. ``Crashing
    Kubernetes pod (namespace: checkout)``; a placeholder that may be empty without leaving a
    hole (``Metric alert: {{ alert_title }}{{ query }}``) keeps the template.
    """
    template = runbook.report_title
    try:
        rendered = str(render(template, context))
        values = placeholder_values(template, context)
    except TemplateError:
        return runbook.title
    if all(not is_empty(value) for _, value in values) or not _HOLE.search(rendered):
        return " ".join(rendered.split())
    given = {name: _value_text(value) for name, value in values if not is_empty(value)}
    details = "; ".join(f"{name}: {text}" for name, text in given.items() if text)
    return runbook.title + (f" ({details})" if details else "")


def _title(runbooks: Sequence[Runbook], contexts: Mapping[str, dict[str, Any]]) -> str:
    titles = [runbook_title(runbook, contexts.get(runbook.name, {})) for runbook in runbooks]
    return " · ".join(titles) or "Investigation"


def _host(calls: Sequence[PlannedCall]) -> str | None:
    for call in calls:
        result = call.result
        if (
            call.tool == "system_overview"
            and result is not None
            and result.status == "success"
            and isinstance(result.data, dict)
            and result.data.get("hostname")
        ):
            return str(result.data["hostname"])
    return None


def _uses(runbook: Runbook, name: str) -> bool:
    try:
        return any(name in template_names(step.args) for step in runbook.steps)
    except TemplateError:
        return False


def _window(
    runbooks: Sequence[Runbook], inputs: Mapping[str, Any], contexts: Mapping[str, dict[str, Any]]
) -> str | None:
    """The time window of the evidence: the ``since`` given, or the one every runbook that reads
    a window used (a runbook that read everything, because it has no default, makes it none)."""
    since = inputs.get("since")
    if is_empty(since):
        used = [contexts.get(r.name, {}).get("since") for r in runbooks if _uses(r, "since")]
        defaults = {None if is_empty(v) else str(v) for v in used}
        since = defaults.pop() if len(defaults) == 1 else None
    until = inputs.get("until")
    if is_empty(since) and is_empty(until):
        return None
    return " ".join(p for p in (f"since {since}" if since else "", f"until {until}" if until else "") if p)


def build_report(
    runbooks: Sequence[Runbook],
    inputs: Mapping[str, Any],
    contexts: Mapping[str, dict[str, Any]],
    calls: Sequence[PlannedCall],
    findings: Sequence[Finding],
    gaps: Sequence[Gap],
    stats: dict[str, Any],
    checks: Sequence[Checked] = (),
) -> Report:
    """Merge findings (deduplicated, ranked), advice, gaps and what was read into one report.

    The verdict follows from them (:attr:`Report.verdict`); a check that read nothing without a
    gap saying why gets one here (:func:`unread_gaps`)."""
    checks = list(dict.fromkeys(checks))  # runbooks sharing a call and an analyzer read it once
    gaps = [*gaps, *unread_gaps(checks, gaps)]
    ranked = rank_findings(_unique_findings(findings))
    # The first (most useful) step of each problem finding; the rest stay under the finding.
    advice = [f.next_steps[0] for f in ranked if f.next_steps and severity_rank(f.severity) <= _ADVICE_UP_TO]
    advice = advice[:_MAX_FINDING_ADVICE]
    advice += [s for runbook in runbooks for s in runbook.next_steps]
    host, window = _host(calls), _window(runbooks, inputs, contexts)
    counts = Counter(f.severity for f in ranked)
    return Report(
        title=_title(runbooks, contexts),
        question=str(inputs.get("question") or ""),
        summary=summarize(ranked, host=host, window=window, gaps=gaps, checks=checks),
        findings=ranked,
        next_steps=_dedupe(advice),
        gaps=gaps,
        checks=checks,
        runbooks=[r.name for r in runbooks],
        host=host,
        window=window,
        stats={**stats, "findings": dict(counts)},
    )
