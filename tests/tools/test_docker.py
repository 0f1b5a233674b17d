"""The Docker toolset: the real ``docker`` SDK over HTTP against a replay server of Docker Engine API
v1.47 responses (``tests/replay/fixtures/docker``; see ``SOURCES.md`` there)."""

from __future__ import annotations

import json
import socket
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from functools import partial
from typing import Any

import pytest

pytest.importorskip("docker")

import copy

from devops_agent.analysis.logsummary import SUMMARY_MIN_LINES, SUMMARY_TAIL_LINES  # noqa: E402
from devops_agent.config import Settings  # noqa: E402
from devops_agent.config.settings import DockerSettings  # noqa: E402
from devops_agent.tools.base import call_directly, spec_of  # noqa: E402
from devops_agent.tools.docker import build, check, docker_inspect, docker_stop, register  # noqa: E402
from devops_agent.tools.registry import ToolRegistry  # noqa: E402
from fixtures_replay import FIXTURES, ReplayServer  # noqa: E402

DOCKER = FIXTURES / "docker"
V = "/v1.47"
INSPECTED = ("shop-api-1", "shop-worker-1", "shop-cron-1")
STDOUT, STDERR = 1, 2


def load(name: str) -> Any:
    return json.loads((DOCKER / name).read_text())


def multiplexed(*streams: tuple[int, str]) -> tuple[bytes, list[str]]:
    """The body of ``GET /containers/{id}/logs`` for a container without a TTY, and its lines in order.

    Each fixture holds one stream's ``docker logs --timestamps`` lines; the daemon interleaves
    them by time and sends every line as one frame: an 8-byte header (stream type: 1 stdout, 2
    stderr; three zero bytes; the payload length as a big-endian uint32), then the payload.
    """
    tagged = [(line, kind) for kind, name in streams for line in (DOCKER / name).read_text().splitlines()]
    tagged.sort(key=lambda pair: pair[0].split(" ", 1)[0])  # RFC 3339 stamps of equal width sort as text
    body = b""
    for line, kind in tagged:
        payload = (line + "\n").encode()
        body += bytes([kind, 0, 0, 0]) + len(payload).to_bytes(4, "big") + payload
    return body, [line for line, _ in tagged]


LOG_BODY, LOG_LINES = multiplexed(
    (STDOUT, "logs_shop-api-1.stdout.txt"), (STDERR, "logs_shop-api-1.stderr.txt")
)


@pytest.fixture(scope="module")
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


@pytest.fixture
def daemon(server: ReplayServer) -> ReplayServer:
    server.reset()
    server.add("GET", "/version", fixture="docker/version.json")
    every = load("containers_all.json")
    # `docker ps` without -a: the daemon leaves out containers that are neither running nor paused
    # (a restarting container counts as running).
    running = [c for c in every if c["State"] in ("running", "restarting", "paused")]
    server.add("GET", f"{V}/containers/json", body=every, query={"all": "1"})
    server.add("GET", f"{V}/containers/json", body=running, query={"all": "0"})
    for name in INSPECTED:
        obj = load(f"inspect_{name}.json")
        for ref in (name, obj["Id"], obj["Id"][:12]):  # the daemon takes a name, an id or its prefix
            server.add("GET", f"{V}/containers/{ref}/json", body=obj)
    server.add(
        "GET",
        f"{V}/containers/shop-api-1/logs",
        body=LOG_BODY,
        headers={"Content-Type": "application/vnd.docker.multiplexed-stream"},
    )
    server.add("GET", f"{V}/containers/shop-api-1/stats", fixture="docker/stats_shop-api-1.json")
    server.add("GET", f"{V}/images/json", fixture="docker/images.json")
    return server


def settings(url: str, **conf: Any) -> Settings:
    return Settings(docker=DockerSettings(base_url=url.replace("http://", "tcp://"), **conf))


def toolset(settings: Settings) -> dict[str, Any]:
    """The toolset's tools by name, each called as a CLI command would call it (``call_directly``)."""
    return {name: partial(call_directly, e.function, settings) for name, e in build(settings).entries.items()}


def tools(url: str, **conf: Any) -> dict[str, Any]:
    return toolset(settings(url, **conf))


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


# --- read tools ---------------------------------------------------------------------------------


def test_containers_put_the_failing_ones_first_with_restarts_and_oom(daemon: ReplayServer) -> None:
    result = tools(daemon.url)["docker_containers"](all=True)
    assert result.status == "success", result
    data = result.data
    assert data["total"] == 6
    names = [c["name"] for c in data["containers"]]
    assert names[:3] == ["shop-worker-1", "shop-cron-1", "shop-api-1"]
    by_name = {c["name"]: c for c in data["containers"]}
    worker = by_name["shop-worker-1"]
    assert (worker["state"], worker["exit_code"], worker["restart_count"], worker["oom_killed"]) == (
        "restarting",
        137,
        7,
        True,
    )
    assert by_name["shop-cron-1"]["problem"] == "exited with code 1"
    assert by_name["shop-api-1"]["health"] == "unhealthy"
    assert by_name["shop-api-1"]["ports"] == ["0.0.0.0:8080->8000/tcp", "[::]:8080->8000/tcp"]
    assert by_name["shop-db-1"]["ports"] == ["5432/tcp"]
    assert by_name["shop-migrate-1"]["problem"] is None  # exit code 0 is a finished job
    assert by_name["shop-api-1"]["id"] == load("inspect_shop-api-1.json")["Id"][:12]
    assert data["summary"] == {
        "by_state": {"running": 3, "restarting": 1, "exited": 2},
        "exited_nonzero": ["shop-cron-1 (1)"],
        "restarting": ["shop-worker-1"],
        "unhealthy": ["shop-api-1"],
    }
    (listed,) = daemon.requests_to(f"{V}/containers/json")
    assert listed.query["all"] == ["1"]
    assert listed.query["limit"] == ["-1"]  # the API's limit would add stopped containers
    inspected = {r.path for r in daemon.requests_to(f"{V}/containers/") if r.path.endswith("/json")}
    assert len(inspected) == 3 + 1  # the three failing containers, plus the list itself


def test_containers_default_running_only_with_filters_and_limit(daemon: ReplayServer) -> None:
    run = tools(daemon.url)["docker_containers"]
    data = run(limit=2).data
    assert data["total"] == 4
    assert len(data["containers"]) == 2
    assert data["truncated"] is True
    assert daemon.requests_to(f"{V}/containers/json")[0].query["all"] == ["0"]
    empty_filter = json.dumps({"name": ["nope"], "label": ["com.docker.compose.project=shop"]})
    daemon.add("GET", f"{V}/containers/json", body=[], query={"filters": empty_filter}, first=True)
    result = run(name="nope", label="com.docker.compose.project=shop")
    assert result.status == "no_data"
    assert "running containers" in (result.hint or "")
    sent = json.loads(daemon.requests_to(f"{V}/containers/json")[-1].query["filters"][0])
    assert sent == {"name": ["nope"], "label": ["com.docker.compose.project=shop"]}


def test_inspect_digest_lists_env_names_but_never_values(daemon: ReplayServer) -> None:
    result = tools(daemon.url)["docker_inspect"]("shop-api-1")
    assert result.status == "success", result
    data = result.data
    raw = load("inspect_shop-api-1.json")
    assert data["env_names"] == [e.split("=", 1)[0] for e in raw["Config"]["Env"]]
    dumped = json.dumps(result.model_dump())
    for entry in raw["Config"]["Env"]:
        value = entry.split("=", 1)[1]
        if len(value) > 6:  # short values ("C.UTF-8") could appear elsewhere by chance
            assert value not in dumped, entry
    assert "canary" not in dumped
    state = data["state"]
    assert (state["status"], state["running"], state["oom_killed"], state["restart_count"]) == (
        "running",
        True,
        False,
        0,
    )
    assert state["finished_at"] is None  # Go's zero time: never finished
    assert state["health"]["status"] == "unhealthy"
    assert state["health"]["failing_streak"] == 4
    assert state["health"]["last_check"]["output"] == "curl: (22) The requested URL returned error: 503"
    assert data["entrypoint"] == ["/app/docker-entrypoint.sh"]
    assert data["command"][:2] == ["gunicorn", "shop.wsgi:application"]
    assert data["limits"]["memory"] == "512.0MiB"
    assert data["limits"]["cpus"] == 1.0
    assert data["mounts"] == [
        {"type": "bind", "source": "/srv/shop/config", "destination": "/app/config", "rw": False}
    ]
    assert data["networks"]["shop_default"]["ip"] == "172.20.0.5"
    assert data["ports"] == ["0.0.0.0:8080->8000/tcp", "[::]:8080->8000/tcp"]
    assert data["restart_policy"] == {"name": "unless-stopped", "max_retries": 0}
    assert data["healthcheck"]["timeout_s"] == 5.0
    worker = tools(daemon.url)["docker_inspect"]("shop-worker-1").data
    assert (worker["state"]["exit_code"], worker["state"]["oom_killed"]) == (137, True)
    assert worker["limits"]["memory_bytes"] == 256 * 1024 * 1024


def test_logs_are_demultiplexed_in_order(daemon: ReplayServer) -> None:
    result = tools(daemon.url)["docker_logs"]("shop-api-1", summarize=False)
    assert result.status == "success", result
    data = result.data
    assert "summarized" not in data
    assert data["text"].splitlines() == LOG_LINES  # no frame headers left, streams interleaved by time
    assert data["lines"] == len(LOG_LINES)
    assert "\x00" not in data["text"]
    stderr_first = (DOCKER / "logs_shop-api-1.stderr.txt").read_text().splitlines()[0]
    assert data["text"].startswith(stderr_first)
    (req,) = daemon.requests_to(f"{V}/containers/shop-api-1/logs")
    assert {k: v[0] for k, v in req.query.items()} == {
        "stdout": "1",
        "stderr": "1",
        "timestamps": "1",
        "follow": "0",
        "tail": "200",
    }


def test_long_logs_are_summarized_with_quoted_error_lines(daemon: ReplayServer) -> None:
    assert len(LOG_LINES) > SUMMARY_MIN_LINES
    result = tools(daemon.url)["docker_logs"]("shop-api-1", tail=1000)
    assert result.status == "success", result
    data = result.data
    assert data["summarized"] is True
    assert "text" not in data
    assert data["lines"] == len(LOG_LINES)
    assert data["tail"] == LOG_LINES[-SUMMARY_TAIL_LINES:]
    assert result.raw is not None
    assert result.raw.splitlines() == LOG_LINES  # the whole log stays with the result for the user
    signatures = data["error_signatures"]
    charge_lines = [line for line in LOG_LINES if "charge failed for order" in line]
    pool_lines = [line for line in LOG_LINES if "QueuePool limit" in line]
    charge = next(s for s in signatures if "charge failed for order" in s["template"])
    pool = next(s for s in signatures if "QueuePool limit" in s["template"])
    assert charge["count"] == len(charge_lines)
    assert pool["count"] == len(pool_lines)
    assert charge["examples"][0] == charge_lines[0]  # quoted verbatim, the daemon's stamp included
    access = {t["template"] for t in data["other_templates"]}
    assert not any("charge failed" in template for template in access)
    assert daemon.requests_to(f"{V}/containers/shop-api-1/logs")[0].query["tail"] == ["1000"]
    # the faces draw the same templates as a table (error signatures first) and date the first error
    table = result.evidence.templates
    assert table.total == data["templates_total"]
    assert table.lines == len(LOG_LINES)
    by_text = {row.template: row.count for row in table.rows}
    assert by_text[charge["template"]] == len(charge_lines)
    assert by_text[pool["template"]] == len(pool_lines)
    (onset,) = result.evidence.timeline
    first_seen = min(s["first_seen"] for s in signatures if s.get("first_seen"))
    assert (onset.kind, onset.at.isoformat().replace("+00:00", "Z")) == (
        "error_onset",
        first_seen.replace("+00:00", "Z"),
    )


def test_logs_are_capped_in_bytes_at_a_line_boundary(daemon: ReplayServer) -> None:
    data = tools(daemon.url, logs_max_bytes=1024)["docker_logs"]("shop-api-1", summarize=False).data
    assert data["truncated"] is True
    assert data["bytes"] <= 1024
    lines = data["text"].splitlines()
    assert lines == LOG_LINES[-len(lines) :]  # whole lines, the newest ones


def test_logs_since_is_sent_as_epoch_seconds_and_bad_since_is_refused(daemon: ReplayServer) -> None:
    run = tools(daemon.url)["docker_logs"]
    run("shop-api-1", since="2024-11-22T03:30:00Z")
    expected = int(datetime.fromisoformat("2024-11-22T03:30:00+00:00").timestamp())
    assert daemon.requests_to(f"{V}/containers/shop-api-1/logs")[-1].query["since"] == [str(expected)]
    bad = run("shop-api-1", since="the other day")
    assert bad.status == "error"
    assert bad.hint


def test_stats_snapshot_computed_like_docker_stats(daemon: ReplayServer) -> None:
    result = tools(daemon.url)["docker_stats"]("shop-api-1")
    assert result.status == "success", result
    data = result.data
    raw = load("stats_shop-api-1.json")
    cpu, pre = raw["cpu_stats"], raw["precpu_stats"]
    cpu_delta = cpu["cpu_usage"]["total_usage"] - pre["cpu_usage"]["total_usage"]
    system_delta = cpu["system_cpu_usage"] - pre["system_cpu_usage"]
    assert data["cpu_percent"] == round(cpu_delta / system_delta * cpu["online_cpus"] * 100, 2)
    assert 0 < data["cpu_percent"] <= cpu["online_cpus"] * 100
    mem = raw["memory_stats"]
    used = mem["usage"] - mem["stats"]["inactive_file"]  # cgroup v2: page cache that can be reclaimed
    assert data["memory"]["used_bytes"] == used
    assert data["memory"]["limit_bytes"] == mem["limit"]
    assert data["memory"]["percent"] == round(used / mem["limit"] * 100, 2)
    nets = raw["networks"].values()
    assert data["network"]["rx_bytes"] == sum(n["rx_bytes"] for n in nets)
    assert data["network"]["tx_bytes"] == sum(n["tx_bytes"] for n in nets)
    blkio = raw["blkio_stats"]["io_service_bytes_recursive"]
    assert data["block_io"] == {
        "read_bytes": sum(e["value"] for e in blkio if e["op"] == "read"),
        "write_bytes": sum(e["value"] for e in blkio if e["op"] == "write"),
    }
    assert data["pids"] == raw["pids_stats"]["current"]
    assert data["pids_limit"] is None  # "max"
    throttling, pre_throttling = cpu["throttling_data"], pre["throttling_data"]
    assert data["cpu_throttled_percent"] == round(
        (throttling["throttled_periods"] - pre_throttling["throttled_periods"])
        / (throttling["periods"] - pre_throttling["periods"])
        * 100,
        2,
    )
    (req,) = daemon.requests_to(f"{V}/containers/shop-api-1/stats")
    assert req.query["stream"] == ["False"]  # one sample, not a stream


def test_stats_of_a_stopped_container_is_no_data(daemon: ReplayServer) -> None:
    # A stopped container's stats are zeroed, with Go's zero time in `read` (doc shape).
    zeroed = {
        "name": "/shop-cron-1",
        "id": load("inspect_shop-cron-1.json")["Id"],
        "read": "0001-01-01T00:00:00Z",
        "preread": "0001-01-01T00:00:00Z",
        "pids_stats": {},
        "blkio_stats": {"io_service_bytes_recursive": None},
        "cpu_stats": {"cpu_usage": {"total_usage": 0}, "throttling_data": {}},
        "precpu_stats": {"cpu_usage": {"total_usage": 0}, "throttling_data": {}},
        "memory_stats": {},
    }
    daemon.add("GET", f"{V}/containers/shop-cron-1/stats", body=zeroed)
    result = tools(daemon.url)["docker_stats"]("shop-cron-1")
    assert result.status == "no_data"
    assert "not running" in (result.hint or "")


def test_images_newest_first_with_filters(daemon: ReplayServer) -> None:
    run = tools(daemon.url)["docker_images"]
    data = run().data
    raw = load("images.json")
    assert data["total"] == len(raw)
    created = [i["created"] for i in data["images"]]
    assert created == sorted(created, reverse=True)
    assert data["dangling"] == sum(1 for i in raw if not i["RepoTags"])
    first = data["images"][0]
    newest = max(raw, key=lambda i: i["Created"])
    assert first["repo_tags"] == newest["RepoTags"]
    assert first["id"] == newest["Id"].removeprefix("sha256:")[:12]
    assert first["size_bytes"] == newest["Size"]
    assert run(limit=2).data["truncated"] is True
    run(name="registry.example.com/shop/api", dangling=False)
    sent = json.loads(daemon.requests_to(f"{V}/images/json")[-1].query["filters"][0])
    assert sent == {"dangling": ["false"], "reference": ["registry.example.com/shop/api"]}


# --- changes ------------------------------------------------------------------------------------


def test_specs_and_registration() -> None:
    entries = build(Settings()).entries
    assert set(entries) == {
        "docker_containers",
        "docker_inspect",
        "docker_logs",
        "docker_stats",
        "docker_images",
        "docker_restart",
        "docker_stop",
        "docker_rm",
    }
    assert {e.spec.category for e in entries.values()} == {"containers"}
    changes = {n: (e.spec.read_only, e.spec.risk) for n, e in entries.items() if not e.spec.read_only}
    assert changes == {
        "docker_restart": (False, "sensitive"),
        "docker_stop": (False, "sensitive"),
        "docker_rm": (False, "destructive"),
    }
    registry = ToolRegistry()
    register(registry)
    assert "docker" in registry.build(Settings())


def test_restart_and_stop_send_the_timeout(daemon: ReplayServer) -> None:
    daemon.add("POST", f"{V}/containers/shop-api-1/restart", status=204)
    daemon.add("POST", f"{V}/containers/shop-api-1/stop", status=204)
    run = tools(daemon.url)
    restarted = run["docker_restart"]("shop-api-1")
    assert restarted.status == "success", restarted
    assert (restarted.data["action"], restarted.data["timeout_s"]) == ("restarted", 10)
    assert restarted.data["state"]["status"] == "running"  # read back after the change
    (post,) = daemon.requests_to(f"{V}/containers/shop-api-1/restart", "POST")
    assert post.query["t"] == ["10"]
    stopped = run["docker_stop"]("shop-api-1", timeout_s=3)
    assert stopped.data["action"] == "stopped"
    assert daemon.requests_to(f"{V}/containers/shop-api-1/stop", "POST")[0].query["t"] == ["3"]


def test_rm_sends_force_and_a_running_container_is_a_conflict(daemon: ReplayServer) -> None:
    daemon.add("DELETE", f"{V}/containers/shop-cron-1", status=204)
    run = tools(daemon.url)
    removed = run["docker_rm"]("shop-cron-1", force=True)
    assert removed.data == {"container": "shop-cron-1", "action": "removed", "force": True}
    (delete,) = daemon.requests_to(f"{V}/containers/shop-cron-1", "DELETE")
    # The SDK sends Python booleans as "True"/"False"; the daemon reads booleans case-insensitively.
    assert delete.query["force"][0].lower() == "true"
    assert delete.query["v"][0].lower() == "false"  # named and anonymous volumes are kept
    daemon.add("DELETE", f"{V}/containers/shop-api-1", fixture="docker/error_rm_running.json", status=409)
    refused = run["docker_rm"]("shop-api-1")
    assert refused.status == "error"
    assert refused.error is not None
    assert refused.error.startswith("conflict (409): You cannot remove a running container")
    assert "state" in (refused.hint or "")
    assert refused.metadata["status"] == 409
    assert daemon.requests_to(f"{V}/containers/shop-api-1", "DELETE")[0].query["force"][0].lower() == "false"


# --- errors -------------------------------------------------------------------------------------


def test_missing_container_is_not_found(daemon: ReplayServer) -> None:
    daemon.add(
        "GET", f"{V}/containers/shop-nope-1/json", fixture="docker/error_no_such_container.json", status=404
    )
    result = tools(daemon.url)["docker_inspect"]("shop-nope-1")
    assert result.error == "no such container shop-nope-1 (404): No such container: shop-nope-1"
    assert "docker_containers(all=True)" in (result.hint or "")
    assert result.metadata == {"status": 404}


@pytest.mark.parametrize(
    ("status", "error", "hint", "meta"),
    [
        (500, "Docker daemon server error (500): ", "retry", {"status": 500, "transient": True}),
        (503, "Docker daemon server error (503): ", "retry", {"status": 503, "transient": True}),
        (403, "refused the request (403)", "certificate", {"status": 403}),
        (429, "rate limit hit (429)", "retry after 7s", {"status": 429, "transient": True}),
    ],
)
def test_error_statuses_are_mapped(
    daemon: ReplayServer, status: int, error: str, hint: str, meta: dict[str, Any]
) -> None:
    body = {"message": "scripted failure"}
    headers = {"Retry-After": "7"} if status == 429 else None
    daemon.add("GET", f"{V}/containers/json", body=body, status=status, headers=headers, times=1)
    result = tools(daemon.url)["docker_containers"]()
    assert result.status == "error"
    assert error in (result.error or "")
    assert "scripted failure" in (result.error or "")
    assert hint in (result.hint or "")
    assert meta.items() <= result.metadata.items()


def test_unreachable_daemon_fails_fast_with_a_hint() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    started = time.monotonic()
    result = tools(url)["docker_containers"]()
    assert time.monotonic() - started < 5
    assert result.status == "error"
    assert result.error == f"cannot connect to the Docker daemon at {url.replace('http', 'tcp')}"
    assert "DEVOPS_AGENT_DOCKER__BASE_URL" in (result.hint or "")
    assert result.metadata.get("transient") is True


def test_no_socket_names_the_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for var in ("DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/docker.sock")
    result = toolset(Settings())["docker_images"]()
    assert result.status == "error"
    assert result.error == f"cannot connect to the Docker daemon at unix://{tmp_path}/docker.sock"
    assert "no Docker socket there" in (result.hint or "")
    assert "DEVOPS_AGENT_DOCKER__BASE_URL" in (result.hint or "")


def test_daemon_that_never_answers_times_out() -> None:
    with socket.socket() as listener:  # accepts connections (backlog) but never replies
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        started = time.monotonic()
        result = tools(f"http://127.0.0.1:{port}", timeout_s=0.5)["docker_inspect"]("shop-api-1")
        assert time.monotonic() - started < 5
    assert result.status == "error"
    assert "did not answer in time" in (result.error or "")
    assert "docker.timeout_s" in (result.hint or "")
    assert result.metadata.get("transient") is True


def test_pinned_api_version_skips_negotiation(daemon: ReplayServer) -> None:
    result = tools(daemon.url, api_version="1.47")["docker_images"]()
    assert result.status == "success", result
    assert [r.path for r in daemon.requests] == [f"{V}/images/json"]
    # A daemon older than the pinned version answers 400 on every versioned path.
    too_new = {"message": "client version 1.99 is too new. Maximum supported API version is 1.47"}
    daemon.add("GET", "/v1.99/images/json", body=too_new, status=400)
    refused = tools(daemon.url, api_version="1.99")["docker_images"]()
    assert refused.error == f"Docker API error (400): {too_new['message']}"
    assert "unset docker.api_version" in (refused.hint or "")


def test_missing_client_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "docker", None)
    with pytest.raises(ImportError, match=r"devops-agent\[docker\]"):
        build(Settings())
    ok, message = check(Settings())
    assert not ok
    assert "devops-agent[docker]" in message


def test_check(daemon: ReplayServer) -> None:
    daemon.add("GET", f"{V}/_ping", body="OK", headers={"API-Version": "1.47"})
    daemon.add("GET", f"{V}/version", fixture="docker/version.json")
    ok, message = check(settings(daemon.url))
    assert ok, message
    assert "Docker Engine 27.3.1" in message
    assert "API 1.47" in message
    assert [r.path for r in daemon.requests] == ["/version", f"{V}/_ping", f"{V}/version"]
    down, why = check(settings(f"http://127.0.0.1:{closed_port()}"))
    assert not down
    assert "cannot connect to the Docker daemon" in why


def test_tls_from_the_environment_without_certificates(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("DOCKER_TLS_VERIFY", "1")
    monkeypatch.setenv("DOCKER_CERT_PATH", str(tmp_path))  # no ca.pem/cert.pem/key.pem there
    result = tools(f"http://127.0.0.1:{closed_port()}")["docker_containers"]()
    assert result.status == "error"
    assert (result.error or "").startswith("cannot set up the Docker client: ")
    assert "ca.pem, cert.pem and key.pem" in (result.hint or "")


def test_ssh_without_paramiko_uses_the_ssh_binary(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from devops_agent.tools.docker import client_kwargs

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "paramiko" else real_find_spec(name, *a)
    )
    kwargs = client_kwargs(settings("ssh://ops@docker-host.example.com").docker)
    assert kwargs["base_url"] == "ssh://ops@docker-host.example.com"
    assert kwargs["use_ssh_client"] is True
    assert "use_ssh_client" not in client_kwargs(settings("tcp://10.0.0.5:2375").docker)


def test_docker_tools_imported_by_name_run_through_the_pipeline(
    daemon: ReplayServer, through_pipeline: Any
) -> None:
    """Module-level tools run through the real pipeline with the run's settings in ``ctx.deps``; a
    stop timeout above the declared 600 s is refused before the daemon is asked (it used to become
    600), and the change itself is declared as needing approval."""
    conf = settings(daemon.url)
    found = through_pipeline("docker_inspect", docker_inspect, {"container": "shop-api-1"}, settings=conf)
    assert found.status == "success", found
    assert found.data["name"] == "shop-api-1"
    stop = spec_of(docker_stop)
    assert stop is not None
    assert (stop.read_only, stop.risk) == (False, "sensitive")
    sent = len(daemon.requests)
    refused = through_pipeline(
        "docker_stop", docker_stop, {"container": "shop-api-1", "timeout_s": 601}, settings=conf
    )
    assert refused.status == "error"
    assert "timeout_s: Input should be less than or equal to 600" in (refused.error or "")
    assert len(daemon.requests) == sent


def test_container_that_failed_to_start_is_a_problem(daemon: ReplayServer) -> None:
    # `docker run -p 8080:8000` while the port is taken: the container stays "created", and only
    # its inspect says why (State.Error, exit code 128).
    api = load("inspect_shop-api-1.json")
    created = copy.deepcopy(api)
    created.update(Id="c0ffee" + api["Id"][6:], Name="/shop-api-2", RestartCount=0)
    created["State"] = {
        "Status": "created",
        "Running": False,
        "ExitCode": 128,
        "OOMKilled": False,
        "Error": "driver failed programming external connectivity on endpoint shop-api-2: Bind for "
        "0.0.0.0:8080 failed: port is already allocated",
        "StartedAt": "0001-01-01T00:00:00Z",
        "FinishedAt": "0001-01-01T00:00:00Z",
    }
    row = next(c for c in load("containers_all.json") if c["Names"] == ["/shop-api-1"])
    listed = copy.deepcopy(row)
    listed.update(Id=created["Id"], Names=["/shop-api-2"], State="created", Status="Created")
    every = [*load("containers_all.json"), listed]
    daemon.add("GET", f"{V}/containers/json", body=every, query={"all": "1"}, times=1)
    daemon.add("GET", f"{V}/containers/{created['Id'][:12]}/json", body=created)
    data = tools(daemon.url)["docker_containers"](all=True).data
    by_name = {c["name"]: c for c in data["containers"]}
    failed = by_name["shop-api-2"]
    assert failed["problem"] == f"failed to start: {created['State']['Error']}"
    assert failed["exit_code"] == 128
    assert data["summary"]["failed_to_start"] == ["shop-api-2"]
    names = [c["name"] for c in data["containers"]]
    assert names.index("shop-api-2") < names.index("shop-cron-1")  # before ordinary failed exits


def test_logs_the_logging_driver_cannot_read_are_not_transient(daemon: ReplayServer) -> None:
    refused = {"message": "configured logging driver does not support reading"}
    daemon.add("GET", f"{V}/containers/shop-api-1/logs", body=refused, status=501, times=1)
    result = tools(daemon.url)["docker_logs"]("shop-api-1")
    assert result.status == "error"
    assert "configured logging driver does not support reading" in (result.error or "")
    assert "transient" not in result.metadata  # retrying cannot help; the triage would retry it
    assert "log_driver" in (result.hint or "")


def test_inspect_hides_secrets_on_the_command_line(daemon: ReplayServer) -> None:
    # `command: redis-server --requirepass ...` in a Compose file, a DSN in an `sh -c` entrypoint,
    # a health check that authenticates: values as secret as the environment's.
    obj = copy.deepcopy(load("inspect_shop-worker-1.json"))
    secrets = ("s3cr3t-redis-pass", "hunter22-db", "tok-9f8e7d6c5b")
    obj["Config"]["Cmd"] = ["redis-server", "--requirepass", secrets[0], "--appendonly", "yes"]
    obj["Config"]["Entrypoint"] = [
        "sh",
        "-c",
        f"exec worker --db-url=postgres://shop:{secrets[1]}@db:5432/shop --api-token={secrets[2]} --port 80",
    ]
    obj["Config"]["Healthcheck"] = {"Test": ["CMD", "worker", "check", "--password", secrets[0]]}
    daemon.add("GET", f"{V}/containers/cache-1/json", body=obj)
    result = tools(daemon.url)["docker_inspect"]("cache-1")
    assert result.status == "success", result
    dumped = json.dumps(result.model_dump())
    for secret in secrets:
        assert secret not in dumped, secret
    data = result.data
    assert data["command"][:2] == ["redis-server", "--requirepass"]  # what ran stays readable
    assert data["command"][3:] == ["--appendonly", "yes"]
    assert "postgres://shop:" in data["entrypoint"][2]
    assert "--port 80" in data["entrypoint"][2]
    assert data["healthcheck"]["test"][:4] == ["CMD", "worker", "check", "--password"]
