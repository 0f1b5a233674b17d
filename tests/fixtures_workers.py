"""Real worker processes on a real PostgreSQL, for the durable-worker tests and the benchmark.

Load with ``pytest_plugins`` in ``tests/conftest.py``; ``benchmarks/queue_throughput.py`` imports
:class:`Cluster` from here (with ``tests/`` on ``sys.path``).

:class:`Cluster` writes a config file (store and queue in a schema of their own, Jenkins pointed
at a replay server, the test runbook folder), starts ``devops-agent worker`` processes, kills them
with SIGKILL, and reads back what happened: runs, their event streams, and the checkpoints.

Fixtures:

* ``jenkins_replay``: the Jenkins replay server, every ``/job/`` path answered (held 0.15 s) and
  counted (requests with their time; peak concurrency under ``/job/``);
* ``worker_cluster``: a :class:`Cluster` on a PostgreSQL schema of the test's own (skips without
  PostgreSQL, like ``postgres_url``); its workers are stopped after the test.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from devops_agent.config import load_settings
from devops_agent.events import RunFinished, event_from_json
from devops_agent.store import Store
from fixtures_replay import ReplayServer

RUNBOOKS = Path(__file__).parent / "data" / "workers"
SCRIPTS = Path(__file__).parent / "data" / "worker_scripts"
"""Scripts of the scripted model (not in RUNBOOKS: every file there must be a runbook)."""
MODEL_SCRIPT = SCRIPTS / "durable-check.yaml"
"""The durable-check runbook's reads as model turns: ``submit_many(..., runbook=None)`` runs."""
ROOT = Path(__file__).resolve().parents[1]


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass
class Cluster:
    """A queue on PostgreSQL and the worker processes serving it."""

    db_url: str
    """A PostgreSQL URL whose search_path is a schema of this cluster's own."""
    tmp: Path
    jenkins_url: str
    workers: dict[str, Any] = field(default_factory=dict)
    extra: str = ""
    concurrency: int = 4
    max_parallel: int = 3
    """Tool calls one runbook run makes at once (2: the durable check reads a and b, then c)."""
    integration_limits: dict[str, int] = field(default_factory=dict)
    model: str | None = None
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    config: Path | None = None
    _store: Store | None = None

    def write_config(self) -> Path:
        schema = make_url(self.db_url).query.get("options", "-csearch_path=public")
        schema = str(schema).split("=", 1)[1]
        workers = {
            "execution": "queue",
            "concurrency": self.concurrency,
            "runs_per_user": 1000,
            "heartbeat_s": 0.5,
            "dead_after_s": 3.0,
            "poll_s": 0.2,
            "dbos_schema": f"dbos_{schema}",
            "integration_limits": self.integration_limits,
            **self.workers,
        }
        lines = [
            f"database_url = {toml_value(self.db_url)}",
            f"data_dir = {toml_value(str(self.tmp / 'data'))}",
            "[workers]",
            *(f"{k} = {toml_value(v)}" for k, v in workers.items()),
            "[jenkins]",
            f"url = {toml_value(self.jenkins_url)}",
            'user = "bot"',
            'token = "t0ken"',
            "[runbooks]",
            f"extra_dirs = [{toml_value(str(RUNBOOKS))}]",
            f"max_parallel = {self.max_parallel}",
            "[privacy]",
            'enabled = "off"',
        ]
        if self.model:
            lines += ["[model]", f"name = {toml_value(self.model)}"]
        self.config = self.tmp / "devops-agent.toml"
        self.config.write_text("\n".join(lines) + "\n" + self.extra)
        return self.config

    def env(self) -> dict[str, str]:
        assert self.config is not None
        env = {k: v for k, v in os.environ.items() if not k.startswith("DEVOPS_AGENT_")}
        env["DEVOPS_AGENT_CONFIG"] = str(self.config)
        env["DEVOPS_AGENT_ALLOW_MODEL_REQUESTS"] = "0"  # workers may use the scripted model only
        env["DEVOPS_AGENT_HOME"] = str(self.tmp / "home")
        return env

    def settings(self) -> Any:
        assert self.config is not None
        return load_settings(self.config).settings

    def start(self, worker_id: str | None = None) -> str:
        worker_id = worker_id or f"w-{uuid.uuid4().hex[:6]}"
        with open(self.tmp / f"{worker_id}.log", "ab") as log:
            self.procs[worker_id] = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "devops_agent",
                    "worker",
                    "--id",
                    worker_id,
                    "--no-schedules",
                    "--drain",
                    "5",
                ],
                env=self.env(),
                cwd=str(self.tmp),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        return worker_id

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run ``devops-agent ARGS`` with the cluster's config (e.g. ``queue list --json``)."""
        return subprocess.run(
            [sys.executable, "-m", "devops_agent", *args],
            env=self.env(),
            cwd=str(self.tmp),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def kill(self, worker_id: str) -> float:
        """SIGKILL a worker; returns when it was killed (time.time())."""
        proc = self.procs.pop(worker_id)
        at = time.time()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        return at

    def stop(self, worker_id: str) -> None:
        """SIGTERM one worker and wait for it to exit (it drains its runs first)."""
        proc = self.procs.pop(worker_id)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)

    def store(self) -> Store:
        """A store on the cluster's database, closed with the cluster."""
        if self._store is None:
            self._store = Store(self.db_url)
        return self._store

    def stop_all(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
        for proc in self.procs.values():
            proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.procs.clear()

    def log(self, worker_id: str) -> str:
        return (self.tmp / f"{worker_id}.log").read_text(errors="replace")

    def wait_ready(self, store: Store, n: int, timeout: float = 60.0, ids: list[str] | None = None) -> None:
        """Wait until ``n`` workers (or those of ``ids``) have sent a heartbeat."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            alive = {w.id for w in store.list_workers()}
            if (set(ids) <= alive) if ids else len(alive) >= n:
                return
            for wid, proc in self.procs.items():
                if proc.poll() is not None:
                    raise AssertionError(f"worker {wid} exited {proc.returncode}:\n{self.log(wid)[-3000:]}")
            time.sleep(0.2)
        raise AssertionError(f"{n} workers did not start in {timeout}s")


@dataclass(frozen=True)
class Kill:
    """A worker killed with SIGKILL: when, and the runs it was executing then."""

    worker: str
    at: float
    runs: list[str]


def runs_owned(db_url: str, worker_id: str) -> list[str]:
    """The unfinished runs a worker executes, by the runs table."""
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT id FROM runs WHERE owner = :w AND status = 'running'"), {"w": worker_id}
            ).all()
    finally:
        engine.dispose()
    return [r[0] for r in rows]


def kill_when_busy(cluster: Cluster, store: Store, worker_id: str, timeout: float = 60.0) -> Kill:
    """SIGKILL ``worker_id`` once it executes a run that has completed a step (a checkpoint) and
    has more to do: the kill lands mid-run."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        running = runs_owned(cluster.db_url, worker_id)
        midway = [r for r in running if store.count_checkpoints([r]) > 0 and not store.get_run(r).finished]
        if midway:
            at = cluster.kill(worker_id)
            return Kill(worker_id, at, runs_owned(cluster.db_url, worker_id))
        time.sleep(0.05)
    engine = create_engine(cluster.db_url)
    try:
        with engine.connect() as conn:
            counts = conn.execute(text("SELECT owner, status, count(*) FROM runs GROUP BY 1, 2")).all()
    finally:
        engine.dispose()
    raise AssertionError(
        f"worker {worker_id} executed nothing mid-run within {timeout}s; runs by owner and status: "
        f"{[tuple(c) for c in counts]}\n{cluster.log(worker_id)[-2000:] if worker_id in cluster.procs else ''}"
    )


def submit_many(
    cluster: Cluster,
    store: Store,
    n: int,
    prefix: str = "job",
    users: int = 3,
    runbook: str | None = "durable-check",
) -> list[str]:
    """Queue ``n`` runs that read Jenkins jobs ``{prefix}{i}-a|b|c`` (run ``i``): of the
    durable-check runbook, or with ``runbook=None`` of the model (the cluster's ``MODEL_SCRIPT``:
    the prompt is the job family)."""
    import asyncio

    from devops_agent.workers.meta import QueueMeta
    from devops_agent.workers.submit import QueueExecutor, queue_service, submit

    service = queue_service(cluster.settings(), store)
    executor = service.supervisor.executor
    assert isinstance(executor, QueueExecutor)

    async def go() -> list[str]:
        ids = []
        for i in range(n):
            meta = QueueMeta(user=f"user{i % users}")
            if runbook is None:
                done = await submit(service, f"{prefix}{i}", meta=meta)
            else:
                inputs = {"runbooks": [runbook], "job": f"{prefix}{i}"}
                done = await submit(service, f"durable check {i}", meta=meta, inputs=inputs)
            ids.append(done.run_id)
        return ids

    try:
        return asyncio.run(go())
    finally:
        executor.close()


def wait_finished(store: Store, run_ids: list[str], timeout: float, cluster: Cluster | None = None) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        pending = [r for r in run_ids if not store.get_run(r).finished]
        if not pending:
            return
        time.sleep(0.3)
    logs = "".join(cluster.log(w)[-2000:] for w in (cluster.procs if cluster else {}))
    raise AssertionError(f"{len(pending)} runs unfinished after {timeout}s: {pending[:3]}\n{logs}")


def stream_problems(store: Store, run_id: str) -> list[str]:
    """What is wrong with a run's stored event stream: gaps, repeats, no single final event."""
    events = [event_from_json(r.payload) for r in store.run_events(run_id)]
    seqs = [e.seq for e in events]
    problems = []
    if seqs != list(range(1, len(seqs) + 1)):
        problems.append(f"seq not 1..n: {seqs}")
    finals = [e for e in events if isinstance(e, RunFinished)]
    if len(finals) != 1 or events[-1] is not finals[0]:
        tail = [(e.seq, e.type, str(getattr(e, "tool_call_id", ""))[-8:]) for e in events[-8:]]
        problems.append(f"{len(finals)} run_finished events, the last events: {tail}")
    keyed = [
        (e.type, getattr(e, "tool_call_id", "")) for e in events if e.type in ("tool_call", "tool_result")
    ]
    if len(keyed) != len(set(keyed)):
        problems.append("a tool event is repeated")
    return problems


def checkpoint_times(db_url: str) -> dict[tuple[str, str], float]:
    """When each tool checkpoint was written, by (run_id, key)."""
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT run_id, key, created_at FROM run_checkpoints")).all()
    finally:
        engine.dispose()
    return {(r[0], r[1]): r[2].timestamp() for r in rows}


@dataclass
class ChaosResult:
    runs: int
    completed: int
    lost: int
    duplicated: int
    repeated_requests: int
    """Tool calls whose request reached Jenkins twice: in flight when their worker was killed."""
    reexecuted_steps: int
    """Tool calls made again after their step had been checkpointed (must be 0)."""
    stream_problems: list[str]
    recovery_s: list[float]
    """Per kill: seconds until the first of the killed worker's runs went on elsewhere."""
    seconds: float
    taken_over: int
    fenced: int = 0
    """Workers declared dead while alive (they stalled past dead_after_s): fenced, then exited."""


def job_calls(i: int, prefix: str = "job") -> dict[str, dict[str, Any]]:
    """The Jenkins request path of each tool call of run ``i`` of the durable-check runbook, and its args."""
    return {
        f"/job/{prefix}{i}-{s}/1/api/json": {"url_or_job": f"{prefix}{i}-{s}", "number": 1}
        for s in ("a", "b", "c")
    }


def chaos_check(
    cluster: Cluster,
    store: Store,
    jenkins: Any,
    run_ids: list[str],
    kills: list[Kill],
    started: float,
    prefix: str = "job",
) -> ChaosResult:
    """Read back a finished chaos run: lost/duplicated runs, repeated and re-executed tool calls,
    stream problems, and how long after each kill the first run taken over went on."""
    from devops_agent.policies.toolsets.checkpoint import call_key

    finished = time.time()
    runs = [store.get_run(r) for r in run_ids]
    completed = sum(1 for r in runs if r.status == "completed")
    problems = [f"{r}: {p}" for r in run_ids for p in stream_problems(store, r)]
    finals = sum(1 for r in run_ids for e in store.run_events(r) if e.type == "run_finished")
    requests: dict[str, list[float]] = {}
    for req in jenkins.requests_to("/job/"):
        requests.setdefault(req.path, []).append(req.at)
    written = checkpoint_times(cluster.db_url)
    repeated = reexecuted = 0
    for i, run_id in enumerate(run_ids):
        for path, args in job_calls(i, prefix).items():
            times = sorted(requests.get(path, []))
            if len(times) > 1:
                repeated += 1
            at = written.get((run_id, call_key("jenkins_build", args, 1)))
            if at is not None and any(t > at for t in times):
                reexecuted += 1
    resumed: dict[str, list[float]] = {}
    for run_id in run_ids:
        for e in store.run_events(run_id):
            if e.type == "run_resumed":
                resumed.setdefault(run_id, []).append(e.created_at.timestamp())
    recovery = []
    for k in kills:
        # How long the killed worker's runs waited: from the kill to the first of them going on.
        after = [t - k.at for r in k.runs for t in resumed.get(r, []) if t > k.at]
        if after:
            recovery.append(round(min(after), 2))
    return ChaosResult(
        runs=len(run_ids),
        completed=completed,
        lost=len(run_ids) - completed,
        duplicated=finals - len(run_ids) if finals > len(run_ids) else 0,
        repeated_requests=repeated,
        reexecuted_steps=reexecuted,
        stream_problems=problems,
        recovery_s=recovery,
        seconds=round(finished - started, 2),
        taken_over=sum(len(v) for v in resumed.values()),
        fenced=sum(
            log.read_text(errors="replace").count("worker_fenced") for log in cluster.tmp.glob("*.log")
        ),
    )


@pytest.fixture
def jenkins_replay() -> Iterator[ReplayServer]:
    """Jenkins as a replay server: every build under ``/job/`` answered after 0.15 s and counted."""
    with ReplayServer() as srv:
        srv.add("GET", "/api/json", fixture="jenkins/root.json", headers={"X-Jenkins": "2.452.1"})
        srv.add("GET", "/crumbIssuer/api/json", fixture="jenkins/crumb.json")
        srv.add_prefix("GET", "/job/", fixture="jenkins/build_deploy_412.json", delay_s=0.15)
        srv.watch("/job/")
        yield srv


@pytest.fixture
def worker_cluster(postgres_url: str, tmp_path: Path, jenkins_replay: ReplayServer) -> Iterator[Cluster]:
    """A queue on this test's PostgreSQL schema; its worker processes stop after the test."""
    url = make_url(postgres_url).render_as_string(hide_password=False)
    cluster = Cluster(url, tmp_path, jenkins_replay.url)
    try:
        yield cluster
    finally:
        cluster.stop_all()
