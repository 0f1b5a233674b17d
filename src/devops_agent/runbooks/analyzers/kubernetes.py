"""Pod crash analyzer: why a pod keeps failing, from ``k8s_pods``, ``k8s_events``, ``k8s_logs`` and
``k8s_describe`` results.

Causes are told apart by the evidence Kubernetes itself records, most specific first: an
``OOMKilled`` termination (memory limit too low or a leak), an image that cannot be pulled
(``ErrImagePull``/``ImagePullBackOff`` with the registry's message from the events), an init
container that fails or never completes (an ``Init:`` reason, as ``kubectl get pods`` shows it), a
configuration error (``CreateContainerConfigError``, a missing ConfigMap/Secret in the events,
or the application exiting with a configuration message in its previous log), then a generic
crash loop with its exit code. The container described is the failing one, an init container
included; one that never started has no log, so its next step is the pod's description and
events. Must not call tools.
"""

from __future__ import annotations

import re
from typing import Any

from devops_agent.analysis.k8s_status import container_failing
from devops_agent.report import Finding
from devops_agent.runbooks.analyzers.base import (
    Evidence,
    Item,
    as_mapping,
    as_records,
    checked,
    dict_field,
    list_field,
    register_analyzer,
    results_for,
    shorten,
    source_of,
    structured,
)

_IMAGE_REASONS = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName")
_CONFIG_REASONS = ("CreateContainerConfigError", "CreateContainerError")
_MISSING_OBJECT = re.compile(r'(configmap|secret)s? "([^"]+)" not found', re.IGNORECASE)
_CONFIG_LOG = re.compile(
    r"missing required (?:env|environment variable|config|setting)\S*\s+\S+"
    r"|(?:env(?:ironment)? variable|setting|config key)\s+\S+\s+(?:is )?(?:not set|required|missing)"
    r"|invalid configuration|configuration error|config(?:uration)? (?:file )?not found"
    r"|KeyError: '[A-Z][A-Z0-9_]+'",
    re.IGNORECASE,
)
_EXIT_MEANING = {
    1: "application error",
    2: "misuse of shell builtin / bad arguments",
    126: "command not executable",
    127: "command not found in the image",
    137: "killed (SIGKILL)",
    139: "segmentation fault",
    143: "terminated (SIGTERM)",
}


def _records(evidence: Evidence, tool: str, *keys: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for result in results_for(evidence, tool):
        if result.status == "success":
            out += as_records(structured(result), *keys)
    return out


def _logs(evidence: Evidence) -> dict[str, dict[str, Any]]:
    """Previous-instance logs (else current) by pod name."""
    by_pod: dict[str, dict[str, Any]] = {}
    for result in results_for(evidence, "k8s_logs"):
        if result.status != "success":
            continue
        data = as_mapping(structured(result))
        pod = str(data.get("pod") or "")
        if pod and (pod not in by_pod or data.get("previous")):
            by_pod[pod] = data
    return by_pod


def _describes(evidence: Evidence) -> list[dict[str, Any]]:
    return [as_mapping(structured(r)) for r in results_for(evidence, "k8s_describe") if r.status == "success"]


def _deployment_line(describes: list[dict[str, Any]], pod: dict[str, Any]) -> str | None:
    for d in describes:
        dep = d.get("deployment") if d.get("kind") == "Pod" and d.get("name") == pod.get("name") else d
        if not isinstance(dep, dict) or dep.get("kind") != "Deployment":
            continue
        r = dict_field(dep, "replicas")
        images = ", ".join(str(c.get("image")) for c in list_field(dep, "containers") if isinstance(c, dict))
        return (
            f"deployment {dep.get('name')} (revision {dep.get('revision')}): {r.get('ready')}/"
            f"{r.get('desired')} ready, {r.get('updated')} updated, images {images}"
        )
    return None


def _restarts(container: dict[str, Any]) -> int:
    return int(container.get("restartCount") or 0)


def _completed(container: dict[str, Any]) -> bool:
    state = dict_field(container, "state")
    return state.get("state") == "terminated" and state.get("exitCode") == 0


def _never_started(container: dict[str, Any]) -> bool:
    """No instance of the container has run (image pull, config error, init not done): it has no log."""
    state = dict_field(container, "state").get("state")
    return _restarts(container) == 0 and not dict_field(container, "lastState") and state in (None, "waiting")


def _bad_container(pod: dict[str, Any]) -> dict[str, Any]:
    """The container the pod fails in: a failing one first (an init container first while the pod is
    in an ``Init:`` state, since the app containers then only wait), then not ready, most restarts."""
    containers = [c for c in list_field(pod, "containers") if isinstance(c, dict)]
    in_init = str(pod.get("reason") or "").startswith("Init:")
    ranked = sorted(
        containers,
        key=lambda c: (
            not container_failing(c),
            bool(c.get("init")) != in_init,
            _completed(c),
            bool(c.get("ready")),
            -_restarts(c),
        ),
    )
    return ranked[0] if ranked else {}


def _label(container: dict[str, Any]) -> str:
    """``container api`` or ``init container migrate``."""
    return ("init container " if container.get("init") else "container ") + str(container.get("name"))


def _log_lines(log: dict[str, Any] | None, container: dict[str, Any], count: int = 8) -> list[str]:
    """The last lines of the container's log, labelled with the instance they come from."""
    if not log or not log.get("text") or log.get("container") not in (None, container.get("name")):
        return []
    label = "previous log" if log.get("previous") else "log"
    tail = str(log["text"]).strip().splitlines()[-count:]
    return [f"{label}: {shorten(line, 240)}" for line in tail]


def _log_step(pod: dict[str, Any], container: dict[str, Any]) -> str:
    """Where to read more: the container's log, or, for one that never started, why it is waiting."""
    name, ns = pod.get("name"), pod.get("namespace")
    if _never_started(container):
        return (
            f"{_label(container).capitalize()} has never started, so it has no log: "
            f"k8s_describe(kind='pod', name='{name}', namespace='{ns}') and "
            f"k8s_events(namespace='{ns}', involved_object='{name}') say why it is waiting"
        )
    previous = ", previous=True" if _restarts(container) else ""
    return (
        f"Read the full log: k8s_logs(pod='{name}', namespace='{ns}', "
        f"container='{container.get('name')}'{previous})"
    )


def _state_line(label: str, state: Any) -> str | None:
    if not isinstance(state, dict):
        return None
    keys = ("reason", "exitCode", "startedAt", "finishedAt", "message")
    parts = [f"{k}={shorten(state[k], 120)}" for k in keys if state.get(k) not in (None, "")]
    return f"{label}: {state.get('state')} " + " ".join(parts)


def _pod_lines(pod: dict[str, Any], container: dict[str, Any]) -> list[str]:
    lines = [
        f"pod {pod.get('namespace')}/{pod.get('name')}: phase {pod.get('phase')}, ready {pod.get('ready')}, "
        f"restarts {pod.get('restarts')}, reason {pod.get('reason')}, node {pod.get('node')}"
    ]
    if container:
        lines.append(f"{_label(container)} image {container.get('image')}")
        lines += [
            line
            for line in (
                _state_line("  state", container.get("state")),
                _state_line("  lastState", container.get("lastState")),
            )
            if line
        ]
    return lines


def _event_lines(
    events: list[dict[str, Any]], pod: str, match: str | None = None, width: int = 240
) -> list[str]:
    lines = []
    for e in events:
        if str(e.get("object", "")).split("/", 1)[-1] != pod:
            continue
        message = str(e.get("message") or "")
        if match is not None and not re.search(match, message + " " + str(e.get("reason")), re.IGNORECASE):
            continue
        lines.append(
            f"event {e.get('type')} {e.get('reason')} x{e.get('count')} (last {e.get('lastSeen')}): "
            f"{shorten(message, width)}"
        )
    return lines


def _oom(pod: dict[str, Any], container: dict[str, Any], events: list[dict[str, Any]]) -> Finding:
    limits, requests = dict_field(container, "limits"), dict_field(container, "requests")
    limit = limits.get("memory", "none")
    evidence = _pod_lines(pod, container)
    evidence.append(f"resources: limits {limits or '{}'} requests {requests or '{}'}")
    evidence += _event_lines(events, str(pod.get("name")), "BackOff|OOM|Killing")[:5]
    return Finding(
        severity="high",
        title=f"Pod {pod.get('name')} is OOMKilled: container {container.get('name')} exceeds its memory "
        f"limit ({limit})",
        detail=(
            f"The kernel killed container {container.get('name')} (exit code 137, reason OOMKilled) when it "
            f"went over its memory limit of {limit} (request {requests.get('memory', 'none')}); it has "
            f"restarted {container.get('restartCount')} times. Either the limit is too low for the "
            "workload, or the process leaks memory."
        ),
        evidence=evidence,
        next_steps=[
            "Compare the container's memory use before each kill with the limit "
            "(container_memory_working_set_bytes in Prometheus, or `kubectl top pod`)",
            "If usage climbs steadily until the kill, look for a leak (heap dump, recent code changes); "
            "if it plateaus just above the limit, raise the limit: "
            f"`kubectl set resources deployment/<name> -c {container.get('name')} --limits=memory=<more>`",
            "For JVM/Node runtimes, make sure the heap is sized from the container limit "
            "(-XX:MaxRAMPercentage, --max-old-space-size)",
        ],
    )


def _image_pull(pod: dict[str, Any], container: dict[str, Any], events: list[dict[str, Any]]) -> Finding:
    name = str(pod.get("name"))
    pull = _event_lines(events, name, r"Failed to pull|pull access denied|ErrImagePull|ImagePullBackOff", 600)
    registry_msg = next((line for line in pull if "Failed to pull" in line), "")
    text = registry_msg.lower()
    if re.search(r"unauthorized|denied|authentication required|forbidden|401|403", text):
        why = "the registry refused the credentials"
        fix = "Check the pod's imagePullSecrets (and the service account's) and that the secret is valid"
    elif re.search(r"not found|manifest unknown|no such", text):
        why = "the image or tag does not exist in the registry"
        fix = "Check the image tag: was it pushed? Fix the tag or roll back (`kubectl rollout undo`)"
    elif re.search(r"timeout|i/o|no such host|connection refused|dial tcp", text):
        why = "the node cannot reach the registry"
        fix = "Check DNS, egress/proxy and the registry's availability from the node"
    else:
        why = "the image cannot be pulled"
        fix = "Read the registry's message in the events and fix the image reference or the pull secret"
    return Finding(
        severity="high",
        title=f"Pod {name} cannot pull image {container.get('image')}: {why}",
        detail=(
            f"{_label(container).capitalize()} is waiting with {pod.get('reason')}; the kubelet's pull "
            "attempts fail, so the new version never starts."
            + (f" Registry said: {registry_msg}" if registry_msg else "")
        ),
        evidence=_pod_lines(pod, container) + pull[:6],
        next_steps=[
            fix,
            f"Try the pull by hand with the same credentials: `crane manifest {container.get('image')}`"
            f" or `docker pull {container.get('image')}`",
            "While it is broken, the previous ReplicaSet keeps serving; "
            "k8s_rollout_history shows the last good image",
        ],
    )


def _config(
    pod: dict[str, Any],
    container: dict[str, Any],
    events: list[dict[str, Any]],
    log_lines: list[str],
    missing: list[tuple[str, str]],
) -> Finding:
    found = _CONFIG_LOG.search(log_lines[0]) if log_lines else None
    if missing:
        what = f"missing {missing[0][0].lower()} {missing[0][1]!r}"
    else:
        what = shorten(found.group(0), 80) if found else "bad configuration"
    evidence = _pod_lines(pod, container)
    evidence += _event_lines(
        events, str(pod.get("name")), r"not found|CreateContainerConfigError|FailedMount"
    )[:5]
    evidence += [f"previous log: {shorten(line, 240)}" for line in log_lines[:5]]
    steps = []
    if missing:
        steps.append(
            "Create the missing object or fix its name in the pod template: "
            + ", ".join(
                f"`kubectl get {kind.lower()} {name} -n {pod.get('namespace')}`" for kind, name in missing
            )
        )
    if log_lines:
        steps.append(
            "Set the value the application asks for (env, ConfigMap or Secret referenced by the deployment) "
            "and compare the pod template with the previous revision: "
            "`kubectl rollout history` / k8s_rollout_history"
        )
    steps.append(
        "If a rollout introduced it, roll back while fixing: `kubectl rollout undo deployment/<name>`"
    )
    return Finding(
        severity="high",
        title=f"Pod {pod.get('name')} fails on a configuration error: {what}",
        detail=(
            f"{_label(container).capitalize()} cannot start ({pod.get('reason')}) because its "
            "configuration is incomplete; restarting it will not help until the configuration is fixed."
        ),
        evidence=evidence,
        next_steps=steps,
    )


def _exit_text(state: dict[str, Any]) -> str:
    """``exit code 1, application error`` (or the signal) of a termination; empty when unknown."""
    code, signal = state.get("exitCode"), state.get("signal")
    if code is None:
        return f"signal {signal}" if signal is not None else ""
    meaning = _EXIT_MEANING.get(code, "") if isinstance(code, int) else ""
    return f"exit code {code}" + (f", {meaning}" if meaning else "")


def _init_failure(
    pod: dict[str, Any],
    container: dict[str, Any],
    events: list[dict[str, Any]],
    log: dict[str, Any] | None,
    missing: list[tuple[str, str]],
) -> Finding:
    name, init, reason = str(pod.get("name")), container.get("name"), pod.get("reason")
    state, last = dict_field(container, "state"), dict_field(container, "lastState")
    current = state.get("state") == "terminated"  # restartPolicy Never: the failed run is the current one
    exit_text = _exit_text(state if current else last)
    evidence = _pod_lines(pod, container) + _event_lines(events, name)[:5] + _log_lines(log, container)
    failing = container_failing(container)
    if failing:
        title = f"Pod {name} is stuck in {reason}: init container {init} fails" + (
            f" ({'' if current else 'last '}{exit_text})" if exit_text else ""
        )
        detail = (
            f"Init container {init} must exit 0 before the app containers start; it fails "
            f"({' '.join(str(v) for v in (state.get('state'), state.get('reason')) if v)}, "
            f"{_restarts(container)} restarts), so the pod stays in {reason} and the app containers "
            "wait (PodInitializing). The cause is in the init container, not in the application."
        )
    else:
        title = f"Pod {name} is stuck initializing ({reason}): init container {init} has not completed"
        detail = (
            f"Init container {init} has not exited yet ({state.get('state') or 'no state'}), so the app "
            "containers have not started; an init container usually waits here for a dependency "
            "(a database, a migration, another service)."
        )
    steps = [_log_step(pod, container)]
    if missing:
        steps.append(
            "Create the missing object or fix its name in the init container's spec: "
            + ", ".join(
                f"`kubectl get {kind.lower()} {obj} -n {pod.get('namespace')}`" for kind, obj in missing
            )
        )
    steps += [
        f"Check what {init} needs (its command, the database or service it migrates or waits for, "
        "its env and mounts) in the pod template",
        "Compare with the previous revision (k8s_rollout_history) if this started with a rollout",
    ]
    return Finding(
        severity="high" if failing else "medium",
        title=title,
        detail=detail,
        evidence=evidence,
        next_steps=steps,
    )


def _crash(
    pod: dict[str, Any], container: dict[str, Any], events: list[dict[str, Any]], log: dict[str, Any] | None
) -> Finding:
    last = dict_field(container, "lastState") or dict_field(container, "state")
    code = last.get("exitCode")
    meaning = _EXIT_MEANING.get(int(code), "") if isinstance(code, int) else ""
    evidence = _pod_lines(pod, container) + _event_lines(events, str(pod.get("name")))[:5]
    evidence += _log_lines(log, container)
    pending = str(pod.get("reason") or "").startswith("Unschedulable")
    return Finding(
        severity="medium" if pending else "high",
        title=f"Pod {pod.get('name')}: {shorten(pod.get('reason'), 120)}"
        + (f" (last exit code {code}{', ' + meaning if meaning else ''})" if code is not None else ""),
        detail="The pod keeps failing; the evidence below is what Kubernetes and the last log lines say.",
        evidence=evidence,
        next_steps=[
            _log_step(pod, container)
            if not pending
            else "Free or add capacity, or lower the pod's requests, so the scheduler can place it",
            "Compare with the previous revision (k8s_rollout_history) if this started with a rollout",
        ],
    )


@register_analyzer("pod_crashloop")
def pod_crashloop(evidence: Evidence, params: dict[str, Any], inputs: dict[str, Any]) -> list[Item]:
    """Classify each failing pod's cause: OOMKilled, image pull failure, configuration error, or crash.

    What was read is the pods seen (the one named, else all listed): none seen is no all-clear.
    """
    wanted = inputs.get("pod")
    pods = _records(evidence, "k8s_pods", "pods") + [
        d for d in _describes(evidence) if d.get("kind") == "Pod"
    ]
    seen = {str(p.get("name")) for p in pods if not wanted or p.get("name") == wanted}
    first = next(iter(evidence.values()))
    for result in (*results_for(evidence, "k8s_pods"), *results_for(evidence, "k8s_describe")):
        if result.status == "success":
            first = result
            break
    return [checked(first, len(seen), "pods"), *_pod_crashloop(evidence, params, inputs)]


def _pod_crashloop(evidence: Evidence, params: dict[str, Any], inputs: dict[str, Any]) -> list[Finding]:
    max_pods = int(params.get("max_pods", 5))
    pods = _records(evidence, "k8s_pods", "pods")
    described = _describes(evidence)
    pods += [
        d
        for d in described
        if d.get("kind") == "Pod" and not any(p.get("name") == d.get("name") for p in pods)
    ]
    events = _records(evidence, "k8s_events", "events")
    for d in described:
        events += [e for e in list_field(d, "events") if isinstance(e, dict) and e not in events]
    logs = _logs(evidence)
    source = next(
        (source_of(r) for r in results_for(evidence, "k8s_pods") if r.status == "success"),
        next((source_of(r) for r in results_for(evidence, "k8s_describe")), "k8s_pods"),
    )
    wanted = inputs.get("pod")
    considered = [p for p in pods if not wanted or p.get("name") == wanted]
    failing = [p for p in considered if p.get("reason")]
    if not failing:
        if not considered:  # nothing read (a describe it could not parse, no pods listed): no claim
            return []
        where = f"pod {wanted}" if wanted else f"namespace {inputs.get('namespace') or 'default'}"
        return [Finding(severity="info", title=f"No failing pods in {where}", source=source)]
    findings = []
    for pod in failing[:max_pods]:
        container = _bad_container(pod)
        name = str(pod.get("name"))
        last, state = dict_field(container, "lastState"), dict_field(container, "state")
        log = logs.get(name)
        log_text = str(log.get("text") or "") if log else ""
        config_lines = [line for line in log_text.splitlines() if _CONFIG_LOG.search(line)]
        pod_events = " ".join(
            str(e.get("message")) for e in events if str(e.get("object", "")).endswith("/" + name)
        )
        missing = [
            (m.group(1), m.group(2))
            for m in _MISSING_OBJECT.finditer(pod_events + " " + str(state.get("message") or ""))
        ]
        missing = list(dict.fromkeys(missing))
        if "OOMKilled" in (last.get("reason"), state.get("reason")):
            finding = _oom(pod, container, events)
        elif pod.get("reason") in _IMAGE_REASONS or state.get("reason") in _IMAGE_REASONS:
            finding = _image_pull(pod, container, events)
        elif str(pod.get("reason")).startswith("Init:") and container.get("init"):
            finding = _init_failure(pod, container, events, log, missing)
        elif pod.get("reason") in _CONFIG_REASONS or missing or config_lines:
            finding = _config(pod, container, events, config_lines, missing)
        else:
            finding = _crash(pod, container, events, log)
        if line := _deployment_line(described, pod):
            finding.evidence.append(line)
        finding.source = source
        findings.append(finding)
    if len(failing) > max_pods:
        findings.append(
            Finding(
                severity="info",
                title=f"{len(failing) - max_pods} more failing pods not analyzed",
                source=source,
            )
        )
    return findings
