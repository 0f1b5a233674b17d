"""The tool pipeline: its one order of wrappers, normalization, error mapping, circuit breaker,
output cap, telemetry and recording — the same for every path a run can take."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from devops_agent.config import Settings
from devops_agent.config.settings import BreakerSettings
from devops_agent.errors import CircuitOpenError, PathAccessError
from devops_agent.policies.breaker import BreakerBoard, BreakerSnapshot
from devops_agent.policies.limits import cap_result
from devops_agent.policies.toolsets.normalize import normalize
from devops_agent.policies.toolsets.record import ToolCallInfo
from devops_agent.tools.base import ToolResult, ToolSpec

_EXPORTER = InMemorySpanExporter()
_PROVIDER = TracerProvider()
_PROVIDER.add_span_processor(SimpleSpanProcessor(_EXPORTER))
trace.set_tracer_provider(_PROVIDER)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(
    threshold: int = 3, reset: float = 30.0, cap: int = 16_000, keep: int = 200_000, **kw: Any
) -> tuple[Settings, BreakerBoard, FakeClock]:
    clock = FakeClock()
    board = BreakerBoard(
        BreakerSettings(failure_threshold=threshold, reset_timeout_s=reset), clock=clock, **kw
    )
    settings = Settings(tools={"output_cap_chars": cap, "timeout_s": 2.0, "keep_full_output_chars": keep})  # type: ignore[arg-type]
    return settings, board, clock


async def returns(value: Any) -> Any:
    return value


def test_normalize_wraps_plain_values_and_keeps_results() -> None:
    assert normalize({"a": 1}).status == "success"
    assert normalize([]).status == "no_data"
    existing = ToolResult.fail("x", "y")
    assert normalize(existing) is existing


def test_exception_becomes_error_result_with_hint(through_pipeline: Any) -> None:
    settings, board, _ = make()

    async def boom(path: str) -> Any:
        raise PathAccessError(f"{path} is outside the allowed roots", hint="add it to files.roots")

    result = through_pipeline("files_read", boom, {"path": "/etc/shadow"}, settings=settings, board=board)
    assert result.status == "error"
    assert "outside the allowed roots" in (result.error or "")
    assert result.hint == "add it to files.roots"
    assert result.metadata["duration_ms"] >= 0


def test_an_exceptions_text_loses_its_secrets_everywhere_it_goes(
    through_pipeline: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The error result's text goes to history, events, the store, the log line and the trace."""
    settings, board, _ = make()
    token = "glpat-Xk29Qm7vLp3Rt8Wz1Ns4"

    async def leaky() -> Any:
        raise RuntimeError(f"cannot reach https://ci.example/api with private_token={token}")

    _EXPORTER.clear()
    result = through_pipeline("ci_fetch", leaky, settings=settings, board=board)
    assert result.status == "error"
    assert token not in (result.error or "")
    assert "private_token=[REDACTED_SECRET]" in (result.error or "")
    (span,) = [s for s in _EXPORTER.get_finished_spans() if s.name == "tool ci_fetch"]
    assert token not in (span.status.description or "")
    assert token not in capsys.readouterr().out  # the structured warning line


def test_unexpected_exception_and_timeout_have_actionable_hints(through_pipeline: Any) -> None:
    settings, board, _ = make()

    async def crash() -> Any:
        raise ZeroDivisionError("division by zero")

    async def slow() -> Any:
        await asyncio.sleep(5)

    crashed = through_pipeline("t1", crash, settings=settings, board=board)
    assert crashed.error == "ZeroDivisionError: division by zero"
    assert crashed.hint
    timed_out = through_pipeline("t2", slow, settings=settings, board=board)
    assert "timed out after 2s" in (timed_out.error or "")
    assert "narrow the query" in (timed_out.hint or "")


def test_breaker_opens_after_threshold_and_recovers_through_half_open(through_pipeline: Any) -> None:
    snapshots: list[BreakerSnapshot] = []
    settings, board, clock = make(threshold=3, reset=30.0, listener=snapshots.append)
    calls = 0

    async def flaky() -> Any:
        nonlocal calls
        calls += 1
        raise ConnectionError("server down")

    def call(fn: Any) -> ToolResult:
        result: ToolResult = through_pipeline("jenkins_build", fn, settings=settings, board=board)
        return result

    for _ in range(3):
        assert call(flaky).status == "error"
    assert calls == 3
    assert board.get("jenkins_build").state == "open"
    refused = call(flaky)
    assert calls == 3, "an open breaker must not call the tool"
    assert refused.metadata["breaker"] == "open"
    assert refused.metadata["retry_after_s"] == pytest.approx(30.0)
    assert "retry after 30s" in (refused.hint or "")

    clock.now += 31  # past the reset timeout: one trial call is let through
    assert call(flaky).status == "error"
    assert calls == 4
    assert board.get("jenkins_build").state == "open", "a failed trial re-opens"

    clock.now += 31

    async def fine() -> Any:
        return {"ok": True}

    assert call(fine).status == "success"
    assert board.get("jenkins_build").state == "closed"
    assert [s.state for s in snapshots if s.state != "closed" or s.failures == 0][-1] == "closed"
    assert "open" in [s.state for s in snapshots]
    assert "half_open" in [s.state for s in snapshots]


def test_breaker_ignores_expected_errors_but_counts_transient_ones(through_pipeline: Any) -> None:
    settings, board, _ = make(threshold=2)

    async def not_found() -> ToolResult:
        return ToolResult.fail("no such file", "check the path")

    async def transient() -> ToolResult:
        return ToolResult.fail("HTTP 503", "retry later", transient=True)

    for _ in range(5):
        through_pipeline("files_read", not_found, settings=settings, board=board)
    assert board.get("files_read").state == "closed"
    for _ in range(2):
        through_pipeline("jira_issue", transient, settings=settings, board=board)
    assert board.get("jira_issue").state == "open"


def test_half_open_lets_only_one_trial_through() -> None:
    board = BreakerBoard(BreakerSettings(failure_threshold=1, reset_timeout_s=10), clock=FakeClock())
    board.record("t", ok=False)
    board.get("t").clock = lambda: 2000.0  # type: ignore[method-assign]
    board.before_call("t")
    with pytest.raises(CircuitOpenError):
        board.before_call("t")


def test_output_cap_keeps_head_and_tail_and_counts_dropped_text() -> None:
    text = "HEAD-" + "x" * 50_000 + "-TAIL"
    capped = cap_result(ToolResult.ok(text), 1_000)
    data = capped.data
    assert isinstance(data, str)
    assert data.startswith("HEAD-")
    assert data.endswith("-TAIL")
    assert len(data) <= 1_000
    assert capped.metadata["truncated"] is True
    dropped = capped.metadata["dropped_chars"]
    assert f"[{dropped} characters dropped]" in data
    assert len(data) - len(f"\n… [{dropped} characters dropped] …\n") + dropped == len(text)


def test_output_cap_drops_whole_middle_items_of_lists() -> None:
    items = [{"line": i, "text": "y" * 40} for i in range(1_000)]
    capped = cap_result(ToolResult.ok(items), 2_000)
    data = capped.data
    assert data[0] == items[0]
    assert data[-1] == items[-1]
    marker = next(d for d in data if isinstance(d, str))
    dropped = capped.metadata["dropped_items"]
    assert marker == f"… [{dropped} items dropped] …"
    assert len(data) - 1 + dropped == len(items)
    assert len(json.dumps(data)) <= 2_400


def test_small_results_are_untouched() -> None:
    result = ToolResult.ok({"a": 1})
    assert cap_result(result, 1_000) is result


def test_the_pipeline_caps_records_and_traces_each_call(through_pipeline: Any) -> None:
    _EXPORTER.clear()
    seen: list[ToolCallInfo] = []
    settings, board, _ = make(cap=500)
    spec = ToolSpec(category="logs", read_only=True, risk="sensitive")

    async def logs_tail(path: str) -> str:
        return "z" * 5_000

    result = through_pipeline(
        "logs_tail",
        logs_tail,
        {"path": "/var/log/syslog"},
        settings=settings,
        board=board,
        spec=spec,
        recorder=seen.append,
    )
    assert result.metadata["truncated"] is True
    assert seen[0].tool == "logs_tail"
    assert seen[0].args == {"path": "/var/log/syslog"}
    assert seen[0].result is result
    assert seen[0].spec == spec
    assert seen[0].result.metadata["duration_ms"] >= 0, "recorded after telemetry stamped it"
    spans = [s for s in _EXPORTER.get_finished_spans() if s.name == "tool logs_tail"]
    assert len(spans) == 1
    attrs = spans[0].attributes or {}
    assert attrs["devops_agent.status"] == "success"
    assert attrs["devops_agent.truncated"] is True
    assert attrs["devops_agent.read_only"] is True


def test_full_output_behind_a_summary_or_a_cap_goes_to_the_recorder_only(through_pipeline: Any) -> None:
    settings, board, _ = make(cap=300)
    seen: list[ToolCallInfo] = []

    async def summarized() -> ToolResult:
        return ToolResult.ok({"error_signatures": ["boom"]}).with_raw("the whole log\n" * 10)

    async def big() -> str:
        return "x" * 1000

    async def small() -> str:
        return "fine"

    def call(name: str, fn: Any, settings: Settings = settings) -> ToolResult:
        result: ToolResult = through_pipeline(
            name, fn, settings=settings, board=board, recorder=seen.append, session_id="s-1"
        )
        return result

    first = call("jenkins_console", summarized)
    second = call("cat", big)
    third = call("cat", small)

    assert [i.raw for i in seen] == ["the whole log\n" * 10, "x" * 1000, None]
    # The model's view never carries the raw text, only where the user finds it.
    dumped = json.dumps(first.model_dump(mode="json"))
    assert "the whole log" not in dumped
    assert first.metadata["full_output"].endswith("`devops-agent sessions output s-1 call-1`")
    assert second.metadata["truncated"]
    assert "full_output" in second.metadata
    assert "full_output" not in third.metadata

    quiet, _, _ = make(cap=300, keep=0)  # a session that keeps nothing: no pointer to promise
    assert "full_output" not in call("cat", big, quiet).metadata


def test_without_a_tracer_provider_no_span_is_made_and_the_call_is_the_same(
    through_pipeline: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Telemetry's fast path: no provider, no span (it would be dropped), the same result,
    duration and source; a provider installed later gets its spans at the next call."""
    settings, board, _ = make()

    async def disk() -> dict[str, int]:
        return {"free_gb": 12}

    _EXPORTER.clear()
    with monkeypatch.context() as m:
        m.setattr(trace, "get_tracer_provider", lambda: trace.ProxyTracerProvider())
        bare = through_pipeline("system_disk", disk, settings=settings, board=board)
    assert _EXPORTER.get_finished_spans() == ()
    traced = through_pipeline("system_disk", disk, settings=settings, board=board)
    assert [s.name for s in _EXPORTER.get_finished_spans()] == ["tool system_disk"]
    assert bare.metadata["duration_ms"] >= 0
    for result in (bare, traced):
        result.metadata.pop("duration_ms")
    assert bare == traced
    assert bare.metadata["source"] == "system_disk"
