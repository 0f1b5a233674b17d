"""The Docker Engine the ``docker`` toolset talks to: which daemon, how to reach it, how it fails.

The daemon is ``settings.docker.base_url`` when set, else what ``$DOCKER_HOST`` names (with
``$DOCKER_TLS_VERIFY`` / ``$DOCKER_CERT_PATH`` for TLS, as the docker CLI reads them), else the
local socket. The low-level ``docker.APIClient`` is used so responses keep the Engine API's own
field names; one client is made per call and always closed. The API version is negotiated with
the daemon (``GET /version``) unless ``docker.api_version`` pins one. Errors become
:class:`ToolResult` data here, at the boundary: 404 → not found, 409 → conflict with the daemon's
reason, 401/403 → credentials hint, 429/5xx/timeouts/an unreachable daemon → ``transient``. This
module must not import the SDK at import time (the toolset registers without it).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

from devops_agent.config import Settings
from devops_agent.config.settings import DockerSettings
from devops_agent.tools.base import ToolResult
from devops_agent.tools.http_status import ErrorTable, Rule, retry_after_seconds
from devops_agent.tools.integration import Integration, ToolFailure

NAME = "docker"
DESCRIPTION = "Inspect Docker containers, logs, stats and images; restart, stop or remove containers"
DEFAULT_SOCKET = "/var/run/docker.sock"
DEFAULT_HOST = f"unix://{DEFAULT_SOCKET}"
_NOT_CONFIGURED = (
    "set docker.base_url (DEVOPS_AGENT_DOCKER__BASE_URL) or $DOCKER_HOST to the daemon, e.g. "
    "unix:///var/run/docker.sock, tcp://10.0.0.5:2376 (TLS from $DOCKER_CERT_PATH) or ssh://user@host"
)
_AUTH_HINT = (
    "the daemon, or a proxy or authorization plugin in front of it, refused the request; check the "
    "TLS client certificate ($DOCKER_CERT_PATH) or the proxy's credentials"
)
_TLS_HINT = (
    "TLS is on (DOCKER_TLS_VERIFY / DOCKER_CERT_PATH): put ca.pem, cert.pem and key.pem "
    "in $DOCKER_CERT_PATH (default ~/.docker), or unset DOCKER_TLS_VERIFY for a plain daemon"
)
_NO_LOG_HINT = (
    "the container's logging driver keeps no log the daemon can read (driver `none`, or "
    "a remote driver with dual logging off); docker_inspect shows log_driver: read the "
    "log where that driver sends it"
)
ERRORS = ErrorTable(
    "Docker daemon",
    timeout_hint="retry later or raise docker.timeout_s",
    unreachable_hint=f"is the daemon listening there, and is the network path open? {_NOT_CONFIGURED}",
    rules={
        401: Rule("the Docker daemon refused the request (401){said}", _AUTH_HINT),
        403: Rule("the Docker daemon refused the request (403){said}", _AUTH_HINT),
        409: Rule(
            "conflict (409){said}",
            "the container is not in a state that allows this (e.g. not running, or running and "
            "not forced); docker_inspect shows its state",
        ),
        # A permanent "not implemented", not a failing daemon: retrying cannot help.
        501: Rule(
            "not supported by the Docker daemon (501){said}",
            "this daemon or its configuration does not support the request",
        ),
    },
    fallback=Rule("Docker API error ({status}){said}"),
)


class Docker(Integration[DockerSettings]):
    """The Docker Engine of ``settings.docker`` (or the environment), through the ``docker`` SDK."""

    name = NAME
    description = DESCRIPTION
    extra = "docker"
    package = "docker"
    # The SDK ships no type information; everything from it is typed Any here.
    modules = ("docker", "docker.errors", "docker.utils")
    probe_what = "daemon"

    def section(self, settings: Settings) -> DockerSettings:
        return settings.docker

    def configured(self, settings: Settings) -> bool:
        """``docker.base_url``, ``$DOCKER_HOST`` or a local socket."""
        return bool(
            settings.docker.base_url or os.environ.get("DOCKER_HOST") or Path(DEFAULT_SOCKET).exists()
        )

    def connect(self, section: DockerSettings, **options: Any) -> Any:
        """A ``docker.APIClient`` for the configured daemon.

        A local socket that is missing or not ours is reported before the SDK tries it: its unix
        connection leaks the socket object when ``connect`` fails.
        """
        kwargs = client_kwargs(section)
        base = str(kwargs.get("base_url") or DEFAULT_HOST)
        if base.startswith(("unix://", "http+unix://")):
            path = base.split("://", 1)[1]
            if not os.path.exists(path):
                raise ToolFailure(_unreachable("No such file or directory", where(section)))
            if not os.access(path, os.R_OK | os.W_OK):
                raise ToolFailure(_unreachable("Permission denied", where(section)))
        return self.client_module().APIClient(**kwargs)

    def client_errors(self) -> tuple[type[Exception], ...]:
        import requests

        return (self.client_module().errors.DockerException, requests.exceptions.RequestException)

    def map_error(
        self, exc: Exception, what: str, section: DockerSettings, client: Any = None, **context: Any
    ) -> ToolResult:
        """A ``docker``/``requests`` exception as a failed result; ``what`` names the object
        (``container shop-api-1``)."""
        return self._map(exc, what, where(section))

    def _map(self, exc: Exception, what: str, at: str) -> ToolResult:
        docker = self.client_module()
        import requests

        if isinstance(exc, docker.errors.APIError):
            status: int | None = exc.status_code
            explanation = str(exc.explanation or "")
            if status == 404:
                said = f": {explanation}" if explanation else ""
                lister = "docker_images" if what.startswith("image") else "docker_containers(all=True)"
                return ToolResult.fail(
                    f"no such {what} (404){said}", f"check the name or id; {lister} lists them", status=404
                )
            failed = ERRORS.result(
                status,
                what=what,
                detail=explanation,
                retry_after=retry_after_seconds(exc.response.headers.get("Retry-After"))
                if exc.response is not None
                else None,
            )
            if status == 501 and "logging driver" in explanation:
                failed.hint = _NO_LOG_HINT
            elif status == 400 and "too new" in explanation:
                failed.hint = (
                    "the daemon is older than the pinned API version; unset docker.api_version to negotiate"
                )
            return failed
        if isinstance(exc, requests.exceptions.Timeout):
            return ERRORS.timeout(f"the Docker daemon at {at}")
        if isinstance(exc, requests.exceptions.ConnectionError):
            return _unreachable(exc, at)
        if isinstance(exc, docker.errors.DockerException):
            cause = exc.__cause__
            # With version="auto" the SDK wraps a failed GET /version in a plain DockerException.
            if isinstance(cause, docker.errors.APIError | requests.exceptions.RequestException):
                return self._map(cause, what, at)
            hint = _TLS_HINT if isinstance(exc, docker.errors.TLSParameterError) else _NOT_CONFIGURED
            return ToolResult.fail(f"cannot set up the Docker client: {exc}", hint)
        if isinstance(exc, requests.exceptions.RequestException):
            return ToolResult.fail(f"Docker request failed: {exc}", transient=True)
        raise exc

    def probe(self, client: Any, section: DockerSettings) -> str:
        """``/_ping`` and ``/version``."""
        client.ping()
        version = client.version()
        return (
            f"{where(section)} (Docker Engine {version.get('Version')}, API {client.api_version}, "
            f"{version.get('Os')}/{version.get('Arch')})"
        )


DOCKER = Docker()
"""The integration: settings, client, errors, health check; its tools are declared in ``containers``."""


def where(section: DockerSettings) -> str:
    """The daemon address as the user configured it, for messages."""
    return section.base_url or os.environ.get("DOCKER_HOST") or DEFAULT_HOST


def client_kwargs(section: DockerSettings) -> dict[str, Any]:
    """``docker.APIClient`` arguments: the environment as the CLI reads it, then our settings."""
    kwargs: dict[str, Any] = dict(DOCKER.client_module().utils.kwargs_from_env())
    if section.base_url:
        kwargs["base_url"] = section.base_url
    kwargs["version"] = section.api_version or "auto"
    kwargs["timeout"] = section.timeout_s
    if (
        str(kwargs.get("base_url") or "").startswith("ssh://")
        and importlib.util.find_spec("paramiko") is None
    ):
        kwargs["use_ssh_client"] = True  # without paramiko the SDK runs the `ssh` binary instead
    return kwargs


def _unreachable(exc: Exception | str, at: str) -> ToolResult:
    text = str(exc)
    if "No such file or directory" in text:
        hint = f"no Docker socket there: is the daemon running on this host? {_NOT_CONFIGURED}"
    elif "Permission denied" in text:
        hint = (
            "permission denied on the Docker socket: add the user to the `docker` group "
            "or use a rootless daemon"
        )
    else:
        hint = ERRORS.unreachable_hint
    return ERRORS.unreachable(f"the Docker daemon at {at}", hint=hint)
