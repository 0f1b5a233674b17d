"""Review of the Kubernetes and Docker toolsets from an SRE's side: a broken deployment triaged through
the real ``kubernetes`` and ``docker`` clients against the replay server (the fixtures and helpers of
``test_tools_kubernetes`` and ``test_tools_docker``), each case a defect that was fixed."""

from __future__ import annotations

import copy
import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("kubernetes")
pytest.importorskip("docker")

from replay.server import ReplayServer  # noqa: E402
from test_tools_docker import V, load  # noqa: E402
from test_tools_docker import daemon as daemon  # noqa: E402,F401  (fixture)
from test_tools_docker import tools as docker_tools  # noqa: E402
from test_tools_kubernetes import cluster as cluster  # noqa: E402,F401  (fixture)
from test_tools_kubernetes import item, run_runbook, tools  # noqa: E402
from test_tools_kubernetes import server as server  # noqa: E402,F401  (fixture, shared by both)

PAYMENTS = "/api/v1/namespaces/payments"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def status(code: int, message: str, reason: str = "BadRequest") -> dict[str, Any]:
    """A Kubernetes ``Status`` error body, as the API server sends it."""
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "reason": reason}


# --- connecting to the API server ----------------------------------------------------------------


def test_refused_connection_is_not_reported_as_a_timeout(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    result = tools(tmp_path, url)["k8s_namespaces"]()
    assert result.status == "error"
    assert "did not answer in time" not in (result.error or "")
    assert result.error == f"cannot connect to the Kubernetes API server at {url}: Connection refused"
    assert "timeout_s" not in (result.hint or "")
    assert "kubernetes.context" in (result.hint or "")
    assert result.metadata.get("transient") is True


def test_silent_api_server_is_asked_once_per_call(tmp_path: Path) -> None:
    accepted: list[socket.socket] = []
    with socket.socket() as listener:  # accepts connections but never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.settimeout(0.1)
        stop = threading.Event()

        def accept() -> None:
            while not stop.is_set():
                try:
                    accepted.append(listener.accept()[0])
                except TimeoutError:
                    continue

        thread = threading.Thread(target=accept)
        thread.start()
        try:
            url = f"http://127.0.0.1:{listener.getsockname()[1]}"
            started = time.monotonic()
            result = tools(tmp_path, url, timeout_s=0.3)["k8s_namespaces"]()
            elapsed = time.monotonic() - started
        finally:
            stop.set()
            thread.join()
            for conn in accepted:
                conn.close()
    assert len(accepted) == 1  # urllib3's own three retries would make timeout_s four times as long
    assert result.error == f"the Kubernetes API server at {url} did not answer in time"
    assert result.metadata.get("transient") is True
    assert elapsed < 4 * 0.3


def test_unknown_context_lists_the_kubeconfig_contexts(cluster: ReplayServer, tmp_path: Path) -> None:
    result = tools(tmp_path, cluster.url, context="prod-eu")["k8s_pods"](namespace="payments")
    assert result.status == "error"
    assert "'prod-eu'" in (result.error or "")
    assert "other, replay" in (result.error or "")  # the contexts the kubeconfig does have
    assert cluster.requests == []


# --- RBAC -----------------------------------------------------------------------------------------


def test_forbidden_hint_names_what_the_api_server_denied(cluster: ReplayServer, tmp_path: Path) -> None:
    run = tools(tmp_path, cluster.url)
    denied_log = status(
        403,
        'pods "api-7d9f8c6b5-x2kqp" is forbidden: User "system:serviceaccount:ops:devops-agent" cannot '
        'get resource "pods/log" in API group "" in the namespace "payments"',
        "Forbidden",
    )
    cluster.add("GET", f"{PAYMENTS}/pods/api-7d9f8c6b5-x2kqp/log", body=denied_log, status=403, times=1)
    logs = run["k8s_logs"]("api-7d9f8c6b5-x2kqp", namespace="payments", previous=True)
    assert logs.status == "error"
    assert "kubectl auth can-i get pods/log -n payments" in (logs.hint or "")
    # A describe reads the deployment, then lists its events: the hint names the call that failed.
    denied_events = status(
        403,
        'events is forbidden: User "system:serviceaccount:ops:devops-agent" cannot list resource '
        '"events" in API group "" in the namespace "payments"',
        "Forbidden",
    )
    cluster.add("GET", f"{PAYMENTS}/events", body=denied_events, status=403, times=1)
    described = run["k8s_describe"]("deployment", "api", namespace="payments")
    assert "`list` verb on events" in (described.hint or "")
    assert "get deployment" not in (described.hint or "")


# --- init containers ------------------------------------------------------------------------------


def init_crashloop_pod() -> dict[str, Any]:
    """The payments API pod with a failing ``migrate`` init container: Pending, app container waiting."""
    pod = copy.deepcopy(item("pods_payments.json", "api-7d9f8c6b5-x2kqp"))
    app = pod["spec"]["containers"][0]
    pod["spec"]["initContainers"] = [
        {"name": "migrate", "image": "registry.example.com/payments/api-migrate:3.8.2", "resources": {}}
    ]
    pod["status"]["phase"] = "Pending"
    pod["status"]["initContainerStatuses"] = [
        {
            "name": "migrate",
            "image": "registry.example.com/payments/api-migrate:3.8.2",
            "imageID": "",
            "ready": False,
            "started": False,
            "restartCount": 4,
            "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 1m20s restarting"}},
            "lastState": {
                "terminated": {
                    "exitCode": 1,
                    "reason": "Error",
                    "startedAt": "2026-03-14T09:40:00Z",
                    "finishedAt": "2026-03-14T09:40:03Z",
                }
            },
        }
    ]
    pod["status"]["containerStatuses"] = [
        {
            "name": app["name"],
            "image": app["image"],
            "imageID": "",
            "ready": False,
            "started": False,
            "restartCount": 0,
            "state": {"waiting": {"reason": "PodInitializing"}},
            "lastState": {},
        }
    ]
    return pod


def test_failing_init_container_is_named_and_its_log_read(cluster: ReplayServer, tmp_path: Path) -> None:
    pod = init_crashloop_pod()
    name = pod["metadata"]["name"]
    cluster.add("GET", f"{PAYMENTS}/pods", body={"kind": "PodList", "items": [pod]}, times=5)
    cluster.add("GET", f"{PAYMENTS}/pods/{name}", body=pod, times=5)
    cluster.add(
        "GET",
        f"{PAYMENTS}/pods/{name}/log",
        body='applying migration 0042_add_ledger_index\nERROR: relation "ledger" does not exist\n',
        query={"container": "migrate", "previous": "true"},
        times=5,
    )
    run = tools(tmp_path, cluster.url)
    (summary,) = run["k8s_pods"](namespace="payments").data["pods"]
    assert summary["reason"] == "Init:CrashLoopBackOff"  # as `kubectl get pods` shows it
    assert summary["ready"] == "0/1"  # app containers only
    assert summary["restarts"] == 4
    assert summary["lastTermination"]["container"] == "migrate"
    init = next(c for c in summary["containers"] if c["name"] == "migrate")
    assert init["init"] is True
    assert init["state"]["reason"] == "CrashLoopBackOff"
    logs = run["k8s_logs"](name, namespace="payments", previous=True)
    assert logs.status == "success", logs
    assert logs.data["container"] == "migrate"
    assert 'relation "ledger" does not exist' in logs.data["text"]
    report = run_runbook(tmp_path, cluster.url, {"pod": name, "namespace": "payments"})
    (finding,) = report.findings
    assert "Init:CrashLoopBackOff" in finding.title
    assert any("container migrate" in line for line in finding.evidence)
    assert any('relation "ledger" does not exist' in line for line in finding.evidence)


def test_log_of_a_pod_still_initializing_is_the_running_init_container_s(
    cluster: ReplayServer, tmp_path: Path
) -> None:
    # Init:0/1 with nothing failing: the app container has not started, the init container is at work
    pod = init_crashloop_pod()
    name = pod["metadata"]["name"]
    migrate = pod["status"]["initContainerStatuses"][0]
    migrate.update(restartCount=0, lastState={}, state={"running": {"startedAt": "2026-03-14T09:40:00Z"}})
    cluster.add("GET", f"{PAYMENTS}/pods/{name}", body=pod, times=5)
    cluster.add(
        "GET",
        f"{PAYMENTS}/pods/{name}/log",
        body="applying migration 0042_add_ledger_index (table 3 of 40)\n",
        query={"container": "migrate"},
        times=5,
    )
    logs = tools(tmp_path, cluster.url)["k8s_logs"](name, namespace="payments")
    assert logs.status == "success", logs
    assert logs.data["container"] == "migrate"
    assert "applying migration" in logs.data["text"]


def test_init_container_states_read_as_kubectl_shows_them() -> None:
    from devops_agent.tools.kubernetes import pod_reason

    pod = init_crashloop_pod()
    migrate = pod["status"]["initContainerStatuses"][0]
    migrate["state"] = {"terminated": {"exitCode": 2, "startedAt": "2026-03-14T09:40:00Z"}}
    assert pod_reason(pod) == "Init:ExitCode:2"
    migrate["state"] = {"running": {"startedAt": "2026-03-14T09:40:00Z"}}
    assert pod_reason(pod) == "Init:0/1"
    # A native sidecar (an init container with restartPolicy Always) that has started counts as
    # done: a running pod with an Istio/Linkerd sidecar is healthy.
    pod["spec"]["initContainers"][0]["restartPolicy"] = "Always"
    migrate["started"] = True
    pod["status"]["phase"] = "Running"
    pod["status"]["containerStatuses"][0].update(
        ready=True, started=True, state={"running": {"startedAt": "2026-03-14T09:41:00Z"}}
    )
    assert pod_reason(pod) is None


# --- logs of a container without the log asked for -----------------------------------------------


def test_previous_log_of_a_container_that_never_ran_is_no_data(cluster: ReplayServer, tmp_path: Path) -> None:
    pod = item("pods_shop.json", "web-59c8d7b6a4-r2d9x")  # ImagePullBackOff: it never started
    path = f"/api/v1/namespaces/shop/pods/{pod['metadata']['name']}/log"
    container = pod["spec"]["containers"][0]["name"]
    previous = status(
        400, f'previous terminated container "{container}" in pod "{pod["metadata"]["name"]}" not found'
    )
    waiting = status(
        400,
        f'container "{container}" in pod "{pod["metadata"]["name"]}" is waiting to start: trying and '
        "failing to pull image",
    )
    cluster.add("GET", path, body=previous, status=400, query={"previous": "true"})
    cluster.add("GET", path, body=waiting, status=400)
    result = tools(tmp_path, cluster.url)["k8s_logs"](
        pod["metadata"]["name"], namespace="shop", previous=True
    )
    assert result.status == "no_data", result
    assert "waiting to start: trying and failing to pull image" in (result.hint or "")
    assert "k8s_describe" in (result.hint or "")


def test_previous_log_falls_back_to_the_current_one(cluster: ReplayServer, tmp_path: Path) -> None:
    name = "api-7d9f8c6b5-m4wzr"  # running, never restarted
    path = f"{PAYMENTS}/pods/{name}/log"
    previous = status(400, f'previous terminated container "api" in pod "{name}" not found')
    cluster.add("GET", path, body=previous, status=400, query={"previous": "true"})
    cluster.add("GET", path, body="listening on :8080\n", query={"previous": "false"})
    result = tools(tmp_path, cluster.url)["k8s_logs"](name, namespace="payments", previous=True)
    assert result.status == "success", result
    assert result.data["previous"] is False  # says which instance it is
    assert "no previous instance" in result.data["note"]
    assert result.data["text"] == "listening on :8080\n"


# --- events ---------------------------------------------------------------------------------------


def test_events_with_a_series_count_and_sort_by_their_last_occurrence(
    cluster: ReplayServer, tmp_path: Path
) -> None:
    # The scheduler records through events.k8s.io: no count/firstTimestamp/lastTimestamp, the
    # first occurrence in eventTime and the repeats in series.
    scheduling = {
        "metadata": {"name": "ledger-5b6c7d8e9f-q7t2n.17c9a1b2c3d4e5f6", "namespace": "payments"},
        "involvedObject": {"kind": "Pod", "namespace": "payments", "name": "ledger-5b6c7d8e9f-q7t2n"},
        "reason": "FailedScheduling",
        "message": "0/3 nodes are available: 3 Insufficient memory.",
        "source": {},
        "firstTimestamp": None,
        "lastTimestamp": None,
        "count": None,
        "eventTime": "2026-03-14T08:00:00.000000Z",
        "series": {"count": 37, "lastObservedTime": "2026-03-14T09:59:30.123456Z"},
        "type": "Warning",
        "reportingComponent": "default-scheduler",
    }
    events = json.loads(
        (Path(__file__).parent / "replay/fixtures/kubernetes/events_payments.json").read_text()
    )
    events["items"].append(scheduling)
    cluster.add("GET", f"{PAYMENTS}/events", body=events, times=1)
    data = tools(tmp_path, cluster.url)["k8s_events"](namespace="payments").data
    warnings = [e for e in data["events"] if e["type"] == "Warning"]
    newest = max(e["lastSeen"] for e in warnings if e["reason"] != "FailedScheduling")
    assert newest < scheduling["series"]["lastObservedTime"]
    first = data["events"][0]
    assert (first["reason"], first["count"]) == ("FailedScheduling", 37)
    assert first["lastSeen"] == scheduling["series"]["lastObservedTime"]
    assert first["firstSeen"] == scheduling["eventTime"]
    assert first["source"] == "default-scheduler"


def test_events_take_kubectl_kind_names(cluster: ReplayServer, tmp_path: Path) -> None:
    run = tools(tmp_path, cluster.url)["k8s_events"]
    for written in ("deployment.apps/api", "deploy/api", "deployment/api"):
        result = run(namespace="payments", involved_object=written)
        assert [e["object"] for e in result.data["events"]] == ["Deployment/api"], written
        sent = cluster.requests[-1].query["fieldSelector"]
        assert sent == ["involvedObject.kind=Deployment,involvedObject.name=api"], written
    run(involved_object="node/worker-2")  # node events live in the default namespace
    assert cluster.requests[-1].path == "/api/v1/namespaces/default/events"
    assert cluster.requests[-1].query["fieldSelector"] == [
        "involvedObject.kind=Node,involvedObject.name=worker-2"
    ]


def test_events_read_every_page(cluster: ReplayServer, tmp_path: Path) -> None:
    events = json.loads(
        (Path(__file__).parent / "replay/fixtures/kubernetes/events_payments.json").read_text()
    )
    first, rest = events["items"][:2], events["items"][2:]
    path = "/api/v1/namespaces/busy/events"
    page1 = {"kind": "EventList", "metadata": {"continue": "page-2"}, "items": first}
    page2 = {"kind": "EventList", "metadata": {}, "items": rest}
    cluster.add("GET", path, body=page2, query={"continue": "page-2"})
    cluster.add("GET", path, body=page1)
    data = tools(tmp_path, cluster.url)["k8s_events"](namespace="busy").data
    assert data["total"] == len(events["items"])
    assert [r.query.get("continue") for r in cluster.requests_to(path)] == [None, ["page-2"]]


# --- Docker ---------------------------------------------------------------------------------------


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
    data = docker_tools(daemon.url)["docker_containers"](all=True).data
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
    result = docker_tools(daemon.url)["docker_logs"]("shop-api-1")
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
    result = docker_tools(daemon.url)["docker_inspect"]("cache-1")
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
