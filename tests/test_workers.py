"""Durable workers against a real PostgreSQL with real worker processes (issue 28).

Each test gets a schema of its own (store and queue); workers are ``devops-agent worker``
subprocesses; Jenkins is the replay server, whose request log is the counter of tool executions.
"""

from __future__ import annotations

import time
from collections import Counter

import pytest

from fixtures_workers import (
    Cluster,
    chaos_check,
    kill_when_busy,
    stream_problems,
    submit_many,
    wait_finished,
)
from replay.server import ReplayServer

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def test_runs_execute_on_a_worker(worker_cluster: Cluster, jenkins_replay: ReplayServer) -> None:
    worker_cluster.write_config()
    store = worker_cluster.store()
    worker_cluster.start("w1")
    worker_cluster.wait_ready(store, 1)
    ids = submit_many(worker_cluster, store, 3)
    wait_finished(store, ids, 60, worker_cluster)
    for run_id in ids:
        run = store.get_run(run_id)
        assert run.status == "completed", worker_cluster.log("w1")[-3000:]
        assert run.owner == "w1"
        assert stream_problems(store, run_id) == []
    paths = Counter(r.path for r in jenkins_replay.requests_to("/job/"))
    assert len(paths) == 9, paths
    assert set(paths.values()) == {1}, paths


def test_workers_killed_mid_run_lose_and_repeat_nothing(
    worker_cluster: Cluster, jenkins_replay: ReplayServer
) -> None:
    """60 runs over 2 workers, a busy worker killed with SIGKILL three times: every run completes
    once, no checkpointed tool call is made again, every stream is gap-free (the benchmark does 200)."""
    cluster = worker_cluster
    jenkins_replay.prefix_routes.clear()
    jenkins_replay.add_prefix("GET", "/job/", fixture="jenkins/build_deploy_412.json", delay_s=0.5)
    cluster.concurrency = 2
    cluster.write_config()
    store = cluster.store()
    alive = [cluster.start("a0"), cluster.start("b0")]
    cluster.wait_ready(store, 2)
    started = time.time()
    ids = submit_many(cluster, store, 60)
    kills = []
    for round_ in range(3):
        victim = alive.pop(0)
        kills.append(kill_when_busy(cluster, store, victim))
        alive.append(cluster.start(f"r{round_}"))
    wait_finished(store, ids, 240, cluster)
    result = chaos_check(cluster, store, jenkins_replay, ids, kills, started)
    assert result.completed == 60, result
    assert result.lost == 0, result
    assert result.duplicated == 0, result
    assert result.reexecuted_steps == 0, result
    assert result.stream_problems == [], result
    # Each kill hit a run mid-way; another worker took it over and went on from its checkpoints.
    assert result.taken_over >= 3, result
    assert len(result.recovery_s) == 3, result
