"""Incident triage as an offline workflow: Jira ticket → linked Jenkins builds → a triage report.

The generic runbook engine runs a static list of steps; triage has to fan out over the builds a
ticket links, look at what came back, and ask again (a full console log when the tail held no
error signature). :func:`run_triage` does that with the same ``call_tool`` (the session's tool
pipeline), the same events and the same :class:`~devops_agent.report.Report`, and
:func:`render_triage_markdown` renders it with every triage section present even when the
evidence is partial.

Calls are memoized per run (an identical ``(tool, args)`` runs once), bounded (``max_parallel``
in flight), retried with exponential backoff when a result says ``transient=True`` (the retry
policy, :mod:`devops_agent.policies.retry`, bounded by a retry budget), and counted against
``step_budget``. Anything not gathered becomes a gap; a finding is never invented for evidence
that is missing.

The modules, in the order a run uses them: :mod:`.plan` (name, sections, the ticket, the plan),
:mod:`.calls` (every tool call), :mod:`.evidence` (builds and error signatures),
:mod:`.workflow` (:func:`run_triage`), :mod:`.findings` (evidence → report) and :mod:`.render`
(Markdown). This package must not import tools' clients or interfaces.
"""

from devops_agent.runbooks.triage.calls import TriageCache
from devops_agent.runbooks.triage.evidence import Signature, error_signature
from devops_agent.runbooks.triage.plan import (
    DESCRIPTION,
    NAME,
    SECTIONS,
    TITLE,
    Confidence,
    find_ticket_ref,
    plan_steps,
    triage_guidance,
)
from devops_agent.runbooks.triage.render import render_triage_markdown, section_of
from devops_agent.runbooks.triage.workflow import run_triage

__all__ = [
    "DESCRIPTION",
    "NAME",
    "SECTIONS",
    "TITLE",
    "Confidence",
    "Signature",
    "TriageCache",
    "error_signature",
    "find_ticket_ref",
    "plan_steps",
    "render_triage_markdown",
    "run_triage",
    "section_of",
    "triage_guidance",
]
