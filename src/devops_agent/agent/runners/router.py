"""Which runner carries out a run: a short table of rules, the first that applies wins.

1. a decision on a proposed plan → the planner;
2. answers to a paused run, or a configured model → the planner (plan, delegate, verify), or the
   plain model loop when ``agent.reasoning`` is off and the run asks for no plan or council;
3. a ticket (named, the triage workflow named, or — when Jira is configured and no runbook is
   named — a Jira key in the question) → triage;
4. otherwise → the runbooks named for the run, or selected for its question.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from devops_agent.agent.approvals import ApprovalDecision
from devops_agent.agent.reasoning.plan import PlanDecision
from devops_agent.agent.runners.base import Runner
from devops_agent.agent.runners.model import ModelRunner
from devops_agent.agent.runners.planner import PlannerRunner
from devops_agent.agent.runners.runbooks import RunbookRunner
from devops_agent.agent.runners.triage import TriageCaches, TriageRunner
from devops_agent.config import Settings
from devops_agent.errors import UserError
from devops_agent.runbooks.triage import NAME as TRIAGE
from devops_agent.runbooks.triage import find_ticket_ref
from devops_agent.tools.registry import ToolCatalog


def triage_ref(
    prompt: str, inputs: Mapping[str, Any], settings: Settings, catalog: ToolCatalog
) -> str | None:
    """The ticket to triage, when this run is a triage: named, or a Jira key in the question."""
    if inputs.get("ticket"):
        return str(inputs["ticket"])
    names = inputs.get("runbooks") or []
    projects = settings.jira.projects
    if names == [TRIAGE]:
        return find_ticket_ref(prompt, projects=projects, any_case=True) or prompt
    if not names and settings.jira.url and "jira_issue" in catalog.entries:
        return find_ticket_ref(prompt, projects=projects)
    return None


@dataclass
class Router:
    """Picks the runner for each run."""

    settings: Settings
    catalog: ToolCatalog
    model: ModelRunner | None
    triage_caches: TriageCaches
    planner: PlannerRunner | None = None

    def choose(
        self,
        prompt: str | None,
        inputs: Mapping[str, Any],
        answers: Mapping[str, ApprovalDecision] | None,
        plan: PlanDecision | None = None,
    ) -> Runner:
        if plan is not None or answers is not None or self.model is not None:
            if self.model is None:
                # Only a model run pauses; without a model the answers could not resume it, and the
                # session must stay paused (not fail) so that they can be given again.
                raise UserError(
                    "this session was paused by a model run: answering it needs a model",
                    hint="pass --model with the session's model, or set model.name",
                )
            asked = inputs.get("council") or inputs.get("plan") not in (None, "never")
            if self.planner is not None and (plan is not None or self.settings.agent.reasoning or asked):
                return self.planner
            return self.model
        assert prompt is not None
        ticket = triage_ref(prompt, inputs, self.settings, self.catalog)
        if ticket is not None:
            return TriageRunner(ticket, self.triage_caches)
        return RunbookRunner()
