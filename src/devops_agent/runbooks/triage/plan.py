"""What triage is and plans: its name and sections, the ticket it is about, its steps.

:func:`find_ticket_ref` finds the Jira issue a request is about; :func:`plan_steps` is the plan
the run (and ``runbooks show triage``) shows; :func:`triage_guidance` the same workflow as
instructions for a model run. Pure: this module must not call tools or import the agent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Literal
from urllib.parse import parse_qs, urlsplit

NAME = "triage"
TITLE = "Incident triage of a Jira ticket"
DESCRIPTION = (
    "The ticket, the Jenkins builds it links (console tail and test report of each, in parallel), "
    "their error signatures, the full console of a failing build whose tail shows none, related "
    "tickets, knowledge-base passages and earlier findings. A workflow, not a YAML runbook: it runs "
    "alone, with `devops-agent triage KEY`, `--runbook triage`, or a Jira key in the question when "
    "Jira is configured."
)
SECTIONS = (
    "Summary",
    "Failing builds",
    "Root-cause hypotheses",
    "Related tickets and KB articles",
    "Next steps and owners",
    "What could not be gathered",
)
"""The report's section headings, in order; all are rendered even when empty."""

Confidence = Literal["high", "medium", "low"]

# A Jira issue key: a project key (a capital letter, then 1-9 capitals, digits or underscores: the
# shape Jira allows) and an issue number without a leading zero, standing as a word. Lowercase
# words of that shape (``db-7``, ``api-2``, ``utf-8``) are host and version names, not tickets,
# unless ``jira.projects`` names the project; so are these standards' names in capitals.
_KEY = re.compile(r"(?<![A-Za-z0-9_-])([A-Z][A-Z0-9_]{1,9}-[1-9]\d{0,8})(?![\w-])")
_ANY_CASE_KEY = re.compile(_KEY.pattern, re.IGNORECASE)
_STANDARDS = frozenset(
    {"UTF", "UCS", "SHA", "MD", "ISO", "IEC", "RFC", "CVE", "CWE", "TLS", "AES", "RSA", "HTTP"}
)
_URL = re.compile(r"https?://\S+")


def find_ticket_ref(text: str, *, projects: Sequence[str] = (), any_case: bool = False) -> str | None:
    """The first Jira issue key in ``text``: a bare key, a ``/browse/KEY`` URL or ``?selectedIssue=``.

    A bare key must be in capitals (``OPS-123``), unless ``any_case`` (the text is a ticket
    reference the user gave as such) or its project is one of ``projects`` (``jira.projects``:
    then only those projects' keys count, in any case). Jenkins URLs in the same text are skipped
    (a job named ``APP-2`` is not a ticket).
    """
    wanted = {p.upper() for p in projects}
    for match in _URL.finditer(text):
        parts = urlsplit(match.group(0).rstrip(".,;:!?)("))
        selected = parse_qs(parts.query).get("selectedIssue")
        if selected and _KEY.fullmatch(selected[0].upper()):
            return selected[0].upper()
        segs = [s for s in parts.path.split("/") if s]
        for i, seg in enumerate(segs[:-1]):
            if seg in ("browse", "issue") and _KEY.fullmatch(segs[i + 1].upper()):
                return segs[i + 1].upper()
    without_urls = _URL.sub(" ", text)
    rx = _ANY_CASE_KEY if any_case or wanted else _KEY
    for found in rx.finditer(without_urls):
        key = found.group(1).upper()
        project = key.rsplit("-", 1)[0]
        if (project in wanted) if wanted else (project not in _STANDARDS):
            return key
    return None


def triage_guidance() -> str:
    """The triage runbook as instructions for a model run about a ticket.

    It names tools and steps only, never the ticket or anything from it: instructions bypass the
    privacy guard's history processing, and the user's message already carries the reference.
    """
    sections = "\n".join(f"## {s}" for s in SECTIONS)
    return f"""\
This request is about an incident ticket. Triage it like the offline triage runbook does:
1. jira_issue for the ticket named in the user's message: status, assignee, comments, links and
   the CI builds it mentions (`builds`).
2. For every linked Jenkins build, call jenkins_console (the tail) and jenkins_test_report in the
   same turn, and jenkins_build for failing builds (culprits, changes). Do not fetch a build twice.
3. Critic: for a failing build whose console tail shows no error, read jenkins_console with
   full=true before concluding anything about it.
4. Take the error signature of each failure (the exception or failing assertion line) and search
   related tickets (jira_search with text ~ "..."), the knowledge base (search_kb) and the
   findings of earlier investigations (search_memory).
5. Answer with a Markdown report with exactly these sections, each present even when empty:
{sections}
   Quote the log lines that show each failure; give every root-cause hypothesis its evidence and a
   confidence (high, medium, low); cite KB articles by their path:line citation; list under the last
   section every call that failed and why. Never invent a finding for evidence you could not get.
6. When the evidence supports a root cause, save it with add_finding (title: the signature and the
   cause; summary: what fixed it or what to check) so later investigations can recall it."""


def plan_steps(ticket: str = "KEY", tail_lines: int = 200) -> list[str]:
    """The workflow's steps as its plan shows them (``runbooks show triage`` too)."""
    return [
        f"{NAME}/ticket: jira_issue(key_or_url={json.dumps(ticket)})",
        f"{NAME}/builds: for each linked build, jenkins_console(tail_lines={tail_lines}) and "
        "jenkins_test_report in parallel; jenkins_build for failing builds",
        f"{NAME}/critic: jenkins_console(full=true) for a failing build whose tail has no error signature",
        f"{NAME}/related: jira_search, search_kb and search_memory with the error signatures",
    ]
