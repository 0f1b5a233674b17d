"""Review of the ``pod_crashloop`` analyzer and the ``pod-crashloop`` runbook for pods that fail in an
init container or never start: the runbook run over the real ``kubernetes`` client against the
replay server (``fixtures_kubernetes``),
each case a defect that was fixed."""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("kubernetes")

from fixtures_kubernetes import PAYMENTS, init_crashloop_pod, item, run_runbook, status, tools  # noqa: E402
from fixtures_replay import ReplayServer  # noqa: E402

MIGRATE_LOG = 'applying migration 0042_add_ledger_index\nERROR: relation "ledger" does not exist\n'


def event(pod: str, reason: str, message: str, kind: str = "Warning", count: int = 1) -> dict[str, Any]:
    """A core/v1 Event about ``pod`` in the payments namespace, as the kubelet records it."""
    return {
        "metadata": {"name": f"{pod}.{reason.lower()}", "namespace": "payments"},
        "involvedObject": {"kind": "Pod", "namespace": "payments", "name": pod, "apiVersion": "v1"},
        "reason": reason,
        "message": message,
        "source": {"component": "kubelet", "host": "worker-2"},
        "firstTimestamp": "2026-03-14T09:40:00Z",
        "lastTimestamp": "2026-03-14T09:44:00Z",
        "count": count,
        "type": kind,
    }


def serve_pod(cluster: ReplayServer, pod: dict[str, Any], events: list[dict[str, Any]]) -> str:
    """Answer the payments pod list, the pod and the namespace's events with ``pod``; its name."""
    name: str = pod["metadata"]["name"]
    cluster.add("GET", f"{PAYMENTS}/pods", body={"kind": "PodList", "items": [pod]}, times=10)
    cluster.add("GET", f"{PAYMENTS}/pods/{name}", body=pod, times=10)
    cluster.add("GET", f"{PAYMENTS}/events", body={"kind": "EventList", "items": events}, times=10)
    return name


def suggested_call(steps: list[str], tool: str) -> dict[str, Any]:
    """The keyword arguments of the ``tool(...)`` call a next step suggests."""
    found = next(m for s in steps if (m := re.search(rf"{tool}\((.*?)\)", s)))
    call = ast.parse(f"f({found.group(1)})", mode="eval").body
    assert isinstance(call, ast.Call)
    return {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}


def never_restarting_init_pod() -> dict[str, Any]:
    """A ``restartPolicy: Never`` pod whose ``migrate`` init container exited 1 on its first run."""
    pod = init_crashloop_pod()
    pod["spec"]["restartPolicy"] = "Never"
    migrate = pod["status"]["initContainerStatuses"][0]
    migrate.update(
        restartCount=0,
        state={
            "terminated": {
                "exitCode": 1,
                "reason": "Error",
                "startedAt": "2026-03-14T09:40:00Z",
                "finishedAt": "2026-03-14T09:40:03Z",
            }
        },
        lastState={},
    )
    return pod


# --- the failing container ------------------------------------------------------------------------


def test_init_container_failing_on_its_first_run_is_the_one_described(
    cluster: ReplayServer, tmp_path: Path
) -> None:
    # Both containers have 0 restarts and neither is ready: the init container that failed, not
    # the app container waiting for it (PodInitializing), is what the finding must describe.
    pod = never_restarting_init_pod()
    name = serve_pod(cluster, pod, [])
    log = f"{PAYMENTS}/pods/{name}/log"
    no_previous = status(400, f'previous terminated container "migrate" in pod "{name}" not found')
    migrate = {"container": "migrate"}
    cluster.add("GET", log, body=no_previous, status=400, query=migrate | {"previous": "true"}, times=5)
    cluster.add("GET", log, body=MIGRATE_LOG, query=migrate | {"previous": "false"}, times=5)
    report = run_runbook(tmp_path, cluster.url, {"pod": name, "namespace": "payments"})
    assert [g.reason for g in report.gaps if not g.reason.startswith("skipped")] == []
    (finding,) = report.findings
    described = [line for line in finding.evidence if " image " in line]
    assert described == [f"init container migrate image {pod['spec']['initContainers'][0]['image']}"]
    assert "migrate" in finding.title
    assert "exit code 1" in finding.title
    assert any("state: terminated" in line and "exitCode=1" in line for line in finding.evidence)
    # The log read is the current (and only) instance's: it is not labelled a previous log.
    assert 'log: ERROR: relation "ledger" does not exist' in finding.evidence
    assert not any(line.startswith("previous log:") for line in finding.evidence)


# --- Init: reasons --------------------------------------------------------------------------------


def test_failing_init_container_is_its_own_cause_pointing_at_its_log(
    cluster: ReplayServer, tmp_path: Path
) -> None:
    pod = init_crashloop_pod()  # Init:CrashLoopBackOff, migrate restarted 4 times, last exit 1
    back_off = event(
        pod["metadata"]["name"],
        "BackOff",
        f"Back-off restarting failed container migrate in pod {pod['metadata']['name']}_payments",
        count=4,
    )
    name = serve_pod(cluster, pod, [back_off])
    cluster.add(
        "GET",
        f"{PAYMENTS}/pods/{name}/log",
        body=MIGRATE_LOG,
        query={"container": "migrate", "previous": "true"},
        times=5,
    )
    report = run_runbook(tmp_path, cluster.url, {"pod": name, "namespace": "payments"})
    (finding,) = report.findings
    assert finding.severity == "high"
    assert "Init:CrashLoopBackOff" in finding.title
    assert "init container migrate fails" in finding.title
    assert "last exit code 1" in finding.title
    assert "init container" in finding.detail.lower()
    assert any("lastState: terminated" in line and "exitCode=1" in line for line in finding.evidence)
    assert any("Back-off restarting failed container migrate" in line for line in finding.evidence)
    # The suggested log call names the init container, and reading it gives the init container's log.
    args = suggested_call(finding.next_steps, "k8s_logs")
    assert args == {"pod": name, "namespace": "payments", "container": "migrate", "previous": True}
    read = tools(tmp_path, cluster.url)["k8s_logs"](**args)
    assert read.status == "success", read
    assert 'relation "ledger" does not exist' in read.data["text"]


def test_init_container_still_running_is_not_completed_yet(cluster: ReplayServer, tmp_path: Path) -> None:
    # `until nc -z db 5432; do sleep 2; done`: Init:0/1, nothing has failed, the pod only waits.
    pod = init_crashloop_pod()
    pod["spec"]["initContainers"][0]["name"] = "wait-db"
    pod["status"]["initContainerStatuses"][0].update(
        name="wait-db",
        restartCount=0,
        state={"running": {"startedAt": "2026-03-14T09:40:00Z"}},
        lastState={},
    )
    name = serve_pod(cluster, pod, [])
    log = f"{PAYMENTS}/pods/{name}/log"
    waiting = status(400, f'container "api" in pod "{name}" is waiting to start: PodInitializing')
    cluster.add("GET", log, body=waiting, status=400, query={"container": "api"}, times=5)
    cluster.add("GET", log, body="waiting for db:5432\n", query={"container": "wait-db"}, times=5)
    report = run_runbook(tmp_path, cluster.url, {"pod": name, "namespace": "payments"})
    (finding,) = report.findings
    assert "Init:0/1" in finding.title
    assert "init container wait-db has not completed" in finding.title
    assert finding.severity == "medium"
    assert any(line.startswith("init container wait-db image") for line in finding.evidence)
    args = suggested_call(finding.next_steps, "k8s_logs")
    assert args == {"pod": name, "namespace": "payments", "container": "wait-db"}  # the running instance
    read = tools(tmp_path, cluster.url)["k8s_logs"](**args)
    assert read.data["text"] == "waiting for db:5432\n"


# --- containers that never started ----------------------------------------------------------------


def test_container_that_never_started_is_pointed_at_describe_and_events(
    cluster: ReplayServer, tmp_path: Path
) -> None:
    # Stuck in ContainerCreating (the CNI plugin cannot set up the sandbox): no instance ever ran,
    # so there is no log, previous or current, to read.
    pod = copy.deepcopy(item("pods_payments.json", "api-7d9f8c6b5-x2kqp"))
    pod["status"]["phase"] = "Pending"
    pod["status"]["containerStatuses"][0].update(
        restartCount=0, state={"waiting": {"reason": "ContainerCreating"}}, lastState={}
    )
    pod_name = pod["metadata"]["name"]
    sandbox = event(
        pod_name,
        "FailedCreatePodSandBox",
        "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for "
        'sandbox "3f2a9c": plugin type="calico" failed (add): connection is unauthorized: Unauthorized',
        count=12,
    )
    name = serve_pod(cluster, pod, [sandbox])
    waiting = status(400, f'container "api" in pod "{name}" is waiting to start: ContainerCreating')
    cluster.add("GET", f"{PAYMENTS}/pods/{name}/log", body=waiting, status=400, times=5)
    report = run_runbook(tmp_path, cluster.url, {"pod": name, "namespace": "payments"})
    (finding,) = report.findings
    assert "ContainerCreating" in finding.title
    assert any("FailedCreatePodSandBox" in line for line in finding.evidence)
    assert not any("k8s_logs" in step for step in finding.next_steps)
    assert "never started" in finding.next_steps[0]
    assert suggested_call(finding.next_steps, "k8s_describe") == {
        "kind": "pod",
        "name": name,
        "namespace": "payments",
    }
    assert suggested_call(finding.next_steps, "k8s_events") == {
        "namespace": "payments",
        "involved_object": name,
    }


# --- the runbook by selector ----------------------------------------------------------------------


def test_events_by_selector_are_the_namespace_s_and_quoted_for_the_pods_found(
    cluster: ReplayServer, tmp_path: Path
) -> None:
    # No pod name: the events step must not filter on an empty name; the analyzer picks each failing
    # pod's events (the pods k8s_pods found by selector) out of the namespace's.
    report = run_runbook(tmp_path, cluster.url, {"selector": "app=checkout-worker", "namespace": "checkout"})
    (sent,) = cluster.requests_to("/api/v1/namespaces/checkout/events")
    assert "fieldSelector" not in sent.query
    by_pod = {f.title.split()[1]: f for f in report.findings}
    assert sorted(by_pod) == ["checkout-worker-6f5d4c3b2-h8k2p", "checkout-worker-84b9c7d6f-zz5mv"]
    quoted = [
        line for line in by_pod["checkout-worker-84b9c7d6f-zz5mv"].evidence if line.startswith("event ")
    ]
    assert len(quoted) == 1
    assert 'secret "checkout-payment-keys" not found' in quoted[0]  # read from the namespace's events


def test_pods_it_did_not_see_are_not_reported_as_no_failing_pods() -> None:
    """A listing that held no pod (a wrong namespace, a replay it could not read) is no claim that
    none is failing: what it read (0 pods) makes the report's verdict inconclusive instead."""
    from devops_agent.report import Checked, Finding
    from devops_agent.runbooks.analyzers import ANALYZERS
    from devops_agent.tools.base import ToolResult

    listed = ToolResult.ok({"pods": []})
    listed.metadata.update(tool="k8s_pods", step="pods")
    items = ANALYZERS["pod_crashloop"]({"pods": listed}, {}, {"pod": "api-7d9"})
    assert not [i for i in items if isinstance(i, Finding)]
    (read,) = [i for i in items if isinstance(i, Checked)]
    assert read.read == 0
