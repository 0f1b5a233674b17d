"""The Kubernetes toolset and the pod-crashloop runbook: the real ``kubernetes`` client, configured from
a kubeconfig, over HTTP against a replay server of responses in the API reference's shapes."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("kubernetes")

import devops_agent.runbooks.analyzers.kubernetes  # noqa: E402,F401  (registers pod_crashloop)
from devops_agent.config import Settings  # noqa: E402
from devops_agent.config.settings import KubernetesSettings  # noqa: E402
from devops_agent.runbooks import load_runbook_file, run_runbooks  # noqa: E402
from devops_agent.tools.base import ToolResult, call_directly, spec_of  # noqa: E402
from devops_agent.tools.kubernetes import build, check, k8s_pods, k8s_scale, register  # noqa: E402
from devops_agent.tools.registry import ToolRegistry  # noqa: E402
from replay.server import FIXTURES, ReplayServer, _Handler  # noqa: E402

TOKEN = "eyJhbGciOiJSUzI1NiJ9.devops-agent-test-token"
RUNBOOK = Path(devops_agent.runbooks.analyzers.kubernetes.__file__).parents[1] / "data" / "pod-crashloop.yaml"
K8S = FIXTURES / "kubernetes"


def kubeconfig(tmp_path: Path, url: str, token: str = TOKEN) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "replay", "cluster": {"server": url}}],
                "users": [{"name": "agent", "user": {"token": token}}],
                "contexts": [
                    {"name": "other", "context": {"cluster": "replay", "user": "nobody"}},
                    {"name": "replay", "context": {"cluster": "replay", "user": "agent", "namespace": "x"}},
                ],
                "current-context": "other",
            }
        )
    )
    return path


def item(fixture: str, name: str) -> dict[str, Any]:
    items = json.loads((K8S / fixture).read_text())["items"]
    found: dict[str, Any] = next(i for i in items if i["metadata"]["name"] == name)
    return found


class _PatchHandler(_Handler):
    do_PATCH = _Handler._serve  # kubectl-style changes are PATCH requests


class K8sReplay(ReplayServer):
    """The replay server answering PATCH too (until server.py routes it itself)."""

    def start(self) -> ReplayServer:
        import http.server

        handler = type("Handler", (_PatchHandler,), {"replay": self})
        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="replay-server", daemon=True)
        self._thread.start()
        return self


@pytest.fixture(scope="module")
def server() -> Iterator[ReplayServer]:
    with K8sReplay() as srv:
        yield srv


@pytest.fixture
def cluster(server: ReplayServer) -> ReplayServer:
    server.reset()
    server.add("GET", "/api/v1/namespaces", fixture="kubernetes/namespaces.json")
    server.add("GET", "/api/v1/nodes/worker-2", fixture="kubernetes/node_worker-2.json")
    server.add("GET", "/api/v1/namespaces/default/events", body={"kind": "EventList", "items": []})
    for ns, dep in (("payments", "api"), ("checkout", "checkout-worker"), ("shop", "web")):
        server.add("GET", f"/api/v1/namespaces/{ns}/pods", fixture=f"kubernetes/pods_{ns}.json")
        server.add("GET", f"/api/v1/namespaces/{ns}/events", fixture=f"kubernetes/events_{ns}.json")
        server.add(
            "GET", f"/apis/apps/v1/namespaces/{ns}/replicasets", fixture=f"kubernetes/replicasets_{ns}.json"
        )
        server.add(
            "GET",
            f"/apis/apps/v1/namespaces/{ns}/deployments/{dep}",
            fixture=f"kubernetes/deployment_{ns}_{dep.replace('checkout-', '')}.json",
        )
        for pod in json.loads((K8S / f"pods_{ns}.json").read_text())["items"]:
            name = pod["metadata"]["name"]
            server.add("GET", f"/api/v1/namespaces/{ns}/pods/{name}", body=pod)
        for rs in json.loads((K8S / f"replicasets_{ns}.json").read_text())["items"]:
            server.add("GET", f"/apis/apps/v1/namespaces/{ns}/replicasets/{rs['metadata']['name']}", body=rs)
    server.add(
        "GET",
        "/api/v1/namespaces/payments/pods/api-7d9f8c6b5-x2kqp/log",
        fixture="kubernetes/logs_payments_api_previous.txt",
        query={"previous": "true"},
    )
    server.add(
        "GET",
        "/api/v1/namespaces/checkout/pods/checkout-worker-6f5d4c3b2-h8k2p/log",
        fixture="kubernetes/logs_checkout_previous.txt",
        query={"previous": "true"},
    )
    return server


def settings(tmp_path: Path, url: str, **conf: Any) -> Settings:
    conf.setdefault("context", "replay")
    return Settings(kubernetes=KubernetesSettings(kubeconfig=kubeconfig(tmp_path, url), **conf))


def toolset(settings: Settings) -> dict[str, Any]:
    """The toolset's tools by name, each called as a CLI command would call it (``call_directly``)."""
    return {name: partial(call_directly, e.function, settings) for name, e in build(settings).entries.items()}


def tools(tmp_path: Path, url: str, **conf: Any) -> dict[str, Any]:
    return toolset(settings(tmp_path, url, **conf))


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
    )
    cluster.routes[("GET", "/api/v1/namespaces/payments/pods")].reverse()
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
    data = tools(tmp_path, cluster.url)["k8s_rollout_history"]("api", namespace="payments").data
    assert [r["revision"] for r in data["revisions"]] == [7, 6, 5]
    assert data["revisions"][1]["images"] == ["registry.example.com/payments/api:3.8.1"]
    assert data["current"] == "7"
    assert cluster.requests[-1].query["labelSelector"] == ["app=api"]


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


def run_runbook(tmp_path: Path, url: str, inputs: dict[str, Any]) -> Any:
    called = toolset(settings(tmp_path, url))

    async def call_tool(name: str, args: dict[str, Any]) -> ToolResult:
        out: ToolResult = await asyncio.to_thread(called[name], **args)
        return out

    book = load_runbook_file(RUNBOOK)
    return asyncio.run(run_runbooks([book], inputs, call_tool, lambda e: None, max_parallel=2))


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
