"""Durable workers against a real PostgreSQL with real worker processes (issue 28).

Each test gets a schema of its own (store and queue); workers are ``devops-agent worker``
subprocesses; Jenkins is the replay server, whose request log is the counter of tool executions.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable

import pytest

from devops_agent.agent.approvals import ApprovalDecision
from devops_agent.events import ApprovalRequested, RunEvent, RunFinished, event_from_json
from devops_agent.store import Store
from devops_agent.workers.meta import QueueMeta
from devops_agent.workers.status import queue_metrics, workers_status
from devops_agent.workers.submit import QueueExecutor, list_queue, queue_service, submit
from fixtures_replay import ReplayServer
from fixtures_workers import (
    MODEL_SCRIPT,
    SCRIPTS,
    Cluster,
    chaos_check,
    kill_when_busy,
    stream_problems,
    submit_many,
    wait_finished,
)

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def events_of(store: Store, run_id: str) -> list[RunEvent]:
    return [event_from_json(r.payload) for r in store.run_events(run_id)]


def wait_until(check: Callable[[], bool], timeout: float) -> None:
    deadline = time.time() + timeout
    while not check():
        assert time.time() < deadline, f"not true within {timeout}s"
        time.sleep(0.1)


@pytest.mark.parametrize("kind", ["runbooks", "model"])
def test_workers_killed_mid_run_lose_and_repeat_nothing(
    worker_cluster: Cluster, jenkins_replay: ReplayServer, kind: str
) -> None:
    """40 runs over 2 workers, a busy worker killed with SIGKILL three times: every run completes
    once, no checkpointed tool call is made again, every stream is gap-free (the benchmark does 200).
    Runbook runs read a and b at once, then c; model runs (scripted) do the same in two turns."""
    cluster = worker_cluster
    if kind == "model":
        cluster.model = f"scripted:{MODEL_SCRIPT}"
    jenkins_replay.drop_prefixes()
    jenkins_replay.add_prefix("GET", "/job/", fixture="jenkins/build_deploy_412.json", delay_s=0.5)
    cluster.concurrency = 2
    cluster.max_parallel = 2  # a and b at once, then c: a run is mid-way for a while
    cluster.write_config()
    store = cluster.store()
    alive = [cluster.start("a0"), cluster.start("b0")]
    cluster.wait_ready(store, 2)
    started = time.time()
    ids = submit_many(cluster, store, 40, runbook="durable-check" if kind == "runbooks" else None)
    kills = []
    for round_ in range(3):
        victim = alive.pop(0)
        kills.append(kill_when_busy(cluster, store, victim))
        alive.append(cluster.start(f"r{round_}"))
    wait_finished(store, ids, 240, cluster)
    result = chaos_check(cluster, store, jenkins_replay, ids, kills, started)
    assert result.completed == 40, result
    assert result.lost == 0, result
    assert result.duplicated == 0, result
    assert result.reexecuted_steps == 0, result
    assert result.stream_problems == [], result
    # Each kill hit a run mid-way; another worker took it over and went on from its checkpoints.
    assert result.taken_over >= 3, result
    assert len(result.recovery_s) == 3, result


def test_a_paused_run_holds_no_worker_and_resumes_on_another(
    worker_cluster: Cluster, jenkins_replay: ReplayServer
) -> None:
    """The scripted model asks to trigger a build; the run pauses on w1, which then holds nothing
    and stops; the answer is carried out by w2, and the build is triggered exactly once."""
    cluster = worker_cluster
    deploy = "/job/payments/job/deploy/build"
    jenkins_replay.add(
        "POST", deploy, status=201, headers={"Location": f"{jenkins_replay.url}/queue/item/7/"}
    )
    cluster.model = f"scripted:{SCRIPTS / 'trigger.yaml'}"
    cluster.write_config()
    store = cluster.store()
    cluster.start("w1")
    cluster.wait_ready(store, 1, ids=["w1"])
    service = queue_service(cluster.settings(), store)
    executor = service.supervisor.executor
    assert isinstance(executor, QueueExecutor)
    try:
        first = asyncio.run(submit(service, "redeploy payments", meta=QueueMeta(user="ann"), mode="agent"))
        wait_finished(store, [first.run_id], 90, cluster)
        assert store.get_run(first.run_id).status == "paused", cluster.log("w1")[-3000:]
        (asked,) = [e for e in events_of(store, first.run_id) if isinstance(e, ApprovalRequested)]
        assert asked.tool == "jenkins_trigger_build"
        # Paused, the run is on no worker: w1's heartbeat lists nothing, and the queue holds nothing.
        wait_until(lambda: next(w for w in store.list_workers() if w.id == "w1").running == [], 10)
        assert list_queue(executor) == []
        cluster.stop("w1")
        cluster.start("w2")
        cluster.wait_ready(store, 1, ids=["w2"])
        decision = {asked.tool_call_id: ApprovalDecision(approved=True, approver="ann")}
        second = asyncio.run(service.answer(first.session_id, decision))
    finally:
        executor.close()
    wait_finished(store, [second.run_id], 90, cluster)
    resumed = store.get_run(second.run_id)
    assert resumed.status == "completed", cluster.log("w2")[-3000:]
    assert (store.get_run(first.run_id).owner, resumed.owner) == ("w1", "w2")
    assert resumed.parent_run_id == first.run_id
    assert len(jenkins_replay.requests_to(deploy, "POST")) == 1
    final = events_of(store, second.run_id)[-1]
    assert isinstance(final, RunFinished)
    assert "queue_item" in (final.output or ""), final
    assert stream_problems(store, second.run_id) == []


def test_an_integration_limit_holds_across_workers(
    worker_cluster: Cluster, jenkins_replay: ReplayServer
) -> None:
    """jenkins = 2 across two workers that could make 24 calls at once: the replay server never
    sees more than 2 in flight, and both workers did their share."""
    cluster = worker_cluster
    cluster.integration_limits = {"jenkins": 2}
    # No worker dies here: a worker that a loaded machine stalls past the usual 3 s would be
    # fenced and exit, which is the chaos tests' subject, not this one's.
    cluster.workers["dead_after_s"] = 30.0
    cluster.write_config()
    store = cluster.store()
    cluster.start("w1")
    cluster.start("w2")
    cluster.wait_ready(store, 2, ids=["w1", "w2"])
    ids = submit_many(cluster, store, 12, users=12)
    wait_finished(store, ids, 120, cluster)
    assert {store.get_run(r).status for r in ids} == {"completed"}
    assert len(jenkins_replay.requests_to("/job/")) == 36
    assert jenkins_replay.peak["/job/"] == 2
    assert {store.get_run(r).owner for r in ids} == {"w1", "w2"}


def test_operating_the_queue(worker_cluster: Cluster, jenkins_replay: ReplayServer) -> None:
    """`queue list|cancel|retry`, the queue gauges and the workers' status, with no worker up and
    then with one."""
    cluster = worker_cluster
    cluster.write_config()
    store = cluster.store()
    cluster.start("w1")  # once, so the queue's tables exist; then no worker is up
    cluster.wait_ready(store, 1, ids=["w1"])
    cluster.stop("w1")
    ids = submit_many(cluster, store, 2)
    settings = cluster.settings()
    assert queue_metrics(store)["devops_agent_queue_depth"] == 2
    assert queue_metrics(store)["devops_agent_workers_alive"] == 0
    listed = cluster.cli("queue", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert sorted(e["run_id"] for e in json.loads(listed.stdout)) == sorted(ids)
    assert {e["status"] for e in json.loads(listed.stdout)} == {"ENQUEUED"}
    cancelled = cluster.cli("queue", "cancel", ids[0], "--json")
    assert json.loads(cancelled.stdout) == {"run_id": ids[0], "cancelled": True}
    assert store.get_run(ids[0]).status == "cancelled"
    again = cluster.cli("queue", "cancel", ids[0])
    assert again.returncode == 2
    assert "already finished" in again.stderr
    cluster.start("w2")
    wait_finished(store, ids[1:], 60, cluster)
    assert store.get_run(ids[1]).status == "completed"
    # Its next heartbeat says it runs nothing now.
    wait_until(lambda: workers_status(store, settings)[0]["running"] == [], 10)
    (w2,) = workers_status(store, settings)
    assert (w2["id"], w2["state"]) == ("w2", "alive")
    assert w2["heartbeat_age_s"] < settings.workers.dead_after_s
    retried = cluster.cli("queue", "retry", ids[0], "--json")
    assert retried.returncode == 0, retried.stderr
    new = json.loads(retried.stdout)["run_id"]
    wait_finished(store, [new], 60, cluster)
    assert store.get_run(new).status == "completed"
    assert store.get_run(new).parent_run_id == ids[0]
    # The cancelled run never reached Jenkins; its retry did, once.
    assert len(jenkins_replay.requests_to("/job/job0-a/")) == 1
    assert queue_metrics(store)["devops_agent_queue_depth"] == 0
    # The CLI enqueues too (execution = "queue") and follows the run a worker carries out.
    cli = cluster.cli("investigate", "durable check from the CLI", "--runbook", "durable-check", "--json")
    assert cli.returncode == 0, cli.stderr[-2000:]
    run_id = json.loads(cli.stdout)["run_id"]
    assert (store.get_run(run_id).status, store.get_run(run_id).owner) == ("completed", "w2")


def intervals(store: Store, run_ids: list[str]) -> dict[str, tuple[float, float]]:
    """When each run's first and last events were stored."""
    out = {}
    for run_id in run_ids:
        rows = store.run_events(run_id)
        out[run_id] = (rows[0].created_at.timestamp(), rows[-1].created_at.timestamp())
    return out


def most_at_once(spans: list[tuple[float, float]]) -> int:
    edges = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    peak = now = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


def test_runs_per_user_and_priorities(worker_cluster: Cluster, jenkins_replay: ReplayServer) -> None:
    """Queued while no worker runs: 3 runs of one user (at most 1 at once) and, on the proactive
    queue, 3 scheduled checks then a paging alert. A worker taking 2 runs of each queue at once runs
    the user's runs one after another and starts the alert in the first pair."""
    cluster = worker_cluster
    cluster.concurrency = 2
    cluster.workers = {"runs_per_user": 1}
    cluster.write_config()
    store = cluster.store()
    cluster.start("w1")  # the queue's tables
    cluster.wait_ready(store, 1, ids=["w1"])
    cluster.stop("w1")
    service = queue_service(cluster.settings(), store)
    executor = service.supervisor.executor
    assert isinstance(executor, QueueExecutor)

    async def queue_all() -> tuple[list[str], list[str], str]:
        async def one(i: int, meta: QueueMeta) -> str:
            inputs = {"runbooks": ["durable-check"], "job": f"p{i}"}
            return (await submit(service, f"check {i}", meta=meta, inputs=inputs)).run_id

        ann = [await one(i, QueueMeta(user="ann")) for i in range(3)]
        scheduled = [
            await one(10 + i, QueueMeta(user="cron", source="schedule", priority=10, dedupe_key=f"s{i}"))
            for i in range(3)
        ]
        alert = await one(20, QueueMeta(user="am", source="alert", priority=1, dedupe_key="a"))
        return ann, scheduled, alert

    try:
        ann, scheduled, alert = asyncio.run(queue_all())
    finally:
        executor.close()
    cluster.start("w2")
    wait_finished(store, [*ann, *scheduled, alert], 120, cluster)
    spans = intervals(store, [*ann, *scheduled, alert])
    assert most_at_once([spans[r] for r in ann]) == 1
    proactive = sorted([*scheduled, alert], key=lambda r: spans[r][0])
    assert alert in proactive[:2], [spans[r][0] for r in proactive]
    assert scheduled[2] in proactive[2:]
