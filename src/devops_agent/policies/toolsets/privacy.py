"""The privacy guard as a wrapper: real values into tools, masked values out of them.

Arguments the model wrote with placeholders are restored just in time; results (data, errors,
hints) are masked before anyone past this wrapper sees them. What "masked" means — every
identifier (a model reads the output) or secrets only (only the user does) — is the guard's
mode, decided in :func:`devops_agent.policies.pipeline.privacy_guard`. Without a guard (privacy
and secret scrubbing both off) the wrapper passes calls through unchanged.

It sits outside the safety gate on purpose: the gate must classify, audit and show approvers
the real command, not placeholders (which bash would even parse as here-documents).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import BinaryContent, WrapperToolset
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import ToolsetTool
from pydantic_core import to_jsonable_python

from devops_agent.privacy.guard import PrivacyGuard
from devops_agent.tools.base import ToolResult

_FIELDS = ("status", "data", "error", "hint", "metadata")


def plain(value: Any) -> Any:
    """``value`` as JSON-like data (paths, times and models as the text they serialize to), with
    bytes content kept as it is: the guard masks text sent as bytes as text, and withholds the rest."""
    if value is None or isinstance(value, str | int | float | bool | BinaryContent):
        return value
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(v) for v in value]
    return to_jsonable_python(value)


LEARN_CHARS = 16_000
"""How much of a digested result's raw text is masked first, to learn its identifiers."""


def masked(guard: PrivacyGuard, result: ToolResult) -> ToolResult:
    """``result`` with every field masked for the reader (namespace ``tool_out``); its ``raw``
    output rides along unmasked, for the session store (secrets scrubbed there), never a model.
    Its ``evidence`` (series names and labels, templates, timeline labels) is masked the same way,
    after ``data``, so a value the data masked has the same placeholder in the chart or table, and
    a viewer of the ``tool_result`` event sees nothing the masked output would not show.

    A digest (``metadata.digest``) keeps lines of the raw text out of their context (a template,
    an error group's example), and context is what marks some identifiers (``< com.example:app >``
    makes a host of ``com.example``). The start of the raw text — what the output cap showed a
    model before digests — is masked first, so what is known there is masked in the digest too."""
    if result.raw is not None and result.metadata.get("digest"):
        guard.mask(result.raw[:LEARN_CHARS], "tool_out")
    fields = {f: guard.mask_value(plain(getattr(result, f)), "tool_out") for f in _FIELDS}
    evidence = result.evidence
    if evidence is not None:
        evidence = evidence.map_text(lambda text: guard.mask(text, "tool_out") if text else text)
    return ToolResult.model_validate(fields).with_raw(result.raw).with_evidence(evidence)


@dataclass
class PrivacyToolset(WrapperToolset[Any]):
    """Restores placeholders in arguments and masks results with ``guard`` (if any)."""

    guard: PrivacyGuard | None = None

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> ToolResult:
        if self.guard is None:
            passed: ToolResult = await super().call_tool(name, tool_args, ctx, tool)
            return passed
        real_args = self.guard.restore_value(tool_args)
        result: ToolResult = await super().call_tool(name, real_args, ctx, tool)
        return masked(self.guard, result)
