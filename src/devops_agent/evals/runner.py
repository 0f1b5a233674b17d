"""One case through the agent: a session on the replay registry, its events, the answer.

:class:`EvalEnv` is what every case run shares: the settings, a scratch store (the runs' sessions,
events and vault stay out of the user's store and out of each other's way), the replay library and
two registries — every toolset replayed, or (for cases that ship log files under ``files/``) the
file, log and git tools real over that folder alone. :class:`Target` says what answers: a model
made per case (a configured one, or a scripted one) or none (the offline runbooks); the session
service's router picks the runner as it does for any run, so a new runner (a planner) is
evaluated by naming it in the target's ``inputs`` or settings, not by code here.

:func:`run_case` returns a :class:`CaseRun`: the answer as the user sees it, what the judge is
shown (the intermediate assistant texts, then the answer), every event the run emitted (streamed
tokens joined), the replayed calls, usage and latency. Scoring is not done here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models import Model

from devops_agent.agent.messages import dump_message
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.errors import DevOpsAgentError
from devops_agent.evals.cases import Case
from devops_agent.evals.mapping import ToolMapping
from devops_agent.evals.replay import ReplayLibrary, replay_registry
from devops_agent.events import ErrorEvent, RunEvent, RunFinished, RunStarted, Token, ToolCall
from devops_agent.store import Store
from devops_agent.tools.registry import ToolRegistry, default_registry

LIVE_TOOLSETS = ("files", "logs", "git")
"""Toolsets that run for real when a case ships files: they read only the case's ``files/``."""
CASE_FILES = "files"


@dataclass
class Target:
    """What answers the cases: ``make_model(case)`` gives the model, or ``None`` for the offline
    runbooks. ``inputs`` are added to every run's inputs (a runner chosen by input plugs in here)."""

    name: str
    make_model: Callable[[Case], Model | None]
    inputs: dict[str, Any] = field(default_factory=dict)

    @property
    def offline(self) -> bool:
        return self.name == "offline"


def offline_target() -> Target:
    return Target("offline", lambda _case: None)


@dataclass
class EvalEnv:
    """What the case runs of one evaluation share."""

    settings: Settings
    store: Store
    library: ReplayLibrary
    replayed: ToolRegistry
    with_files: ToolRegistry
    privacy: bool | None = None

    @classmethod
    def open(
        cls,
        settings: Settings,
        workdir: Path,
        mapping: ToolMapping,
        *,
        source: ToolRegistry | None = None,
        privacy: bool | None = None,
    ) -> EvalEnv:
        """An environment whose scratch store lives in ``workdir``; ``source`` is the registry whose
        tools are mirrored (default: the installed toolsets and plugins)."""
        source = source or default_registry()
        library = ReplayLibrary(mapping, settings)
        store = Store(f"sqlite:///{workdir / 'eval-runs.db'}")
        live = [n for n in LIVE_TOOLSETS if n in source.toolsets]
        return cls(
            settings=settings,
            store=store,
            library=library,
            replayed=replay_registry(library, source, settings),
            with_files=replay_registry(library, source, settings, live=live),
            privacy=privacy,
        )

    def close(self) -> None:
        self.store.close()

    def for_case(self, case: Case) -> tuple[Settings, ToolRegistry]:
        """The settings and registry of ``case``'s runs: file tools see the case's ``files/``
        folder and nothing else (never the case folder, which holds the expected answers)."""
        files = case.folder / CASE_FILES
        roots = [files.resolve()] if files.is_dir() else []
        settings = self.settings.model_copy(
            update={"files": self.settings.files.model_copy(update={"roots": roots})}
        )
        return settings, self.with_files if roots else self.replayed


@dataclass
class CaseRun:
    """One run of one case, unscored."""

    case_id: str
    target: str
    status: str
    answer: str
    judged_text: str
    path: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    tools_called: list[str] = field(default_factory=list)
    unmatched: int = 0
    steps: int = 0
    usage: dict[str, Any] | None = None
    latency_s: float = 0.0
    error: str | None = None


def _seed_history(store: Store, session_id: str, history: Sequence[dict[str, str]]) -> None:
    """Earlier turns of the conversation, stored as the session's messages before the run."""
    messages = [
        ModelRequest(parts=[UserPromptPart(t["content"])])
        if t["role"] == "user"
        else ModelResponse(parts=[TextPart(t["content"])])
        for t in history
    ]
    store.append_messages(session_id, "history", [dump_message(m) for m in messages])


def _compact(events: Sequence[RunEvent]) -> list[dict[str, Any]]:
    """The events as JSON objects, each run of streamed tokens joined into one ``text`` event."""
    out: list[dict[str, Any]] = []
    pending: list[str] = []

    def flush() -> None:
        if pending:
            out.append({"type": "text", "text": "".join(pending)})
            pending.clear()

    for event in events:
        if isinstance(event, Token):
            pending.append(event.text)
            continue
        flush()
        data = event.model_dump(mode="json", exclude={"session_id", "run_id", "v"})
        if isinstance(event, RunFinished):
            data.pop("report", None)  # the answer carries it; the report is big
        out.append(data)
    flush()
    return out


def _sum_usage(usages: Sequence[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The usage of several runs (turns) added up; a cost unknown in any of them is unknown."""
    known = [u for u in usages if u]
    if not known:
        return None
    total: dict[str, Any] = {
        k: sum(int(u.get(k) or 0) for u in known)
        for k in ("requests", "input_tokens", "output_tokens", "total_tokens")
    }
    costs = [u.get("cost_usd") for u in known]
    total["cost_usd"] = None if any(c is None for c in costs) else round(sum(float(c or 0) for c in costs), 6)
    return total


async def run_case(case: Case, target: Target, env: EvalEnv) -> CaseRun:
    """Run ``case`` once on ``target`` and collect what came out."""
    settings, registry = env.for_case(case)
    started = time.monotonic()
    try:
        model = target.make_model(case)
        service = SessionService(
            settings,
            env.store,
            registry=registry,
            model=model,
            use_configured_model=False,
            privacy=env.privacy,
        )
        session = service.open_session(None, title=f"eval {case.id}", mode="ask")
        if case.history and model is not None:
            _seed_history(env.store, session.id, case.history)
        book = env.library.open(session.id, case.recordings)
        runs: list[list[RunEvent]] = []
        try:
            for question in case.questions:  # one run per turn, in the same session
                runs.append(
                    [
                        e
                        async for e in service.stream(
                            question, session_id=session.id, inputs={**case.inputs, **target.inputs}
                        )
                    ]
                )
                last = runs[-1][-1] if runs[-1] else None
                if not isinstance(last, RunFinished) or last.status != "completed":
                    break  # a turn that failed or paused ends the conversation
        finally:
            env.library.close(session.id)
    except DevOpsAgentError as exc:
        return CaseRun(
            case.id, target.name, "failed", "", "", error=exc.message, latency_s=time.monotonic() - started
        )
    latency = time.monotonic() - started
    events = [e for run in runs for e in run]
    finals = [e for e in events if isinstance(e, RunFinished)]
    final = runs[-1][-1] if runs and runs[-1] and isinstance(runs[-1][-1], RunFinished) else None
    answer = (final.output if final else None) or ""
    compact = _compact(events)
    # The last turn's texts before its last tool call are the intermediate messages.
    last_turn = _compact(runs[-1]) if runs else []
    last_call = max((i for i, e in enumerate(last_turn) if e["type"] == "tool_call"), default=-1)
    intermediate = [e["text"] for e in last_turn[: last_call + 1] if e["type"] == "text"]
    judged = "\n\n".join([*intermediate, answer]).strip()
    # The question quoted back is not an answer: a judge must not be shown it as one.
    for question in case.questions:
        if question.strip():
            judged = judged.replace(question, "[the question]")
    errors = [e.message for e in events if isinstance(e, ErrorEvent)]
    started_event = next((e for e in events if isinstance(e, RunStarted)), None)
    usage = _sum_usage([f.usage for f in finals])
    tool_calls = [e.tool for e in events if isinstance(e, ToolCall)]
    steps = int(usage.get("requests") or 0) if usage else len(tool_calls)
    return CaseRun(
        case_id=case.id,
        target=target.name,
        status=final.status if final else "failed",
        answer=answer,
        judged_text=judged,
        path=started_event.path if started_event else None,
        events=compact,
        calls=[c.to_dict() for c in book.calls],
        tools_called=tool_calls,
        unmatched=book.unmatched,
        steps=steps,
        usage=usage,
        latency_s=round(latency, 3),
        error="; ".join(errors) or None,
    )
