"""Change analyzer: commits in the window from ``git_log`` (and the latest ``git_diff`` stat).

Changes are the most common cause of incidents, configuration changes most of all, so commits
touching config-like files raise the finding to medium and name those files. Each commit is shown
with its author time (what ``git log`` shows), and its commit time too where the two differ (a
rebase, a cherry-pick or a merge lands a change later than it was written). When the
investigation knows when the trouble began — the alert's ``startsAt`` (the ``onset`` input), else
the first line of the earliest error template that appeared in the logs read (``logs_errors``)
— the commits are placed around that moment by when they landed (commit time): "landed 12 min
before the first error". Must not run git.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import PurePosixPath
from typing import Any

from devops_agent.evidence import parse_time
from devops_agent.report import Finding
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
from devops_agent.runbooks.analyzers.metrics import is_new

CONFIG_SUFFIXES = (".yaml", ".yml", ".toml", ".ini", ".conf", ".cfg", ".json", ".tf", ".tfvars", ".env")
CONFIG_DIRS = ("k8s", "kubernetes", "manifests", "helm", "charts", "deploy", "terraform", "ansible")


def is_config_path(path: str) -> bool:
    """Config-like: YAML/TOML/INI/JSON/Terraform, Dockerfiles, compose files, k8s/helm/deploy dirs."""
    p = PurePosixPath(path)
    name = p.name.lower()
    if name.startswith(("dockerfile", "docker-compose", "compose.")) or name.endswith(".dockerfile"):
        return True
    if name.endswith(CONFIG_SUFFIXES):
        return True
    return any(part.lower() in CONFIG_DIRS for part in p.parts[:-1])


def _fmt_date(value: Any) -> str:
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%dT%H:%MZ")
    parsed = _parse(value)
    if parsed is None:
        return str(value or "?")
    if parsed.tzinfo is None:
        return parsed.strftime("%Y-%m-%dT%H:%M")
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ")


def _parse(value: Any) -> datetime | None:
    # Not evidence.parse_time: a date shown as the tool gave it keeps a naive time naive.
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def commit_times(commit: dict[str, Any]) -> tuple[Any, Any]:
    """``(authored, committed)`` as the tool gave them; a lone ``date`` counts as both."""
    date = commit.get("date")
    return commit.get("authored") or date, commit.get("committed") or date


def landed(commit: dict[str, Any]) -> datetime | None:
    """When the commit landed on its branch (its commit time, else its author time), aware."""
    authored, committed = commit_times(commit)
    return parse_time(committed) or parse_time(authored)


@dataclass(frozen=True)
class Onset:
    """When the trouble began, and what says so (``the first error``, ``the alert's start``)."""

    at: datetime
    what: str
    detail: str = ""


def _span(delta: timedelta) -> str:
    minutes = round(abs(delta).total_seconds() / 60)
    if minutes < 1:
        return "under a minute"
    if minutes < 120:
        return f"{minutes} min"
    if minutes < 48 * 60:
        return f"{minutes / 60:.1f} h".replace(".0 h", " h")
    return f"{minutes / 1440:.1f} days".replace(".0 days", " days")


def relative(commit: dict[str, Any], onset: Onset) -> str:
    """``landed 12 min before the first error`` (or after it), from the commit time."""
    when = landed(commit)
    if when is None:
        return ""
    delta = when - onset.at
    if abs(delta) < timedelta(minutes=1):
        return f"landed with {onset.what}"
    return f"landed {_span(delta)} {'before' if delta < timedelta(0) else 'after'} {onset.what}"


def _author(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("name") or value.get("email") or "?")
    return str(value or "?")


def _totals(record: dict[str, Any]) -> tuple[int, int, int]:
    """``(insertions, deletions, files)``: the tool's totals when given (its file list may be capped)."""
    files = [f for f in list_field(record, "files") if isinstance(f, dict)]
    plus = number(record.get("insertions"))
    minus = number(record.get("deletions"))
    count = number(record.get("files_changed"))
    return (
        int(plus if plus is not None else sum(number(f.get("insertions")) or 0 for f in files)),
        int(minus if minus is not None else sum(number(f.get("deletions")) or 0 for f in files)),
        int(count if count is not None else len(files)),
    )


def commit_line(commit: dict[str, Any], onset: Onset | None = None) -> str:
    """``abc1234 2026-11-22T10:00Z alice: subject (+12/-3 in 4 files)``: the author time, then
    ``[committed …]`` where the commit time differs, then where it landed against ``onset``."""
    sha = _sha(commit)
    plus, minus, files = _totals(commit)
    stat = f" (+{plus}/-{minus} in {files} file{'s' if files != 1 else ''})" if files else ""
    subject = shorten(commit.get("subject") or commit.get("message") or "", 100)
    authored, committed = commit_times(commit)
    shown = _fmt_date(authored or committed)
    if committed and authored and _fmt_date(committed) != shown:
        shown += f" [committed {_fmt_date(committed)}]"
    where = f" — {text}" if onset is not None and (text := relative(commit, onset)) else ""
    return f"{sha} {shown} {_author(commit.get('author'))}: {subject}{stat}{where}"


def diff_stat(data: Any) -> list[str]:
    """``path | +ins -del`` lines from a ``git_diff`` result (its ``stat`` text or its ``files``)."""
    if not isinstance(data, dict):
        return []
    if isinstance(data.get("stat"), str):
        return [line.strip() for line in data["stat"].strip().splitlines() if line.strip()]
    lines = []
    for f in list_field(data, "files"):
        if isinstance(f, dict):
            change = (
                "binary" if f.get("binary") else f"+{f.get('insertions') or 0} -{f.get('deletions') or 0}"
            )
            lines.append(f"{f.get('path', '?')} | {change}")
    plus, minus, files = _totals(data)
    if lines:
        lines.append(f"{files} file{'s' if files != 1 else ''} changed, +{plus} -{minus}")
    return lines


def _file_paths(commit: dict[str, Any]) -> list[str]:
    files = list_field(commit, "files")
    return [str(f.get("path")) if isinstance(f, dict) else str(f) for f in files]


_EARLIEST = datetime.min.replace(tzinfo=UTC)
_LOG_WINDOW = timedelta(minutes=15)
"""The gap assumed between the lines of an error seen once, to tell a new one from one that was
already there when the logs read begin (:func:`~.metrics.is_new`)."""


def find_onset(evidence: Evidence, inputs: dict[str, Any]) -> tuple[Onset | None, str]:
    """When the trouble began, and a sentence when the logs show errors but not their beginning.

    The alert's start (the ``onset`` input) wins; else the earliest first line among the error
    templates that appeared in the logs read (not those already there when the lines begin).
    """
    alert = parse_time(inputs.get("onset"))
    if alert is not None:
        return Onset(alert, "the alert's start"), ""
    logs = first_result(evidence, "logs_errors")
    if logs is None or logs.status != "success":
        return None, ""
    try:
        data = structured(logs)
        groups = as_records(data, "groups")
    except CannotAnalyze:
        return None, ""  # the log analyzer reports the unreadable output
    read_from = parse_time(dict_field(data, "time_range").get("start")) if isinstance(data, dict) else None
    new = [
        (first, g)
        for g in groups
        if (first := parse_time(g.get("first_seen"))) is not None and is_new(g, read_from, _LOG_WINDOW)
    ]
    if new:
        first, group = min(new, key=lambda item: item[0])
        return Onset(first, "the first error", shorten(group.get("shape"), 100)), ""
    if groups:
        since = f" ({_fmt_date(read_from)})" if read_from else ""
        return None, (
            f"The errors in the logs were already there where the lines read begin{since}, so when they "
            "began is not known and the commits are not placed against it; widen --since to find it."
        )
    return None, ""


def _timeline(commits: list[dict[str, Any]], onset: Onset | None, max_lines: int) -> list[str]:
    """Commit lines newest first, with a line marking ``onset`` where it falls among them."""
    lines = [commit_line(c, onset) for c in commits[:max_lines]]
    if onset is not None:
        at = next(
            (n for n, c in enumerate(commits[:max_lines]) if (t := landed(c)) is not None and t <= onset.at),
            len(lines),
        )
        what = f"{onset.what}: {onset.detail}" if onset.detail else onset.what
        lines.insert(at, f"── {_fmt_date(onset.at)} {what} ──")
    if len(commits) > max_lines:
        lines.append(f"… and {len(commits) - max_lines} older commits")
    return lines


@register_analyzer("recent_changes")
def recent_changes(evidence: Evidence, params: dict[str, Any], inputs: dict[str, Any]) -> list[Item]:
    """Commits in the window as evidence, placed around the onset when one is known; medium when
    any touches config-like files or landed in the ``change_window_hours`` before the onset.

    A history read with no commit in the window is an answer (nothing changed), unlike a log
    with no line in it."""
    max_lines = int(params.get("max_commits", 20))
    change_window = timedelta(hours=float(params.get("change_window_hours", 2)))
    window = f" since {inputs['since']}" if inputs.get("since") else ""
    repo = f" in {inputs['repo']}" if inputs.get("repo") else ""
    onset, unknown_onset = find_onset(evidence, inputs)
    findings: list[Item] = []
    for result in results_for(evidence, "git_log"):
        data = structured(result) if result.status == "success" else None
        # newest landed first, whatever order the tool listed them in (merges interleave)
        commits = sorted(as_records(data, "commits"), key=lambda c: landed(c) or _EARLIEST, reverse=True)
        findings.append(checked(result, len(commits), "commits", empty_is_answer=True))
        if not commits:
            findings.append(
                Finding(severity="info", title=f"No changes{repo}{window}", source=source_of(result))
            )
            continue
        config_hits: list[str] = []
        for commit in commits:
            config_hits += [
                f"{path} ({_sha(commit)})" for path in _file_paths(commit) if is_config_path(path)
            ]
        suspects = []
        if onset is not None:
            suspects = [
                c
                for c in commits
                if (t := landed(c)) is not None and onset.at - change_window <= t <= onset.at
            ]
        lines = _timeline(commits, onset, max_lines)
        noun = "commit" if len(commits) == 1 else "commits"
        detail = f"Newest first. Most recent: {commit_line(commits[0])}."
        steps = ["Read the newest commits' diffs first: `git show --stat <sha>` then `git show <sha>`"]
        if onset is not None:
            where = f" at {_fmt_date(onset.at)}"
            if suspects:
                detail += (
                    f" {len(suspects)} landed in the {_span(change_window)} before {onset.what}{where}; the "
                    f"last one: {commit_line(suspects[0], onset)}."
                )
                steps.insert(
                    0,
                    f"Read what landed just before {onset.what} first: `git show {_sha(suspects[0])}`",
                )
            else:
                detail += f" None landed in the {_span(change_window)} before {onset.what}{where}."
        elif unknown_onset:
            detail += " " + unknown_onset
        if config_hits:
            detail += " Config-like files changed: " + ", ".join(config_hits[:8])
            detail += f" and {len(config_hits) - 8} more." if len(config_hits) > 8 else "."
            steps.insert(0, "Review the configuration changes first; they are the usual cause of incidents")
        steps.append(
            "If a change lines up with when the problem started, roll it back before debugging further"
        )
        diff = first_result(evidence, "git_diff")
        if diff is not None and diff.status == "success" and (stat := diff_stat(diff.data)):
            lines += [
                f"diff {diff.metadata.get('args', {}).get('rev_range', '')}:".replace(" :", ":"),
                *stat[:15],
            ]
        title = f"{len(commits)} {noun}{repo}{window}"
        if suspects and onset is not None:
            title += f", {len(suspects)} in the {_span(change_window)} before {onset.what}"
        if config_hits:
            title += f", {len(config_hits)} config file change(s)"
        findings.append(
            Finding(
                severity="medium" if config_hits or suspects else "low",
                title=title,
                detail=detail,
                evidence=lines + [f"config: {hit}" for hit in config_hits[:20]],
                source=source_of(result),
                next_steps=steps,
            )
        )
    return findings


def _sha(commit: dict[str, Any]) -> str:
    return str(commit.get("short_sha") or str(commit.get("sha") or "?")[:7])
