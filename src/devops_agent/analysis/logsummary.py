"""A long log condensed: its templates, its error signatures ranked by novelty and burst, its tail.

:func:`mine_templates` feeds (source, line) pairs to a :class:`~devops_agent.analysis.TemplateMiner`
and summarizes what it learnt; :func:`summarize_log` condenses one log text (a Jenkins console, a
pod's or a container's log) for the model. The ``logs`` toolset, the integrations that return
logs and ``devops-agent logs patterns`` all call these.

This module is pure: it must not read files or import from tools, policies, agent or interfaces;
callers read the lines and pass them in.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from devops_agent.analysis.loggroup import SPIKE_MIN
from devops_agent.analysis.logline import (
    MAX_SHOWN_CHARS,
    Continuations,
    PartialLines,
    extract_message,
    is_error,
    strip_container_prefix,
)
from devops_agent.analysis.logshape import with_status_phrase
from devops_agent.analysis.templates import Template, TemplateMiner
from devops_agent.analysis.timeparse import extract_timestamp, iso

__all__ = ["SUMMARY_MIN_LINES", "SUMMARY_TAIL_LINES", "mine_templates", "summarize_log"]


def _span_buckets(templates: list[Template], bucket_s: int) -> int:
    """How many time buckets the whole input spans (at least 1)."""
    keys = [datetime.fromisoformat(k) for t in templates for k in t.buckets]
    return int((max(keys) - min(keys)).total_seconds() // bucket_s) + 1 if keys else 1


def _burst(t: Template, span: int) -> float:
    """Peak bucket over the template's average per bucket across the whole input (1.0 = steady).

    A peak of fewer than SPIKE_MIN lines is no burst (1.0): one line alone in its bucket would
    otherwise score as high as the input is long, and rank a one-off above a real burst.
    """
    if not t.buckets or t.count == 0:
        return 1.0
    peak = max(t.buckets.values())
    return round(peak / (t.count / span), 2) if peak >= SPIKE_MIN else 1.0


def mine_templates(
    lines: Iterable[tuple[str, str]],
    miner: TemplateMiner,
    since: datetime | None = None,
    until: datetime | None = None,
    max_templates: int = 30,
) -> dict[str, Any]:
    """Feed (source, raw line) pairs to ``miner`` (which keeps learning across calls); summarize.

    A line without a timestamp is dated by the previous line of the same source (none at the
    start of each source). Continuation lines (stack frames, a traceback, a JVM's exception line
    under an error; see :class:`~devops_agent.analysis.logline.Continuations`) belong to the
    record above them and are counted in ``continuation_lines``, not mined.

    Besides every template by count, ``error_signatures`` ranks the templates of error lines by
    novelty (not known to the miner before this call, e.g. from a saved state) and then burst
    (peak time bucket over the mean), so a new or bursting failure comes first.
    """
    known_before = {t.id for t in miner.templates()}
    error_ids: set[int] = set()
    total = folded = 0
    # A line without a time of its own takes the previous line's, from the same source only:
    # a file without timestamps must not borrow the last time of the file read before it.
    last_ts: dict[str, datetime | None] = {}
    follow = Continuations()  # stack frames and tracebacks belong to the record above them
    partial = PartialLines()

    def mine(source: str, raw: str, content: str) -> None:
        nonlocal total, folded
        if follow.continues(source, content):
            folded += 1
            return
        ts = extract_timestamp(raw) or last_ts.get(source)
        last_ts[source] = ts
        if (since and ts and ts < since) or (until and ts and ts > until):
            follow.started(False)
            return
        message, level = extract_message(raw)
        error = is_error(message, level)
        follow.started(error)
        if message.strip():
            match = miner.add(with_status_phrase(message), timestamp=ts, raw=raw[:MAX_SHOWN_CHARS])
            if error:
                error_ids.add(match.template_id)
            total += 1

    for source, line in lines:
        content = strip_container_prefix(line)
        if content is not line or partial.pending:  # a container's line, maybe a partial one
            joined = partial.feed(source, line, content)
            if partial.flushed is not None:
                (done_line, done_content), partial.flushed = partial.flushed, None
                mine(source, done_line, done_content)
            if joined is None:
                continue
            line, content = joined
        mine(source, line, content)
    for source, line, content in partial.drain():
        mine(source, line, content)
    templates = sorted(miner.templates(), key=lambda t: -t.count)
    span = _span_buckets(templates, miner.config.bucket_seconds)

    def view(t: Template) -> dict[str, Any]:
        return {
            "template": t.template,
            "count": t.count,
            "first_seen": iso(t.first_seen),
            "last_seen": iso(t.last_seen),
            "examples": list(t.examples),
            "burst": _burst(t, span),
            "buckets": dict(sorted(t.buckets.items())[-60:]),
        }

    current = {miner.resolve(i) for i in error_ids}  # templates may have merged since
    errors = [t for t in templates if t.id in current]
    errors.sort(key=lambda t: (t.id in known_before, -_burst(t, span), -t.count))
    return {
        "lines": total,
        "continuation_lines": folded,
        "templates_total": len(templates),
        "templates": [view(t) for t in templates[: max(1, min(max_templates, 500))]],
        "error_signatures": [view(t) | {"new": t.id not in known_before} for t in errors[:10]],
    }


SUMMARY_MIN_LINES = 400
"""A log text longer than this reaches the model as a summary (other tools use :func:`summarize_log`)."""
SUMMARY_TAIL_LINES = 60


def summarize_log(text: str, source: str, *, max_templates: int = 15) -> dict[str, Any] | None:
    """Condense a long log text for the model: templates, error signatures and the last lines.

    ``None`` when the text is short enough to pass as it is. Tools that return a log (a Jenkins
    console, a pod's or a container's log) call this and attach the full text as the result's
    ``raw``, which the session keeps for the user.
    """
    lines = text.splitlines()
    if len(lines) <= SUMMARY_MIN_LINES:
        return None
    mined = mine_templates(((source, line) for line in lines), TemplateMiner(), max_templates=max_templates)

    def lean(view: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in view.items() if v is not None and k not in ("buckets", "new")}

    errors = [lean(v) for v in mined["error_signatures"]]
    shown = {v["template"] for v in errors}
    return {
        "summarized": True,
        "lines": len(lines),
        "templates_total": mined["templates_total"],
        "error_signatures": errors,
        "other_templates": [lean(v) for v in mined["templates"] if v["template"] not in shown],
        "tail": lines[-SUMMARY_TAIL_LINES:],
    }
