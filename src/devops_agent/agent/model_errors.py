"""How a failed model run is told: pydantic-ai's and the HTTP stack's exceptions as our errors.

The session service calls :func:`model_failure` where a model run raised, so no library exception
(and no traceback with the run's local variables, which hold the user's data) goes past the agent
layer: each becomes a :class:`ModelError` whose message says what happened and where (the
endpoint's URL), and whose hint says what to do, by cause (429: rate limit or quota, 5xx: the
server, 401/403: the key, 404: the model name or URL, no answer: the timeout). Model misbehaviour
(a tool it was not offered, arguments that never validate, a stream with nothing in it) is told as
such, with the closest tool names instead of every tool.

:func:`shorten_unknown_tool` rewrites pydantic-ai's "Unknown tool name: 'x'. Available tools: …"
(every tool, 59 of them) to the few closest names, for the events and for the model.

This module must not import the CLI; it holds no state.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Collection, Mapping
from typing import TypeGuard

from pydantic_ai.exceptions import (
    AgentRunError,
    ContentFilterError,
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelHTTPError,
    ModelNotFoundError,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelRequestTimeout,
    ModelServerError,
    ModelTimeoutError,
    ModelUnavailableError,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
)
from pydantic_ai.exceptions import UserError as PydanticAIUserError
from pydantic_ai.messages import ModelMessage, ModelRequest, RetryPromptPart, ToolReturnPart

from devops_agent.errors import ModelError
from devops_agent.secrets.scrubber import scrub

_DOCTOR = "`devops-agent doctor` tests the endpoint"
_RETRIES = re.compile(r"Tool '(?P<tool>[^']+)' exceeded max retries count of (?P<n>\d+)")
_UNKNOWN = re.compile(r"Unknown tool name: '(?P<tool>[^']*)'\.\s*Available tools: (?P<names>.*)", re.S)
_EMPTY_STREAM = "Streamed response ended without content or tool calls"


def closest_tools(name: str, offered: Collection[str], n: int = 3) -> list[str]:
    """Up to ``n`` offered tool names closest to ``name`` (for "did you mean")."""
    found = difflib.get_close_matches(name, list(offered), n=n, cutoff=0.5)
    if len(found) < n:  # names sharing the prefix (``k8s_`` for ``k8s_pods``) come next
        stem = name.split("_", 1)[0]
        found += [t for t in sorted(offered) if t.startswith(stem) and t not in found][: n - len(found)]
    return found


def shorten_unknown_tool(text: str, offered: Collection[str] = ()) -> str:
    """pydantic-ai's unknown-tool message with the closest names in place of the whole list."""
    m = _UNKNOWN.search(text)
    if m is None:
        return text
    names = offered or re.findall(r"'([^']+)'", m.group("names"))
    close = closest_tools(m.group("tool"), names)
    advice = f"The closest tools are: {', '.join(close)}." if close else "Use one of the tools given."
    return f"{text[: m.start()]}Unknown tool name: {m.group('tool')!r}. {advice}"


async def shorten_retry_prompts(messages: list[ModelMessage]) -> list[ModelMessage]:
    """History processor: the model is told the closest tool names after an unknown one, not all
    of them again (it has their definitions in the same request).

    A coroutine although it never waits: pydantic-ai runs a plain function processor in a worker
    thread, a thread trip before every model request for a walk of the history that takes
    microseconds."""
    out: list[ModelMessage] = []
    for m in messages:
        if isinstance(m, ModelRequest) and any(is_unknown_tool(p) for p in m.parts):
            parts = [
                dataclasses.replace(p, content=shorten_unknown_tool(str(p.content)))
                if is_unknown_tool(p)
                else p
                for p in m.parts
            ]
            m = dataclasses.replace(m, parts=parts)
        out.append(m)
    return out


def is_unknown_tool(part: object) -> TypeGuard[ToolReturnPart | RetryPromptPart]:
    """Whether ``part`` answers a call to a tool the model was not offered."""
    if isinstance(part, ToolReturnPart):
        return part.retry is not None and part.retry.cause == "unknown_tool"
    # a retry stored by an older pydantic-ai (or loaded from one) says so only in its text
    return (
        isinstance(part, RetryPromptPart)
        and isinstance(part.content, str)
        and bool(_UNKNOWN.search(part.content))
    )


def model_failure(
    exc: BaseException,
    *,
    model: str | None,
    base_url: str | None,
    unknown_tools: Mapping[str, Collection[str]] | None = None,
) -> ModelError | None:
    """Our error for an exception a model run raised, or ``None`` if it is not the model's.

    ``unknown_tools`` maps each tool the model called without being offered it to the names it
    was offered (both from pydantic-ai's retry prompts during the run)."""
    where = f" at {base_url}" if base_url else ""
    name = model or "the model"
    if isinstance(exc, UsageLimitExceeded):
        return ModelError(
            f"the model used up its step budget: {exc}",
            hint="raise model.max_tool_steps or ask a narrower question",
        )
    if isinstance(exc, ModelAPIError):
        return _api_error(exc, name, where)
    if isinstance(exc, ContentFilterError):
        return ModelError(
            f"the provider's content filter stopped {name}'s answer: {exc.message}",
            hint="rephrase the question, or use another model",
        )
    if isinstance(exc, UnexpectedModelBehavior):
        return _misbehaviour(exc, name, where, unknown_tools or {})
    if isinstance(exc, AgentRunError | PydanticAIUserError):
        return ModelError(f"the model run failed: {_clean(str(exc))}", hint=f"retry; {_DOCTOR}")
    return None


def _api_error(exc: ModelAPIError, name: str, where: str) -> ModelError:
    detail = _clean(_body_message(exc.body) or exc.message)
    if isinstance(exc, ModelRequestTimeout):
        return ModelError(
            f"no answer from {name}{where} within {exc.timeout:g} s",
            hint="raise model.request_timeout_s if the server is slow (a long prompt on a CPU server), "
            f"or check that it is up; {_DOCTOR}",
            timeout_s=exc.timeout,
        )
    if isinstance(exc, ModelTimeoutError) and exc.phase in ("connect", "pool"):
        return ModelError(
            f"connecting to the model endpoint{where} timed out",
            hint="check the address and the network (a firewall that drops packets), or raise "
            f"model.connect_timeout_s; {_DOCTOR}",
        )
    if isinstance(exc, ModelTimeoutError):
        return ModelError(
            f"the model endpoint{where} timed out ({detail})",
            hint=f"raise model.request_timeout_s or model.connect_timeout_s, or check the server; {_DOCTOR}",
        )
    if isinstance(exc, ModelConnectionError):
        return ModelError(
            f"cannot reach the model endpoint{where}: {detail}",
            hint=f"check that the server is running and model.base_url is right; {_DOCTOR}",
        )
    status = exc.status_code if isinstance(exc, ModelHTTPError) else None
    said = f"HTTP {status}: {detail}" if status else detail
    message = f"the model endpoint{where} refused the request ({said})"
    fields = {"status_code": status} if status else {}
    if isinstance(exc, ModelQuotaExceededError) or status == 402:
        hint = "the account's quota or credits are used up: top them up, or use another key or model"
    elif isinstance(exc, ModelRateLimitError) or status == 429:
        hint = "rate limited: wait a minute and retry, or raise the account's rate limit or quota"
    elif isinstance(exc, ModelAuthenticationError) or status in (401, 403):
        hint = (
            "the API key was refused: set model.api_key (DEVOPS_AGENT_MODEL__API_KEY) or the "
            "provider's key variable, and check that it may use this model"
        )
    elif isinstance(exc, ModelNotFoundError) or status == 404:
        hint = (
            f"check model.name ({name}) and model.base_url: the server knows no such model or path "
            "(an OpenAI-compatible server answers 404 to the Responses API: use openai-chat: or "
            "openai-compatible:)"
        )
    elif isinstance(exc, ModelServerError | ModelUnavailableError) or (status or 0) >= 500:
        hint = "the model server failed on its side: retry later, or check the server's logs"
    else:
        hint = f"check model.name, model.base_url and model.profile; {_DOCTOR}"
    return ModelError(message, hint=hint, **fields)


def _misbehaviour(
    exc: UnexpectedModelBehavior, name: str, where: str, unknown_tools: Mapping[str, Collection[str]]
) -> ModelError:
    small = "a model that cannot follow tool schemas may be too small for tool calling: try a larger one"
    m = _RETRIES.search(exc.message)
    if m is not None:
        tool, times = m.group("tool"), int(m.group("n")) + 1
        if tool in unknown_tools:
            close = closest_tools(tool, unknown_tools[tool])
            nearest = f"closest offered tools: {', '.join(close)}; " if close else ""
            return ModelError(
                f"{name} called a tool it was not offered, {tool!r}, {times} times", hint=nearest + small
            )
        return ModelError(
            f"{name} sent invalid arguments for the tool {tool!r} {times} times", hint=small, tool=tool
        )
    if _EMPTY_STREAM in exc.message:
        return ModelError(
            f"the model endpoint{where} sent a streamed answer with no text and no tool call",
            hint="a server that ignores `stream: true` and answers with one JSON object does this (every "
            f"request is streamed): turn streaming on in the server or the proxy in front of it; {_DOCTOR}",
        )
    return ModelError(
        f"{name} answered something unusable: {_clean(exc.message)}", hint="retry, or use another model"
    )


def _body_message(body: object) -> str | None:
    """The ``message`` of an OpenAI-style error body (``{"error": {"message": …}}`` or flat)."""
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict):
            body = inner
        message = body.get("message")
        if isinstance(message, str) and message.strip():
            return message
    return None


def _clean(text: str, limit: int = 300) -> str:
    """One line of an exception's text, secrets cut out (an endpoint may echo the request)."""
    line = " ".join(scrub(str(text)).text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
