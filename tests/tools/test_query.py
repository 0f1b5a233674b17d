"""The query sandbox (``query_result``): what a model's snippet can do to the host — nothing.

Each escape attempt runs a real confined process (bubblewrap, seccomp, rlimits): network, writes,
fork bombs, new programs, memory, CPU and time hogs, output floods, the agent's store, key, config
and environment. Plus the tool itself, end to end in a session after a digested result.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo

from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.events import ToolResultEvent
from devops_agent.store import Store
from devops_agent.tools.base import ToolResult, ToolsetBuilder, call_directly
from devops_agent.tools.query import query_result
from devops_agent.tools.registry import ToolRegistry, default_registry
from devops_agent.tools.sandbox import Availability, Sandbox
from devops_agent.tools.sandbox_query import QueryLimits, QueryRefused, run_query
from fixtures_models import streaming

DATA = json.dumps([{"pod": f"api-{i}", "restarts": i % 4} for i in range(50)])
LIMITS = QueryLimits(memory_mb=256, cpu_s=2, wall_s=6, max_chars=4000)


@pytest.fixture
def box(sandbox_ready: Availability, tmp_path: Path) -> tuple[Sandbox, Settings]:
    settings = Settings(
        data_dir=tmp_path / "data", database_url=f"sqlite:///{tmp_path / 'data' / 'agent.db'}"
    )
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "agent.db").write_text("STORE-CONTENT-7f3a")
    (tmp_path / "data" / "hmac.key").write_text("KEY-CONTENT-91bc")
    return Sandbox.from_settings(settings), settings


def py(sandbox: Sandbox, code: str, limits: QueryLimits = LIMITS) -> dict[str, Any]:
    return run_query(sandbox, {"mode": "python", "query": code, "data": DATA}, limits)


def test_a_snippet_answers_from_the_data(box: tuple[Sandbox, Settings]) -> None:
    answer = py(box[0], "result = sum(d['restarts'] for d in data)")
    assert answer == {"ok": True, "result": {"printed": "", "result": 73}}


def test_no_network(box: tuple[Sandbox, Settings]) -> None:
    for target in ("('1.1.1.1', 80)", "('127.0.0.1', 22)"):
        answer = py(
            box[0], f"import socket; socket.create_connection({target}, timeout=2); result = 'connected'"
        )
        assert answer["ok"] is False
        assert "connected" not in json.dumps(answer)
        assert "unreachable" in answer["error"] or "refused" in answer["error"]


def test_no_writes_anywhere(box: tuple[Sandbox, Settings], tmp_path: Path) -> None:
    for path in ("/etc/evil", "/tmp/evil", "/dev/shm/evil", "/dev/evil", str(tmp_path / "evil")):
        answer = py(box[0], f"open({path!r}, 'w').write('x'); result = 'wrote'")
        assert answer["ok"] is False, path
        assert any(
            why in answer["error"] for why in ("Read-only file system", "ermission", "No such file")
        ), path
    assert not (tmp_path / "evil").exists()


def test_no_new_processes_not_even_a_fork_bomb(box: tuple[Sandbox, Settings]) -> None:
    started = time.monotonic()
    bomb = py(box[0], "import os\nwhile True:\n    os.fork()")
    assert bomb["ok"] is False
    assert "Operation not permitted" in bomb["error"]
    assert time.monotonic() - started < LIMITS.wall_s
    for code in (
        "import subprocess; result = subprocess.run(['id'], capture_output=True).stdout",
        "import os; os.execv('/bin/sh', ['sh', '-c', 'echo ESCAPED'])",
    ):
        answer = py(box[0], code)
        assert answer["ok"] is False, code
        assert "ESCAPED" not in json.dumps(answer).upper().replace("ECHO ESCAPED", "")
    system = py(box[0], "import os; result = os.system('echo ESCAPED')")
    assert system["ok"] is True
    assert system["result"]["result"] != 0, "the shell could not be started"
    assert system["result"]["printed"] == ""
    threads = py(
        box[0], "import threading\nt = threading.Thread(target=print)\nt.start(); t.join()\nresult = 'ok'"
    )
    assert threads["ok"] is True, "threads are not processes: they still work"


def test_memory_hogs_are_stopped(box: tuple[Sandbox, Settings]) -> None:
    answer = py(box[0], "x = bytearray(2 * 1024 ** 3)")
    assert answer == {"ok": False, "error": "the query ran out of memory"}


def test_cpu_and_time_hogs_are_stopped(box: tuple[Sandbox, Settings]) -> None:
    for code in ("while True: pass", "import time; time.sleep(60)"):
        started = time.monotonic()
        answer = py(box[0], code)
        assert answer["ok"] is False
        assert time.monotonic() - started < LIMITS.wall_s + 3
    jq_loop = run_query(box[0], {"mode": "jq", "query": "[range(1e12)]", "data": DATA}, LIMITS)
    assert jq_loop["ok"] is False
    redos = run_query(box[0], {"mode": "grep", "query": "(a+)+$", "data": "a" * 64 + "!"}, LIMITS)
    assert redos["ok"] is False


def test_output_floods_are_capped(box: tuple[Sandbox, Settings]) -> None:
    answer = py(box[0], "print('x' * 50_000_000)")
    assert len(json.dumps(answer)) < LIMITS.max_chars * 2
    assert answer.get("truncated") is True or answer["ok"] is False


def test_the_store_the_key_and_the_environment_are_out_of_reach(
    box: tuple[Sandbox, Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox, settings = box
    monkeypatch.setenv("DEVOPS_AGENT_PRIVACY__HMAC_KEY", "ENV-SECRET-55")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ENV-SECRET-66")
    data_dir = settings.data_dir
    code = (
        "import os, glob\n"
        f"found = {{p: open(p, errors='replace').read() for p in glob.glob({str(data_dir)!r} + '/**', recursive=True) if os.path.isfile(p)}}\n"
        "result = {'files': found, 'env': dict(os.environ)}"
    )
    answer = py(sandbox, code)
    text = json.dumps(answer)
    assert answer["ok"] is True
    for secret in ("STORE-CONTENT-7f3a", "KEY-CONTENT-91bc", "ENV-SECRET-55", "sk-ENV-SECRET-66"):
        assert secret not in text
    assert answer["result"]["result"]["files"] == {}, "the data dir is an empty mount in the sandbox"


def test_python_needs_the_sandbox_but_jq_and_grep_do_not(tmp_path: Path) -> None:
    off = Sandbox.from_settings(Settings(safety={"sandbox": "off"}, data_dir=tmp_path))
    with pytest.raises(QueryRefused, match="only in the sandbox"):
        run_query(off, {"mode": "python", "query": "result = 1", "data": DATA}, LIMITS)
    jq = run_query(
        off, {"mode": "jq", "query": "[.[] | select(.restarts == 3) | .pod] | length", "data": DATA}, LIMITS
    )
    assert jq == {"ok": True, "result": [12]}
    grep = run_query(
        off,
        {
            "mode": "grep",
            "query": "api-4\\d",
            "data": "\n".join(f"api-{i}" for i in range(50)),
            "context": 0,
            "max_matches": 3,
        },
        LIMITS,
    )
    assert grep["result"]["matches"] == 10
    assert grep["result"]["shown"] == 3


def test_the_tool_refuses_unclear_questions(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    both = call_directly(query_result, settings, call_id="x", jq=".", grep="a")
    assert both.status == "error"
    assert "exactly one" in (both.error or "")
    missing = call_directly(query_result, settings, call_id="nope", grep="a")
    assert missing.status == "error"
    assert "no kept result" in (missing.error or "")


# -- end to end: a digested result, then a precise question about it ---------------------------------


def _registry(text: str) -> ToolRegistry:
    def build(settings: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("bench", "logs")

        @ts.tool(read_only=True)
        def fetch_logs() -> ToolResult:
            """Fetch the logs."""
            return ToolResult.ok(text)

        return ts

    registry = default_registry()
    registry.add_toolset("bench", build)
    return registry


def test_a_model_asks_a_kept_result_a_precise_question(tmp_path: Path, sandbox_ready: Availability) -> None:
    lines = [f"2024-05-01T10:00:{i % 60:02d}Z INFO request {i} ok" for i in range(3000)]
    lines[1234] = "2024-05-01T10:20:34Z ERROR payments: ledger-db-7 refused tx=991"
    seen: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
        if not returns:
            return ModelResponse(parts=[ToolCallPart("fetch_logs", {}, tool_call_id="f1")])
        if returns[0].tool_name == "fetch_logs":
            seen.append(json.dumps(returns[0].content))
            return ModelResponse(
                parts=[ToolCallPart("query_result", {"call_id": "f1", "grep": "tx=\\d+"}, tool_call_id="q1")]
            )
        seen.append(json.dumps(returns[0].content))
        return ModelResponse(parts=[TextPart("done")])

    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 's.db'}", data_dir=tmp_path / "data", model={"name": "test:m"}
    )
    with Store(settings.resolved_database_url()) as store:
        service = SessionService(
            settings, store, registry=_registry("\n".join(lines)), model=streaming(respond), privacy=False
        )
        events, final = asyncio.run(service.run("why?", mode="ask"))
    assert final.status == "completed"
    digested, answered = seen
    assert '"digest": "logs"' in digested
    assert "query_result(call_id='f1'" in digested
    answer = json.loads(answered)
    assert answer["status"] == "success"
    assert answer["data"]["matches"] == 1
    assert answer["data"]["hits"][0]["line"] == 1235
    assert "ledger-db-7 refused tx=991" in answer["data"]["hits"][0]["text"]
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert results[0].summary
    assert "ERROR payments" in results[0].summary


def test_hidden_paths_outside_tmp_are_empty_inside(sandbox_ready: Availability) -> None:
    # The data dir and an extra hidden file, at real paths outside /tmp that the host can read.
    host_dir, host_file = Path("/etc/ssl"), Path("/etc/hostname")
    assert any(host_dir.iterdir())
    secret = host_file.read_text().strip()
    assert secret
    sandbox = Sandbox.from_settings(Settings(data_dir=host_dir, safety={"sandbox_hide": [str(host_file)]}))
    listing = py(sandbox, f"import os\nresult = os.listdir({str(host_dir)!r})")
    assert listing == {"ok": True, "result": {"printed": "", "result": []}}
    read = py(sandbox, f"result = open({str(host_file)!r}).read()")
    assert secret not in json.dumps(read)
    assert read == {"ok": True, "result": {"printed": "", "result": ""}} or "denied" in read["error"]
