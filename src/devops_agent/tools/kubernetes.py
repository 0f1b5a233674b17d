"""The ``kubernetes`` toolset: pods, events, logs, describe-like summaries and rollout history, plus
three changes (rollout restart, scale, delete a pod), through the official ``kubernetes`` client.

The cluster comes from a kubeconfig (``settings.kubernetes.kubeconfig`` or the client's default:
``$KUBECONFIG`` / ``~/.kube/config``) and context (``settings.kubernetes.context``); one
``ApiClient`` is made per call and always closed, and requests are never ``async_req`` so the
client never starts its thread pool. Responses are read raw (``_preload_content=False``) and kept
in the API's own camelCase field names, so what a tool returns is what the Kubernetes API
reference documents. Errors become :class:`ToolResult` data: 401/403 → credentials/RBAC hint,
404 → not found, 429/5xx/timeouts/unreachable → ``transient``. Only ``k8s_rollout_restart``,
``k8s_scale`` and ``k8s_delete_pod`` change the cluster (read_only=False, through approval).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from devops_agent.config import Settings
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.http_status import rate_limited, retry_after_seconds, server_error
from devops_agent.tools.k8s_status import container_failing
from devops_agent.tools.logs import summarize_log
from devops_agent.tools.registry import ToolRegistry

NAME = "kubernetes"
EXTRA = "kubernetes"
DESCRIPTION = "Inspect Kubernetes pods, events, logs, workloads and rollouts; restart, scale, delete pods"

LOG_MAX_BYTES = 1_000_000
EVENTS_FETCH = 500
EVENTS_PAGES = 10  # pages of EVENTS_FETCH events read at most per namespace
_NOT_CONFIGURED = (
    "point kubernetes.kubeconfig (DEVOPS_AGENT_KUBERNETES__KUBECONFIG) at a kubeconfig file, or set "
    "$KUBECONFIG / create ~/.kube/config; kubernetes.context picks a context"
)
_AUTH_HINT = "the kubeconfig's credentials were rejected (expired token or certificate?); refresh them"
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
DescribeKind = Literal["deployment", "statefulset", "node", "pod"]


def _import_client() -> Any:
    try:
        import kubernetes
        import kubernetes.client
        import kubernetes.config
    except ImportError as exc:
        raise ImportError(
            f"the kubernetes toolset needs the `kubernetes` package: pip install 'devops-agent[{EXTRA}]'"
        ) from exc
    return kubernetes


class _Conf:
    def __init__(self, kubeconfig: str | None, context: str | None, namespace: str, timeout_s: float) -> None:
        self.kubeconfig, self.context = kubeconfig, context
        self.namespace, self.timeout_s = namespace, timeout_s


def _config(settings: Any) -> _Conf:
    conf = getattr(settings, "kubernetes", None)
    kubeconfig = getattr(conf, "kubeconfig", None)
    return _Conf(
        str(Path(kubeconfig).expanduser()) if kubeconfig else None,
        getattr(conf, "context", None) or None,
        str(getattr(conf, "namespace", None) or "default"),
        float(getattr(conf, "timeout_s", 15.0)),
    )


class _Failure(Exception):
    """Carries a ready :class:`ToolResult` out of nested helpers."""

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.error)
        self.result = result


def _api_message(body: Any) -> str:
    """The ``message`` of a Kubernetes ``Status`` error body, else the body's first line."""
    if not body:
        return ""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
    try:
        parsed = json.loads(text)
    except ValueError:
        return text.strip().splitlines()[0][:300] if text.strip() else ""
    return str(parsed.get("message") or "")[:300] if isinstance(parsed, dict) else ""


def _connect_reason(cause: BaseException | None) -> str:
    """The operating system's words for a failed connection (``Connection refused``), else the text."""
    text = str(cause)
    found = re.search(r"\[Errno -?\d+\] ([^)'\"]+)", text)
    if found:
        return found.group(1).strip()
    return (text.split(": ", 1)[-1] if ": " in text else text).strip()[:200]


def _forbidden(message: str, verb: str, resource: str) -> tuple[str, str, str | None]:
    """The verb, resource and namespace a 403 ``message`` says are missing, else the caller's guess.

    The API server words it ``... cannot get resource "pods/log" in API group "" in the namespace
    "payments"``; the call that failed may not be the one the tool is named after (a describe
    also lists events, a log read goes to the ``pods/log`` subresource).
    """
    found = re.search(
        r'cannot (\w+) resource "([^"]+)" in API group "([^"]*)"(?: in the namespace "([^"]+)")?', message
    )
    if not found:
        return verb, f"{resource}s", None
    group = f".{found.group(3)}" if found.group(3) else ""
    return found.group(1), f"{found.group(2)}{group}", found.group(4)


def map_error(exc: Exception, what: str, verb: str = "get", server: str | None = None) -> ToolResult:
    """Turn a client exception into a failed :class:`ToolResult` the model can act on.

    ``what`` names the object (``deployment payments/api``); ``verb`` and the resource in it name
    the RBAC permission a 403 means is missing (unless the API server's message names another);
    ``server`` is the API server's address, for connection errors.
    """
    k8s = _import_client()
    import urllib3

    if isinstance(exc, k8s.config.ConfigException):
        return ToolResult.fail(f"cannot load the kubeconfig: {exc}", _NOT_CONFIGURED)
    at = f" at {server}" if server else ""
    cause = exc.reason if isinstance(exc, urllib3.exceptions.MaxRetryError) else exc
    # urllib3 2 derives NewConnectionError (refused, no route, DNS) from ConnectTimeoutError:
    # test it first, or an API server that is down reads as a slow one.
    refused = isinstance(cause, urllib3.exceptions.NewConnectionError)
    if isinstance(cause, urllib3.exceptions.TimeoutError) and not refused:
        return ToolResult.fail(
            f"the Kubernetes API server{at} did not answer in time",
            "retry later or raise kubernetes.timeout_s",
            transient=True,
        )
    if refused or isinstance(exc, urllib3.exceptions.HTTPError):
        return ToolResult.fail(
            f"cannot connect to the Kubernetes API server{at}: {_connect_reason(cause)}",
            "check the kubeconfig's server address, its certificate-authority data and context "
            "(kubernetes.context), that the cluster is up, and the network path (VPN?)",
            transient=True,
        )
    if not isinstance(exc, k8s.client.ApiException):
        raise exc
    status: int | None = exc.status
    if not status:  # the client's own wrapper for TLS failures
        first = str(exc.reason or "").splitlines()[0] if exc.reason else "TLS error"
        return ToolResult.fail(
            f"cannot connect to the Kubernetes API server: {first}",
            "check the kubeconfig's certificate-authority data and the server address",
            transient=True,
        )
    message = _api_message(exc.body)
    said = f": {message}" if message else ""
    if status == 401:
        return ToolResult.fail(
            f"the Kubernetes API refused the credentials (401){said}", _AUTH_HINT, status=401
        )
    if status == 403:
        verb, resource, namespace = _forbidden(message, verb, what.split(" ")[0])
        where = f" -n {namespace}" if namespace else ""
        return ToolResult.fail(
            f"forbidden (403){said}",
            f"RBAC: the account lacks the `{verb}` verb on {resource} here; check with "
            f"`kubectl auth can-i {verb} {resource}{where}` and ask for a Role granting it",
            status=403,
        )
    if status == 404:
        return ToolResult.fail(
            f"no such {what} (404){said}",
            "check the name and the namespace; k8s_pods and k8s_namespaces list what exists",
            status=404,
        )
    if status == 429:
        retry = (exc.headers or {}).get("Retry-After") if hasattr(exc, "headers") else None
        return rate_limited("Kubernetes API", retry_after_seconds(str(retry) if retry else None), said)
    if status is not None and status >= 500:
        return server_error("Kubernetes API", status, said)
    return ToolResult.fail(f"Kubernetes API error ({status}){said}", status=status)


# --- summaries: the API's own field names, trimmed to what matters for triage ---------------------


def _age(stamp: Any) -> str | None:
    return str(stamp) if stamp else None


def _container_state(state: dict[str, Any] | None) -> dict[str, Any] | None:
    """``{"state": "waiting", "reason": ..., ...}`` from a ContainerState object."""
    for name in ("waiting", "terminated", "running"):
        inner = (state or {}).get(name)
        if isinstance(inner, dict):
            keep = ("reason", "message", "exitCode", "signal", "startedAt", "finishedAt")
            return {"state": name, **{k: inner[k] for k in keep if inner.get(k) not in (None, "")}}
    return None


def _resources(container: dict[str, Any]) -> dict[str, Any]:
    res = container.get("resources") or {}
    return {k: res[k] for k in ("limits", "requests") if res.get(k)}


def _condition(conditions: list[dict[str, Any]], kind: str) -> dict[str, Any] | None:
    return next((c for c in conditions if c.get("type") == kind), None)


def _container_row(cs: dict[str, Any], spec: dict[str, Any], init: bool = False) -> dict[str, Any]:
    row = {
        "name": cs.get("name"),
        "image": cs.get("image"),
        "ready": bool(cs.get("ready")),
        "restartCount": int(cs.get("restartCount") or 0),
        "state": _container_state(cs.get("state")),
        "lastState": _container_state(cs.get("lastState")),
        **_resources(spec),
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
        {"name": n, "image": c.get("image"), "ready": False, "restartCount": 0, **_resources(c)}
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
        scheduled = _condition(status.get("conditions") or [], "PodScheduled")
        if scheduled and scheduled.get("status") == "False":
            why = scheduled.get("reason") or "Unschedulable"
            return f"{why}: {scheduled.get('message')}" if scheduled.get("message") else str(why)
        return reasons[0] if reasons else "Pending"
    if status.get("phase") in ("Failed", "Unknown"):
        return str(status["phase"])
    return None


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


def _conditions(obj: dict[str, Any]) -> list[dict[str, Any]]:
    keep = ("type", "status", "reason", "message", "lastTransitionTime")
    conds = (obj.get("status") or {}).get("conditions") or []
    return [{k: c[k] for k in keep if c.get(k) not in (None, "")} for c in conds]


def _template_containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    pod_spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    return [
        {"name": c.get("name"), "image": c.get("image"), **_resources(c)}
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
        "conditions": _conditions(obj),
        "containers": _template_containers(obj),
        "created": meta.get("creationTimestamp"),
    }


def node_summary(node: dict[str, Any]) -> dict[str, Any]:
    meta, spec, status = node.get("metadata") or {}, node.get("spec") or {}, node.get("status") or {}
    conditions = _conditions(node)
    pressure = [
        c["type"] for c in conditions if c.get("type", "").endswith("Pressure") and c.get("status") == "True"
    ]
    ready = _condition(conditions, "Ready")
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
        "conditions": conditions,
        "capacity": status.get("capacity") or {},
        "allocatable": status.get("allocatable") or {},
        "kubeletVersion": info.get("kubeletVersion"),
        "osImage": info.get("osImage"),
        "created": meta.get("creationTimestamp"),
    }


def _selector(labels: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _crashing_container(pod: dict[str, Any]) -> str | None:
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


def _new_client(conf: _Conf) -> Any:
    """An ``ApiClient`` for the configured kubeconfig and context; the caller closes it.

    urllib3's default of three retries is switched off: it would turn ``timeout_s`` into four
    times that against a server that does not answer, and callers (the runbooks, the model)
    retry ``transient`` errors themselves.
    """
    k8s = _import_client()
    configuration = type.__call__(k8s.client.Configuration)
    try:
        k8s.config.load_kube_config(
            config_file=conf.kubeconfig,
            context=conf.context,
            client_configuration=configuration,
            persist_config=False,
        )
    except k8s.config.ConfigException as exc:
        if not conf.context or f"name {conf.context} in" not in str(exc):
            raise
        try:
            contexts = [c["name"] for c in k8s.config.list_kube_config_contexts(conf.kubeconfig)[0]]
        except (k8s.config.ConfigException, KeyError, TypeError):
            raise exc from None
        raise k8s.config.ConfigException(
            f"context {conf.context!r} (kubernetes.context) is not in the kubeconfig; "
            f"its contexts: {', '.join(contexts) or 'none'}"
        ) from exc
    configuration.retries = False
    return k8s.client.ApiClient(configuration=configuration)


def _no_log(pod: str, container: str | None, said: str) -> ToolResult:
    """The answer when the API has no log to give (its 400), with where to look instead."""
    return ToolResult.empty(
        f"no log for {pod}/{container}: {said or 'the API server has none'}; a container that never "
        "started has none: k8s_describe(kind='pod') and k8s_events say why it is waiting",
        pod=pod,
        container=container,
    )


def build(settings: Settings) -> ToolsetBuilder:
    """The Kubernetes toolset; raises ImportError naming the extra when ``kubernetes`` is missing."""
    _import_client()
    ts = ToolsetBuilder(NAME, DESCRIPTION)

    @contextmanager
    def api(conf: _Conf) -> Iterator[Any]:
        client = _new_client(conf)
        try:
            yield client
        finally:
            client.close()

    def raw(conf: _Conf, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call an API method unparsed; JSON bodies come back as dicts, logs as text."""
        resp = method(*args, _preload_content=False, _request_timeout=conf.timeout_s, **kwargs)
        try:
            data: bytes = resp.data
        finally:
            resp.release_conn()
        if "json" in (resp.headers.get("Content-Type") or ""):
            return json.loads(data)
        return data.decode("utf-8", errors="replace")

    def call(what: str, verb: str, fn: Callable[[_Conf, Any, Any], ToolResult]) -> ToolResult:
        k8s = _import_client()
        import urllib3

        conf = _config(settings)
        server: str | None = None
        try:
            with api(conf) as client:
                server = client.configuration.host
                core, apps = k8s.client.CoreV1Api(client), k8s.client.AppsV1Api(client)
                return fn(conf, core, apps)
        except _Failure as failure:
            return failure.result
        except (k8s.client.ApiException, k8s.config.ConfigException, urllib3.exceptions.HTTPError) as exc:
            return map_error(exc, what, verb, server)

    def events_for(
        conf: _Conf, core: Any, namespace: str, name: str | None = None, kind: str | None = None
    ) -> list[dict[str, Any]]:
        selector = ",".join(f"involvedObject.{k}={v}" for k, v in (("kind", kind), ("name", name)) if v)
        # The API lists events in key order (by object name), not by time: read every page, or
        # a busy namespace's newest warnings can be the ones left out.
        items: list[dict[str, Any]] = []
        token = None
        for _ in range(EVENTS_PAGES):
            body = raw(
                conf,
                core.list_namespaced_event,
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

    @ts.tool(category="kubernetes", read_only=True)
    def k8s_namespaces() -> ToolResult:
        """List the cluster's namespaces with their phase (Active/Terminating) and age."""

        def run(conf: _Conf, core: Any, apps: Any) -> ToolResult:
            body = raw(conf, core.list_namespace)
            items = [
                {
                    "name": (n.get("metadata") or {}).get("name"),
                    "phase": (n.get("status") or {}).get("phase"),
                    "created": (n.get("metadata") or {}).get("creationTimestamp"),
                }
                for n in body.get("items") or []
            ]
            return ToolResult.ok({"namespaces": items}, source="kubernetes namespaces")

        return call("namespace list", "list", run)

    @ts.tool(category="kubernetes", read_only=True)
    def k8s_pods(namespace: str | None = None, selector: str | None = None, limit: int = 100) -> ToolResult:
        """List pods with phase, ready x/y, restarts and why each unhealthy one is failing.

        The reason is what `kubectl get pods` shows (CrashLoopBackOff, ImagePullBackOff,
        CreateContainerConfigError, the scheduler's message for Pending pods), and
        lastTermination holds the previous crash (e.g. OOMKilled, exit code 137).

        Args:
            namespace: the namespace (default: the configured one); "all" lists every namespace.
            selector: a label selector such as "app=api,tier!=cache".
            limit: most pods to return (1-1000); unhealthy pods come first.
        """
        limit = max(1, min(limit, 1000))

        def run(conf: _Conf, core: Any, apps: Any) -> ToolResult:
            ns = namespace or conf.namespace
            if ns == "all":
                body = raw(conf, core.list_pod_for_all_namespaces, label_selector=selector or None)
            else:
                body = raw(conf, core.list_namespaced_pod, ns, label_selector=selector or None)
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

        return call("pod list", "list", run)

    @ts.tool(category="kubernetes", read_only=True)
    def k8s_events(
        namespace: str | None = None, involved_object: str | None = None, limit: int = 50
    ) -> ToolResult:
        """List a namespace's events, warnings first, then newest first.

        Args:
            namespace: the namespace (default: the configured one).
            involved_object: only events about this object: a name ("api-7d9f8c6b5-x2kqp") or
                "Kind/name" ("Deployment/api"; kubectl's "deploy/api", "deployment.apps/api" work too).
            limit: most events to return (1-500).
        """
        limit = max(1, min(limit, EVENTS_FETCH))

        def run(conf: _Conf, core: Any, apps: Any) -> ToolResult:
            kind, _, name = (involved_object or "").strip().rpartition("/")
            kind = event_kind(kind) if kind else ""
            # The kubelet records a node's events in the default namespace.
            ns = namespace or ("default" if kind == "Node" else conf.namespace)
            events = events_for(conf, core, ns, name or None, kind or None)
            if not events:
                about = f" about {involved_object}" if involved_object else ""
                return ToolResult.empty(
                    f"no events{about} in namespace {ns} (events expire after about an hour)"
                )
            warnings = sum(e["type"] == "Warning" for e in events)
            data = {"namespace": ns, "total": len(events), "warnings": warnings, "events": events[:limit]}
            return ToolResult.ok(data, source="kubernetes events")

        return call("event list", "list", run)

    @ts.tool(category="kubernetes", read_only=True)
    def k8s_logs(
        pod: str,
        namespace: str | None = None,
        container: str | None = None,
        previous: bool = False,
        tail_lines: int = 200,
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
        tail_lines = max(1, min(tail_lines, 5000))

        def run(conf: _Conf, core: Any, apps: Any) -> ToolResult:
            ns = namespace or conf.namespace
            name, chosen = pod, container
            if not name:
                if not selector:
                    return ToolResult.fail("no pod named", "pass pod, or a selector to pick one")
                body = raw(conf, core.list_namespaced_pod, ns, label_selector=selector)
                items = sorted(body.get("items") or [], key=lambda p: -pod_summary(p)["restarts"])
                if not items:
                    return ToolResult.empty(f"no pods in namespace {ns} match {selector!r}")
                name = items[0]["metadata"]["name"]
                chosen = chosen or _crashing_container(items[0])
            elif not chosen:
                chosen = _crashing_container(raw(conf, core.read_namespaced_pod, name, ns))
            k8s = _import_client()

            def read(prev: bool) -> str:
                text: str = raw(
                    conf,
                    core.read_namespaced_pod_log,
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
            return ToolResult.ok(data | summary, source="kubernetes logs").with_raw(text)

        return call(f"pod {pod or selector}", "get", run)

    @ts.tool(category="kubernetes", read_only=True)
    def k8s_describe(kind: DescribeKind, name: str, namespace: str | None = None) -> ToolResult:
        """A `kubectl describe`-like summary of a deployment, statefulset, node or pod, with recent events.

        Deployments/statefulsets: replicas (desired/ready/updated/available), conditions, images,
        resources. Nodes: conditions, pressure, taints, capacity and allocatable. Pods: the
        status summary of k8s_pods plus conditions and the owning Deployment (through its ReplicaSet).

        Args:
            kind: deployment, statefulset, node or pod.
            name: the object's name.
            namespace: the namespace (default: the configured one; ignored for nodes).
        """

        def run(conf: _Conf, core: Any, apps: Any) -> ToolResult:
            ns = namespace or conf.namespace
            if kind == "node":
                data = node_summary(raw(conf, core.read_node, name))
                return ToolResult.ok({**data, "events": events_for(conf, core, "default", name, "Node")[:20]})
            if kind == "deployment":
                data = workload_summary(raw(conf, apps.read_namespaced_deployment, name, ns))
            elif kind == "statefulset":
                data = workload_summary(raw(conf, apps.read_namespaced_stateful_set, name, ns))
            elif kind == "pod":
                obj = raw(conf, core.read_namespaced_pod, name, ns)
                data = {"kind": "Pod", **pod_summary(obj), "conditions": _conditions(obj)}
                data["deployment"] = owning_deployment(conf, apps, obj)
            else:
                return ToolResult.fail(
                    f"cannot describe kind {kind!r}", "use deployment, statefulset, node or pod"
                )
            data["events"] = events_for(conf, core, ns, name)[:20]
            return ToolResult.ok(data, source=f"kubernetes describe {kind}")

        return call(f"{kind} {name}", "get", run)

    def owning_deployment(conf: _Conf, apps: Any, pod: dict[str, Any]) -> dict[str, Any] | None:
        """The pod's Deployment (pod → ReplicaSet → Deployment) summarized, or ``None``."""
        ns = (pod.get("metadata") or {}).get("namespace")
        owners = (pod.get("metadata") or {}).get("ownerReferences") or []
        rs_ref = next((o for o in owners if o.get("kind") == "ReplicaSet"), None)
        if rs_ref is None:
            return None
        rs = raw(conf, apps.read_namespaced_replica_set, rs_ref["name"], ns)
        dep_ref = next(
            (
                o
                for o in (rs.get("metadata") or {}).get("ownerReferences") or []
                if o.get("kind") == "Deployment"
            ),
            None,
        )
        if dep_ref is None:
            return None
        return workload_summary(raw(conf, apps.read_namespaced_deployment, dep_ref["name"], ns))

    @ts.tool(category="kubernetes", read_only=True)
    def k8s_rollout_history(deployment: str, namespace: str | None = None) -> ToolResult:
        """A deployment's revisions (its ReplicaSets), newest first: revision, images, replicas, created.

        Args:
            deployment: the deployment name.
            namespace: the namespace (default: the configured one).
        """

        def run(conf: _Conf, core: Any, apps: Any) -> ToolResult:
            ns = namespace or conf.namespace
            dep = raw(conf, apps.read_namespaced_deployment, deployment, ns)
            labels = ((dep.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
            body = raw(conf, apps.list_namespaced_replica_set, ns, label_selector=_selector(labels) or None)
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
                        "images": [c["image"] for c in _template_containers(rs)],
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
            return ToolResult.ok(data, source="kubernetes replicasets")

        return call(f"deployment {deployment}", "list", run)

    @ts.tool(category="kubernetes", read_only=False, risk="sensitive")
    def k8s_rollout_restart(deployment: str, namespace: str) -> ToolResult:
        """Restart a deployment's pods with a rolling update, like `kubectl rollout restart`.

        Args:
            deployment: the deployment name.
            namespace: the namespace (required: changes are never aimed at a default).
        """

        def run(conf: _Conf, core: Any, apps: Any) -> ToolResult:
            now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            patch = {
                "spec": {
                    "template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": now}}}
                }
            }
            dep = raw(
                conf,
                apps.patch_namespaced_deployment,
                deployment,
                namespace,
                patch,
                _content_type="application/strategic-merge-patch+json",
            )
            return ToolResult.ok({"restartedAt": now, **workload_summary(dep)}, source="kubernetes patch")

        return call(f"deployment {deployment}", "patch", run)

    @ts.tool(category="kubernetes", read_only=False, risk="sensitive")
    def k8s_scale(deployment: str, replicas: int, namespace: str) -> ToolResult:
        """Set a deployment's replica count (its scale subresource), like `kubectl scale`.

        Args:
            deployment: the deployment name.
            replicas: the new number of replicas (0-1000; 0 stops every pod).
            namespace: the namespace (required: changes are never aimed at a default).
        """
        if not 0 <= replicas <= 1000:
            return ToolResult.fail(f"replicas must be between 0 and 1000, got {replicas}")

        def run(conf: _Conf, core: Any, apps: Any) -> ToolResult:
            scale = raw(
                conf,
                apps.patch_namespaced_deployment_scale,
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

        return call(f"deployment {deployment}", "patch", run)

    @ts.tool(category="kubernetes", read_only=False, risk="destructive")
    def k8s_delete_pod(pod: str, namespace: str) -> ToolResult:
        """Delete one pod (its controller, if any, creates a replacement), like `kubectl delete pod`.

        Args:
            pod: the pod name.
            namespace: the namespace (required: changes are never aimed at a default).
        """

        def run(conf: _Conf, core: Any, apps: Any) -> ToolResult:
            body = raw(conf, core.delete_namespaced_pod, pod, namespace)
            owner = next(iter((body.get("metadata") or {}).get("ownerReferences") or []), None)
            data = {
                "pod": pod,
                "namespace": namespace,
                "deleted": True,
                "owner": f"{owner.get('kind')}/{owner.get('name')}" if owner else None,
            }
            return ToolResult.ok(data, source="kubernetes delete")

        return call(f"pod {pod}", "delete", run)

    return ts


def check(settings: Any) -> tuple[bool, str]:
    """Health check for ``devops-agent doctor``: can we reach the API server and read its version?"""
    try:
        k8s = _import_client()
    except ImportError as exc:
        return False, str(exc)
    import urllib3

    conf = _config(settings)
    try:
        client = _new_client(conf)
    except k8s.config.ConfigException as exc:
        return False, f"kubernetes: {map_error(exc, 'kubeconfig').error} ({_NOT_CONFIGURED})"
    try:
        resp = k8s.client.VersionApi(client).get_code(_preload_content=False, _request_timeout=conf.timeout_s)
        version = json.loads(resp.data).get("gitVersion")
        resp.release_conn()
    except (k8s.client.ApiException, urllib3.exceptions.HTTPError) as exc:
        failed = map_error(exc, "version", server=client.configuration.host)
        return False, f"kubernetes: {failed.error}" + (f" ({failed.hint})" if failed.hint else "")
    finally:
        client.close()
    return True, f"kubernetes: {client.configuration.host} (server {version})"


def register(registry: ToolRegistry) -> None:
    """Entry point of the ``devops_agent.toolsets`` group."""
    registry.add_toolset(NAME, build, DESCRIPTION, extra=EXTRA)
