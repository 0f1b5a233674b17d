"""The ``kubernetes`` toolset: pods, events, logs, describe-like summaries and rollout history, plus
three changes (rollout restart, scale, delete a pod), through the official ``kubernetes`` client.

- :mod:`.client` — kubeconfig and context, the client, how its failures read (the
  :class:`Kubernetes` integration);
- :mod:`.pods`, :mod:`.events`, :mod:`.workloads` — the API's objects summarized for triage;
- :mod:`.reads` — the tools that read; :mod:`.changes` — the three that change the cluster
  (read_only=False, through approval).

``build``, ``check`` and ``register`` are the toolset's entry points (``pyproject.toml``'s
``devops_agent.toolsets`` group, ``devops-agent doctor``).
"""

from devops_agent.tools.kubernetes.changes import k8s_delete_pod, k8s_rollout_restart, k8s_scale
from devops_agent.tools.kubernetes.client import (
    DESCRIPTION,
    KUBERNETES,
    NAME,
    Cluster,
    Kubernetes,
    new_client,
)
from devops_agent.tools.kubernetes.events import event_kind, event_summary, events_for, sort_events
from devops_agent.tools.kubernetes.pods import crashing_container, pod_reason, pod_summary
from devops_agent.tools.kubernetes.reads import (
    DescribeKind,
    k8s_describe,
    k8s_events,
    k8s_logs,
    k8s_namespaces,
    k8s_pods,
    k8s_rollout_history,
)
from devops_agent.tools.kubernetes.workloads import node_summary, owning_deployment, workload_summary

build = KUBERNETES.build
check = KUBERNETES.check
register = KUBERNETES.register

__all__ = [
    "DESCRIPTION",
    "KUBERNETES",
    "NAME",
    "Cluster",
    "DescribeKind",
    "Kubernetes",
    "build",
    "check",
    "crashing_container",
    "event_kind",
    "event_summary",
    "events_for",
    "k8s_delete_pod",
    "k8s_describe",
    "k8s_events",
    "k8s_logs",
    "k8s_namespaces",
    "k8s_pods",
    "k8s_rollout_history",
    "k8s_rollout_restart",
    "k8s_scale",
    "new_client",
    "node_summary",
    "owning_deployment",
    "pod_reason",
    "pod_summary",
    "register",
    "sort_events",
    "workload_summary",
]
