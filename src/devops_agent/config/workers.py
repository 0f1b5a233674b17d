"""Configuration of durable workers, schedules and notification sinks (``execution = "queue"``).

``[workers]`` says where runs execute (in this process, the default; or queued for
``devops-agent worker`` processes on PostgreSQL) and the limits every worker shares;
``[[schedules]]`` are investigations started by the clock; ``[[notify]]`` are the sinks a finished
run's result is sent to. Kept apart from :mod:`devops_agent.config.settings` (which includes
them) because they are one concern and that module is long enough.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator

from devops_agent.config.section import Section


class WorkerSettings(Section):
    """Where runs execute, and the limits all workers share."""

    execution: Literal["inprocess", "queue"] = Field(
        "inprocess",
        description="inprocess: runs execute in the process that starts them; queue: they are queued in "
        "PostgreSQL for `devops-agent worker` processes",
    )
    concurrency: int = Field(4, ge=1, le=256, description="runs one worker executes at once")
    max_runs: int = Field(0, ge=0, description="runs executing at once across all workers (0: no limit)")
    runs_per_user: int = Field(2, ge=1, description="runs of one user executing at once across all workers")
    integration_limits: dict[str, int] = Field(
        default_factory=dict,
        description="concurrent calls per integration across all workers, e.g. {jenkins = 4}",
    )
    heartbeat_s: float = Field(2.0, gt=0, description="how often a worker says it is alive")
    dead_after_s: float = Field(
        15.0, gt=0, description="a worker silent this long is dead: another resumes its runs"
    )
    poll_s: float = Field(0.5, gt=0, description="how often a worker looks for queued runs")
    dedupe_window_s: float = Field(
        600.0, ge=0, description="an alert group or a schedule's firing joins its run of this long ago"
    )
    alert_notify: list[str] = Field(
        default_factory=list, description="[[notify]] sinks that get the result of runs started by alerts"
    )
    public_url: str | None = Field(
        None, description="base URL of the web page; notifications link runs to it"
    )
    dbos_schema: str = Field("dbos", description="PostgreSQL schema of the durable queue's tables")

    @field_validator("integration_limits")
    @classmethod
    def _positive(cls, value: dict[str, int]) -> dict[str, int]:
        bad = {k: v for k, v in value.items() if v < 1}
        if bad:
            raise ValueError(f"limits must be at least 1: {bad}")
        return value


class ScheduleSettings(Section):
    """An investigation the clock starts: a cron expression, a question or runbook, where to send it."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    cron: str = Field(description="five-field cron expression, UTC (e.g. '0 3 * * *')")
    question: str | None = None
    runbook: str | None = Field(None, description="a runbook to run (its name); the question defaults to it")
    inputs: dict[str, Any] = Field(default_factory=dict)
    notify: list[str] = Field(default_factory=list, description="names of [[notify]] sinks")
    priority: int = Field(10, ge=1, le=1000, description="lower runs first (a paging alert is 1)")
    enabled: bool = True

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        if len(value.split()) != 5:
            raise ValueError(f"{value!r}: a cron expression has five fields (minute hour day month weekday)")
        return value


Outcome = Literal["completed", "failed", "cancelled", "paused"]


def _finished_outcomes() -> list[Outcome]:
    return ["completed", "failed"]


class NotifySettings(Section):
    """One sink a finished run's result goes to."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    kind: Literal["slack", "webhook", "email", "jira"]
    url: str | None = Field(None, description="slack: the incoming-webhook URL; webhook: where to POST")
    secret: SecretStr | None = Field(None, description="webhook: HMAC-SHA256 key of the signature header")
    to: list[str] = Field(default_factory=list, description="email: recipients")
    from_addr: str = "devops-agent@localhost"
    smtp_host: str = "localhost"
    smtp_port: int = 25
    smtp_user: str | None = None
    smtp_password: SecretStr | None = None
    starttls: bool = False
    issue: str | None = Field(None, description="jira: the issue to comment on (default: the run's ticket)")
    on: list[Outcome] = Field(default_factory=_finished_outcomes, description="which run outcomes are sent")
    retries: int = Field(3, ge=0, le=20, description="attempts after the first")
    backoff_s: float = Field(1.0, ge=0, description="first wait between attempts; doubles each time")
    timeout_s: float = Field(10.0, gt=0)
