"""A triage report as Markdown: every section of :data:`SECTIONS` present, each said empty when it is.

Pure formatting: this module must not call tools or change the report.
"""

from __future__ import annotations

import re
from typing import Any

from devops_agent.report import Finding, Report, rank_findings
from devops_agent.runbooks.triage.plan import NAME, SECTIONS


def section_of(finding: Finding) -> str:
    """Which triage section a finding belongs to: ``failing-build``, ``hypothesis`` or ``related``."""
    match = re.match(rf"{NAME}/([\w-]+):", finding.source)
    return match.group(1) if match else "related"


def _fence(lines: list[str]) -> list[str]:
    longest = max((len(m) for line in lines for m in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}text", *lines, fence, ""]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _no_failing_build(stats: dict[str, Any]) -> str:
    """What "no failing build" means here: only an all-clear when every linked build was read."""
    builds = [b for b in stats.get("builds") or [] if isinstance(b, dict)]
    if not stats.get("ticket_read", True):
        return (
            "Not known: the ticket could not be read, so the builds it links are unknown "
            "(see What could not be gathered)."
        )
    if not builds:
        return "Not known: the ticket links no Jenkins build (see What could not be gathered)."
    unread = [b for b in builds if b.get("result") is None]
    if unread:
        return (
            f"No failing build was seen, but the result of {len(unread)} of the {len(builds)} linked "
            "builds is not known (see What could not be gathered)."
        )
    return f"No failing build among the {len(builds)} linked builds."


def render_triage_markdown(report: Report) -> str:
    """A triage report as Markdown with every section of :data:`SECTIONS`, each said empty when it is."""
    out = [f"# {_one_line(report.title)}", ""]
    if report.question:
        out += [f"**Ticket:** {_one_line(report.question)}", ""]
    out += [f"## {SECTIONS[0]}", "", report.summary or "Nothing was gathered.", ""]
    groups: dict[str, list[Finding]] = {"failing-build": [], "hypothesis": [], "related": []}
    for finding in rank_findings(report.findings):
        groups.setdefault(section_of(finding), []).append(finding)

    out += [f"## {SECTIONS[1]}", ""]
    if not groups["failing-build"]:
        out += [_no_failing_build(report.stats), ""]
    for f in groups["failing-build"]:
        out += [f"### {_one_line(f.title)}", "", f.detail, ""]
        out += _fence(f.evidence) if f.evidence else []
        out += [f"*Source: {f.source}*", ""]

    out += [f"## {SECTIONS[2]}", ""]
    if not groups["hypothesis"]:
        out += ["No hypothesis: no error signature was gathered.", ""]
    for i, f in enumerate(groups["hypothesis"], 1):
        out += [f"{i}. **{_one_line(f.title)}** — {f.detail}", ""]
        out += [f"   - {_one_line(e)}" for e in f.evidence] + [""]

    out += [f"## {SECTIONS[3]}", ""]
    if not groups["related"]:
        out += ["None found.", ""]
    for f in groups["related"]:
        line = f"- **{_one_line(f.title)}** — {_one_line(f.detail)}"
        out += [line + (f" > {_one_line(f.evidence[0])}" if f.evidence else "")]
    out += [""] if groups["related"] else []

    out += [f"## {SECTIONS[4]}", ""]
    if report.next_steps:
        out += [f"{i}. {step}" for i, step in enumerate(report.next_steps, 1)] + [""]
    else:
        out += ["None suggested.", ""]

    out += [f"## {SECTIONS[5]}", ""]
    if report.gaps:
        for gap in report.gaps:
            line = f"- **{gap.step}** (`{gap.tool}`): {_one_line(gap.reason)}"
            out.append(line + (f" — {_one_line(gap.hint)}" if gap.hint else ""))
        out.append("")
    else:
        out += ["Nothing — every step succeeded.", ""]
    stats = report.stats
    footer = f"triage · {stats.get('tool_calls', 0)} tool calls, {stats.get('memoized', 0)} memoized, "
    footer += f"{stats.get('retries', 0)} retries · generated {report.generated_at:%Y-%m-%d %H:%M:%S %Z}"
    out += ["---", "", f"*{footer.strip()}*", ""]
    return "\n".join(out)
