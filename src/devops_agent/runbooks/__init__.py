"""The offline runbook engine: the embedded default when no language model is configured.

A runbook is YAML data (``data/*.yaml`` plus user directories): steps that call tools by name
with templated arguments, analyzers that turn the results into findings, and static advice. The
engine runs the selected runbooks through the same tool middleware as the model loop and returns
a :class:`devops_agent.report.Report`.

Nothing in this package imports tools or interfaces (an import-linter contract in pyproject.toml
checks it): tool calls arrive through the ``call_tool`` callable the runner passes in, already
wrapped by the run's tool pipeline. The one policy used here is the retry of transient failures
(:mod:`devops_agent.policies.retry`), which triage applies per attempt so each attempt is an event.
"""

from devops_agent.runbooks.analyzers import ANALYZERS, CannotAnalyze, register_analyzer
from devops_agent.runbooks.engine import CallTool, Emit, result_summary, run_runbooks
from devops_agent.runbooks.loader import (
    DEFAULT_RUNBOOK,
    get_runbook,
    load_runbook_file,
    load_runbooks,
    parse_runbook,
    select_runbooks,
)
from devops_agent.runbooks.model import STANDARD_INPUTS, AnalyzerUse, Runbook, RunbookInput, Step
from devops_agent.runbooks.plan import plan_runbooks
from devops_agent.runbooks.templating import TemplateError, render

__all__ = [
    "ANALYZERS",
    "DEFAULT_RUNBOOK",
    "STANDARD_INPUTS",
    "AnalyzerUse",
    "CallTool",
    "CannotAnalyze",
    "Emit",
    "Runbook",
    "RunbookInput",
    "Step",
    "TemplateError",
    "get_runbook",
    "load_runbook_file",
    "load_runbooks",
    "parse_runbook",
    "plan_runbooks",
    "register_analyzer",
    "render",
    "result_summary",
    "run_runbooks",
    "select_runbooks",
]
