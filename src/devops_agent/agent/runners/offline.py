"""What the runners without a model share: the run's pipeline called by tool name, and the
exchange (question, Markdown answer) kept as the session's conversation.

Runbooks and triage never wait for a person (calls that need approval are refused: policy lets
them read only), and nobody but the user reads their tool outputs, so those are masked for
secrets only. Analyzers summarize what they read, so they get far more than a model's context.
"""

from __future__ import annotations

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from devops_agent.agent.messages import dump_message
from devops_agent.agent.runners.base import RunScope
from devops_agent.policies.pipeline import ToolCaller, privacy_guard
from devops_agent.store import MessageWrite


def offline_caller(scope: RunScope) -> ToolCaller:
    """``call_tool(name, args)`` through the run's pipeline, for runbooks and triage."""
    guard = privacy_guard(
        scope.settings, scope.store, scope.session.id, model_reads=False, privacy=scope.privacy
    )
    tools = scope.toolbox.pipeline(
        scope.run,
        approvals="deny",
        privacy=guard,
        cap_chars=scope.settings.tools.analyzer_cap_chars,
        audit_reads=False,
        durability=scope.durability,
        mcp=False,  # runbooks name our tools; they start no MCP server
    )
    return ToolCaller(tools, run_id=scope.run_id, deps=scope.deps)


def keep_exchange(scope: RunScope, prompt: str, markdown: str) -> None:
    """Journal the question and the answer, so a model session can follow an offline one."""
    exchange = (ModelRequest(parts=[UserPromptPart(prompt)]), ModelResponse(parts=[TextPart(markdown)]))
    scope.journal.messages(
        MessageWrite(scope.session.id, scope.run_id, tuple(dump_message(m) for m in exchange))
    )
