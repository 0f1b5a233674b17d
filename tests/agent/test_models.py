"""The model path over real HTTP: pydantic-ai's OpenAI provider talking to a fake OpenAI-compatible
server on 127.0.0.1 (``fixtures_openai.py``) that answers, misbehaves, fails and hangs on cue.

Each failure of the endpoint or of the model must end the run promptly, as one line of ours with a
hint and a failed run stored with its question; nothing may print a traceback (whose local
variables hold the user's data). With the privacy guard on, no request body that leaves the machine
may hold a value the guard masked, however the model composes its placeholders.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from genai_prices import Usage, calc_price

from devops_agent.agent.model_errors import closest_tools, shorten_unknown_tool
from devops_agent.agent.models import request_settings, resolve_model
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.config.settings import ModelSettings
from devops_agent.events import ErrorEvent, RunEvent, RunFinished, ToolResultEvent
from devops_agent.privacy import Anonymizer
from devops_agent.store import Store
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.registry import ToolRegistry
from fixtures_openai import FakeOpenAI, Reply, hang, status, text, tool_calls

pytestmark = pytest.mark.allow_model_requests


@pytest.fixture(autouse=True)
def _model_requests_to_the_fake_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """The only endpoint these tests reach is the fake server on 127.0.0.1 (subprocesses too)."""
    monkeypatch.setenv("DEVOPS_AGENT_ALLOW_MODEL_REQUESTS", "1")


def settings_for(tmp_path: Path, url: str, name: str = "openai-compatible:fake-model", **kw: Any) -> Settings:
    model = {"name": name, "base_url": url, "request_timeout_s": 10, **kw.pop("model", {})}
    return Settings(database_url=f"sqlite:///{tmp_path / 'store.db'}", model=model, **kw)


def run_once(
    settings: Settings, prompt: str, *, session_id: str | None = None, registry: ToolRegistry | None = None
) -> tuple[list[RunEvent], RunFinished]:
    with Store(settings.resolved_database_url()) as store:
        service = SessionService(settings, store, registry=registry)
        return asyncio.run(service.run(prompt, session_id=session_id))


def errors_of(events: list[RunEvent]) -> list[ErrorEvent]:
    return [e for e in events if isinstance(e, ErrorEvent)]


def stored_history(settings: Settings, session_id: str) -> str:
    with Store(settings.resolved_database_url()) as store:
        return "\n".join(store.load_messages(session_id))


# -- model misbehaviour: one line of ours, a failed run stored, no traceback -----------------------


@pytest.mark.parametrize(
    ("replies", "message", "hint"),
    [
        (
            [tool_calls(("system_memroy", {})), tool_calls(("system_memroy", {}))],
            "called a tool it was not offered, 'system_memroy', 2 times",
            "closest offered tools: system_memory",
        ),
        (
            [tool_calls(("files_read", "{not json")), tool_calls(("files_read", {"lines": "many"}))],
            "sent invalid arguments for the tool 'files_read' 2 times",
            "too small for tool calling",
        ),
        (
            [text("All good.", ignore_stream=True)],
            "sent a streamed answer with no text and no tool call",
            "ignores `stream: true`",
        ),
    ],
    ids=["unknown-tool-twice", "bad-arguments-twice", "stream-ignored"],
)
def test_model_misbehaviour_is_one_error_of_ours_and_a_failed_run_with_its_question(
    tmp_path: Path, replies: list[Reply], message: str, hint: str
) -> None:
    with FakeOpenAI(replies) as srv:
        settings = settings_for(tmp_path, srv.url)
        started = time.monotonic()
        events, final = run_once(settings, "How much memory is free on web-3?")
        took = time.monotonic() - started
    assert final.status == "failed"
    (error,) = errors_of(events)
    assert message in error.message
    assert hint in (error.hint or "")
    assert error.error_type == "ModelError"
    assert took < 10
    assert "How much memory is free on web-3?" in stored_history(settings, final.session_id)


def test_unknown_tool_is_answered_with_the_closest_names_not_all_of_them(tmp_path: Path) -> None:
    with FakeOpenAI([tool_calls(("system_memroy", {})), text("Memory is fine.")]) as srv:
        events, final = run_once(settings_for(tmp_path, srv.url), "memory?")
        retry = json.dumps(srv.requests[1]["messages"][-1])
    assert final.status == "completed"
    offered = len(srv.requests[0]["tools"])
    assert offered > 20
    assert "system_memory" in retry
    assert "Available tools" not in retry, "the model is not sent every tool's name again"
    assert retry.count("'") < 12
    (result,) = [e for e in events if isinstance(e, ToolResultEvent)]
    assert result.error is not None
    assert "system_memory" in result.error
    assert len(result.error) < 200


def test_closest_tools_and_the_shortened_message() -> None:
    offered = ["k8s_pods", "k8s_events", "k8s_logs", "system_memory", "files_read"]
    assert closest_tools("k8s_pod", offered)[0] == "k8s_pods"
    assert closest_tools("zzz", offered) == []
    long = "Unknown tool name: 'k8s_pod'. Available tools: " + ", ".join(f"'{t}'" for t in offered)
    assert shorten_unknown_tool(long) == (
        "Unknown tool name: 'k8s_pod'. The closest tools are: k8s_pods, k8s_logs, k8s_events."
    )
    assert shorten_unknown_tool("something else") == "something else"


# -- the endpoint failing: status-specific hints, bounded retries, the URL named ------------------


@pytest.mark.parametrize(
    ("code", "hint"),
    [
        (429, "rate limited"),
        (500, "failed on its side"),
        (503, "failed on its side"),
        (401, "API key was refused"),
        (403, "API key was refused"),
        (404, "check model.name"),
    ],
)
def test_http_errors_get_a_hint_by_status_and_bounded_retries(tmp_path: Path, code: int, hint: str) -> None:
    with FakeOpenAI([status(code, "nope", repeat=True)]) as srv:
        events, final = run_once(settings_for(tmp_path, srv.url, model={"max_retries": 1}), "hello?")
        sent = len(srv.requests)
    assert final.status == "failed"
    (error,) = errors_of(events)
    assert f"HTTP {code}" in error.message
    assert srv.url in error.message
    assert hint in (error.hint or "")
    for other in {"rate limited", "failed on its side", "API key was refused", "check model.name"} - {hint}:
        assert other not in (error.hint or "")
    retried = code in (429, 500, 503)
    assert sent == (2 if retried else 1)


def test_an_endpoint_that_never_answers_fails_after_request_timeout(tmp_path: Path) -> None:
    with FakeOpenAI([hang(repeat=True)]) as srv:
        settings = settings_for(tmp_path, srv.url, model={"request_timeout_s": 1.5, "max_retries": 2})
        started = time.monotonic()
        events, final = run_once(settings, "anyone there?")
        took = time.monotonic() - started
    assert final.status == "failed"
    (error,) = errors_of(events)
    assert f"no answer from openai-compatible:fake-model at {srv.url} within 1.5 s" == error.message
    assert "model.request_timeout_s" in (error.hint or "")
    assert 1.4 < took < 6, "one deadline over every attempt, not 600 s per attempt"


def test_an_endpoint_that_cannot_be_connected_to_fails_after_connect_timeout(tmp_path: Path) -> None:
    # A listening socket whose accept queue is full: the kernel drops further SYNs, so connecting
    # hangs as it does behind a firewall that drops packets.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        fillers = [socket.socket() for _ in range(3)]
        for f in fillers:
            f.setblocking(False)
            f.connect_ex(("127.0.0.1", port))
        try:
            url = f"http://127.0.0.1:{port}/v1"
            model = {"request_timeout_s": 30, "connect_timeout_s": 0.5, "max_retries": 0}
            with Store(settings_for(tmp_path, url).resolved_database_url()) as store:
                service = SessionService(settings_for(tmp_path, url, model=model), store)
                started = time.monotonic()
                events, final = asyncio.run(service.run("anyone there?"))
                took = time.monotonic() - started
        finally:
            for f in fillers:
                f.close()
    assert final.status == "failed"
    (error,) = errors_of(events)
    assert error.message == f"connecting to the model endpoint at {url} timed out"
    assert "model.connect_timeout_s" in (error.hint or "")
    assert took < 3.5, "connecting has its own timeout (the HTTP client's default is 5 s)"


def test_request_settings_carry_the_timeouts_and_retries() -> None:
    got = request_settings(ModelSettings(name="openai:gpt-4o", request_timeout_s=30, connect_timeout_s=4))
    timeout = got["timeout"]
    assert not isinstance(timeout, float | int)
    assert (timeout.read, timeout.connect) == (30, 4)
    assert got["first_event_timeout"] == 30
    assert got["max_retries"] == 1
    google = request_settings(ModelSettings(name="google-gla:gemini-2.5-flash", request_timeout_s=7))
    assert google["timeout"] == 7  # Google's SDK takes seconds only


def test_a_refused_connection_names_the_url(tmp_path: Path) -> None:
    with FakeOpenAI([]) as srv:
        url = srv.url  # the port is free again once the server is stopped
    events, final = run_once(settings_for(tmp_path, url, model={"max_retries": 0}), "hello?")
    assert final.status == "failed"
    (error,) = errors_of(events)
    assert error.message.startswith(f"cannot reach the model endpoint at {url}")
    assert "model.base_url" in (error.hint or "")


# -- the run itself: the question kept, usage counted, the right API ------------------------------


def test_a_failed_runs_question_reaches_the_model_when_asked_to_try_again(tmp_path: Path) -> None:
    replies = [status(500, repeat=False), status(500), text("Disk /var is 91% full.")]
    with FakeOpenAI(replies) as srv:
        settings = settings_for(tmp_path, srv.url, model={"max_retries": 1})
        _, failed = run_once(settings, "Why is the disk on db-7 filling up?")
        _, final = run_once(settings, "try again", session_id=failed.session_id)
        last = json.dumps(srv.requests[-1]["messages"])
    assert failed.status == "failed"
    assert final.status == "completed"
    assert "Why is the disk on db-7 filling up?" in last
    assert "try again" in last


def test_a_run_that_failed_between_a_call_and_its_result_can_be_asked_again(tmp_path: Path) -> None:
    replies = [
        tool_calls(("system_memroy", {})),
        tool_calls(("system_memroy", {})),
        text("Memory is fine."),
    ]
    with FakeOpenAI(replies) as srv:
        settings = settings_for(tmp_path, srv.url)
        _, failed = run_once(settings, "Is memory short on web-3?")
        events, final = run_once(settings, "try again", session_id=failed.session_id)
        last = json.dumps(srv.requests[-1]["messages"])
    assert failed.status == "failed"
    assert final.status == "completed", errors_of(events)
    assert "Is memory short on web-3?" in last


def test_usage_and_cost_of_a_run(tmp_path: Path) -> None:
    replies = [tool_calls(("system_memory", {}), usage=(120, 9)), text("Fine.", usage=(200, 5))]
    with FakeOpenAI(replies, model="gpt-4o") as srv:
        settings = settings_for(tmp_path, srv.url, name="openai:gpt-4o", model={"api_key": "sk-test"})
        _, final = run_once(settings, "memory?")
        paths = list(srv.paths)
    assert final.status == "completed"
    assert paths == ["/v1/chat/completions"] * 2, "a custom base_url gets Chat Completions, not Responses"
    usage = final.usage or {}
    assert (usage["requests"], usage["input_tokens"], usage["output_tokens"]) == (2, 320, 14)
    expected = sum(
        calc_price(
            Usage(input_tokens=i, output_tokens=o), model_ref="gpt-4o", provider_id="openai"
        ).total_price
        for i, o in ((120, 9), (200, 5))
    )
    assert usage["cost_usd"] == pytest.approx(float(expected))
    assert usage["cost_usd"] > 0


def test_a_model_without_prices_has_tokens_and_no_cost(tmp_path: Path) -> None:
    with FakeOpenAI([text("Fine.")]) as srv:
        _, final = run_once(settings_for(tmp_path, srv.url), "memory?")
    usage = dict(final.usage or {})
    assert usage.pop("context")["requests"] == 1  # what the token budget saw (timings vary)
    assert usage == {
        "requests": 1,
        "input_tokens": 31,
        "output_tokens": 7,
        "total_tokens": 38,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "tool_calls": 0,
        "cost_usd": None,
        "price_source": None,
    }


def test_no_deprecation_warning_from_the_compatibility_profile(tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with FakeOpenAI([text("Fine.")]) as srv:
            resolve_model(settings_for(tmp_path, srv.url).model)
            _, final = run_once(settings_for(tmp_path, srv.url), "memory?")
    assert final.status == "completed"
    assert [str(w.message) for w in caught if "deprecat" in str(w.message).lower()] == []


# -- Jira keys: only the real shape is a ticket ----------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "triage"),
    [
        ("why is db-7 slow after the api-2 deploy?", False),
        ("is the file utf-8 and does its sha-256 match?", False),
        ("is it UTF-8, and does the SHA-256 match?", False),
        ("please look at OPS-1234", True),
    ],
)
def test_only_a_real_jira_key_makes_the_run_a_ticket_triage(
    tmp_path: Path, prompt: str, triage: bool
) -> None:
    with FakeOpenAI([text("ok")]) as srv:
        settings = settings_for(tmp_path, srv.url, jira={"url": "http://127.0.0.1:9"})
        run_once(settings, prompt)
        sent = srv.sent()
    assert ("Triage it like the offline triage runbook does" in sent) is triage


# -- privacy: what was masked once stays masked, whatever the model wraps around it ---------------

KEY = "http-canary-key"
DB_HOST = "billing-db-7.prod.canary-corp.example"
DB_IP = "10.20.30.40"
RECEIVED: list[str] = []


def echo_registry() -> ToolRegistry:
    def build(settings: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("echo")

        @ts.tool(read_only=True)
        def read_config(path: str) -> ToolResult:
            """Read a configuration file."""
            RECEIVED.append(path)
            return ToolResult.fail(f"cat: {path}: No such file or directory", hint="check the path")

        @ts.tool(read_only=True)
        def resolve(name: str) -> ToolResult:
            """Resolve a host name."""
            RECEIVED.append(name)
            return ToolResult.ok(f"$ getent hosts {name}\nnothing found for {name}")

        return ts

    registry = ToolRegistry()
    registry.add_toolset("echo", build)
    return registry


def test_a_placeholder_inside_a_longer_name_never_comes_back_in_clear(tmp_path: Path) -> None:
    RECEIVED.clear()
    with FakeOpenAI([]) as srv:
        settings = settings_for(tmp_path, srv.url, privacy={"enabled": "on", "hmac_key": KEY, "ner": "off"})
        with Store(settings.resolved_database_url()) as store:
            session = store.create_session(title="canary", mode="ask", model="openai-compatible:fake-model")
        ph = Anonymizer(KEY.encode(), session.id).placeholder
        host, ip = ph("HOST", DB_HOST), ph("IP", DB_IP)
        srv.replies += [
            tool_calls(
                ("read_config", {"path": f"/etc/nginx/{host}.conf"}),
                ("resolve", {"name": f"{host}.{ip}"}),
                ("resolve", {"name": f"x{host}_{ip}9"}),
            ),
            text(f"{host} has no config file; see {host}.conf"),
        ]
        _, final = run_once(
            settings, f"Why can't nginx on {DB_HOST} ({DB_IP}) reach the db?", session_id=session.id,
            registry=echo_registry(),
        )  # fmt: skip
        sent = srv.sent()
    assert final.status == "completed"
    assert len(srv.bodies) == 2
    # The tools got the real values ...
    assert list(RECEIVED) == [
        f"/etc/nginx/{DB_HOST}.conf",
        f"{DB_HOST}.{DB_IP}",
        f"x{DB_HOST}_{DB_IP}9",
    ]
    # ... and their echoes went back to the model masked: no request body holds a real value.
    assert DB_HOST not in sent
    assert DB_IP not in sent
    assert "canary-corp" not in sent
    assert f"cat: /etc/nginx/{host}.conf: No such file or directory" in sent
    assert f"nothing found for {host}.{ip}" in sent
    # The user gets the answer restored.
    assert f"{DB_HOST} has no config file; see {DB_HOST}.conf" in (final.output or "")
