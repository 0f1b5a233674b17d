"""Tool outputs as :class:`~devops_agent.evidence.Evidence` for the user's faces: log templates as a
table, the first error and error bursts, commits and deployment revisions as timeline entries.

Each function reads the ``data`` a tool is about to return (the same facts a model reads), so the
evidence shows nothing the output does not. Pure: this module must not read files or call APIs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from devops_agent.evidence import (
    Evidence,
    TemplateRow,
    TimelineEntry,
    entry,
    parse_time,
    template_table,
)


def _first(examples: Any) -> str:
    return str(examples[0]) if isinstance(examples, list) and examples else ""


def _row(view: Mapping[str, Any], text_key: str) -> TemplateRow:
    return TemplateRow(
        template=str(view.get(text_key) or ""),
        count=int(view.get("count") or 0),
        first_seen=parse_time(view.get("first_seen")),
        last_seen=parse_time(view.get("last_seen")),
        sample=_first(view.get("examples")),
    )


def _onset(errors: Iterable[TemplateRow]) -> list[TimelineEntry]:
    """The earliest first-seen of ``errors`` as the ``error_onset`` (nothing when none is dated)."""
    dated = [(r.first_seen, r) for r in errors if r.first_seen is not None]
    if not dated:
        return []
    at, first = min(dated, key=lambda pair: pair[0])
    return [entry(at, "error_onset", f"first error: {first.template}")]


def patterns_evidence(data: Mapping[str, Any]) -> Evidence:
    """``logs_patterns``' templates as a table (every line's templates, by count)."""
    rows = [_row(v, "template") for v in data.get("templates") or []]
    total = int(data.get("templates_total") or len(rows))
    return Evidence(templates=template_table(rows, total=total, lines=int(data.get("lines") or 0)))


def summary_evidence(summary: Mapping[str, Any]) -> Evidence:
    """A long log condensed by :func:`~devops_agent.analysis.logsummary.summarize_log` (a pod's,
    a container's, a Jenkins console): its templates as a table, error signatures first, and the
    first error signature's first line as the ``error_onset``."""
    errors = [_row(v, "template") for v in summary.get("error_signatures") or []]
    others = [_row(v, "template") for v in summary.get("other_templates") or []]
    table = template_table(
        [*errors, *others],
        total=int(summary.get("templates_total") or len(errors) + len(others)),
        lines=int(summary.get("lines") or 0),
    )
    return Evidence(templates=table, timeline=_onset(errors))


def error_groups_evidence(data: Mapping[str, Any]) -> Evidence:
    """``logs_errors``' groups as a table of error templates, and when errors began: the earliest
    first-seen (``error_onset``) and each group's burst (its spike's start)."""
    groups = data.get("groups") or []
    rows = [_row(g, "shape") for g in groups]
    table = template_table(
        rows,
        total=int(data.get("groups_total") or len(rows)),
        lines=int(data.get("error_lines") or 0),
        errors_only=True,
    )
    timeline = _onset(rows)
    for group in groups:
        start = parse_time(group.get("spike_start"))
        first_seen = parse_time(group.get("first_seen"))
        if start is not None and first_seen is not None:
            start = max(start, first_seen)  # the burst's bucket may begin before its first line
        if start is not None and group.get("spike"):
            words = group.get("spike_description") or f"{group.get('count')} errors"
            timeline.append(entry(start, "error_onset", f"error burst: {words} — {group.get('shape') or ''}"))
    return Evidence(templates=table, timeline=timeline)


def commits_evidence(commits: Iterable[Mapping[str, Any]]) -> Evidence:
    """``git_log``'s commits as ``commit`` entries at their commit time."""
    timeline = []
    for c in commits:
        at = parse_time(c.get("committed")) or parse_time(c.get("authored"))
        if at is not None:
            who = f" ({c['author']})" if c.get("author") else ""
            timeline.append(entry(at, "commit", f"{c.get('short_sha') or ''} {c.get('subject') or ''}{who}"))
    return Evidence(timeline=timeline)


def rollout_evidence(deployment: str, revisions: Iterable[Mapping[str, Any]]) -> Evidence:
    """``k8s_rollout_history``'s revisions as ``deploy`` entries at the time each was created."""
    timeline = []
    for r in revisions:
        at = parse_time(r.get("created"))
        if at is not None:
            images = ", ".join(str(i) for i in r.get("images") or [])
            cause = f" — {r['changeCause']}" if r.get("changeCause") else ""
            timeline.append(
                entry(at, "deploy", f"{deployment} revision {r.get('revision')}: {images}{cause}")
            )
    return Evidence(timeline=timeline)
