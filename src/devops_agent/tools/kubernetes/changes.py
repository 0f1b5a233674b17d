"""The three ``kubernetes`` tools that change the cluster: rollout restart, scale, delete a pod.

Each is declared read_only=False, so it runs only after a person approves it; each requires the
namespace (a change is never aimed at a default). This module must not add other changes
without the same declaration.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import Field
from pydantic_ai import RunContext

from devops_agent.config.settings import KubernetesSettings
from devops_agent.deps import ToolDeps
from devops_agent.tools.base import ToolResult
from devops_agent.tools.kubernetes.client import KUBERNETES, Cluster
from devops_agent.tools.kubernetes.workloads import workload_summary


@KUBERNETES.tool(category="kubernetes", read_only=False, risk="sensitive")
def k8s_rollout_restart(ctx: RunContext[ToolDeps], deployment: str, namespace: str) -> ToolResult:
    """Restart a deployment's pods with a rolling update, like `kubectl rollout restart`.

    Args:
        deployment: the deployment name.
        namespace: the namespace (required: changes are never aimed at a default).
    """

    def run(cluster: Cluster, section: KubernetesSettings) -> ToolResult:
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        patch = {
            "spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": now}}}}
        }
        dep = cluster.raw(
            cluster.apps.patch_namespaced_deployment,
            deployment,
            namespace,
            patch,
            _content_type="application/strategic-merge-patch+json",
        )
        return ToolResult.ok({"restartedAt": now, **workload_summary(dep)}, source="kubernetes patch")

    return KUBERNETES.call(ctx.deps.settings, f"deployment {deployment}", run, verb="patch")


@KUBERNETES.tool(category="kubernetes", read_only=False, risk="sensitive")
def k8s_scale(
    ctx: RunContext[ToolDeps], deployment: str, replicas: Annotated[int, Field(ge=0, le=1000)], namespace: str
) -> ToolResult:
    """Set a deployment's replica count (its scale subresource), like `kubectl scale`.

    Args:
        deployment: the deployment name.
        replicas: the new number of replicas (0-1000; 0 stops every pod).
        namespace: the namespace (required: changes are never aimed at a default).
    """

    def run(cluster: Cluster, section: KubernetesSettings) -> ToolResult:
        scale = cluster.raw(
            cluster.apps.patch_namespaced_deployment_scale,
            deployment,
            namespace,
            {"spec": {"replicas": replicas}},
            _content_type="application/merge-patch+json",
        )
        data = {
            "deployment": deployment,
            "namespace": namespace,
            "replicas": (scale.get("spec") or {}).get("replicas"),
            "current": (scale.get("status") or {}).get("replicas"),
        }
        return ToolResult.ok(data, source="kubernetes scale")

    return KUBERNETES.call(ctx.deps.settings, f"deployment {deployment}", run, verb="patch")


@KUBERNETES.tool(category="kubernetes", read_only=False, risk="destructive")
def k8s_delete_pod(ctx: RunContext[ToolDeps], pod: str, namespace: str) -> ToolResult:
    """Delete one pod (its controller, if any, creates a replacement), like `kubectl delete pod`.

    Args:
        pod: the pod name.
        namespace: the namespace (required: changes are never aimed at a default).
    """

    def run(cluster: Cluster, section: KubernetesSettings) -> ToolResult:
        body = cluster.raw(cluster.core.delete_namespaced_pod, pod, namespace)
        owner = next(iter((body.get("metadata") or {}).get("ownerReferences") or []), None)
        data = {
            "pod": pod,
            "namespace": namespace,
            "deleted": True,
            "owner": f"{owner.get('kind')}/{owner.get('name')}" if owner else None,
        }
        return ToolResult.ok(data, source="kubernetes delete")

    return KUBERNETES.call(ctx.deps.settings, f"pod {pod}", run, verb="delete")
