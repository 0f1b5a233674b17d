"""Proactive investigations on real workers and PostgreSQL (issue 28): a schedule fires on time by
a clock the test drives, once however many workers tick; an alert group sent 5 times runs once."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import create_engine, text

from devops_agent.workers.schedules import Scheduler
from devops_agent.workers.submit import QueueExecutor, list_queue, queue_service, submit_alert
from fixtures_replay import ReplayServer
from fixtures_workers import Cluster, wait_finished

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

NIGHTLY = """
[[schedules]]
name = "nightly"
cron = "0 3 * * *"
runbook = "durable-check"
inputs = {job = "nightly"}
"""


class Clock:
    """A clock the test sets."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def run_count(cluster: Cluster) -> int:
    engine = create_engine(cluster.db_url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM runs")).scalar_one())
    finally:
        engine.dispose()


def test_a_schedule_fires_on_time_once_across_workers(
    worker_cluster: Cluster, jenkins_replay: ReplayServer
) -> None:
    cluster = worker_cluster
    cluster.extra = NIGHTLY
    cluster.write_config()
    store = cluster.store()
    cluster.start("w1")
    cluster.wait_ready(store, 1)
    settings = cluster.settings()
    service = queue_service(settings, store)
    executor = service.supervisor.executor
    assert isinstance(executor, QueueExecutor)
    clock = Clock(datetime(2026, 11, 28, 2, 59, 30, tzinfo=UTC))
    # Two workers' schedulers tick the same schedule (each worker runs one).
    mine = Scheduler(service, settings.schedules, clock=clock)
    other = Scheduler(service, settings.schedules, clock=clock)

    async def ticks() -> list[int]:
        fired = [len(await mine.tick())]  # 02:59:30: first tick, nothing due in the last 5 minutes
        clock.now = datetime(2026, 11, 28, 2, 59, 59, tzinfo=UTC)
        fired.append(len(await mine.tick()))  # one second early: nothing
        clock.now = datetime(2026, 11, 28, 3, 0, 0, tzinfo=UTC)
        fired.append(len(await mine.tick()))  # on time
        clock.now = datetime(2026, 11, 28, 3, 0, 2, tzinfo=UTC)
        fired.append(len(await other.tick()))  # the other worker sees the same firing: joins it
        fired.append(len(await mine.tick()))  # already fired
        return fired

    try:
        assert asyncio.run(ticks()) == [0, 0, 1, 1, 0]
        ((name, fire, first),) = mine.queued
        ((_, _, joined),) = other.queued
        assert (name, fire) == ("nightly", datetime(2026, 11, 28, 3, 0, tzinfo=UTC))
        assert joined.run_id == first.run_id
        assert joined.deduplicated
        wait_finished(store, [first.run_id], 60, cluster)
        assert store.get_run(first.run_id).status == "completed"
        assert sorted({r.path for r in jenkins_replay.requests_to("/job/")}) == [
            f"/job/nightly-{s}/1/api/json" for s in "abc"
        ]
        # The next night fires again: a new run.
        clock.now += timedelta(days=1)
        (nxt,) = asyncio.run(mine.tick())
        assert nxt.run_id != first.run_id
        assert [e.run_id for e in list_queue(executor, include_done=True)].count(first.run_id) == 1
    finally:
        executor.close()


def alert_payload() -> dict[str, object]:
    return {
        "version": "4",
        "status": "firing",
        "receiver": "devops-agent",
        "groupKey": '{}:{alertname="HighErrorRate"}',
        "groupLabels": {"alertname": "HighErrorRate"},
        "commonLabels": {},
        "commonAnnotations": {},
        "alerts": [
            {
                "status": "firing",
                "labels": {"alertname": "HighErrorRate", "severity": "critical", "job": "api"},
                "annotations": {"summary": "Error rate above 5%"},
                "startsAt": (datetime.now(UTC) - timedelta(minutes=3)).isoformat(),
            }
        ],
    }


def test_an_alert_group_sent_five_times_in_a_minute_runs_once(
    worker_cluster: Cluster, jenkins_replay: ReplayServer
) -> None:
    cluster = worker_cluster
    cluster.write_config()
    store = cluster.store()
    cluster.start("w1")
    cluster.wait_ready(store, 1)
    service = queue_service(cluster.settings(), store)
    executor = service.supervisor.executor
    assert isinstance(executor, QueueExecutor)

    async def five() -> list[str]:
        out = []
        for _ in range(5):
            done = await submit_alert(service, alert_payload())
            assert done is not None
            out.append(done.run_id)
            await asyncio.sleep(0.5)
        return out

    try:
        ids = asyncio.run(five())
        assert len(set(ids)) == 1, ids
        # A sixth, through the CLI (what an Alertmanager relay or a cron job would call), joins too.
        sent = cluster.tmp / "alert.json"
        sent.write_text(json.dumps(alert_payload()))
        cli = cluster.cli("queue", "alert", str(sent), "--json")
        assert cli.returncode == 0, cli.stderr[-2000:]
        assert json.loads(cli.stdout) | {"session_id": None} == {
            "run_id": ids[0],
            "session_id": None,
            "deduplicated": True,
        }
        wait_finished(store, ids[:1], 90, cluster)
        assert run_count(cluster) == 1
        assert len(list_queue(executor, include_done=True)) == 1
        # A resolved notification starts nothing.
        resolved = alert_payload() | {"status": "resolved"}
        resolved["alerts"] = [dict(a, status="resolved") for a in resolved["alerts"]]  # type: ignore[attr-defined]
        assert asyncio.run(submit_alert(service, resolved)) is None
    finally:
        executor.close()
    assert run_count(cluster) == 1
