"""From evidence to a triage report: findings per failing build, root-cause hypotheses with a
confidence, related tickets and KB passages, owners, next steps and the summary.

Pure: this module must not call tools; a finding is never invented for evidence that is missing.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any

from devops_agent.report import Finding, Gap, Report, Severity
from devops_agent.runbooks.triage.calls import TriageCalls
from devops_agent.runbooks.triage.evidence import Build, data_of, test_name
from devops_agent.runbooks.triage.plan import NAME, Confidence

_WORD = re.compile(r"[a-z]{4,}")
STOP_WORDS = frozenset(
    {"error", "exception", "failed", "failure", "test", "tests", "java", "after", "with", "from"}
)
_CATEGORIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"timed? ?out|timeout", re.I), "a timeout talking to a dependency"),
    (
        re.compile(r"connection refused|unknownhost|no route to host|\b50[234]\b|bad gateway", re.I),
        "a dependency that is down or unreachable",
    ),
    (re.compile(r"outofmemory|out of memory|oomkilled|heap space", re.I), "memory exhaustion"),
    (
        re.compile(
            r"cannot find symbol|compilation|syntaxerror|modulenotfound|importerror|no such file", re.I
        ),
        "a code or dependency change that breaks the build",
    ),
    (re.compile(r"assert", re.I), "a behaviour change caught by a test assertion"),
)


def _build_finding(build: Build) -> Finding:
    info = data_of(build.info)
    tests = [
        f"{test_name(c)}: {' '.join(str(c.get('error') or c.get('status') or '').split())[:200]}"
        for c in build.failed_tests
    ]
    sig = build.signature
    title = f"{build.label} {build.result or 'FAILED'}: " + (
        sig.shape[:120] if sig else "no error signature found"
    )
    parts = [f"Build {build.url} finished {build.result or 'with an unknown result'}."]
    if tests:
        parts.append(f"Failing tests ({len(tests)}): " + "; ".join(tests[:5]) + ".")
    elif build.tests is not None and build.tests.status == "no_data":
        parts.append("No test report was recorded.")
    if sig is not None:
        parts.append(
            f"Error signature: `{sig.shape}`" + (" (from the full console)." if build.full_console else ".")
        )
    if culprits := [str(c) for c in info.get("culprits") or [] if c]:
        parts.append("Culprits: " + ", ".join(culprits) + ".")
    evidence = list(sig.lines) if sig else []
    evidence += [f"FAILED {t}" for t in tests[:5] if f"FAILED {t}" not in evidence]
    tools = ["jenkins_console", "jenkins_test_report"] + (["jenkins_build"] if build.info else [])
    return Finding(
        severity="high",
        title=title,
        detail=" ".join(parts),
        evidence=evidence,
        source=f"{NAME}/failing-build: {', '.join(tools)} ({build.label})",
        next_steps=[f"Open {build.url}console at the first quoted line"],
    )


def _commit_match(build: Build, words: set[str]) -> dict[str, Any] | None:
    for commit in data_of(build.info).get("commits") or []:
        if isinstance(commit, dict):
            message = str(commit.get("message") or "").lower()
            if words & _stems(message):
                return commit
    return None


def _stems(text: str) -> set[str]:
    # "timed out" and "timeout" should meet: compare 4-letter stems of the words.
    return {w[:4] for w in _WORD.findall(text.lower()) if w not in STOP_WORDS}


def _hypotheses(builds: Sequence[Build]) -> list[tuple[Confidence, Finding]]:
    by_shape: dict[str, list[Build]] = {}
    for build in builds:
        if build.failing and build.signature is not None:
            by_shape.setdefault(build.signature.shape, []).append(build)
    out: list[tuple[Confidence, Finding]] = []
    for shape, members in sorted(by_shape.items(), key=lambda kv: -len(kv[1])):
        sample = members[0]
        assert sample.signature is not None
        text = " ".join([shape, *sample.signature.lines, *(str(c.get("error")) for c in sample.failed_tests)])
        category = next((name for pattern, name in _CATEGORIES if pattern.search(text)), None)
        evidence = [f"{b.label}: {b.signature.lines[0]}" for b in members if b.signature]
        evidence += [f"failing test {test_name(c)}" for b in members for c in b.failed_tests[:3]]
        score = 1 + bool(category) + (len(members) > 1)
        commit = next((c for b in members if (c := _commit_match(b, _stems(text)))), None)
        why = []
        if commit is not None:
            score += 1
            evidence.append(
                f"commit {str(commit.get('commit') or '')[:10]} by {commit.get('author')}: "
                f"{commit.get('message')}"
            )
            why.append("a commit in the build touches the same thing")
        if len(members) > 1:
            why.append(f"{len(members)} builds fail with the same signature")
        if any(b.failed_tests for b in members):
            why.append("the test report agrees with the console")
        confidence: Confidence = "high" if score >= 3 else "medium" if score == 2 else "low"
        cause = category or "the step that logged this error"
        title = f"{cause[0].upper()}{cause[1:]}: {shape[:100]}"
        detail = f"Confidence: {confidence}." + (f" Because {'; '.join(why)}." if why else "")
        severity: Severity = confidence
        out.append(
            (
                confidence,
                Finding(
                    severity=severity,
                    title=title,
                    detail=detail,
                    evidence=evidence,
                    source=f"{NAME}/hypothesis: " + ", ".join(b.label for b in members),
                ),
            )
        )
    return out


def _related_findings(
    ticket: dict[str, Any], related: list[dict[str, Any]], kb: list[dict[str, Any]]
) -> list[Finding]:
    out: list[Finding] = []
    for link in ticket.get("issue_links") or []:
        if isinstance(link, dict) and link.get("key"):
            out.append(
                Finding(
                    severity="info",
                    title=f"{link['key']} ({link.get('relation') or 'linked'}): {link.get('summary') or ''}",
                    detail=f"Status: {link.get('status') or 'unknown'}.",
                    source=f"{NAME}/related: jira_issue",
                )
            )
    seen = {f.title.split(" ")[0] for f in out}
    for issue in related:
        if issue.get("key") and issue["key"] not in seen:
            seen.add(issue["key"])
            out.append(
                Finding(
                    severity="info",
                    title=f"{issue['key']} (mentions the error): {issue.get('summary') or ''}".strip(),
                    detail=f"Status: {issue.get('status') or '?'}; assignee {issue.get('assignee') or '-'}.",
                    source=f"{NAME}/related: jira_search",
                )
            )
    for hit in kb:
        if hit.get("memory"):
            out.append(
                Finding(
                    severity="info",
                    title=f"Seen before: {hit.get('title') or '?'} (finding {hit.get('id')})",
                    detail=f"Recorded {str(hit.get('created_at') or '?')[:10]}: {hit.get('summary') or ''}",
                    evidence=[str(e) for e in hit.get("evidence") or []][:3],
                    source=f"{NAME}/related: search_memory",
                )
            )
            continue
        out.append(
            Finding(
                severity="info",
                title=f"KB: {hit.get('citation') or hit.get('path') or '?'}",
                detail=f"Matched the query {hit.get('query')!r}.",
                evidence=[" ".join(str(hit.get("text") or "").split())[:300]],
                source=f"{NAME}/related: search_kb",
            )
        )
    return out


def _owners(key: str | None, ticket: dict[str, Any], builds: Sequence[Build]) -> list[str]:
    owners = []
    if ticket:
        owners.append(
            f"Owner: {ticket.get('assignee') or 'nobody'} (assignee of {key}); "
            f"reporter {ticket.get('reporter') or '?'}"
        )
    for build in builds:
        culprits = [str(c) for c in data_of(build.info).get("culprits") or [] if c]
        if build.failing and culprits:
            owners.append(
                f"Culprits of {build.label}: {', '.join(culprits)} (authors of the changes in that build)"
            )
    return owners


def _next_steps(builds: Sequence[Build], hypotheses: list[tuple[Confidence, Finding]]) -> list[str]:
    steps = []
    for build in builds:
        if not build.failing:
            continue
        for case in build.failed_tests[:2]:
            steps.append(f"Reproduce {test_name(case)} locally at the commit of {build.label}")
        commit = next(iter(data_of(build.info).get("commits") or []), None)
        if isinstance(commit, dict) and commit.get("author"):
            steps.append(
                f"Ask {commit['author']} about commit {str(commit.get('commit') or '')[:10]} "
                f"({commit.get('message')}) in {build.label}; revert it if the hypothesis holds"
            )
    if hypotheses:
        steps.append(f"Check the top hypothesis first: {hypotheses[0][1].title}")
    steps.append(
        "Post the summary and the quoted lines as a comment on the ticket (jira_add_comment, needs approval)"
    )
    return list(dict.fromkeys(steps))


def _summary(
    key: str | None, ticket: dict[str, Any], builds: Sequence[Build], gaps: int, top: Finding | None
) -> str:
    if not ticket:
        head = f"Could not read ticket {key}." if key else "No ticket to triage."
    else:
        state = f"{ticket.get('status') or '?'}, {ticket.get('priority') or '?'}"
        head = f"{key} ({state}): {ticket.get('summary') or ''}."
    failing = [b for b in builds if b.failing]
    unknown = [b for b in builds if b.result is None and not b.failing]
    if ticket:
        text = f"{head} {len(builds)} linked Jenkins build{'s' if len(builds) != 1 else ''}"
        text += f", {len(failing)} failing" + (f", {len(unknown)} unknown" if unknown else "") + "."
    else:  # the builds are those the ticket links: with no ticket, nothing is known about them
        text = f"{head} Its linked builds are not known, so nothing was triaged."
    if top is not None:
        text += f" Most likely: {top.title} ({top.detail.split('.')[0].lower()})."
    if gaps:
        text += f" {gaps} item{'s' if gaps != 1 else ''} could not be gathered; see the last section."
    return " ".join(text.split())


def build_report(
    ref: str,
    key: str | None,
    ticket: dict[str, Any],
    builds: Sequence[Build],
    related: list[dict[str, Any]],
    kb: list[dict[str, Any]],
    gaps: list[Gap],
    calls: TriageCalls,
    started: float,
) -> Report:
    """The triage report of one run: findings, hypotheses ranked by confidence, owners, next steps."""
    hypotheses = _hypotheses(builds)
    order = {"high": 0, "medium": 1, "low": 2}
    hypotheses.sort(key=lambda h: order[h[0]])
    findings = [_build_finding(b) for b in builds if b.failing]
    findings += [f for _, f in hypotheses] + _related_findings(ticket, related, kb)
    top = hypotheses[0][1] if hypotheses else None
    stats: dict[str, Any] = {
        "ticket": key,
        "ticket_read": bool(ticket),
        "builds": [
            {"url": b.url, "label": b.label, "result": b.result, "failing": b.failing} for b in builds
        ],
        "tool_calls": calls.steps,
        "memoized": calls.memo_hits,
        "retries": calls.retry.used,
        "over_budget": calls.over_budget,
        "max_parallel": calls.max_parallel,
        "step_budget": calls.step_budget,
        "duration_ms": round((time.perf_counter() - started) * 1000, 1),
    }
    return Report(
        title=f"Triage of {key}" if key else "Triage",
        question=ref,
        summary=_summary(key, ticket, builds, len(gaps), top),
        findings=findings,
        next_steps=_owners(key, ticket, builds) + _next_steps(builds, hypotheses),
        gaps=gaps,
        runbooks=[NAME],
        stats=stats,
    )
