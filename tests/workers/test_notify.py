"""Notifications of finished runs (issue 28): a local HTTP receiver checks the Slack payload and the
webhook's signature, a local SMTP server (aiosmtpd) receives the mail, a failing sink is retried
with a doubling pause and then reported — in the run itself when a worker sends it."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import Iterator
from email import message_from_bytes, policy
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from devops_agent.agent.durability import Outcome
from devops_agent.config.workers import NotifySettings
from devops_agent.events import NotificationSent, RunFinished, event_from_json
from devops_agent.workers.meta import QueueMeta
from devops_agent.workers.notify import SIGNATURE_HEADER, TIMESTAMP_HEADER, RunSummary, deliver
from devops_agent.workers.submit import QueueExecutor, queue_service, submit
from fixtures_prometheus import free_port
from fixtures_replay import ReplayServer
from fixtures_workers import Cluster, stream_problems, wait_finished

REPORT = {
    "title": "Checkout errors",
    "summary": "The api's error rate rose after deploy 412.",
    "findings": [
        {"severity": "low", "title": "disk 71% full", "detail": "", "source": "node"},
        {"severity": "critical", "title": "5xx at 7%", "detail": "since 14:05", "source": "prometheus"},
        {"severity": "medium", "title": "deploy 412 at 14:03", "detail": "", "source": "jenkins"},
        {"severity": "info", "title": "no alerts on db", "detail": "", "source": "prometheus"},
    ],
}


def summary() -> RunSummary:
    return RunSummary.of(
        Outcome("completed", "done", REPORT),
        run_id="r" * 32,
        session_id="s" * 32,
        link="https://agent.example/runs/rrrr",
        label="alert HighErrorRate",
        ticket=None,
    )


@pytest.fixture
def receiver() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        srv.add("POST", "/slack", body="ok")
        srv.add("POST", "/hook", body={"ok": True})
        yield srv


class Inbox:
    def __init__(self) -> None:
        self.mails: list[Any] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's hook name
        self.mails.append(envelope)
        return "250 Message accepted for delivery"


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    inbox, port = Inbox(), free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


def test_slack_gets_block_kit_with_summary_top_findings_and_link(receiver: ReplayServer) -> None:
    sink = NotifySettings(name="chat", kind="slack", url=f"{receiver.url}/slack")
    result = asyncio.run(deliver(sink, summary()))
    assert (result.ok, result.attempts) == (True, 1)
    (post,) = receiver.requests_to("/slack")
    body = post.json()
    assert body["text"] == "Checkout errors: completed"
    blocks = body["blocks"]
    assert [b["type"] for b in blocks] == ["header", "section", "section", "actions", "context"]
    assert blocks[0]["text"] == {"type": "plain_text", "text": "Checkout errors"}
    assert "error rate rose after deploy 412" in blocks[1]["text"]["text"]
    findings = blocks[2]["text"]["text"]
    # The top 3 by severity, most severe first; the 4th (info) is left out.
    assert findings.index("5xx at 7%") < findings.index("deploy 412") < findings.index("disk 71%")
    assert "no alerts on db" not in findings
    assert blocks[3]["elements"][0]["url"] == "https://agent.example/runs/rrrr"


def test_the_webhook_is_signed_with_hmac(receiver: ReplayServer) -> None:
    sink = NotifySettings(name="hook", kind="webhook", url=f"{receiver.url}/hook", secret="s3cret")
    assert asyncio.run(deliver(sink, summary())).ok
    (post,) = receiver.requests_to("/hook")
    ts = post.headers[TIMESTAMP_HEADER.lower()]
    expected = hmac.new(b"s3cret", b"v1:" + ts.encode() + b":" + post.body, hashlib.sha256).hexdigest()
    assert post.headers[SIGNATURE_HEADER.lower()] == f"v1={expected}"
    wrong = hmac.new(b"other", b"v1:" + ts.encode() + b":" + post.body, hashlib.sha256).hexdigest()
    assert post.headers[SIGNATURE_HEADER.lower()] != f"v1={wrong}"
    payload = json.loads(post.body)
    assert (payload["status"], payload["title"], len(payload["findings"])) == (
        "completed",
        "Checkout errors",
        3,
    )


def test_mail_reaches_an_smtp_server(smtp: tuple[Inbox, int]) -> None:
    inbox, port = smtp
    sink = NotifySettings(
        name="mail", kind="email", to=["oncall@example.org"], smtp_host="127.0.0.1", smtp_port=port
    )
    assert asyncio.run(deliver(sink, summary())).ok
    (envelope,) = inbox.mails
    assert envelope.rcpt_tos == ["oncall@example.org"]
    mail = message_from_bytes(envelope.content, policy=policy.default)
    assert mail["Subject"] == "[devops-agent] Checkout errors — completed"
    text = mail.get_content()
    assert "error rate rose after deploy 412" in text
    assert "- [critical] 5xx at 7%" in text
    assert "https://agent.example/runs/rrrr" in text


def test_a_failing_sink_is_retried_with_backoff_then_reported(receiver: ReplayServer) -> None:
    waits: list[float] = []

    async def sleep(s: float) -> None:
        waits.append(s)

    receiver.fail_next("POST", "/hook", 503, times=2)
    sink = NotifySettings(name="hook", kind="webhook", url=f"{receiver.url}/hook", retries=3, backoff_s=0.5)
    recovered = asyncio.run(deliver(sink, summary(), sleep=sleep))
    assert (recovered.ok, recovered.attempts, waits) == (True, 3, [0.5, 1.0])

    waits.clear()
    down = NotifySettings(
        name="down", kind="webhook", url=f"{receiver.url}/nowhere", retries=2, backoff_s=0.5
    )
    failed = asyncio.run(deliver(down, summary(), sleep=sleep))
    assert (failed.ok, failed.attempts, waits) == (False, 3, [0.5, 1.0])
    assert "HTTP 404" in (failed.error or "")
    assert len(receiver.requests_to("/nowhere")) == 3


@pytest.mark.postgres
@pytest.mark.slow
def test_a_worker_reports_each_sink_in_the_run(worker_cluster: Cluster, receiver: ReplayServer) -> None:
    """A queued run names two sinks: Slack gets the message once; the webhook that keeps failing is
    tried 1 + 1 times, and both outcomes are events of the run, before run_finished."""
    cluster = worker_cluster
    cluster.extra = f"""
[[notify]]
name = "chat"
kind = "slack"
url = "{receiver.url}/slack"

[[notify]]
name = "hook"
kind = "webhook"
url = "{receiver.url}/broken"
retries = 1
backoff_s = 0.1
"""
    cluster.write_config()
    store = cluster.store()
    cluster.start("w1")
    cluster.wait_ready(store, 1)
    service = queue_service(cluster.settings(), store)
    executor = service.supervisor.executor
    assert isinstance(executor, QueueExecutor)
    try:
        meta = QueueMeta(user="ann", notify=["chat", "hook", "pager"])
        inputs = {"runbooks": ["durable-check"], "job": "n"}
        done = asyncio.run(submit(service, "check n", meta=meta, inputs=inputs))
    finally:
        executor.close()
    wait_finished(store, [done.run_id], 60, cluster)
    events = [event_from_json(r.payload) for r in store.run_events(done.run_id)]
    sent = {e.sink: e for e in events if isinstance(e, NotificationSent)}
    assert (sent["chat"].ok, sent["chat"].attempts) == (True, 1)
    assert (sent["hook"].ok, sent["hook"].attempts) == (False, 2)
    assert "HTTP 404" in (sent["hook"].error or "")
    assert (sent["pager"].ok, sent["pager"].error) == (False, "no [[notify]] sink of that name")
    assert isinstance(events[-1], RunFinished)
    assert events[-1].status == "completed"
    assert len(receiver.requests_to("/slack")) == 1
    assert len(receiver.requests_to("/broken")) == 2
    assert stream_problems(store, done.run_id) == []
