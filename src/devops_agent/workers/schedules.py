"""Schedules: ``[[schedules]]`` entries become queued investigations when their cron time comes.

Every worker runs the scheduler; each firing is queued once however many workers see it, because
its de-duplication key names the schedule and the firing's time (``schedule:NAME:2026-11-28T03:00``).
The clock is a parameter, so tests drive it; a firing missed while no worker ran is not made up
later (only the latest due firing within ``catch_up`` of now is queued).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import structlog
from croniter import croniter

from devops_agent.agent.session import SessionService
from devops_agent.config.workers import ScheduleSettings
from devops_agent.workers.meta import QueueMeta
from devops_agent.workers.submit import Submitted, submit

log = structlog.get_logger(__name__)
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


def latest_due(schedule: ScheduleSettings, now: datetime, after: datetime) -> datetime | None:
    """The latest firing of ``schedule`` in ``(after, now]``, if any."""
    # A cron time is a minute: a tick at 03:00:02 is the 03:00 firing (not a new one at 03:00:02,
    # which a tick every heartbeat of that minute would fire again).
    minute = now.replace(second=0, microsecond=0)
    fire: datetime = (
        minute
        if croniter.match(schedule.cron, minute)
        else croniter(schedule.cron, minute).get_prev(datetime)
    )
    if fire.tzinfo is None:
        fire = fire.replace(tzinfo=UTC)
    return fire if after < fire <= now else None


def firing_key(schedule: ScheduleSettings, fire: datetime) -> str:
    return f"schedule:{schedule.name}:{fire.astimezone(UTC).strftime('%Y-%m-%dT%H:%M')}"


@dataclass
class Scheduler:
    """Queues each due firing of the enabled schedules."""

    service: SessionService
    schedules: list[ScheduleSettings]
    clock: Clock = utc_now
    catch_up: timedelta = timedelta(minutes=5)
    _last: datetime | None = None
    queued: list[tuple[str, datetime, Submitted]] = field(default_factory=list)

    async def tick(self) -> list[Submitted]:
        """Queue what fell due since the last tick (on the first: within ``catch_up``)."""
        now = self.clock()
        after = self._last if self._last is not None else now - self.catch_up
        self._last = now
        started: list[Submitted] = []
        for schedule in self.schedules:
            if not schedule.enabled:
                continue
            fire = latest_due(schedule, now, after)
            if fire is None:
                continue
            inputs = dict(schedule.inputs)
            if schedule.runbook:
                inputs["runbooks"] = [schedule.runbook]
            question = schedule.question or f"Scheduled check: {schedule.runbook or schedule.name}"
            meta = QueueMeta(
                user=f"schedule:{schedule.name}",
                source="schedule",
                priority=schedule.priority,
                dedupe_key=firing_key(schedule, fire),
                notify=list(schedule.notify),
                label=f"schedule {schedule.name}",
            )
            try:
                done = await submit(self.service, question, meta=meta, inputs=inputs)
            except Exception as exc:  # one bad schedule must not stop the others
                log.error("schedule_failed", schedule=schedule.name, error=repr(exc))
                continue
            self.queued.append((schedule.name, fire, done))
            started.append(done)
        return started
