"""The ``kubernetes`` tools that read: namespaces, pods, events, logs, describe, rollout history.

Each is a module-level function taking the run's ``ctx`` (its settings) and hands its body to
:data:`~devops_agent.tools.kubernetes.client.KUBERNETES`, which opens and closes the client and
maps its failures. A long log is condensed by :func:`devops_agent.analysis.logsummary.summarize_log`. Nothing
here changes the cluster (see :mod:`.changes` for what does).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from pydantic_ai import RunContext

from devops_agent.analysis.logsummary import summarize_log
from devops_agent.config.settings import KubernetesSettings
from devops_agent.deps import ToolDeps
from devops_agent.tools.base import ToolResult
from devops_agent.tools.evidence import rollout_evidence, summary_evidence
from devops_agent.tools.kubernetes.client import KUBERNETES, Cluster, _api_message
from devops_agent.tools.kubernetes.events import EVENTS_FETCH, event_kind, events_for
from devops_agent.tools.kubernetes.pods import crashing_container, pod_summary
from devops_agent.tools.kubernetes.workloads import (
    conditions,
    label_selector,
    node_summary,
    owning_deployment,
    template_containers,
    workload_summary,
)

LOG_MAX_BYTES = 1_000_000
DescribeKind = Literal["deployment", "statefulset", "node", "pod"]


@KUBERNETES.tool(category="kubernetes", read_only=True)
def k8s_namespaces(ctx: RunContext[ToolDeps]) -> ToolResult:
    """List the cluster's namespaces with their phase (Active/Terminating) and age."""

    def run(cluster: Cluster, section: KubernetesSettings) -> ToolResult:
        body = cluster.raw(cluster.core.list_namespace)
        items = [
            {
                "name": (n.get("metadata") or {}).get("name"),
                "phase": (n.get("status") or {}).get("phase"),
                "created": (n.get("metadata") or {}).get("creationTimestamp"),
            }
            for n in body.get("items") or []
        ]
        return ToolResult.ok({"namespaces": items}, source="kubernetes namespaces")

    return KUBERNETES.call(ctx.deps.settings, "namespace list", run, verb="list")


@KUBERNETES.tool(category="kubernetes", read_only=True)
def k8s_pods(
    ctx: RunContext[ToolDeps],
    namespace: str | None = None,
    selector: str | None = None,
    limit: Annotated[int, Field(ge=1, le=1000)] = 100,
) -> ToolResult:
    """List pods with phase, ready x/y, restarts and why each unhealthy one is failing.

    The reason is what `kubectl get pods` shows (CrashLoopBackOff, ImagePullBackOff,
    CreateContainerConfigError, the scheduler's message for Pending pods), and
    lastTermination holds the previous crash (e.g. OOMKilled, exit code 137).

    Args:
        namespace: the namespace (default: the configured one); "all" lists every namespace.
        selector: a label selector such as "app=api,tier!=cache".
        limit: most pods to return (1-1000); unhealthy pods come first.
    """

    def run(cluster: Cluster, section: KubernetesSettings) -> ToolResult:
        ns = namespace or section.namespace
        if ns == "all":
            body = cluster.raw(cluster.core.list_pod_for_all_namespaces, label_selector=selector or None)
        else:
            body = cluster.raw(cluster.core.list_namespaced_pod, ns, label_selector=selector or None)
        pods = [pod_summary(p) for p in body.get("items") or []]
        if not pods:
            where = "any namespace" if ns == "all" else f"namespace {ns}"
            return ToolResult.empty(f"no pods in {where}" + (f" match {selector!r}" if selector else ""))
        pods.sort(key=lambda p: (p["reason"] is None, -p["restarts"]))
        unhealthy = sum(p["reason"] is not None for p in pods)
        data = {
            "namespace": ns,
            "selector": selector,
            "total": len(pods),
            "unhealthy": unhealthy,
            "pods": pods[:limit],
            "truncated": len(pods) > limit,
        }
        return ToolResult.ok(data, source="kubernetes pods")

    return KUBERNETES.call(ctx.deps.settings, "pod list", run, verb="list")


@KUBERNETES.tool(category="kubernetes", read_only=True)
def k8s_events(
    ctx: RunContext[ToolDeps],
    namespace: str | None = None,
    involved_object: str | None = None,
    limit: Annotated[int, Field(ge=1, le=EVENTS_FETCH)] = 50,
) -> ToolResult:
    """List a namespace's events, warnings first, then newest first.

    Args:
        namespace: the namespace (default: the configured one).
        involved_object: only events about this object: a name ("api-7d9f8c6b5-x2kqp") or
            "Kind/name" ("Deployment/api"; kubectl's "deploy/api", "deployment.apps/api" work too).
        limit: most events to return (1-500).
    """

    def run(cluster: Cluster, section: KubernetesSettings) -> ToolResult:
        kind, _, name = (involved_object or "").strip().rpartition("/")
        kind = event_kind(kind) if kind else ""
        # The kubelet records a node's events in the default namespace.
        ns = namespace or ("default" if kind == "Node" else section.namespace)
        events = events_for(cluster, ns, name or None, kind or None)
        if not events:
            about = f" about {involved_object}" if involved_object else ""
            return ToolResult.empty(f"no events{about} in namespace {ns} (events expire after about an hour)")
        warnings = sum(e["type"] == "Warning" for e in events)
        data = {"namespace": ns, "total": len(events), "warnings": warnings, "events": events[:limit]}
        return ToolResult.ok(data, source="kubernetes events")

    return KUBERNETES.call(ctx.deps.settings, "event list", run, verb="list")


@KUBERNETES.tool(category="kubernetes", read_only=True)
def k8s_logs(
    ctx: RunContext[ToolDeps],
    pod: str,
    namespace: str | None = None,
    container: str | None = None,
    previous: bool = False,
    tail_lines: Annotated[int, Field(ge=1, le=5000)] = 200,
    selector: str | None = None,
    summarize: bool = True,
) -> ToolResult:
    """Read the last lines of a pod container's log; previous=True reads the crashed instance's log.

    Without a container the failing one is picked (an init container included; most restarts
    first). With an empty pod and a selector, the matching pod with the most restarts is read.
    previous=True for a container that has not restarted returns the current log (previous:
    false in the result); a container that never started has no log (no_data, with why).

    Args:
        pod: the pod name ("" to pick one by selector).
        namespace: the namespace (default: the configured one).
        container: the container name (default: the failing or only container).
        previous: read the log of the previous, terminated instance (after a crash).
        tail_lines: how many of the last lines to return (1-5000).
        selector: a label selector used when pod is empty.
        summarize: more than 400 lines come back as error signatures, templates and the last
            lines instead of `text` (the full log is kept for the user).
    """

    def run(cluster: Cluster, section: KubernetesSettings) -> ToolResult:
        ns = namespace or section.namespace
        name, chosen = pod, container
        if not name:
            if not selector:
                return ToolResult.fail("no pod named", "pass pod, or a selector to pick one")
            body = cluster.raw(cluster.core.list_namespaced_pod, ns, label_selector=selector)
            items = sorted(body.get("items") or [], key=lambda p: -pod_summary(p)["restarts"])
            if not items:
                return ToolResult.empty(f"no pods in namespace {ns} match {selector!r}")
            name = items[0]["metadata"]["name"]
            chosen = chosen or crashing_container(items[0])
        elif not chosen:
            chosen = crashing_container(cluster.raw(cluster.core.read_namespaced_pod, name, ns))
        k8s = KUBERNETES.client_module()

        def read(prev: bool) -> str:
            text: str = cluster.raw(
                cluster.core.read_namespaced_pod_log,
                name,
                ns,
                container=chosen,
                previous=prev,
                tail_lines=tail_lines,
                limit_bytes=LOG_MAX_BYTES,
            )
            return text

        # The API answers 400 when there is no such log: no previous instance (the container
        # has not restarted), or a container that has never started (image pull, init).
        used, note = previous, None
        try:
            text = read(previous)
        except k8s.client.ApiException as exc:
            said = _api_message(exc.body)
            if exc.status != 400:
                raise
            if not (previous and "previous terminated container" in said):
                return _no_log(name, chosen, said)
            used, note = False, f"no previous instance ({said}); this is the current instance's log"
            try:
                text = read(False)
            except k8s.client.ApiException as again:
                if again.status != 400:
                    raise
                return _no_log(name, chosen, _api_message(again.body))
        lines = text.splitlines()
        data = {
            "pod": name,
            "namespace": ns,
            "container": chosen,
            "previous": used,
            "lines": len(lines),
            "text": text,
        }
        if note:
            data["note"] = note
        if not text.strip():
            return ToolResult.empty(
                f"the log of {name}/{chosen} is empty", **{k: data[k] for k in ("pod", "container")}
            )
        summary = summarize_log(text, f"{ns}/{name}/{chosen}") if summarize else None
        if summary is None:
            return ToolResult.ok(data, source="kubernetes logs")
        del data["text"]
        return (
            ToolResult.ok(data | summary, source="kubernetes logs")
            .with_raw(text)
            .with_evidence(summary_evidence(summary))
        )

    return KUBERNETES.call(ctx.deps.settings, f"pod {pod or selector}", run, verb="get")


@KUBERNETES.tool(category="kubernetes", read_only=True)
def k8s_describe(
    ctx: RunContext[ToolDeps], kind: DescribeKind, name: str, namespace: str | None = None
) -> ToolResult:
    """A `kubectl describe`-like summary of a deployment, statefulset, node or pod, with recent events.

    Deployments/statefulsets: replicas (desired/ready/updated/available), conditions, images,
    resources. Nodes: conditions, pressure, taints, capacity and allocatable. Pods: the
    status summary of k8s_pods plus conditions and the owning Deployment (through its ReplicaSet).

    Args:
        kind: deployment, statefulset, node or pod.
        name: the object's name.
        namespace: the namespace (default: the configured one; ignored for nodes).
    """

    def run(cluster: Cluster, section: KubernetesSettings) -> ToolResult:
        ns = namespace or section.namespace
        if kind == "node":
            data = node_summary(cluster.raw(cluster.core.read_node, name))
            return ToolResult.ok({**data, "events": events_for(cluster, "default", name, "Node")[:20]})
        if kind == "deployment":
            data = workload_summary(cluster.raw(cluster.apps.read_namespaced_deployment, name, ns))
        elif kind == "statefulset":
            data = workload_summary(cluster.raw(cluster.apps.read_namespaced_stateful_set, name, ns))
        elif kind == "pod":
            obj = cluster.raw(cluster.core.read_namespaced_pod, name, ns)
            data = {"kind": "Pod", **pod_summary(obj), "conditions": conditions(obj)}
            data["deployment"] = owning_deployment(cluster, obj)
        else:
            return ToolResult.fail(
                f"cannot describe kind {kind!r}", "use deployment, statefulset, node or pod"
            )
        data["events"] = events_for(cluster, ns, name)[:20]
        return ToolResult.ok(data, source=f"kubernetes describe {kind}")

    return KUBERNETES.call(ctx.deps.settings, f"{kind} {name}", run, verb="get")


@KUBERNETES.tool(category="kubernetes", read_only=True)
def k8s_rollout_history(
    ctx: RunContext[ToolDeps], deployment: str, namespace: str | None = None
) -> ToolResult:
    """A deployment's revisions (its ReplicaSets), newest first: revision, images, replicas, created.

    Args:
        deployment: the deployment name.
        namespace: the namespace (default: the configured one).
    """

    def run(cluster: Cluster, section: KubernetesSettings) -> ToolResult:
        ns = namespace or section.namespace
        dep = cluster.raw(cluster.apps.read_namespaced_deployment, deployment, ns)
        labels = ((dep.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        body = cluster.raw(
            cluster.apps.list_namespaced_replica_set, ns, label_selector=label_selector(labels) or None
        )
        uid = (dep.get("metadata") or {}).get("uid")
        revisions = []
        for rs in body.get("items") or []:
            meta = rs.get("metadata") or {}
            if uid and not any(o.get("uid") == uid for o in meta.get("ownerReferences") or []):
                continue
            annotations = meta.get("annotations") or {}
            revisions.append(
                {
                    "revision": int(annotations.get("deployment.kubernetes.io/revision") or 0),
                    "replicaset": meta.get("name"),
                    "images": [c["image"] for c in template_containers(rs)],
                    "replicas": (rs.get("spec") or {}).get("replicas", 0),
                    "ready": (rs.get("status") or {}).get("readyReplicas", 0),
                    "created": meta.get("creationTimestamp"),
                    "changeCause": annotations.get("kubernetes.io/change-cause"),
                }
            )
        revisions.sort(key=lambda r: -r["revision"])
        current = ((dep.get("metadata") or {}).get("annotations") or {}).get(
            "deployment.kubernetes.io/revision"
        )
        data = {"deployment": deployment, "namespace": ns, "current": current, "revisions": revisions}
        return ToolResult.ok(data, source="kubernetes replicasets").with_evidence(
            rollout_evidence(deployment, revisions)
        )

    return KUBERNETES.call(ctx.deps.settings, f"deployment {deployment}", run, verb="list")


def _no_log(pod: str, container: str | None, said: str) -> ToolResult:
    """The answer when the API has no log to give (its 400), with where to look instead."""
    return ToolResult.empty(
        f"no log for {pod}/{container}: {said or 'the API server has none'}; a container that never "
        "started has none: k8s_describe(kind='pod') and k8s_events say why it is waiting",
        pod=pod,
        container=container,
    )
