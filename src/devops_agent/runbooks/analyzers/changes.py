"""Change analyzer: commits in the window from ``git_log`` (and the latest ``git_diff`` stat).

Changes are the most common cause of incidents, configuration changes most of all, so commits
touching config-like files raise the finding to medium and name those files. Must not run git.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any

from devops_agent.agent.report import Finding
from devops_agent.runbooks.analyzers.base import (
    Evidence,
    Item,
    as_records,
    checked,
    first_result,
    list_field,
    number,
    register_analyzer,
    results_for,
    shorten,
    source_of,
    structured,
)

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
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return str(value or "?")
    if parsed.tzinfo is None:
        return parsed.strftime("%Y-%m-%dT%H:%M")
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ")


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


def commit_line(commit: dict[str, Any]) -> str:
    """``abc1234 2026-11-22T10:00Z alice: subject (+12/-3 in 4 files)``."""
    sha = str(commit.get("short_sha") or str(commit.get("sha") or "?")[:7])
    plus, minus, files = _totals(commit)
    stat = f" (+{plus}/-{minus} in {files} file{'s' if files != 1 else ''})" if files else ""
    subject = shorten(commit.get("subject") or commit.get("message") or "", 100)
    when = commit.get("date") or commit.get("committed") or commit.get("authored")
    return f"{sha} {_fmt_date(when)} {_author(commit.get('author'))}: {subject}{stat}"


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


@register_analyzer("recent_changes")
def recent_changes(evidence: Evidence, params: dict[str, Any], inputs: dict[str, Any]) -> list[Item]:
    """Commits in the window as evidence; medium when any touches config-like files, else low.

    A history read with no commit in the window is an answer (nothing changed), unlike a log
    with no line in it."""
    max_lines = int(params.get("max_commits", 20))
    window = f" since {inputs['since']}" if inputs.get("since") else ""
    repo = f" in {inputs['repo']}" if inputs.get("repo") else ""
    findings: list[Item] = []
    for result in results_for(evidence, "git_log"):
        data = structured(result) if result.status == "success" else None
        commits = as_records(data, "commits")
        findings.append(checked(result, len(commits), "commits", empty_is_answer=True))
        if not commits:
            findings.append(
                Finding(severity="info", title=f"No changes{repo}{window}", source=source_of(result))
            )
            continue
        config_hits: list[str] = []
        for commit in commits:
            sha = str(commit.get("short_sha") or str(commit.get("sha") or "?")[:7])
            config_hits += [f"{path} ({sha})" for path in _file_paths(commit) if is_config_path(path)]
        lines = [commit_line(c) for c in commits[:max_lines]]
        if len(commits) > max_lines:
            lines.append(f"… and {len(commits) - max_lines} older commits")
        noun = "commit" if len(commits) == 1 else "commits"
        detail = f"Newest first. Most recent: {lines[0]}."
        steps = ["Read the newest commits' diffs first: `git show --stat <sha>` then `git show <sha>`"]
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
        findings.append(
            Finding(
                severity="medium" if config_hits else "low",
                title=f"{len(commits)} {noun}{repo}{window}"
                + (f", {len(config_hits)} config file change(s)" if config_hits else ""),
                detail=detail,
                evidence=lines + [f"config: {hit}" for hit in config_hits[:20]],
                source=source_of(result),
                next_steps=steps,
            )
        )
    return findings
