"""The cluster the ``kubernetes`` toolset talks to: kubeconfig and context, the client, its failures.

The cluster comes from a kubeconfig (``settings.kubernetes.kubeconfig`` or the client's default:
``$KUBECONFIG`` / ``~/.kube/config``) and context (``settings.kubernetes.context``); one
``ApiClient`` is made per call and always closed, and requests are never ``async_req`` so the
client never starts its thread pool. Responses are read raw (:meth:`Cluster.raw`,
``_preload_content=False``) and kept in the API's own camelCase field names, so what a tool
returns is what the Kubernetes API reference documents. Errors become :class:`ToolResult` data
here, at the boundary: 401/403 → credentials/RBAC hint, 404 → not found,
429/5xx/timeouts/unreachable → ``transient``. This module must not import the client library at
import time (the toolset registers without it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from devops_agent.config import Settings
from devops_agent.config.settings import KubernetesSettings
from devops_agent.tools.base import ToolResult
from devops_agent.tools.http_status import ErrorTable, Rule, retry_after_seconds
from devops_agent.tools.integration import Integration

NAME = "kubernetes"
DESCRIPTION = "Inspect Kubernetes pods, events, logs, workloads and rollouts; restart, scale, delete pods"
_NOT_CONFIGURED = (
    "point kubernetes.kubeconfig (DEVOPS_AGENT_KUBERNETES__KUBECONFIG) at a kubeconfig file, or set "
    "$KUBECONFIG / create ~/.kube/config; kubernetes.context picks a context"
)
_AUTH_HINT = "the kubeconfig's credentials were rejected (expired token or certificate?); refresh them"
ERRORS = ErrorTable(
    "Kubernetes API",
    timeout_hint="retry later or raise kubernetes.timeout_s",
    unreachable_hint=(
        "check the kubeconfig's server address, its certificate-authority data and context "
        "(kubernetes.context), that the cluster is up, and the network path (VPN?)"
    ),
    rules={
        401: Rule("the Kubernetes API refused the credentials (401){said}", _AUTH_HINT),
        404: Rule(
            "no such {what} (404){said}",
            "check the name and the namespace; k8s_pods and k8s_namespaces list what exists",
        ),
    },
    fallback=Rule("Kubernetes API error ({status}){said}"),
)


@dataclass
class Cluster:
    """One call's connection: the ``ApiClient`` and the two API groups the tools read."""

    api: Any
    core: Any
    apps: Any
    timeout_s: float

    def raw(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call an API method unparsed; JSON bodies come back as dicts, logs as text."""
        resp = method(*args, _preload_content=False, _request_timeout=self.timeout_s, **kwargs)
        try:
            data: bytes = resp.data
        finally:
            resp.release_conn()
        if "json" in (resp.headers.get("Content-Type") or ""):
            return json.loads(data)
        return data.decode("utf-8", errors="replace")


class Kubernetes(Integration[KubernetesSettings]):
    """The cluster of ``settings.kubernetes`` (a kubeconfig and context), through ``kubernetes``."""

    name = NAME
    description = DESCRIPTION
    extra = "kubernetes"
    package = "kubernetes"
    modules = ("kubernetes", "kubernetes.client", "kubernetes.config")
    probe_what = "version"

    def section(self, settings: Settings) -> KubernetesSettings:
        return settings.kubernetes

    def configured(self, settings: Settings) -> bool:
        """A kubeconfig or a context named in the settings (the client's defaults are not checked)."""
        return bool(settings.kubernetes.kubeconfig or settings.kubernetes.context)

    def connect(self, section: KubernetesSettings, **options: Any) -> Cluster:
        k8s = self.client_module()
        api = new_client(section)
        return Cluster(api, k8s.client.CoreV1Api(api), k8s.client.AppsV1Api(api), section.timeout_s)

    def close(self, client: Cluster) -> None:
        client.api.close()

    def client_errors(self) -> tuple[type[Exception], ...]:
        import urllib3

        k8s = self.client_module()
        return (k8s.client.ApiException, k8s.config.ConfigException, urllib3.exceptions.HTTPError)

    def map_error(
        self,
        exc: Exception,
        what: str,
        section: KubernetesSettings,
        client: Cluster | None = None,
        **context: Any,
    ) -> ToolResult:
        """A client exception as a failed result the model can act on.

        ``what`` names the object (``deployment payments/api``); ``context["verb"]`` and the
        resource in ``what`` name the RBAC permission a 403 means is missing (unless the API
        server's message names another); the API server's address (from ``client``) goes into
        connection errors.
        """
        k8s = self.client_module()
        import urllib3

        if isinstance(exc, k8s.config.ConfigException):
            return ToolResult.fail(f"cannot load the kubeconfig: {exc}", _NOT_CONFIGURED)
        at = f" at {client.api.configuration.host}" if client is not None else ""
        cause = exc.reason if isinstance(exc, urllib3.exceptions.MaxRetryError) else exc
        # urllib3 2 derives NewConnectionError (refused, no route, DNS) from ConnectTimeoutError:
        # test it first, or an API server that is down reads as a slow one.
        refused = isinstance(cause, urllib3.exceptions.NewConnectionError)
        if isinstance(cause, urllib3.exceptions.TimeoutError) and not refused:
            return ERRORS.timeout(f"the Kubernetes API server{at}")
        if refused or isinstance(exc, urllib3.exceptions.HTTPError):
            return ERRORS.unreachable(f"the Kubernetes API server{at}", _connect_reason(cause))
        if not isinstance(exc, k8s.client.ApiException):
            raise exc
        status: int | None = exc.status
        if not status:  # the client's own wrapper for TLS failures
            first = str(exc.reason or "").splitlines()[0] if exc.reason else "TLS error"
            return ERRORS.unreachable(
                "the Kubernetes API server",
                first,
                "check the kubeconfig's certificate-authority data and the server address",
            )
        message = _api_message(exc.body)
        if status == 403:
            said = f": {message}" if message else ""
            verb, resource, namespace = _forbidden(message, context.get("verb", "get"), what.split(" ")[0])
            where = f" -n {namespace}" if namespace else ""
            return ToolResult.fail(
                f"forbidden (403){said}",
                f"RBAC: the account lacks the `{verb}` verb on {resource} here; check with "
                f"`kubectl auth can-i {verb} {resource}{where}` and ask for a Role granting it",
                status=403,
            )
        retry = (exc.headers or {}).get("Retry-After") if status == 429 else None
        return ERRORS.result(
            status, what=what, detail=message, retry_after=retry_after_seconds(str(retry) if retry else None)
        )

    def probe(self, client: Cluster, section: KubernetesSettings) -> str:
        """``GET /version``: the API server answers, with our credentials."""
        k8s = self.client_module()
        resp = k8s.client.VersionApi(client.api).get_code(
            _preload_content=False, _request_timeout=section.timeout_s
        )
        version = json.loads(resp.data).get("gitVersion")
        resp.release_conn()
        return f"{client.api.configuration.host} (server {version})"


KUBERNETES = Kubernetes()
"""The integration: settings, client, errors, health check; its tools are declared in ``reads`` and
``changes``."""


def kubeconfig_path(section: KubernetesSettings) -> str | None:
    """``kubernetes.kubeconfig`` with ``~`` expanded; ``None``: the client's default."""
    return str(section.kubeconfig.expanduser()) if section.kubeconfig else None


def new_client(section: KubernetesSettings) -> Any:
    """An ``ApiClient`` for the configured kubeconfig and context; the caller closes it.

    urllib3's default of three retries is switched off: it would turn ``timeout_s`` into four
    times that against a server that does not answer, and callers (the runbooks, the model)
    retry ``transient`` errors themselves.
    """
    k8s = KUBERNETES.client_module()
    configuration = type.__call__(k8s.client.Configuration)
    try:
        k8s.config.load_kube_config(
            config_file=kubeconfig_path(section),
            context=section.context or None,
            client_configuration=configuration,
            persist_config=False,
        )
    except k8s.config.ConfigException as exc:
        if not section.context or f"name {section.context} in" not in str(exc):
            raise
        try:
            contexts = [c["name"] for c in k8s.config.list_kube_config_contexts(kubeconfig_path(section))[0]]
        except (k8s.config.ConfigException, KeyError, TypeError):
            raise exc from None
        raise k8s.config.ConfigException(
            f"context {section.context!r} (kubernetes.context) is not in the kubeconfig; "
            f"its contexts: {', '.join(contexts) or 'none'}"
        ) from exc
    configuration.retries = False
    return k8s.client.ApiClient(configuration=configuration)


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
