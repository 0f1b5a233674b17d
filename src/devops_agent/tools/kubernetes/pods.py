"""Pods as `kubectl get pods` sees them: phase, ready x/y, restarts, and why an unhealthy one fails.

Pure functions over the API's Pod objects, in its own field names: this module must not talk to
the API server.
"""

from __future__ import annotations

from typing import Any

from devops_agent.analysis.k8s_status import container_failing

# Waiting reasons that say why a container cannot run, worst first; ContainerCreating is normal.
_WAITING_BAD = (
    "CreateContainerConfigError",
    "CreateContainerError",
    "InvalidImageName",
    "ErrImagePull",
    "ImagePullBackOff",
    "CrashLoopBackOff",
    "RunContainerError",
)


def _container_state(state: dict[str, Any] | None) -> dict[str, Any] | None:
    """``{"state": "waiting", "reason": ..., ...}`` from a ContainerState object."""
    for name in ("waiting", "terminated", "running"):
        inner = (state or {}).get(name)
        if isinstance(inner, dict):
            keep = ("reason", "message", "exitCode", "signal", "startedAt", "finishedAt")
            return {"state": name, **{k: inner[k] for k in keep if inner.get(k) not in (None, "")}}
    return None


def resources(container: dict[str, Any]) -> dict[str, Any]:
    res = container.get("resources") or {}
    return {k: res[k] for k in ("limits", "requests") if res.get(k)}


def condition(conditions: list[dict[str, Any]], kind: str) -> dict[str, Any] | None:
    return next((c for c in conditions if c.get("type") == kind), None)


def _container_row(cs: dict[str, Any], spec: dict[str, Any], init: bool = False) -> dict[str, Any]:
    row = {
        "name": cs.get("name"),
        "image": cs.get("image"),
        "ready": bool(cs.get("ready")),
        "restartCount": int(cs.get("restartCount") or 0),
        "state": _container_state(cs.get("state")),
        "lastState": _container_state(cs.get("lastState")),
        **resources(spec),
    }
    return {**row, "init": True} if init else row


def pod_summary(pod: dict[str, Any]) -> dict[str, Any]:
    """Phase, ready x/y, restarts, the reason it is unhealthy, and each container's state.

    Init containers that have a status follow the app containers, marked ``"init": true``: a pod
    stuck in ``Init:CrashLoopBackOff`` fails in one of them. ``ready`` counts app containers only;
    ``restarts`` counts init containers' restarts too, as ``kubectl get pods`` does.
    """
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    specs = {c.get("name"): c for c in spec.get("containers") or []}
    init_specs = {c.get("name"): c for c in spec.get("initContainers") or []}
    containers = [
        _container_row(cs, specs.get(cs.get("name")) or {}) for cs in status.get("containerStatuses") or []
    ]
    seen = {c["name"] for c in containers}
    containers += [
        {"name": n, "image": c.get("image"), "ready": False, "restartCount": 0, **resources(c)}
        for n, c in specs.items()
        if n not in seen
    ]
    apps = len(containers)
    containers += [
        _container_row(cs, init_specs.get(cs.get("name")) or {}, init=True)
        for cs in status.get("initContainerStatuses") or []
    ]
    owner = next(iter(meta.get("ownerReferences") or []), None)
    last = sorted(
        (c for c in containers if (c.get("lastState") or {}).get("state") == "terminated"),
        key=lambda c: -c["restartCount"],
    )
    return {
        "name": meta.get("name"),
        "namespace": meta.get("namespace"),
        "phase": status.get("phase"),
        "ready": f"{sum(c['ready'] for c in containers[:apps])}/{len(specs) or apps}",
        "restarts": sum(c["restartCount"] for c in containers),
        "reason": pod_reason(pod),
        "lastTermination": ({"container": last[0]["name"], **last[0]["lastState"]} if last else None),
        "node": spec.get("nodeName"),
        "owner": f"{owner.get('kind')}/{owner.get('name')}" if owner else None,
        "created": meta.get("creationTimestamp"),
        "labels": meta.get("labels") or {},
        "containers": containers,
    }


def _init_reason(pod: dict[str, Any]) -> str | None:
    """``Init:<reason>`` or ``Init:<done>/<all>`` while init containers have not all completed.

    The same rules as ``kubectl get pods``: a failed init container shows its termination reason
    (``Init:Error``, ``Init:OOMKilled``, ``Init:ExitCode:2``), a waiting one its waiting reason
    (``Init:CrashLoopBackOff``, ``Init:ImagePullBackOff``); a started sidecar (an init container
    with ``restartPolicy: Always``) counts as done.
    """
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    init_specs = spec.get("initContainers") or []
    sidecars = {c.get("name") for c in init_specs if c.get("restartPolicy") == "Always"}
    statuses = status.get("initContainerStatuses") or []
    for done, cs in enumerate(statuses):
        state = cs.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting")
        if isinstance(terminated, dict) and terminated.get("exitCode") == 0:
            continue
        if cs.get("name") in sidecars and cs.get("started"):
            continue
        if isinstance(terminated, dict):
            if terminated.get("reason"):
                return f"Init:{terminated['reason']}"
            if terminated.get("signal"):
                return f"Init:Signal:{terminated['signal']}"
            return f"Init:ExitCode:{terminated.get('exitCode')}"
        if isinstance(waiting, dict) and waiting.get("reason") not in (None, "", "PodInitializing"):
            return f"Init:{waiting['reason']}"
        return f"Init:{done}/{len(init_specs) or len(statuses)}"
    return None


def pod_reason(pod: dict[str, Any]) -> str | None:
    """Why the pod is not healthy, as ``kubectl get pods`` would say, or ``None`` when it is."""
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    if meta.get("deletionTimestamp"):
        return "Terminating"
    if status.get("reason"):  # Evicted, NodeLost, ...
        return str(status["reason"])
    init = _init_reason(pod)
    if init:
        return init
    waiting = [(cs.get("state") or {}).get("waiting") or {} for cs in status.get("containerStatuses") or []]
    reasons = [w.get("reason") for w in waiting if w.get("reason")]
    for bad in _WAITING_BAD:
        if bad in reasons:
            return bad
    for cs in status.get("containerStatuses") or []:
        terminated = (cs.get("state") or {}).get("terminated") or {}
        if terminated.get("reason") and terminated.get("reason") != "Completed":
            return str(terminated["reason"])
    if status.get("phase") == "Pending":
        scheduled = condition(status.get("conditions") or [], "PodScheduled")
        if scheduled and scheduled.get("status") == "False":
            why = scheduled.get("reason") or "Unschedulable"
            return f"{why}: {scheduled.get('message')}" if scheduled.get("message") else str(why)
        return reasons[0] if reasons else "Pending"
    if status.get("phase") in ("Failed", "Unknown"):
        return str(status["phase"])
    return None


def crashing_container(pod: dict[str, Any]) -> str | None:
    """The container to read logs from: a failing one (an init container included), most restarts
    first; while the pod is still initializing (``Init:0/1``), the init container at work (the app
    containers have not started, so they have no log); else the one with most restarts."""
    summary = pod_summary(pod)
    containers = summary["containers"]
    initializing = str(summary.get("reason") or "").startswith("Init:")

    def at_work(c: dict[str, Any]) -> bool:  # an init container that has not completed
        state = c.get("state") or {}
        return bool(c.get("init")) and not (state.get("state") == "terminated" and state.get("exitCode") == 0)

    ranked = sorted(
        containers,
        key=lambda c: (
            not container_failing(c),
            not (initializing and at_work(c)),
            -c.get("restartCount", 0),
        ),
    )
    return str(ranked[0]["name"]) if ranked else None
