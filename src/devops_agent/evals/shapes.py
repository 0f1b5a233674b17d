"""How a recorded output reaches the caller of one of our tools: the ``shape`` of a mapping answer.

- ``text``: the recorded output as it is, with the command that produced it — a model reads
  kubectl's text as well as our JSON; an analyzer cannot, so offline runs get gaps there;
- ``pod_log``: what our ``k8s_logs`` returns for that log — ``pod``, ``namespace``, ``lines``,
  ``text``, or for a long log the same condensed view (error signatures, templates, last lines)
  our tool makes with :func:`devops_agent.analysis.logsummary.summarize_log`, the full text kept as the
  result's raw output.

A recording whose status is ``error`` becomes a failed result with its error, ``no_data`` an empty
one, as the recorded tool answered. This module turns text into results; it matches nothing.
"""

from __future__ import annotations

from typing import Any

from devops_agent.analysis.logsummary import summarize_log
from devops_agent.evals.mapping import Match
from devops_agent.evals.recordings import Recording
from devops_agent.tools.base import ToolResult


def replayed(match: Match, args: dict[str, Any]) -> ToolResult:
    """The result our tool gives for ``args``, made from the matched recording."""
    rec = match.recording
    # What the caller reads must not give the evaluation away: the source names the command
    # that produced the output, as a real tool's does; which file answered is the book's record.
    meta: dict[str, Any] = {"source": rec.command or rec.tool}
    if rec.status == "error":
        return ToolResult.fail(_error_text(rec), hint=None, **meta)
    if rec.status == "no_data" and not rec.output.strip():
        return ToolResult(status="no_data", metadata=meta)
    if match.answer.shape == "pod_log":
        return _pod_log(rec, args, meta)
    data: dict[str, Any] = {"output": rec.output}
    if rec.command:
        data["command"] = rec.command
    return ToolResult(status="success" if rec.status == "success" else "no_data", data=data, metadata=meta)


def _error_text(rec: Recording) -> str:
    if rec.error and rec.output.strip() and rec.output.strip() not in rec.error:
        return f"{rec.error}\n{rec.output.strip()}"
    return rec.error or rec.output.strip() or f"{rec.tool} failed"


def _pod_log(rec: Recording, args: dict[str, Any], meta: dict[str, Any]) -> ToolResult:
    text = rec.output
    pod = args.get("pod") or (rec.match_params or {}).get("pod_name")
    data: dict[str, Any] = {
        "pod": pod,
        "namespace": args.get("namespace"),
        "container": args.get("container"),
        "previous": bool(args.get("previous")),
        "lines": len(text.splitlines()),
        "text": text,
    }
    if rec.command:
        data["command"] = rec.command
    if not text.strip():
        return ToolResult.empty(f"the log of {pod} is empty", **meta)
    summary = summarize_log(text, f"{args.get('namespace')}/{pod}") if args.get("summarize", True) else None
    if summary is None:
        return ToolResult.ok(data, **meta)
    del data["text"]
    return ToolResult.ok(data | summary, **meta).with_raw(text)
