"""The runbook runner: the YAML runbooks named for a run, or selected for its question."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from devops_agent.agent.plugins import available_runbooks
from devops_agent.agent.runners.base import RunOutcome, RunScope
from devops_agent.agent.runners.offline import keep_exchange, offline_caller
from devops_agent.errors import NotFoundError, UserError
from devops_agent.events import RunStarted
from devops_agent.report import render_markdown
from devops_agent.runbooks import Runbook, run_runbooks, select_runbooks
from devops_agent.runbooks.question_inputs import inputs_from_question
from devops_agent.runbooks.triage import NAME as TRIAGE


def named_runbooks(names: Sequence[str], available: Sequence[Runbook]) -> list[Runbook]:
    """The runbooks called ``names``, in order. The triage workflow may be named, but only alone
    (it is not a YAML runbook, so it is not returned here).

    Raises :class:`UserError` for triage among others, :class:`NotFoundError` for an unknown name,
    naming every runbook that exists.
    """
    if list(names) == [TRIAGE]:
        return []
    by_name = {rb.name: rb for rb in available}
    for name in names:
        if name == TRIAGE:
            raise UserError(
                f"the {TRIAGE} workflow runs alone, not with other runbooks",
                hint=f"run {TRIAGE} on its own: `devops-agent triage KEY`",
            )
        if name not in by_name:
            known = ", ".join([*by_name, TRIAGE])
            raise NotFoundError(
                f"unknown runbook {name!r} (known: {known})", hint="`devops-agent runbooks list`"
            )
    return [by_name[n] for n in names]


@dataclass
class RunbookRunner:
    """Runs runbooks: evidence through the pipeline, analyzers, a templated report."""

    name: str = "runbooks"

    async def run(self, scope: RunScope) -> RunOutcome:
        assert scope.prompt is not None, "runbooks answer a question; they never pause"
        inputs = dict(scope.inputs)
        available = available_runbooks(scope.settings, scope.toolbox.catalog.registry)
        names = inputs.pop("runbooks", None)
        chosen = (
            named_runbooks(names, available) if names else select_runbooks(scope.prompt, inputs, available)
        )
        inputs.setdefault("question", scope.prompt)
        derived = inputs_from_question(scope.prompt, chosen, inputs)
        inputs.update(derived)
        scope.emit(
            RunStarted(
                **scope.ids,
                prompt=scope.prompt,
                mode=scope.mode,
                path="runbook",
                runbooks=[r.name for r in chosen],
            )
        )
        report = await run_runbooks(
            chosen,
            inputs,
            offline_caller(scope),
            scope.notify,
            max_parallel=scope.settings.runbooks.max_parallel,
        )
        report.inputs_from_question = derived
        markdown = render_markdown(report)
        keep_exchange(scope, scope.prompt, markdown)
        return RunOutcome("completed", output=markdown, report=report.model_dump(mode="json"))
