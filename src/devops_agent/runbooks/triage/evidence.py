"""What a build shows: its result, its failing tests and the error signature of its console log.

:func:`error_signature` picks the most telling error of a console log; :class:`Build` collects
what was read about one linked build. Pure: this module must not call tools.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from devops_agent.analysis import group_lines
from devops_agent.analysis.ci_urls import parse_job_or_url
from devops_agent.results import ToolResult

_FINISHED = re.compile(r"^Finished: ([A-Z_]+)\s*$", re.M)
_FAILED_RESULTS = {"FAILURE", "UNSTABLE", "ABORTED"}
_EXCEPTION = re.compile(r"\b[\w.$]*(?:Exception|Error)\b")
_TEST_MARK = re.compile(r"^FAILED\s|<<< (?:FAILURE|ERROR)!|\s»\s|^E\s+|^ERROR\s+\S+::")
_BOILERPLATE = re.compile(
    r"^(?:\[ERROR\]\s*(?:->.*|Errors:?|Failures:?|Tests run:.*|Please refer to.*|To see the full stack.*"
    r"|Re-run Maven.*|For more information.*|\[Help \d+\].*)?|Finished: \w+|BUILD FAILURE"
    r"|ERROR: script returned exit code \d+|Build step .* marked build as failure"
    r"|\d+ failed(?:, \d+ \w+)* in .*|=+ .* =+)\s*$",
    re.I,
)

_MAX_SIGNATURE_LINES = 6


@dataclass
class Signature:
    """The error a build failed with: its message shape and the log lines that show it."""

    shape: str
    lines: list[str]


@dataclass
class Build:
    """What was read about one linked build (each result ``None`` until its call came back)."""

    url: str
    label: str
    result: str | None = None
    console: ToolResult | None = None
    full_console: bool = False
    tests: ToolResult | None = None
    info: ToolResult | None = None
    signature: Signature | None = None
    failed_tests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def failing(self) -> bool:
        return self.result in _FAILED_RESULTS or bool(self.failed_tests)


def label_of(url: str) -> str:
    """``job #build`` for a build URL (the URL itself when it is not one Jenkins spells)."""
    ref = parse_job_or_url(url)
    if ref is None:
        return url
    return f"{ref.job} #{ref.build}" if ref.build is not None else ref.job


def data_of(result: ToolResult | None) -> dict[str, Any]:
    """A successful result's ``data`` when it is a mapping, else ``{}``."""
    if result is None or result.status != "success" or not isinstance(result.data, dict):
        return {}
    return result.data


def _score(shape: str) -> int:
    score = 0
    if _EXCEPTION.search(shape):
        score += 4
    if shape.startswith("FAILED "):  # pytest's short summary names the test and the error
        score += 3
    if _TEST_MARK.search(shape):
        score += 3
    if "assert" in shape.lower() or "failed to execute goal" in shape.lower():
        score += 1
    return score


def error_signature(text: str) -> Signature | None:
    """The most telling error of a console log, or ``None`` when it holds none.

    Error records are grouped by message shape (:func:`~devops_agent.analysis.group_lines`, which
    folds stack traces into the line that starts them); Jenkins and Maven boilerplate (``Finished:
    FAILURE``, ``[Help 1]``, exit codes) is dropped, exceptions and failed-test markers rank
    first. The quoted lines are the best groups' example lines, in log order.
    """
    lines = text.splitlines()
    summary = group_lines((("console", line) for line in lines), errors_only=False, max_groups=2000)
    ranked: list[tuple[int, int, str, str]] = []
    for group in summary.groups:
        example = group.examples[0] if group.examples else group.shape
        first = example.splitlines()[0] if example else ""
        if not first.strip() or _BOILERPLATE.match(first.strip()):
            continue
        score = _score(example)
        if score or (group.level or "").upper() in ("ERROR", "FATAL", "SEVERE", "CRITICAL"):
            # the record's first line and, where one was folded in, its exception line
            shown = "\n".join(line.rstrip() for line in example.splitlines()[:2])
            ranked.append((score, -_position(lines, first), group.shape, shown))
    if not ranked:
        return None
    ranked.sort(reverse=True)
    best = [r for r in ranked if r[0] > 0] or ranked[:1]
    quoted = sorted(best[:_MAX_SIGNATURE_LINES], key=lambda r: -r[1])
    shown_lines = [line for r in quoted for line in r[3].splitlines()]
    return Signature(shape=ranked[0][2], lines=shown_lines[:_MAX_SIGNATURE_LINES])


def _position(lines: Sequence[str], line: str) -> int:
    stripped = line.rstrip()
    for i, candidate in enumerate(lines):
        if candidate.rstrip() == stripped:
            return i
    return len(lines)


def failed_tests_of(result: ToolResult | None) -> list[dict[str, Any]]:
    """The failed cases of a ``jenkins_test_report`` result."""
    cases = data_of(result).get("failed_cases")
    return [c for c in cases if isinstance(c, dict)] if isinstance(cases, list) else []


def test_name(case: dict[str, Any]) -> str:
    """``Class.method`` of a failed test case."""
    return ".".join(str(p) for p in (case.get("class"), case.get("name")) if p)


def apply_console(build: Build, result: ToolResult) -> None:
    """Take the build's result (``Finished: …``) and error signature from a console log."""
    text = str(data_of(result).get("text") or "")
    if build.result is None and (finished := _FINISHED.findall(text)):
        build.result = finished[-1]
    signature = error_signature(text) if text else None
    if signature is not None:
        build.signature = signature


def critic(builds: Sequence[Build]) -> list[Build]:
    """Failing builds whose evidence lacks an error signature and whose full log was not read yet."""
    return [
        b
        for b in builds
        if b.failing
        and b.signature is None
        and not b.full_console
        and b.console is not None
        and b.console.status == "success"
    ]
