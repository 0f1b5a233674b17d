"""Durable workers' pieces that need no worker process: when a schedule is due, how a taken-over
run's events continue, the scripted model's per-run arguments, what travels with a queued run,
and configuration mistakes."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError
from pydantic_ai.messages import ModelRequest, ToolCallPart, UserPromptPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import AgentInfo

from devops_agent.agent.approvals import ApprovalDecision
from devops_agent.agent.durability import RunRequest
from devops_agent.agent.journal import Journal
from devops_agent.agent.recorder import EventRecorder
from devops_agent.agent.scripted import Script, ScriptedModel
from devops_agent.config import Settings
from devops_agent.config.workers import ScheduleSettings, WorkerSettings
from devops_agent.errors import ConfigError
from devops_agent.events import RunFinished, RunResumed, RunStarted, Token, ToolCall, ToolResultEvent
from devops_agent.store import Store
from devops_agent.workers.app import system_url
from devops_agent.workers.schedules import firing_key, latest_due

NIGHTLY = ScheduleSettings(name="nightly", cron="0 3 * * *", runbook="ci-health")


def at(h: int, m: int, s: int = 0, day: int = 28) -> datetime:
    return datetime(2026, 11, day, h, m, s, tzinfo=UTC)


@pytest.mark.parametrize(
    ("now", "after", "due"),
    [
        (at(2, 59, 59), at(2, 59, 0), None),  # a second early
        (at(3, 0, 0), at(2, 59, 59), at(3, 0)),  # on time
        (at(3, 0, 40), at(3, 0, 0), None),  # later in the same minute: the same firing, not another
        (at(3, 4, 0), at(2, 58, 0), at(3, 0)),  # late tick: the firing is still the 03:00 one
        (at(3, 0, 0, day=29), at(3, 0, 0), at(3, 0, day=29)),  # the next night
    ],
)
def test_a_schedule_is_due_once_per_cron_minute(now: datetime, after: datetime, due: datetime | None) -> None:
    assert latest_due(NIGHTLY, now, after) == due


def test_a_firing_key_names_the_schedule_and_the_minute() -> None:
    assert firing_key(NIGHTLY, at(3, 0)) == "schedule:nightly:2026-11-28T03:00"


def test_a_cron_expression_needs_five_fields_and_limits_are_positive() -> None:
    with pytest.raises(ValidationError, match="five fields"):
        ScheduleSettings(name="x", cron="0 0 3 * * *")
    with pytest.raises(ValidationError, match="at least 1"):
        WorkerSettings(integration_limits={"jenkins": 0})


def test_the_queue_needs_postgresql(tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 's.db'}", workers=WorkerSettings(execution="queue")
    )
    with pytest.raises(ConfigError, match="PostgreSQL"):
        system_url(settings)


def test_a_run_request_travels_as_json() -> None:
    request = RunRequest(
        session_id="s",
        run_id="r",
        prompt=None,
        mode="agent",
        inputs={"since": "1h"},
        approvals={"call1": ApprovalDecision(approved=False, reason="not now", approver="ann")},
        path="model",
        parent_run_id="r0",
        profiles=["k8s"],
    )
    assert RunRequest.from_json(request.to_json()) == request


def test_scripted_arguments_may_use_the_prompt() -> None:
    model = ScriptedModel(
        Script.model_validate(
            {"turns": [{"tool_calls": [{"tool": "t", "args": {"job": "{prompt}-a", "n": 1}}]}]}
        )
    )
    messages = [ModelRequest(parts=[UserPromptPart("job7")])]
    info = AgentInfo(
        function_tools=[],
        allow_text_output=True,
        output_tools=[],
        model_settings=None,
        model_request_parameters=ModelRequestParameters(),
        instructions=None,
    )
    (part,) = model._respond(messages, info).parts
    assert isinstance(part, ToolCallPart)
    assert part.args == {"job": "job7-a", "n": 1}


def test_a_taken_over_run_continues_its_stream_without_repeats(sqlite_store: Store) -> None:
    """The first worker stored run_started, two tool calls and one result (of b: concurrent calls
    finish in any order); the replay emits them again in another order, then the rest."""
    session = sqlite_store.create_session(title="t", mode="ask", model=None)
    ids = {"session_id": session.id, "run_id": "run1"}
    first = EventRecorder(session.id, "run1", Journal(sqlite_store))
    started = RunStarted(**ids, prompt="p", mode="ask", path="runbook")
    call_a = ToolCall(**ids, tool_call_id="a", tool="jenkins_build")
    call_b = ToolCall(**ids, tool_call_id="b", tool="jenkins_build")
    result_b = ToolResultEvent(**ids, tool_call_id="b", tool="jenkins_build", status="success")
    stored = [first.emit(e) for e in (started, call_a, call_b, result_b)]
    first.journal.close()

    second = EventRecorder(session.id, "run1", Journal(sqlite_store))
    second.resume(stored, worker="w2", completed_steps=1)
    for e in (started, Token(**ids, text="replayed text"), call_b, call_a, result_b):
        second.emit(e)  # all seen before: dropped
    result_a = ToolResultEvent(**ids, tool_call_id="a", tool="jenkins_build", status="success")
    second.emit(result_a)
    second.emit(RunFinished(**ids, status="completed"))
    second.journal.close()

    rows = sqlite_store.run_events("run1")
    assert [r.seq for r in rows] == list(range(1, 8))
    assert [r.type for r in rows] == [
        "run_started",
        "tool_call",
        "tool_call",
        "tool_result",
        "run_resumed",
        "tool_result",
        "run_finished",
    ]
    resumed = second.history[4]
    assert isinstance(resumed, RunResumed)
    assert (resumed.worker, resumed.after_seq, resumed.completed_steps) == ("w2", 4, 1)
    assert second.dropped == 5
    assert second.history[-2].tool_call_id == "a"  # type: ignore[union-attr]


class _Takeover:
    """Just enough durability for a run whose worker died: the new worker's name."""

    worker = "w2"
    completed_steps = 0


def test_a_run_that_had_finished_when_its_worker_died_is_not_run_again(sqlite_store: Store) -> None:
    """The worker stored run_finished and died before the queue heard of it: the worker that
    recovers the run finds it finished, sets its status, and adds nothing to its stream."""
    from devops_agent.agent.session import SessionService

    session = sqlite_store.create_session(title="t", mode="ask", model=None)
    sqlite_store.create_run(session.id, "run1", owner="w1")
    ids = {"session_id": session.id, "run_id": "run1"}
    first = EventRecorder(session.id, "run1", Journal(sqlite_store))
    first.emit(RunStarted(**ids, prompt="p", mode="ask", path="runbook"))
    first.emit(RunFinished(**ids, status="completed", output="all done"))
    first.journal.close()
    service = SessionService(Settings(), sqlite_store)
    request = RunRequest(session_id=session.id, run_id="run1", prompt="p", mode="ask", path="runbooks")
    final = asyncio.run(service.execute(request, _Takeover()))  # type: ignore[arg-type]
    assert final is not None
    assert final.output == "all done"
    assert [r.type for r in sqlite_store.run_events("run1")] == ["run_started", "run_finished"]
    run = sqlite_store.get_run("run1")
    assert (run.status, run.owner) == ("completed", "w2")


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        (["worker"], {}, "the run queue is off: runs execute in the process that starts them"),
        (["queue", "list"], {}, "the run queue is off"),
        (["queue", "list"], {"DEVOPS_AGENT_WORKERS__EXECUTION": "queue"}, "needs the store on PostgreSQL"),
        (["worker"], {"DEVOPS_AGENT_WORKERS__EXECUTION": "queue"}, "needs the store on PostgreSQL"),
        (
            ["queue", "alert", "/nonexistent/alert.json"],
            {"DEVOPS_AGENT_WORKERS__EXECUTION": "queue"},
            "cannot read",
        ),
    ],
)
def test_the_queue_commands_say_what_is_missing(args: list[str], env: dict[str, str], says: str) -> None:
    from typer.testing import CliRunner

    from devops_agent.cli.app import app

    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert says in lines[0]
    assert "Traceback" not in result.stderr
