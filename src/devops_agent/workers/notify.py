"""Notifications when a queued run finishes: Slack, a signed JSON webhook, e-mail, a Jira comment.

Each ``[[notify]]`` sink a run names gets the outcome: its status, the summary, the top findings
and a link to the run's page. A sink that fails is tried again with a doubling pause
(``retries``, ``backoff_s``); each sink's delivery ends as one ``notification`` event in the run
(``ok``, attempts, the last error), so a failure is visible where the run is. A delivery is a
checkpointed step of the run: a worker that takes the run over does not send it twice.

* Slack: an incoming-webhook POST with Block Kit blocks (header, summary, findings, link) and a
  plain ``text`` fallback.
* Webhook: a JSON POST signed like Slack signs its own requests: header
  ``X-DevOps-Agent-Signature: v1=<hex HMAC-SHA256 of "v1:<timestamp>:<body>">`` with
  ``X-DevOps-Agent-Timestamp``, so a receiver can check origin and freshness.
* E-mail: SMTP (``smtplib``; STARTTLS and login when configured).
* Jira: a comment on the run's ticket (or the sink's ``issue``) through the tool pipeline as a call
  approved by whoever configured the sink — the same safety rules as any Jira write.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import smtplib
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

import httpx

from devops_agent.agent.durability import Outcome
from devops_agent.config.workers import NotifySettings
from devops_agent.textsafe import visible

SIGNATURE_HEADER = "X-DevOps-Agent-Signature"
TIMESTAMP_HEADER = "X-DevOps-Agent-Timestamp"
TOP_FINDINGS = 3

JiraComment = Callable[[str, str], Awaitable[tuple[bool, str | None]]]
"""``(issue, body) -> (ok, error)``: posts a comment through the run's approval rules."""


@dataclass(frozen=True)
class RunSummary:
    """What every sink says about a finished run."""

    run_id: str
    session_id: str
    status: str
    title: str
    summary: str
    findings: list[dict[str, Any]]
    link: str | None
    label: str | None
    ticket: str | None

    @classmethod
    def of(
        cls,
        outcome: Outcome,
        *,
        run_id: str,
        session_id: str,
        link: str | None,
        label: str | None,
        ticket: str | None,
    ) -> RunSummary:
        report = dict(outcome.report or {})
        summary = str(report.get("summary") or "") or _first_paragraph(outcome.output or "")
        findings = sorted(
            report.get("findings") or [], key=lambda f: _SEVERITY.get(str(f.get("severity")), 9)
        )
        return cls(
            run_id=run_id,
            session_id=session_id,
            status=outcome.status,
            title=str(report.get("title") or label or "Investigation"),
            summary=summary[:2000],
            findings=[dict(f) for f in findings[:TOP_FINDINGS]],
            link=link,
            label=label,
            ticket=ticket,
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "session_id": self.session_id,
            "status": self.status,
            "title": self.title,
            "summary": self.summary,
            "findings": [
                {k: f.get(k) for k in ("severity", "title", "detail", "source")} for f in self.findings
            ],
            "link": self.link,
            "label": self.label,
        }

    def as_text(self) -> str:
        lines = [f"{self.title} — {self.status}", "", self.summary or "(no summary)"]
        if self.findings:
            lines += ["", "Top findings:"]
            lines += [f"- [{f.get('severity')}] {f.get('title')}" for f in self.findings]
        if self.link:
            lines += ["", self.link]
        return "\n".join(lines)


_SEVERITY = {"critical": 0, "high": 1, "medium": 2, "warning": 2, "low": 3, "info": 4}


def _first_paragraph(text: str) -> str:
    for block in text.split("\n\n"):
        stripped = block.strip().lstrip("#").strip()
        if stripped:
            return stripped
    return ""


def slack_payload(run: RunSummary) -> dict[str, Any]:
    """A Slack incoming-webhook message in Block Kit, with a plain-text fallback."""
    emoji = {"completed": ":white_check_mark:", "failed": ":x:"}.get(run.status, ":information_source:")
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": f"{run.title}"[:150]}},
        {
            "type": "section",
            "text": {
                "type": "mrkdwn",
                "text": f"{emoji} *{run.status}* — {visible(run.summary) or '(no summary)'}"[:3000],
            },
        },
    ]
    if run.findings:
        items = "\n".join(f"• *{f.get('severity')}* {visible(str(f.get('title')))}" for f in run.findings)
        blocks.append(
            {"type": "section", "text": {"type": "mrkdwn", "text": f"*Top findings*\n{items}"[:3000]}}
        )
    if run.link:
        blocks.append(
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "button",
                        "text": {"type": "plain_text", "text": "Open the run"},
                        "url": run.link,
                    }
                ],
            }
        )
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": f"run `{run.run_id[:12]}`"}]})
    return {"text": f"{run.title}: {run.status}", "blocks": blocks}


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The webhook signature: ``v1=`` + hex HMAC-SHA256 of ``v1:<timestamp>:<body>``."""
    mac = hmac.new(secret.encode(), b"v1:" + timestamp.encode() + b":" + body, hashlib.sha256)
    return "v1=" + mac.hexdigest()


async def _post(url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> None:
    async with httpx.AsyncClient(timeout=timeout_s) as client:
        resp = await client.post(url, content=body, headers={"Content-Type": "application/json", **headers})
    if resp.status_code >= 300:
        raise RuntimeError(f"HTTP {resp.status_code} from {httpx.URL(url).host}: {resp.text[:200]}")


def _mail(sink: NotifySettings, run: RunSummary) -> None:
    msg = EmailMessage()
    msg["Subject"] = f"[devops-agent] {run.title} — {run.status}"
    msg["From"] = sink.from_addr
    msg["To"] = ", ".join(sink.to)
    msg.set_content(run.as_text())
    with smtplib.SMTP(sink.smtp_host, sink.smtp_port, timeout=sink.timeout_s) as smtp:
        if sink.starttls:
            smtp.starttls()
        if sink.smtp_user and sink.smtp_password:
            smtp.login(sink.smtp_user, sink.smtp_password.get_secret_value())
        smtp.send_message(msg)


async def send_once(sink: NotifySettings, run: RunSummary, jira: JiraComment | None) -> None:
    """One attempt at one sink; raises on failure."""
    if sink.kind == "slack":
        if not sink.url:
            raise ValueError(f"notify sink {sink.name!r}: slack needs url")
        await _post(sink.url, json.dumps(slack_payload(run)).encode(), {}, sink.timeout_s)
    elif sink.kind == "webhook":
        if not sink.url:
            raise ValueError(f"notify sink {sink.name!r}: webhook needs url")
        body = json.dumps(run.as_json(), sort_keys=True).encode()
        headers = {}
        if sink.secret is not None:
            ts = str(int(time.time()))
            headers = {TIMESTAMP_HEADER: ts, SIGNATURE_HEADER: sign(sink.secret.get_secret_value(), ts, body)}
        await _post(sink.url, body, headers, sink.timeout_s)
    elif sink.kind == "email":
        if not sink.to:
            raise ValueError(f"notify sink {sink.name!r}: email needs to = [...]")
        await asyncio.to_thread(_mail, sink, run)
    else:
        issue = sink.issue or run.ticket
        if not issue or jira is None:
            raise ValueError(
                f"notify sink {sink.name!r}: no Jira issue to comment on (set issue, or run on a ticket)"
            )
        ok, error = await jira(issue, run.as_text())
        if not ok:
            raise RuntimeError(error or "the comment was refused")


@dataclass(frozen=True)
class Delivery:
    sink: str
    kind: str
    ok: bool
    attempts: int
    error: str | None


async def deliver(
    sink: NotifySettings,
    run: RunSummary,
    *,
    jira: JiraComment | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Delivery:
    """Send to ``sink``, retrying with a doubling pause; never raises."""
    attempts, error = 0, None
    pause = sink.backoff_s
    for attempt in range(sink.retries + 1):
        attempts = attempt + 1
        try:
            await send_once(sink, run, jira)
            return Delivery(sink.name, sink.kind, True, attempts, None)
        except Exception as exc:  # every failure is reported in the run, none ends it
            error = f"{type(exc).__name__}: {exc}"[:500]
        if attempt < sink.retries:
            await sleep(pause)
            pause *= 2
    return Delivery(sink.name, sink.kind, False, attempts, error)
