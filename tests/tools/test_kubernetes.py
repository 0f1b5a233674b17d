"""The Kubernetes toolset and the pod-crashloop runbook: the real ``kubernetes`` client, configured from
a kubeconfig, over HTTP against a replay server of responses in the API reference's shapes."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("kubernetes")

import socket
import time

import devops_agent.runbooks.analyzers.kubernetes  # noqa: E402,F401  (registers pod_crashloop)
from devops_agent.config import Settings  # noqa: E402
from devops_agent.config.settings import KubernetesSettings  # noqa: E402
from devops_agent.tools.base import spec_of  # noqa: E402
from devops_agent.tools.kubernetes import build, check, k8s_pods, k8s_scale, register  # noqa: E402
from devops_agent.tools.registry import ToolRegistry  # noqa: E402
from fixtures_kubernetes import (  # noqa: E402
    K8S,
    PAYMENTS,
    TOKEN,
    init_crashloop_pod,
    item,
    run_runbook,
    settings,
    status,
    tools,
    toolset,
)
from fixtures_replay import ReplayServer  # noqa: E402


@pytest.fixture(autouse=True)
def _no_leftover_threads() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    # The replay server's own request threads may still be finishing, and the pipeline's pool of
    # tool threads lives for the process by design; the client must leave none of its own.
    mine = ("replay-server", "process_request_thread", "devops-agent-tool")
    left = [t for t in threading.enumerate() if t not in before and not any(m in t.name for m in mine)]
    assert not left, f"threads left running: {left}"


# --- read tools ---------------------------------------------------------------------------------


def test_namespaces_with_bearer_token_from_the_kubeconfig_context(
    cluster: ReplayServer, tmp_path: Path
) -> None:
    result = tools(tmp_path, cluster.url)["k8s_namespaces"]()
    assert result.status == "success", result
    assert [n["name"] for n in result.data["namespaces"]][:3] == ["default", "kube-system", "payments"]
    (req,) = cluster.requests
    assert req.headers["authorization"] == f"Bearer {TOKEN}"


def test_pods_summaries_name_the_reason(cluster: ReplayServer, tmp_path: Path) -> None:
    run = tools(tmp_path, cluster.url)["k8s_pods"]
    payments = run(namespace="payments").data
    assert (payments["total"], payments["unhealthy"]) == (3, 2)
    by_name = {p["name"]: p for p in payments["pods"]}
    api = by_name["api-7d9f8c6b5-x2kqp"]
    assert (api["phase"], api["ready"], api["restarts"], api["reason"]) == (
        "Running",
        "0/1",
        14,
        "CrashLoopBackOff",
    )
    assert api["lastTermination"]["reason"] == "OOMKilled"
    assert api["lastTermination"]["exitCode"] == 137
    assert api["containers"][0]["limits"] == {"memory": "256Mi"}
    assert api["owner"] == "ReplicaSet/api-7d9f8c6b5"
    assert payments["pods"][-1]["reason"] is None  # healthy pods last
    assert by_name["api-7d9f8c6b5-m4wzr"]["ready"] == "1/1"
    ledger = by_name["ledger-5b6c7d8e9f-q7t2n"]["reason"]
    assert ledger.startswith("Unschedulable: 0/3 nodes are available")
    assert "Insufficient memory" in ledger
    checkout = {p["name"]: p["reason"] for p in run(namespace="checkout").data["pods"]}
    assert checkout["checkout-worker-84b9c7d6f-zz5mv"] == "CreateContainerConfigError"
    assert run(namespace="shop").data["pods"][0]["reason"] == "ImagePullBackOff"


def test_pods_default_namespace_and_selector_are_sent(cluster: ReplayServer, tmp_path: Path) -> None:
    cluster.add(
        "GET",
        "/api/v1/namespaces/payments/pods",
        body={"kind": "PodList", "items": []},
        query={"labelSelector": "app=none"},
        first=True,
    )
    result = tools(tmp_path, cluster.url, namespace="payments")["k8s_pods"](selector="app=none")
    assert result.status == "no_data"
    assert cluster.requests[0].query["labelSelector"] == ["app=none"]


def test_events_warnings_first_and_filtered_by_object(cluster: ReplayServer, tmp_path: Path) -> None:
    run = tools(tmp_path, cluster.url)["k8s_events"]
    data = run(namespace="shop").data
    assert [e["type"] for e in data["events"]] == ["Warning"] * 3 + ["Normal"] * 3
    assert data["events"][0]["reason"] == "Failed"
    only = run(namespace="payments", involved_object="Deployment/api").data
    assert [e["object"] for e in only["events"]] == ["Deployment/api"]
    assert cluster.requests[-1].query["fieldSelector"] == [
        "involvedObject.kind=Deployment,involvedObject.name=api"
    ]


def test_previous_logs_pick_the_crashing_container(cluster: ReplayServer, tmp_path: Path) -> None:
    result = tools(tmp_path, cluster.url)["k8s_logs"](
        "api-7d9f8c6b5-x2kqp", namespace="payments", previous=True
    )
    assert result.status == "success", result
    assert result.data["container"] == "api"
    assert "GC pause" in result.data["text"]
    log_req = cluster.requests[-1]
    assert log_req.query["previous"] == ["true"]
    assert log_req.query["tailLines"] == ["200"]
    assert log_req.query["container"] == ["api"]


def test_describe_deployment_pod_and_node(cluster: ReplayServer, tmp_path: Path) -> None:
    describe = tools(tmp_path, cluster.url)["k8s_describe"]
    dep = describe("deployment", "api", namespace="payments").data
    assert dep["replicas"] == {
        "desired": 3,
        "current": 3,
        "ready": 2,
        "updated": 3,
        "available": 2,
        "unavailable": 1,
    }
    assert dep["containers"][0]["image"] == "registry.example.com/payments/api:3.8.2"
    assert any(c["type"] == "Available" and c["status"] == "False" for c in dep["conditions"])
    assert [e["object"] for e in dep["events"]] == ["Deployment/api"]
    pod = describe("pod", "api-7d9f8c6b5-x2kqp", namespace="payments").data
    assert pod["deployment"]["name"] == "api"
    assert pod["events"][0]["reason"] == "BackOff"
    node = describe("node", "worker-2").data
    assert node["pressure"] == ["MemoryPressure"]
    assert node["allocatable"]["memory"] == "7098416Ki"
    assert node["ready"] is True


def test_rollout_history_lists_revisions_newest_first(cluster: ReplayServer, tmp_path: Path) -> None:
    result = tools(tmp_path, cluster.url)["k8s_rollout_history"]("api", namespace="payments")
    data = result.data
    assert [r["revision"] for r in data["revisions"]] == [7, 6, 5]
    assert data["revisions"][1]["images"] == ["registry.example.com/payments/api:3.8.1"]
    assert data["current"] == "7"
    assert cluster.requests[-1].query["labelSelector"] == ["app=api"]
    # each revision is a deploy on the incident timeline, at the time its ReplicaSet was created
    deploys = result.evidence.timeline
    assert [e.kind for e in deploys] == ["deploy"] * 3
    assert [e.at.isoformat() for e in deploys] == [
        r["created"].replace("Z", "+00:00") for r in data["revisions"]
    ]
    assert deploys[1].label.startswith("api revision 6: registry.example.com/payments/api:3.8.1")


def test_rollout_history_of_a_deployment_with_null_annotations(cluster: ReplayServer, tmp_path: Path) -> None:
    # a deployment applied without annotations can come back with "annotations": null
    dep = json.loads((K8S / "deployment_payments_api.json").read_text())
    dep["metadata"]["annotations"] = None
    cluster.add("GET", "/apis/apps/v1/namespaces/payments/deployments/api", body=dep, times=1)
    res = tools(tmp_path, cluster.url)["k8s_rollout_history"]("api", namespace="payments")
    assert res.status == "success"
    assert res.data["current"] is None
    assert [r["revision"] for r in res.data["revisions"]] == [7, 6, 5]


# --- changes ------------------------------------------------------------------------------------


def test_rollout_restart_patches_the_template_annotation(cluster: ReplayServer, tmp_path: Path) -> None:
    path = "/apis/apps/v1/namespaces/payments/deployments/api"
    cluster.add("PATCH", path, fixture="kubernetes/deployment_payments_api.json")
    result = tools(tmp_path, cluster.url)["k8s_rollout_restart"]("api", "payments")
    assert result.status == "success", result
    (patch,) = [r for r in cluster.requests if r.method == "PATCH"]
    assert patch.headers["content-type"] == "application/strategic-merge-patch+json"
    annotations = patch.json()["spec"]["template"]["metadata"]["annotations"]
    assert annotations["kubectl.kubernetes.io/restartedAt"] == result.data["restartedAt"]


def test_scale_and_delete(cluster: ReplayServer, tmp_path: Path) -> None:
    scale = {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "spec": {"replicas": 5},
        "status": {"replicas": 3},
    }
    cluster.add("PATCH", "/apis/apps/v1/namespaces/payments/deployments/api/scale", body=scale)
    pod = item("pods_payments.json", "api-7d9f8c6b5-x2kqp")
    cluster.add("DELETE", "/api/v1/namespaces/payments/pods/api-7d9f8c6b5-x2kqp", body=pod)
    run = tools(tmp_path, cluster.url)
    assert run["k8s_scale"]("api", 5, "payments").data["replicas"] == 5
    assert cluster.requests[-1].json() == {"spec": {"replicas": 5}}
    assert run["k8s_scale"]("api", -1, "payments").status == "error"
    deleted = run["k8s_delete_pod"]("api-7d9f8c6b5-x2kqp", "payments")
    assert deleted.data["owner"] == "ReplicaSet/api-7d9f8c6b5"
    assert cluster.requests[-1].method == "DELETE"


def test_specs_and_registration() -> None:
    entries = build(Settings()).entries
    assert set(entries) == {
        "k8s_namespaces",
        "k8s_pods",
        "k8s_events",
        "k8s_logs",
        "k8s_describe",
        "k8s_rollout_history",
        "k8s_rollout_restart",
        "k8s_scale",
        "k8s_delete_pod",
    }
    assert {e.spec.category for e in entries.values()} == {"kubernetes"}
    changes = {n: (e.spec.read_only, e.spec.risk) for n, e in entries.items() if not e.spec.read_only}
    assert changes == {
        "k8s_rollout_restart": (False, "sensitive"),
        "k8s_scale": (False, "sensitive"),
        "k8s_delete_pod": (False, "destructive"),
    }
    registry = ToolRegistry()
    register(registry)
    assert "kubernetes" in registry.build(Settings())


def test_missing_client_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "kubernetes", None)
    with pytest.raises(ImportError, match=r"devops-agent\[kubernetes\]"):
        build(Settings())


# --- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "fixture", "error", "hint", "meta"),
    [
        (
            403,
            "status_forbidden.json",
            "forbidden (403): pods is forbidden",
            "kubectl auth can-i list pod",
            {"status": 403},
        ),
        (404, "status_not_found.json", "no such pod list (404)", "namespace", {"status": 404}),
        (500, None, "server error (500)", "retry", {"status": 500, "transient": True}),
        (429, None, "rate limit hit (429)", "retry", {"status": 429, "transient": True}),
    ],
)
def test_error_statuses_are_mapped(
    cluster: ReplayServer,
    tmp_path: Path,
    status: int,
    fixture: str | None,
    error: str,
    hint: str,
    meta: dict[str, Any],
) -> None:
    body = json.loads((K8S / fixture).read_text()) if fixture else {"kind": "Status", "code": status}
    cluster.add("GET", "/api/v1/namespaces/payments/pods", body=body, status=status, times=20)
    result = tools(tmp_path, cluster.url)["k8s_pods"](namespace="payments")
    assert result.status == "error"
    assert error in (result.error or "")
    assert hint in (result.hint or "")
    assert meta.items() <= result.metadata.items()


def test_missing_deployment_is_not_found(cluster: ReplayServer, tmp_path: Path) -> None:
    cluster.add(
        "GET",
        "/apis/apps/v1/namespaces/payments/deployments/nope",
        fixture="kubernetes/status_not_found.json",
        status=404,
    )
    result = tools(tmp_path, cluster.url)["k8s_describe"]("deployment", "nope", namespace="payments")
    assert result.error == 'no such deployment nope (404): deployments.apps "nope" not found'


def test_unreachable_server_and_bad_kubeconfig(tmp_path: Path) -> None:
    with ReplayServer() as srv:
        url = srv.url
    down = tools(tmp_path, url)["k8s_namespaces"]()
    assert down.status == "error"
    assert down.metadata.get("transient") is True
    missing = Settings(kubernetes=KubernetesSettings(kubeconfig=tmp_path / "nope"))
    result = toolset(missing)["k8s_namespaces"]()
    assert result.status == "error"
    assert "DEVOPS_AGENT_KUBERNETES__KUBECONFIG" in (result.hint or "")


def test_check(cluster: ReplayServer, tmp_path: Path) -> None:
    cluster.add(
        "GET",
        "/version/",
        body={"major": "1", "minor": "30", "gitVersion": "v1.30.4", "platform": "linux/amd64"},
    )
    ok, message = check(settings(tmp_path, cluster.url))
    assert ok, message
    assert "v1.30.4" in message


# --- the pod-crashloop runbook over the real tools ------------------------------------------------


def test_runbook_finds_oom_kill(cluster: ReplayServer, tmp_path: Path) -> None:
    report = run_runbook(tmp_path, cluster.url, {"pod": "api-7d9f8c6b5-x2kqp", "namespace": "payments"})
    assert [g.reason for g in report.gaps if not g.reason.startswith("skipped")] == []
    (finding,) = report.findings
    assert finding.severity == "high"
    assert "OOMKilled" in finding.title
    assert "256Mi" in finding.title
    assert any("exitCode=137" in line and "OOMKilled" in line for line in finding.evidence)
    assert any("limits {'memory': '256Mi'}" in line for line in finding.evidence)
    assert any(line.startswith("deployment api (revision 7): 2/3 ready") for line in finding.evidence)
    assert any("leak" in step for step in finding.next_steps)


def test_runbook_finds_config_error_in_previous_logs(cluster: ReplayServer, tmp_path: Path) -> None:
    inputs = {"pod": "checkout-worker-6f5d4c3b2-h8k2p", "namespace": "checkout"}
    report = run_runbook(tmp_path, cluster.url, inputs)
    (finding,) = report.findings
    assert "configuration error" in finding.title
    assert "missing required env DATABASE_URL" in finding.title
    assert any("missing required env DATABASE_URL" in line for line in finding.evidence)
    assert "OOM" not in finding.title


def test_runbook_by_selector_finds_missing_secret_and_crash(cluster: ReplayServer, tmp_path: Path) -> None:
    report = run_runbook(tmp_path, cluster.url, {"selector": "app=checkout-worker", "namespace": "checkout"})
    assert [g.reason for g in report.gaps if not g.reason.startswith("skipped")] == []
    titles = sorted(f.title for f in report.findings)
    assert len(titles) == 2
    assert all("configuration error" in t for t in titles)
    assert any("missing secret 'checkout-payment-keys'" in t for t in titles)


def test_runbook_finds_image_pull_failure(cluster: ReplayServer, tmp_path: Path) -> None:
    report = run_runbook(tmp_path, cluster.url, {"pod": "web-59c8d7b6a4-r2d9x", "namespace": "shop"})
    (finding,) = report.findings
    assert "cannot pull image registry.example.com/shop/web:2.4.1" in finding.title
    assert "does not exist" in finding.title
    assert any("rpc error: code = NotFound" in line for line in finding.evidence)
    assert "Registry said" in finding.detail


def test_k8s_tools_imported_by_name_run_through_the_pipeline(
    cluster: ReplayServer, tmp_path: Path, through_pipeline: Any
) -> None:
    """Module-level tools run through the real pipeline with the run's settings in ``ctx.deps``;
    the ranges are declared (a scale to -1 replicas or a limit of 0 is refused before any request)."""
    conf = settings(tmp_path, cluster.url)
    pods = through_pipeline(
        "k8s_pods", k8s_pods, {"namespace": "payments"}, settings=conf, spec=spec_of(k8s_pods)
    )
    assert pods.status == "success", pods
    assert (pods.data["total"], pods.data["unhealthy"]) == (3, 2)
    sent = len(cluster.requests)
    for name, fn, args, field in (
        ("k8s_pods", k8s_pods, {"namespace": "payments", "limit": 0}, "limit"),
        ("k8s_scale", k8s_scale, {"deployment": "api", "replicas": -1, "namespace": "payments"}, "replicas"),
    ):
        refused = through_pipeline(name, fn, args, settings=conf)
        assert refused.status == "error"
        assert f"{field}: Input should be greater than or equal to" in (refused.error or "")
    assert len(cluster.requests) == sent


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


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
        (Path(__file__).parents[1] / "replay/fixtures/kubernetes/events_payments.json").read_text()
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
        (Path(__file__).parents[1] / "replay/fixtures/kubernetes/events_payments.json").read_text()
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
