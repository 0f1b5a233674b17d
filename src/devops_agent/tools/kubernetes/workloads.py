"""Workloads and nodes as `kubectl describe` summarizes them: replicas, conditions, images,
resources; pressure, taints, capacity.

Pure functions over the API's objects, except :func:`owning_deployment`, which follows a pod's
owners through the API.
"""

from __future__ import annotations

from typing import Any

from devops_agent.tools.kubernetes.client import Cluster
from devops_agent.tools.kubernetes.pods import condition, resources


def conditions(obj: dict[str, Any]) -> list[dict[str, Any]]:
    keep = ("type", "status", "reason", "message", "lastTransitionTime")
    conds = (obj.get("status") or {}).get("conditions") or []
    return [{k: c[k] for k in keep if c.get(k) not in (None, "")} for c in conds]


def template_containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    pod_spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    return [
        {"name": c.get("name"), "image": c.get("image"), **resources(c)}
        for c in pod_spec.get("containers") or []
    ]


def workload_summary(obj: dict[str, Any]) -> dict[str, Any]:
    """A Deployment's or StatefulSet's replicas, conditions, images and resources."""
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    annotations = meta.get("annotations") or {}
    return {
        "kind": obj.get("kind"),
        "name": meta.get("name"),
        "namespace": meta.get("namespace"),
        "revision": annotations.get("deployment.kubernetes.io/revision"),
        "replicas": {
            "desired": spec.get("replicas"),
            "current": status.get("replicas", 0),
            "ready": status.get("readyReplicas", 0),
            "updated": status.get("updatedReplicas", 0),
            "available": status.get("availableReplicas", 0),
            "unavailable": status.get("unavailableReplicas", 0),
        },
        "selector": (spec.get("selector") or {}).get("matchLabels") or {},
        "strategy": (spec.get("strategy") or spec.get("updateStrategy") or {}).get("type"),
        "conditions": conditions(obj),
        "containers": template_containers(obj),
        "created": meta.get("creationTimestamp"),
    }


def node_summary(node: dict[str, Any]) -> dict[str, Any]:
    """A Node's readiness, pressure conditions, taints, capacity and allocatable resources."""
    meta, spec, status = node.get("metadata") or {}, node.get("spec") or {}, node.get("status") or {}
    conds = conditions(node)
    pressure = [
        c["type"] for c in conds if c.get("type", "").endswith("Pressure") and c.get("status") == "True"
    ]
    ready = condition(conds, "Ready")
    info = status.get("nodeInfo") or {}
    return {
        "kind": "Node",
        "name": meta.get("name"),
        "ready": (ready or {}).get("status") == "True",
        "pressure": pressure,
        "unschedulable": bool(spec.get("unschedulable")),
        "taints": [
            f"{t.get('key')}={t.get('value', '')}:{t.get('effect')}" for t in spec.get("taints") or []
        ],
        "conditions": conds,
        "capacity": status.get("capacity") or {},
        "allocatable": status.get("allocatable") or {},
        "kubeletVersion": info.get("kubeletVersion"),
        "osImage": info.get("osImage"),
        "created": meta.get("creationTimestamp"),
    }


def label_selector(labels: dict[str, Any]) -> str:
    """``matchLabels`` as a label selector: ``app=api,tier=web``."""
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def owning_deployment(cluster: Cluster, pod: dict[str, Any]) -> dict[str, Any] | None:
    """The pod's Deployment (pod → ReplicaSet → Deployment) summarized, or ``None``."""
    ns = (pod.get("metadata") or {}).get("namespace")
    owners = (pod.get("metadata") or {}).get("ownerReferences") or []
    rs_ref = next((o for o in owners if o.get("kind") == "ReplicaSet"), None)
    if rs_ref is None:
        return None
    rs = cluster.raw(cluster.apps.read_namespaced_replica_set, rs_ref["name"], ns)
    dep_ref = next(
        (o for o in (rs.get("metadata") or {}).get("ownerReferences") or [] if o.get("kind") == "Deployment"),
        None,
    )
    if dep_ref is None:
        return None
    return workload_summary(cluster.raw(cluster.apps.read_namespaced_deployment, dep_ref["name"], ns))
