"""A Kubernetes API server for tests: the replay server (pytest-httpserver, ``fixtures_replay``)
answering the API reference's shapes (``tests/replay/fixtures/kubernetes``), and the real
``kubernetes`` client configured for it.

* ``k8s_server`` (module scope) and ``cluster`` (the server loaded with the cluster's pods, events,
  replica sets, deployments and previous logs) are fixtures.
* :func:`kubeconfig`, :func:`settings`, :func:`tools` and :func:`run_runbook` build what a test
  calls the toolset or the pod-crashloop runbook with; :func:`item` reads one object of a fixture.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

import devops_agent.runbooks.analyzers.kubernetes  # noqa: F401  (registers pod_crashloop)
from devops_agent.config import Settings
from devops_agent.config.settings import KubernetesSettings
from devops_agent.runbooks import load_runbook_file, run_runbooks
from devops_agent.tools.base import ToolResult, call_directly
from devops_agent.tools.kubernetes import build
from fixtures_replay import FIXTURES, ReplayServer

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


@pytest.fixture(scope="module")
def k8s_server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


@pytest.fixture
def cluster(k8s_server: ReplayServer) -> ReplayServer:
    server = k8s_server
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


def run_runbook(tmp_path: Path, url: str, inputs: dict[str, Any]) -> Any:
    called = toolset(settings(tmp_path, url))

    async def call_tool(name: str, args: dict[str, Any]) -> ToolResult:
        out: ToolResult = await asyncio.to_thread(called[name], **args)
        return out

    book = load_runbook_file(RUNBOOK)
    return asyncio.run(run_runbooks([book], inputs, call_tool, lambda e: None, max_parallel=2))


PAYMENTS = "/api/v1/namespaces/payments"


def status(code: int, message: str, reason: str = "BadRequest") -> dict[str, Any]:
    """A Kubernetes ``Status`` error body, as the API server sends it."""
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "reason": reason}


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
