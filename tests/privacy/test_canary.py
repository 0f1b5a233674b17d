"""Canary: nothing sensitive reaches the model; tools still get real values; the user gets them back.

A full scripted-model run with the privacy guard on. The user's question, a tool's output, a
tool's error and a real MCP server's result (a stdio subprocess) carry secrets and identifiers.
Every request the model receives is recorded and searched for them.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from fastmcp.client.transports.stdio import StdioTransport
from pydantic_ai.mcp import MCPToolset

from devops_agent.agent.scripted import Script
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.errors import StoreError
from devops_agent.privacy import Anonymizer
from devops_agent.store import Store
from devops_agent.tools.base import SPEC_KEY, ToolResult, ToolsetBuilder, ToolSpec
from devops_agent.tools.registry import ToolRegistry
from fixtures_canary import (
    AWS_KEY,
    DB_HOST,
    EMAIL,
    IDENTIFIERS,
    JENKINS,
    KEY,
    MCP_SERVER,
    RECEIVED,
    SECRETS,
    TOOL_PASSWORD,
    USER_TOKEN,
    RecordingModel,
    canary_registry,
)
from fixtures_logs import write_app_log


def mcp_toolset() -> MCPToolset[Any]:
    spec = ToolSpec(category="mcp", read_only=True).model_dump()
    return MCPToolset(StdioTransport(sys.executable, [str(MCP_SERVER)])).with_metadata(**{SPEC_KEY: spec})  # type: ignore[return-value]


def run_canary(store: Store, store_url: str) -> tuple[RecordingModel, Any, str]:
    settings = Settings(database_url=store_url, privacy={"enabled": "on", "hmac_key": KEY})
    session = store.create_session(title="canary", mode="ask", model="scripted")
    placeholder = Anonymizer(KEY.encode(), session.id).placeholder
    host, email, jenkins = (
        placeholder("HOST", DB_HOST),
        placeholder("EMAIL", EMAIL),
        placeholder("HOST", JENKINS),
    )
    script = Script.model_validate(
        {
            "turns": [
                {
                    "tool_calls": [
                        {
                            "tool": "deploy_status",
                            "args": {"host": host, "owner_email": email, "sneaky": "x"},
                        },
                        {"tool": "fetch_build", "args": {"url": f"https://{jenkins}/job/api/42/"}},
                    ]
                },
                {
                    "tool_calls": [
                        {"tool": "customer_lookup", "args": {"customer_id": "42"}},
                        {"tool": "customer_invoices", "args": {"customer_id": "42"}},
                    ]
                },
                {"text": f"{host} is degraded; {email} was paged.\n{{results}}"},
            ]
        }
    )
    model = RecordingModel(script)
    prompt = (
        f"Why is {DB_HOST} slow? Build https://{JENKINS}/job/api/42/ failed. "
        f"Ask {EMAIL}. My token is {USER_TOKEN}."
    )
    service = SessionService(
        settings, store, registry=canary_registry(), model=model, extra_toolsets=[mcp_toolset()]
    )
    _events, final = asyncio.run(service.run(prompt, session_id=session.id))
    return model, final, host


def test_model_sees_no_secret_or_identifier_and_tools_get_real_values(store_url: str) -> None:
    RECEIVED.clear()
    with Store(store_url) as store:
        model, final, host = run_canary(store, store_url)
        (session,) = store.list_sessions()
        stored = "\n".join(store.load_messages(session.id))
        stored += "\n".join(e.payload for e in store.list_events(session.id))
        stored += "\n".join(f"{c.args} {c.error} {c.raw_output}" for c in store.list_tool_calls(session.id))
    assert final.status == "completed"
    sent = "\n".join(model.requests)
    assert len(model.requests) == 3
    for secret in SECRETS:  # a tool's error (ERROR_TOKEN) reaches the events outside the wrapper
        assert secret not in stored, f"{secret!r} was stored"
    assert "private_token=[REDACTED_SECRET]" in stored
    for value in SECRETS + IDENTIFIERS:
        assert value not in sent, f"{value!r} reached the model"
    assert "[REDACTED_SECRET]" in sent
    assert host in sent, "the model works with placeholders"

    # Tools received the real values, and the argument the schema lacks was dropped.
    assert {"host": DB_HOST, "owner_email": EMAIL} in RECEIVED
    assert {"url": f"https://{JENKINS}/job/api/42/"} in RECEIVED

    # The user sees identifiers restored, but never a secret.
    output = final.output or ""
    assert DB_HOST in output
    assert EMAIL in output
    assert "customer_lookup" in output
    for secret in SECRETS:
        assert secret not in output


def test_vault_failure_fails_closed(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    RECEIVED.clear()
    with Store(store_url) as store:

        def broken(*args: Any, **kwargs: Any) -> dict[str, str]:
            raise StoreError("vault table is corrupt", hint="restore it")

        monkeypatch.setattr(store, "vault_lookup", broken)
        model, final, host = run_canary(store, store_url)
    sent = "\n".join(model.requests)
    for value in SECRETS + IDENTIFIERS:
        assert value not in sent
    # Nothing was de-anonymized: the tool got the placeholder, the user sees masked text and a note.
    assert next(r for r in RECEIVED if "host" in r)["host"] == host
    output = final.output or ""
    assert DB_HOST not in output
    assert host in output
    assert "privacy vault could not be read" in output


def test_privacy_purge_command(store_url: str, tmp_path: Path) -> None:
    import os
    import subprocess

    from devops_agent.store import VaultEntry

    with Store(store_url) as store:
        s = store.create_session(title="t", mode="ask", model=None)
        store.vault_put([VaultEntry(s.id, "user_in", "HOST", "<<HOST_aaaaaaaa>>", "db-1")])
    env = dict(os.environ, DEVOPS_AGENT_DATABASE_URL=store_url)
    cmd = [sys.executable, "-m", "devops_agent", "privacy", "purge"]
    bad = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60, check=False)
    assert bad.returncode == 2
    done = subprocess.run(
        [*cmd, "--session", s.id[:8]], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "purged 1 vault entry" in done.stdout


def test_privacy_mask_command_previews_what_the_model_sees(tmp_path: Path) -> None:
    import json
    import os
    import subprocess

    line = "deploy by Maria Lopez to db1.corp.example.com token=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 PAY-123\n"
    env = dict(
        os.environ,
        DEVOPS_AGENT_DATA_DIR=str(tmp_path / "data"),
        DEVOPS_AGENT_PRIVACY__NER="off",
        DEVOPS_AGENT_PRIVACY__KEEP_ENTITIES='["JIRA_KEY"]',
    )
    cmd = [sys.executable, "-m", "devops_agent", "privacy", "mask"]

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*cmd, *args], input=stdin, capture_output=True, text=True, env=env, timeout=60, check=False
        )

    plain = run(stdin=line)
    assert plain.returncode == 0, plain.stderr
    assert "Maria Lopez" not in plain.stdout
    assert "db1.corp.example.com" not in plain.stdout
    assert "ghp_" not in plain.stdout
    assert "PAY-123" in plain.stdout  # kept by the setting
    assert "1 PERSON" in plain.stderr
    assert "1 secret removed" in plain.stderr
    # a preview writes no session and no vault entry: only the placeholder key is created
    assert [p.name for p in (tmp_path / "data").iterdir()] == ["privacy.key"]

    source = tmp_path / "ticket.txt"
    source.write_text(line)
    data = json.loads(run(str(source), "--json").stdout)
    assert data[0]["source"] == str(source)
    assert {(e["type"], e["original"]) for e in data[0]["entities"]} == {
        ("PERSON", "Maria Lopez"),
        ("HOST", "db1.corp.example.com"),
    }
    assert len(data[0]["secrets"]) == 1
    assert data[0]["text"] == plain.stdout  # same key, same placeholders

    missing = run(str(tmp_path / "nope.txt"))
    assert missing.returncode == 2
    assert "cannot read" in missing.stderr

    # several files: each headed, so the masked texts can be told apart; a binary one is skipped
    other = tmp_path / "other.txt"
    other.write_text("mysql -uroot -phunter2hunter2 shop\n")
    blob = tmp_path / "core.bin"
    blob.write_bytes(b"\x7fELF\x00\x01" + bytes(range(256)) * 8)
    both = run(str(source), str(blob), str(other))
    assert both.returncode == 0, both.stderr
    assert both.stdout.startswith(f"==> {source} <==\n")
    assert f"\n==> {other} <==\nmysql -uroot -p[REDACTED_SECRET] shop\n" in both.stdout
    assert "ELF" not in both.stdout
    assert f"skipped {blob}: binary" in both.stderr
    only_binary = run(str(blob))
    assert only_binary.returncode == 2
    assert "nothing to mask" in only_binary.stderr
    assert only_binary.stdout == ""


@pytest.mark.parametrize("scrub", [True, False])
def test_guard_off_still_cuts_secrets_unless_told_not_to(store_url: str, scrub: bool) -> None:
    """With the guard off (a local model) identifiers stay readable, but secrets are still cut
    out of what the model reads and the session stores (``privacy.scrub_secrets``, on by default)."""
    RECEIVED.clear()
    settings = Settings(database_url=store_url, privacy={"enabled": "off", "scrub_secrets": scrub})
    script = Script.model_validate(
        {
            "turns": [
                {"tool_calls": [{"tool": "deploy_status", "args": {"host": DB_HOST, "owner_email": EMAIL}}]},
                {"text": "checked\n{results}"},
            ]
        }
    )
    model = RecordingModel(script)
    with Store(store_url) as store:
        session = store.create_session(title="local", mode="ask", model="scripted")
        service = SessionService(settings, store, registry=canary_registry(), model=model)
        _events, final = asyncio.run(
            service.run(f"Is {DB_HOST} ok? token {USER_TOKEN}", session_id=session.id)
        )
        stored = "\n".join(store.load_messages(session.id))
        stored += "\n".join(e.payload for e in store.list_events(session.id))
        vault_rows = store.vault_purge(session_id=session.id)  # how many the run wrote
    assert final.status == "completed"
    sent = "\n".join(model.requests)
    assert DB_HOST in sent, "identifiers stay readable with the guard off"
    assert EMAIL in sent
    assert {"host": DB_HOST, "owner_email": EMAIL} in RECEIVED
    assert vault_rows == 0, "nothing was masked, so nothing was remembered"
    places = {"model requests": sent, "the store": stored, "the answer": final.output or ""}
    checks = [(USER_TOKEN, "model requests"), (USER_TOKEN, "the store")]
    checks += [(secret, where) for secret in (TOOL_PASSWORD, AWS_KEY) for where in places]
    for secret, where in checks:
        assert (secret in places[where]) is not scrub, f"{secret!r} in {where} with scrub_secrets={scrub}"


def test_offline_runbook_report_and_store_keep_no_secret(tmp_path: Path) -> None:
    """No model reads the runbooks' tool output, but the report and the session store keep it:
    a password in a log line is cut out of both (the guard is off: nothing is masked)."""
    import json
    import subprocess

    logs = write_app_log(
        tmp_path, lambda _: f"payment gateway login failed for {EMAIL} password={TOOL_PASSWORD}"
    )
    data_dir = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if k != "DEVOPS_AGENT_DATABASE_URL"}  # the default SQLite file
    env["DEVOPS_AGENT_DATA_DIR"] = str(data_dir)
    proc = subprocess.run(
        [sys.executable, "-m", "devops_agent", "investigate", "errors in the payment service", "--logs", str(logs)]
        + ["--json"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=180, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert "payment gateway login failed" in json.dumps(report["report"]["findings"])
    assert EMAIL in proc.stdout, "identifiers stay readable: no model is involved"
    assert TOOL_PASSWORD not in proc.stdout
    assert "[REDACTED_SECRET]" in proc.stdout
    stored = b"".join(p.read_bytes() for p in data_dir.rglob("*") if p.is_file())
    assert stored, "the session was stored in the data dir"
    assert TOOL_PASSWORD.encode() not in stored


def test_a_token_in_the_question_does_not_become_the_session_title(store_url: str) -> None:
    settings = Settings(database_url=store_url)  # the scripted model is local: the guard is off
    model = RecordingModel(Script.model_validate({"turns": [{"text": "noted"}]}))
    with Store(store_url) as store:
        service = SessionService(settings, store, model=model)
        _events, final = asyncio.run(service.run(f"rotate {USER_TOKEN} on {DB_HOST}"))
        (session,) = store.list_sessions()
        started = [e.payload for e in store.list_events(session.id) if e.type == "run_started"]
    assert final.status == "completed"
    assert session.title == f"rotate [REDACTED_SECRET] on {DB_HOST}"
    assert started
    assert USER_TOKEN not in "".join(started)
    assert USER_TOKEN not in "".join(model.requests)


def test_a_tool_echoing_a_restored_value_or_a_known_value_in_new_words_unmasks_nothing(
    store_url: str,
) -> None:
    """A model can send a placeholder to a tool that echoes the real value in a form no recognizer
    knows (``no lines match 'zzjdoe42'``), and the same user name turns up in lines the recognizers
    do not understand (``Accepted publickey for jdoe42``): a value the session has masked is masked
    wherever it appears, in any case; a result keyed by path masks the key too."""
    received: list[str] = []

    def build(settings: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("echo")

        @ts.tool(read_only=True)
        def grep_auth(pattern: str) -> ToolResult:
            """Search the auth log."""
            received.append(pattern)
            return ToolResult.ok(
                {
                    "hint": f"no lines match {pattern!r}",
                    "seen": ["Accepted publickey for JDOE42 from 10.1.2.3", "session opened for user jdoe42"],
                    "by_file": {f"/var/log/{DB_HOST}/auth.log": 2, "/var/log/10.9.8.7/auth.log": 1},
                }
            )

        return ts

    registry = ToolRegistry()
    registry.add_toolset("echo", build)
    settings = Settings(database_url=store_url, privacy={"enabled": "on", "hmac_key": KEY})
    with Store(store_url) as store:
        session = store.create_session(title="echo", mode="ask", model="scripted")
        placeholder = Anonymizer(KEY.encode(), session.id).placeholder
        user, host = placeholder("USERNAME", "jdoe42"), placeholder("HOST", DB_HOST)
        script = Script.model_validate(
            {
                "turns": [
                    {"tool_calls": [{"tool": "grep_auth", "args": {"pattern": f"zz{user}|{host}"}}]},
                    {"text": "done\n{results}"},
                ]
            }
        )
        model = RecordingModel(script)
        service = SessionService(settings, store, registry=registry, model=model)
        _events, final = asyncio.run(service.run(f"Who is user=jdoe42 on {DB_HOST}?", session_id=session.id))
    assert final.status == "completed"
    assert received == [f"zzjdoe42|{DB_HOST}"], "the tool got the real values"
    sent = "\n".join(model.requests)
    for value in ("jdoe42", "JDOE42", DB_HOST, "10.9.8.7"):
        i = sent.find(value)
        assert i < 0, f"{value!r} reached the model: {sent[max(0, i - 300) : i + 100]}"
    assert f"zz{user}" in sent
    assert f"for {user} from" in sent
