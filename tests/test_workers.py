"""Durable workers against a real PostgreSQL with real worker processes (issue 28).

Each test gets a schema of its own (store and queue); workers are ``devops-agent worker``
subprocesses; Jenkins is the replay server, whose request log is the counter of tool executions.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from devops_agent.store import Store
from devops_agent.workers.meta import QueueMeta
from devops_agent.workers.submit import QueueExecutor, queue_service, submit
from replay.server import ReplayServer
from workers_harness import Cluster, chaos_check, stream_problems, wait_finished

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


@pytest.fixture
def jenkins() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        srv.add("GET", "/api/json", fixture="jenkins/root.json", headers={"X-Jenkins": "2.452.1"})
        srv.add("GET", "/crumbIssuer/api/json", fixture="jenkins/crumb.json")
        srv.add_prefix("GET", "/job/", fixture="jenkins/build_deploy_412.json", delay_s=0.15)
        srv.watch("/job/")
        yield srv


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    with ExitStack() as s:
        yield s


@pytest.fixture
def cluster(postgres_url: str, tmp_path: Path, jenkins: ReplayServer) -> Iterator[Cluster]:
    url = make_url(postgres_url).render_as_string(hide_password=False)
    c = Cluster(url, tmp_path, jenkins.url)
    yield c
    c.stop_all()


def submit_many(cluster: Cluster, store: Store, n: int, prefix: str = "job") -> list[str]:
    service = queue_service(cluster.settings(), store)
    executor = service.supervisor.executor
    assert isinstance(executor, QueueExecutor)

    async def go() -> list[str]:
        ids = []
        for i in range(n):
            done = await submit(
                service,
                f"durable check {i}",
                meta=QueueMeta(user=f"user{i % 3}"),
                inputs={"runbooks": ["durable-check"], "job": f"{prefix}{i}"},
            )
            ids.append(done.run_id)
        return ids

    try:
        return asyncio.run(go())
    finally:
        executor.close()


def test_runs_execute_on_a_worker(cluster: Cluster, jenkins: ReplayServer, stack: ExitStack) -> None:
    cluster.write_config()
    store = stack.enter_context(Store(cluster.db_url))
    cluster.start("w1")
    cluster.wait_ready(store, 1)
    ids = submit_many(cluster, store, 3)
    wait_finished(store, ids, 60, cluster)
    for run_id in ids:
        assert store.get_run(run_id).status == "completed", cluster.log("w1")[-3000:]
        assert stream_problems(store, run_id) == []
    paths = Counter(r.path for r in jenkins.requests_to("/job/"))
    assert len(paths) == 9, paths
    assert set(paths.values()) == {1}, paths


def test_workers_killed_mid_run_lose_and_repeat_nothing(
    cluster: Cluster, jenkins: ReplayServer, stack: ExitStack
) -> None:
    """60 runs over 2 workers, a worker killed with SIGKILL three times: every run completes once,
    no completed tool call is made again, every stream is gap-free (the benchmark does 200)."""
    jenkins.prefix_routes.clear()
    jenkins.add_prefix("GET", "/job/", fixture="jenkins/build_deploy_412.json", delay_s=0.3)
    cluster.concurrency = 3
    cluster.write_config()
    store = stack.enter_context(Store(cluster.db_url))
    alive = [cluster.start("a0"), cluster.start("b0")]
    cluster.wait_ready(store, 2)
    started = time.time()
    ids = submit_many(cluster, store, 60)
    kills = []
    for round_ in range(3):
        time.sleep(1.5)
        victim = alive.pop(0)
        kills.append(cluster.kill(victim))
        alive.append(cluster.start(f"r{round_}"))
    wait_finished(store, ids, 180, cluster)
    result = chaos_check(cluster, store, jenkins, ids, kills, started)
    assert result.lost == 0, result
    assert result.duplicated == 0, result
    assert result.reexecuted_steps == 0, result
    assert result.stream_problems == [], result
    # The kills landed mid-run: some runs were taken over by another worker and went on.
    assert result.taken_over >= 1, result
