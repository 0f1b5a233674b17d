"""The run engine's seams: start a run, follow it from any seq, cancel it from another service on the
same store, and one tool pipeline for every path a run can take."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from pydantic_ai import RunContext

from devops_agent.agent.approvals import ApprovalDecision
from devops_agent.agent.journal import Journal
from devops_agent.agent.reasoning.plan import PlanDecision
from devops_agent.agent.runners.model import ModelRunner
from devops_agent.agent.runners.planner import PlannerRunner
from devops_agent.agent.runners.router import Router
from devops_agent.agent.runners.runbooks import RunbookRunner
from devops_agent.agent.runners.triage import TriageCaches, TriageRunner
from devops_agent.agent.scripted import Script, ScriptedModel
from devops_agent.agent.session import SessionService
from devops_agent.agent.toolbox import RunIds, Toolbox
from devops_agent.config import Settings
from devops_agent.deps import ToolDeps
from devops_agent.errors import UserError
from devops_agent.events import RunEvent, RunFinished, ToolCall, ToolResultEvent
from devops_agent.policies import pipeline
from devops_agent.store import Store
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.registry import ToolRegistry, build_catalog

RELEASE = threading.Event()
ENTERED = threading.Event()

PIPELINE = [
    "ModeFilterToolset",
    "RecordToolset",
    "TelemetryToolset",
    "CapToolset",
    "PrivacyToolset",
    "DigestToolset",
    "GateToolset",
    "BreakerToolset",
    "NormalizeToolset",
]


def registry() -> ToolRegistry:
    def build(settings: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("engine", "tools for the engine tests")

        @ts.tool(read_only=True)
        def probe(name: str) -> ToolResult:
            """Read a probe."""
            return ToolResult.ok({"probe": name})

        @ts.tool(read_only=True)
        async def gate() -> str:
            """Wait until the test lets it go."""
            ENTERED.set()
            await asyncio.to_thread(RELEASE.wait, 30)
            return "released"

        return ts

    reg = ToolRegistry()
    reg.add_toolset("engine", build)
    return reg


def scripted(*turns: dict[str, Any]) -> ScriptedModel:
    return ScriptedModel(Script.model_validate({"turns": list(turns)}))


PROBES = [
    {"tool_calls": [{"tool": "probe", "args": {"name": "a"}}]},
    {"tool_calls": [{"tool": "probe", "args": {"name": "b"}}]},
    {"tool_calls": [{"tool": "gate"}]},
    {"text": "done with {tool_count} results"},
]


def test_a_second_reader_attaches_after_seq_k_and_gets_exactly_the_rest(store_url: str) -> None:
    RELEASE.clear()
    ENTERED.clear()
    settings = Settings(database_url=store_url)

    async def go() -> tuple[list[RunEvent], list[RunEvent], list[RunEvent]]:
        with Store(store_url) as store:
            service = SessionService(settings, store, registry=registry(), model=scripted(*PROBES))
            handle = await service.start("probe it", mode="ask")
            first: list[RunEvent] = []
            async for event in service.events(handle.run_id):
                first.append(event)
                if isinstance(event, ToolCall) and event.tool == "gate":
                    break  # the run is now blocked in `gate`: attach a second reader mid-run
            await asyncio.to_thread(ENTERED.wait, 10)
            k = first[2].seq
            second_reader = asyncio.create_task(_collect(service.events(handle.run_id, after_seq=k)))
            await asyncio.sleep(0.05)
            RELEASE.set()
            rest = [e async for e in service.events(handle.run_id, after_seq=first[-1].seq)]
            second = await second_reader
            # After the run: the same events, replayed from the store by a service that never ran it.
            with Store(store_url) as other_store:
                other = SessionService(settings, other_store, registry=registry(), use_configured_model=False)
                replayed = await _collect(other.events(handle.run_id, after_seq=k))
            return first + rest, second, replayed

    everything, second, replayed = asyncio.run(asyncio.wait_for(go(), 60))
    seqs = [e.seq for e in everything]
    assert seqs == list(range(1, len(seqs) + 1)), "one numbering, no gaps"
    assert isinstance(everything[-1], RunFinished)
    assert everything[-1].status == "completed"
    k = everything[2].seq
    assert [e.seq for e in second] == [e.seq for e in everything if e.seq > k]
    assert [e.model_dump() for e in replayed] == [e.model_dump() for e in everything if e.seq > k]


async def _collect(events: Any) -> list[RunEvent]:
    return [e async for e in events]


def test_cancel_from_another_service_on_the_same_store_stops_the_run(store_url: str) -> None:
    RELEASE.clear()
    ENTERED.clear()
    settings = Settings(database_url=store_url)

    async def go() -> tuple[RunFinished, bool, str]:
        with Store(store_url) as store, Store(store_url) as elsewhere:
            runner = SessionService(
                settings,
                store,
                registry=registry(),
                model=scripted({"tool_calls": [{"tool": "gate"}]}, {"text": "never"}),
            )
            handle = await runner.start("wait", mode="ask")
            await asyncio.to_thread(ENTERED.wait, 10)
            other = SessionService(settings, elsewhere, registry=registry(), use_configured_model=False)
            assert other.supervisor.local(handle.run_id) is None, "the other service does not run it"
            assert other.cancel(handle.run_id) is True
            events = await asyncio.wait_for(_collect(runner.events(handle.run_id)), 10)
            # The cancelled tool's thread is still waiting; free it before asyncio.run joins the
            # default executor's threads at exit (else that join waits out the 30 s).
            RELEASE.set()
            final = events[-1]
            assert isinstance(final, RunFinished)
            again = other.cancel(handle.run_id)
            return final, again, elsewhere.get_run(handle.run_id).status

    try:
        final, again, status = asyncio.run(go())
    finally:
        RELEASE.set()
    assert final.status == "cancelled"
    assert again is False, "a finished run cannot be cancelled again"
    assert status == "cancelled"


def test_a_shutdown_right_after_a_start_still_finishes_the_run_as_interrupted(store_url: str) -> None:
    """Stopped before its body's first step (nothing of the run's own handling ran): the run
    still ends, as a shutdown ends any run, resumable and with its ``run_finished``."""
    settings = Settings(database_url=store_url)

    async def go() -> tuple[list[str], list[RunEvent], str]:
        with Store(store_url) as store:
            service = SessionService(settings, store, registry=registry(), model=scripted({"text": "x"}))
            handle = await service.start("a question", mode="ask")
            stopped = await service.supervisor.drain(1.0)  # before the loop ever ran the body
            await asyncio.sleep(0)  # the task's done callbacks
            events = await asyncio.wait_for(_collect(service.events(handle.run_id)), 10)
            return stopped, events, store.get_session(handle.session_id).status

    stopped, events, session_status = asyncio.run(go())
    assert len(stopped) == 1
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert final.status == "interrupted"
    assert session_status == "interrupted"
    with Store(store_url) as store:
        assert store.get_run(final.run_id).status == "interrupted"


def test_every_path_calls_the_identical_pipeline(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[list[str]] = []
    real = Toolbox.pipeline

    def spy(self: Toolbox, *args: Any, **kwargs: Any) -> Any:
        tools = real(self, *args, **kwargs)
        built.append(pipeline.layers(tools))
        return tools

    monkeypatch.setattr(Toolbox, "pipeline", spy)
    settings = Settings(database_url=store_url)
    with Store(store_url) as store:
        model_run = SessionService(
            settings, store, registry=registry(), model=scripted(*PROBES[:2], {"text": "ok"})
        )
        _, final = asyncio.run(model_run.run("model path", mode="ask"))
        assert final.status == "completed"
        offline = SessionService(settings, store, use_configured_model=False)
        _, final = asyncio.run(offline.run("Is this host healthy?", mode="ask"))
        assert final.status == "completed"
        asyncio.run(offline.call_approved(final.session_id, "system_uptime", {}, approver="ops"))
    assert len(built) == 3
    assert built[0] == built[1] == built[2] == PIPELINE


@pytest.mark.parametrize("reasoning", [False, True], ids=["plain-loop", "planner"])
def test_no_history_processor_takes_a_thread_trip_per_model_request(
    store_url: str, monkeypatch: pytest.MonkeyPatch, reasoning: bool
) -> None:
    """pydantic-ai runs a plain-function history processor in a worker thread before every model
    request; ours are coroutines, so a step costs no thread trip (a busy machine's worst wait)."""
    from pydantic_ai.capabilities import process_history

    sent_to_threads: list[str] = []
    real = process_history.run_in_executor

    async def spy(fn: Any, *args: Any, **kwargs: Any) -> Any:
        sent_to_threads.append(getattr(fn, "__qualname__", repr(fn)))
        return await real(fn, *args, **kwargs)

    monkeypatch.setattr(process_history, "run_in_executor", spy)
    settings = Settings(database_url=store_url, agent={"reasoning": reasoning})  # type: ignore[arg-type]
    with Store(store_url) as store:
        service = SessionService(
            settings, store, registry=registry(), model=scripted(*PROBES[:2], {"text": "ok"})
        )
        _, final = asyncio.run(service.run("model path", mode="ask"))
    assert final.status == "completed"
    assert sent_to_threads == []


def test_offline_calls_are_refused_with_a_reason_not_hidden(store_url: str) -> None:
    """A runbook naming a tool its mode forbids gets the gate's reason, not "unknown tool"; the
    same tool approved by a person outside a run does run, in their name."""
    settings = Settings(database_url=store_url)
    ran: list[str] = []

    def build(_s: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("w")

        @ts.tool(read_only=False)
        def restart(name: str) -> str:
            """Restart a service."""
            ran.append(name)
            return f"restarted {name}"

        return ts

    reg = ToolRegistry()
    reg.add_toolset("w", build)
    with Store(store_url) as store:
        service = SessionService(settings, store, registry=reg, use_configured_model=False)
        session = store.create_session(title="t", mode="ask", model=None)
        journal = Journal(store)
        tools = service.toolbox.pipeline(
            RunIds(session.id, "r1", "ask", journal), approvals="deny", privacy=None
        )
        refused = asyncio.run(pipeline.ToolCaller(tools)("restart", {"name": "api"}))
        journal.close()
        assert ran == []
        approved = asyncio.run(service.call_approved(session.id, "restart", {"name": "api"}, approver="ops"))
        audit = store.list_audit(session_id=session.id)
    assert refused.status == "error"
    assert "not available in ask mode" in (refused.error or "")
    assert refused.hint
    assert approved.status == "success"
    assert ran == ["api"]
    assert {(a.outcome, a.actor) for a in audit} == {("rejected", "policy"), ("executed", "ops")}


def test_the_router_picks_by_rule(tmp_path: Any) -> None:
    settings = Settings(data_dir=tmp_path, jira={"url": "https://jira.example.com", "token": "t"})  # type: ignore[arg-type]
    catalog = build_catalog(settings)
    caches = TriageCaches()
    no_model = Router(settings, catalog, None, caches)
    assert isinstance(no_model.choose("Is this host healthy?", {}, None), RunbookRunner)
    triage = no_model.choose("look at OPS-123 please", {}, None)
    assert isinstance(triage, TriageRunner)
    assert triage.ticket == "OPS-123"
    assert isinstance(no_model.choose("disk", {"runbooks": ["host-health"]}, None), RunbookRunner)
    with pytest.raises(UserError, match="paused by a model run"):
        no_model.choose(None, {}, {"c1": ApprovalDecision(True)})
    with_model = Router(settings, catalog, ModelRunner(scripted({"text": "x"}), "scripted"), caches)
    assert isinstance(with_model.choose("look at OPS-123", {}, None), ModelRunner)
    model = scripted({"text": "x"})
    both = Router(settings, catalog, ModelRunner(model, "s"), caches, PlannerRunner(model, "s"))
    assert isinstance(both.choose("why is api down?", {}, None), PlannerRunner), (
        "agent.reasoning is on by default"
    )
    plain = settings.model_copy(update={"agent": settings.agent.model_copy(update={"reasoning": False})})
    plain_router = Router(plain, catalog, ModelRunner(model, "s"), caches, PlannerRunner(model, "s"))
    assert isinstance(plain_router.choose("why?", {}, None), ModelRunner)
    assert isinstance(plain_router.choose("why?", {"plan": "always"}, None), PlannerRunner), (
        "asked for a plan"
    )
    assert isinstance(plain_router.choose(None, {}, None, PlanDecision("approve")), PlannerRunner)


def test_triage_caches_keep_the_most_recent_sessions_only() -> None:
    caches = TriageCaches(max_sessions=2)
    a = caches.for_session("a")
    caches.for_session("b")
    assert caches.for_session("a") is a  # touched: now the most recent
    caches.for_session("c")  # evicts b, the least recently used
    assert len(caches) == 2
    assert caches.for_session("a") is a
    assert caches.for_session("b") is not None
    assert len(caches) == 2


def test_a_slow_reader_never_blocks_the_run(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader whose queue overflows is dropped and re-reads from the run's memory: it still
    gets every event exactly once, and the run did not wait for it."""
    from devops_agent.agent import recorder

    monkeypatch.setattr(recorder, "SUBSCRIBER_BUFFER", 2)
    settings = Settings(database_url=store_url)

    async def go() -> list[RunEvent]:
        with Store(store_url) as store:
            service = SessionService(
                settings, store, registry=registry(), model=scripted(*PROBES[:2], {"text": "ok"})
            )
            handle = await service.start("probe", mode="ask")
            seen: list[RunEvent] = []
            async for event in service.events(handle.run_id):
                seen.append(event)
                if len(seen) == 1:
                    assert handle.task is not None
                    await asyncio.wait_for(asyncio.shield(handle.task), 20)  # the run finishes first
            return seen

    seen = asyncio.run(go())
    assert [e.seq for e in seen] == list(range(1, len(seen) + 1))
    assert isinstance(seen[-1], RunFinished)
    assert any(isinstance(e, ToolResultEvent) for e in seen)


def test_a_tool_gets_the_same_run_deps_on_both_paths(store_url: str) -> None:
    seen: list[tuple[str | None, str | None, bool]] = []

    def build(_s: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("deps")

        @ts.tool(read_only=True)
        def whoami(ctx: RunContext[ToolDeps]) -> str:
            """Which session and run this call serves."""
            seen.append((ctx.deps.session_id, ctx.deps.run_id, ctx.deps.store is not None))
            return "ok"

        return ts

    reg = ToolRegistry()
    reg.add_toolset("deps", build)
    settings = Settings(database_url=store_url)
    with Store(store_url) as store:
        model = scripted({"tool_calls": [{"tool": "whoami"}]}, {"text": "done"})
        _, by_model = asyncio.run(SessionService(settings, store, registry=reg, model=model).run("who?"))
        session = store.create_session(title="t", mode="ask", model=None)
        offline = SessionService(settings, store, registry=reg, use_configured_model=False)
        asyncio.run(offline.call_approved(session.id, "whoami", {}, approver="ops"))
    assert seen[0] == (by_model.session_id, by_model.run_id, True)
    assert seen[1][0] == session.id
    assert seen[1][2] is True


def test_a_new_question_reaches_the_store_in_one_thread_trip_and_runs(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the run's first event the service opens the session, records the run and marks both
    running: one trip to a thread (each waits for a thread and the interpreter lock), not three."""
    url = f"sqlite:///{tmp_path / 'hops.db'}"
    settings = Settings(database_url=url, data_dir=tmp_path)
    trips: list[str] = []
    real = asyncio.to_thread

    async def counting(fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        trips.append(getattr(fn, "__name__", repr(fn)))
        return await real(fn, *args, **kwargs)

    async def go() -> tuple[list[str], list[RunEvent], str]:
        with Store(url) as store:
            service = SessionService(settings, store, registry=registry(), model=scripted({"text": "hi"}))
            monkeypatch.setattr(asyncio, "to_thread", counting)
            handle = await service.start("hello", mode="ask")
            before = list(trips)
            events = await _collect(service.events(handle.run_id))
            return before, events, store.get_session(handle.session_id).status

    before, events, status = asyncio.run(go())
    assert before == ["open_and_begin"]
    assert isinstance(events[-1], RunFinished)
    assert events[-1].status == "completed"
    assert status == "completed"
