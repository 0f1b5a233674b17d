"""Events: what the cluster said happened to an object, warnings first, newest first.

:func:`events_for` reads every page of a namespace's events (the API lists them by object name,
not by time); the rest are pure functions over the API's Event objects.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from devops_agent.tools.kubernetes.client import Cluster

EVENTS_FETCH = 500
EVENTS_PAGES = 10  # pages of EVENTS_FETCH events read at most per namespace


def event_summary(event: dict[str, Any]) -> dict[str, Any]:
    """One event: ``count`` and ``lastSeen`` come from its ``series`` when it has one.

    Events recorded through the ``events.k8s.io`` API (the scheduler's ``FailedScheduling``, for
    one) leave ``count``/``firstTimestamp``/``lastTimestamp`` empty and keep repeats in
    ``series.count`` / ``series.lastObservedTime``, after the first occurrence's ``eventTime``.
    """
    obj = event.get("involvedObject") or {}
    source = event.get("source") or {}
    series = event.get("series") or {}
    first = event.get("firstTimestamp") or event.get("eventTime")
    return {
        "type": event.get("type"),
        "reason": event.get("reason"),
        "object": f"{obj.get('kind')}/{obj.get('name')}",
        "message": (event.get("message") or "").strip(),
        "count": max(int(event.get("count") or 0), int(series.get("count") or 0), 1),
        "firstSeen": first,
        "lastSeen": series.get("lastObservedTime")
        or event.get("lastTimestamp")
        or event.get("eventTime")
        or first,
        "source": source.get("component")
        or event.get("reportingComponent")
        or event.get("reportingController"),
    }


def _when(stamp: Any) -> datetime:
    """An API timestamp (``Time`` or ``MicroTime``) as an aware datetime; missing ones sort oldest."""
    try:
        parsed = datetime.fromisoformat(str(stamp))
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def sort_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Warnings first, then newest first within each type (by time, not by text: ``MicroTime``
    stamps carry microseconds that ``Time`` stamps lack)."""
    newest = sorted(events, key=lambda e: _when(e.get("lastSeen")), reverse=True)
    return sorted(newest, key=lambda e: e.get("type") != "Warning")


# kubectl's names and short names of the kinds events are about → the kind in involvedObject.
_KINDS = {
    alias: kind
    for kind, aliases in (
        ("Pod", ("pod", "pods", "po")),
        ("Deployment", ("deployment", "deployments", "deploy")),
        ("ReplicaSet", ("replicaset", "replicasets", "rs")),
        ("StatefulSet", ("statefulset", "statefulsets", "sts")),
        ("DaemonSet", ("daemonset", "daemonsets", "ds")),
        ("Job", ("job", "jobs")),
        ("CronJob", ("cronjob", "cronjobs", "cj")),
        ("Node", ("node", "nodes", "no")),
        ("Service", ("service", "services", "svc")),
        ("Endpoints", ("endpoints", "ep")),
        ("Ingress", ("ingress", "ingresses", "ing")),
        ("ConfigMap", ("configmap", "configmaps", "cm")),
        ("Secret", ("secret", "secrets")),
        ("Namespace", ("namespace", "namespaces", "ns")),
        ("PersistentVolumeClaim", ("persistentvolumeclaim", "persistentvolumeclaims", "pvc")),
        ("PersistentVolume", ("persistentvolume", "persistentvolumes", "pv")),
        ("HorizontalPodAutoscaler", ("horizontalpodautoscaler", "horizontalpodautoscalers", "hpa")),
        ("PodDisruptionBudget", ("poddisruptionbudget", "poddisruptionbudgets", "pdb")),
    )
    for alias in aliases
}


def event_kind(kind: str) -> str:
    """The ``involvedObject.kind`` for what a user or kubectl writes: ``pod``, ``deploy``,
    ``deployment.apps`` (``kubectl get -o name``) → ``Pod``, ``Deployment``; others unchanged."""
    bare = kind.split(".", 1)[0]
    return _KINDS.get(bare.lower(), bare)


def events_for(
    cluster: Cluster, namespace: str, name: str | None = None, kind: str | None = None
) -> list[dict[str, Any]]:
    """The events of ``namespace`` (about object ``name`` of ``kind`` when given), sorted."""
    selector = ",".join(f"involvedObject.{k}={v}" for k, v in (("kind", kind), ("name", name)) if v)
    # The API lists events in key order (by object name), not by time: read every page, or
    # a busy namespace's newest warnings can be the ones left out.
    items: list[dict[str, Any]] = []
    token = None
    for _ in range(EVENTS_PAGES):
        body = cluster.raw(
            cluster.core.list_namespaced_event,
            namespace,
            field_selector=selector or None,
            limit=EVENTS_FETCH,
            _continue=token,
        )
        items += body.get("items") or []
        token = (body.get("metadata") or {}).get("continue")
        if not token:
            break
    events = [event_summary(e) for e in items]
    if name:  # the server filters already; a proxy or old server might not
        events = [e for e in events if e["object"].split("/", 1)[1] == name]
    return sort_events(events)
