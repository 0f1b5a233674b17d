"""The ``docker`` toolset: containers, inspect, logs, stats and images of one Docker Engine, plus
three changes (restart, stop, remove a container), through the official ``docker`` SDK.

The daemon is ``settings.docker.base_url`` when set, else what ``$DOCKER_HOST`` names (with
``$DOCKER_TLS_VERIFY`` / ``$DOCKER_CERT_PATH`` for TLS, as the docker CLI reads them), else the
local socket. The low-level ``docker.APIClient`` is used so responses keep the Engine API's own
field names; one client is made per call and always closed. The API version is negotiated with
the daemon (``GET /version``) unless ``docker.api_version`` pins one. Errors become
:class:`ToolResult` data: 404 → not found, 409 → conflict with the daemon's reason, 401/403 →
credentials hint, 429/5xx/timeouts/an unreachable daemon → ``transient``. A long container log is
condensed by :func:`devops_agent.tools.logs.summarize_log`, as pod logs are.

Environment variable *values* are never returned (they often hold secrets): ``docker_inspect``
lists their names only. Only ``docker_restart``, ``docker_stop`` and ``docker_rm`` change
anything (read_only=False, so they go through approval); this module must not add others.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Literal

from devops_agent.analysis import parse_since
from devops_agent.config import Settings
from devops_agent.errors import UserError
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.http_status import rate_limited, retry_after_seconds, server_error
from devops_agent.tools.logs import summarize_log
from devops_agent.tools.registry import ToolRegistry

NAME = "docker"
EXTRA = "docker"
DESCRIPTION = "Inspect Docker containers, logs, stats and images; restart, stop or remove containers"

DEFAULT_HOST = "unix:///var/run/docker.sock"
LIMIT_MAX = 500
TAIL_MAX = 5000
INSPECT_MAX = 10  # failing containers docker_containers inspects for restart count and OOM kill
HEALTH_OUTPUT_CHARS = 500
_NOT_CONFIGURED = (
    "set docker.base_url (DEVOPS_AGENT_DOCKER__BASE_URL) or $DOCKER_HOST to the daemon, e.g. "
    "unix:///var/run/docker.sock, tcp://10.0.0.5:2376 (TLS from $DOCKER_CERT_PATH) or ssh://user@host"
)
_AUTH_HINT = (
    "the daemon, or a proxy or authorization plugin in front of it, refused the request; check the "
    "TLS client certificate ($DOCKER_CERT_PATH) or the proxy's credentials"
)
_STATUS_CODE = re.compile(r"^(?:Exited|Restarting) \((-?\d+)\)")
_STATUS_HEALTH = re.compile(r"\((healthy|unhealthy|health: starting)\)\s*$")


def _import_client() -> Any:
    try:
        # The SDK ships no type information; everything from it is typed Any here.
        import docker
        import docker.errors
        import docker.utils
    except ImportError as exc:
        raise ImportError(
            f"the docker toolset needs the `docker` package: pip install 'devops-agent[{EXTRA}]'"
        ) from exc
    return docker


class _Conf:
    def __init__(
        self, base_url: str | None, api_version: str | None, timeout_s: float, logs_max_bytes: int
    ) -> None:
        self.base_url, self.api_version = base_url, api_version
        self.timeout_s, self.logs_max_bytes = timeout_s, logs_max_bytes

    @property
    def where(self) -> str:
        """The daemon address as the user configured it, for messages."""
        return self.base_url or os.environ.get("DOCKER_HOST") or DEFAULT_HOST


def _config(settings: Settings) -> _Conf:
    conf = settings.docker
    return _Conf(conf.base_url or None, conf.api_version or None, conf.timeout_s, conf.logs_max_bytes)


def _client_kwargs(conf: _Conf) -> dict[str, Any]:
    """``docker.APIClient`` arguments: the environment as the CLI reads it, then our settings."""
    docker = _import_client()
    kwargs: dict[str, Any] = dict(docker.utils.kwargs_from_env())
    if conf.base_url:
        kwargs["base_url"] = conf.base_url
    kwargs["version"] = conf.api_version or "auto"
    kwargs["timeout"] = conf.timeout_s
    if (
        str(kwargs.get("base_url") or "").startswith("ssh://")
        and importlib.util.find_spec("paramiko") is None
    ):
        kwargs["use_ssh_client"] = True  # without paramiko the SDK runs the `ssh` binary instead
    return kwargs


class _Failure(Exception):
    """Carries a ready :class:`ToolResult` out of nested helpers."""

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.error)
        self.result = result


def _open(conf: _Conf) -> Any:
    """A ``docker.APIClient`` for the configured daemon; the caller closes it.

    A local socket that is missing or not ours is reported before the SDK tries it: its unix
    connection leaks the socket object when ``connect`` fails.
    """
    docker = _import_client()
    kwargs = _client_kwargs(conf)
    base = str(kwargs.get("base_url") or DEFAULT_HOST)
    if base.startswith(("unix://", "http+unix://")):
        path = base.split("://", 1)[1]
        if not os.path.exists(path):
            raise _Failure(_unreachable("No such file or directory", conf.where))
        if not os.access(path, os.R_OK | os.W_OK):
            raise _Failure(_unreachable("Permission denied", conf.where))
    return docker.APIClient(**kwargs)


def _unreachable(exc: Exception | str, where: str) -> ToolResult:
    text = str(exc)
    if "No such file or directory" in text:
        hint = f"no Docker socket there: is the daemon running on this host? {_NOT_CONFIGURED}"
    elif "Permission denied" in text:
        hint = (
            "permission denied on the Docker socket: add the user to the `docker` group "
            "or use a rootless daemon"
        )
    else:
        hint = f"is the daemon listening there, and is the network path open? {_NOT_CONFIGURED}"
    return ToolResult.fail(f"cannot connect to the Docker daemon at {where}", hint, transient=True)


def map_error(exc: Exception, what: str, where: str = DEFAULT_HOST) -> ToolResult:
    """Turn a ``docker``/``requests`` exception into a failed :class:`ToolResult`.

    ``what`` names the object (``container shop-api-1``); ``where`` the daemon address.
    """
    docker = _import_client()
    import requests

    if isinstance(exc, docker.errors.APIError):
        status: int | None = exc.status_code
        said = f": {exc.explanation}" if exc.explanation else ""
        if status == 404:
            lister = "docker_images" if what.startswith("image") else "docker_containers(all=True)"
            return ToolResult.fail(
                f"no such {what} (404){said}", f"check the name or id; {lister} lists them", status=404
            )
        if status == 409:
            return ToolResult.fail(
                f"conflict (409){said}",
                "the container is not in a state that allows this (e.g. not running, or running and "
                "not forced); docker_inspect shows its state",
                status=409,
            )
        if status in (401, 403):
            return ToolResult.fail(
                f"the Docker daemon refused the request ({status}){said}", _AUTH_HINT, status=status
            )
        if status == 429:
            headers = exc.response.headers if exc.response is not None else {}
            return rate_limited("Docker daemon", retry_after_seconds(headers.get("Retry-After")), said)
        if status == 501:  # a permanent "not implemented", not a failing daemon: retrying cannot help
            unsupported = "this daemon or its configuration does not support the request"
            if "logging driver" in str(exc.explanation or ""):
                unsupported = (
                    "the container's logging driver keeps no log the daemon can read (driver `none`, or "
                    "a remote driver with dual logging off); docker_inspect shows log_driver: read the "
                    "log where that driver sends it"
                )
            return ToolResult.fail(f"not supported by the Docker daemon (501){said}", unsupported, status=501)
        if status is not None and status >= 500:
            return server_error("Docker daemon", status, said)
        hint = None
        if status == 400 and "too new" in str(exc.explanation or ""):
            hint = "the daemon is older than the pinned API version; unset docker.api_version to negotiate"
        return ToolResult.fail(f"Docker API error ({status}){said}", hint, status=status)
    if isinstance(exc, requests.exceptions.Timeout):
        return ToolResult.fail(
            f"the Docker daemon at {where} did not answer in time",
            "retry later or raise docker.timeout_s",
            transient=True,
        )
    if isinstance(exc, requests.exceptions.ConnectionError):
        return _unreachable(exc, where)
    if isinstance(exc, docker.errors.DockerException):
        cause = exc.__cause__
        # With version="auto" the SDK wraps a failed GET /version in a plain DockerException.
        if isinstance(cause, docker.errors.APIError | requests.exceptions.RequestException):
            return map_error(cause, what, where)
        if isinstance(exc, docker.errors.TLSParameterError):
            hint = (
                "TLS is on (DOCKER_TLS_VERIFY / DOCKER_CERT_PATH): put ca.pem, cert.pem and key.pem "
                "in $DOCKER_CERT_PATH (default ~/.docker), or unset DOCKER_TLS_VERIFY for a plain daemon"
            )
            return ToolResult.fail(f"cannot set up the Docker client: {exc}", hint)
        return ToolResult.fail(f"cannot set up the Docker client: {exc}", _NOT_CONFIGURED)
    if isinstance(exc, requests.exceptions.RequestException):
        return ToolResult.fail(f"Docker request failed: {exc}", transient=True)
    raise exc


# --- summaries: the Engine API's field names, trimmed to what matters for triage -------------------


def _short(ident: Any) -> str:
    return str(ident or "").removeprefix("sha256:")[:12]


def _iso_epoch(epoch: Any) -> str | None:
    if not isinstance(epoch, int | float) or epoch <= 0:
        return None
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def _time(stamp: Any) -> str | None:
    """An API timestamp, or ``None`` for Go's zero time (never started/finished)."""
    return None if not stamp or str(stamp).startswith("0001-01-01") else str(stamp)


def _human(n: float | None) -> str | None:
    if n is None:
        return None
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            return f"{size:.0f}{unit}" if unit == "B" else f"{size:.1f}{unit}"
        size /= 1024
    return None  # unreachable


def _summary_ports(ports: list[dict[str, Any]] | None) -> list[str]:
    """``0.0.0.0:8080->8000/tcp`` for published ports, ``5432/tcp`` for exposed ones, as `docker ps`."""
    out: list[str] = []
    for p in ports or []:
        inner = f"{p.get('PrivatePort')}/{p.get('Type', 'tcp')}"
        if p.get("PublicPort"):
            ip = p.get("IP") or "0.0.0.0"
            host = f"[{ip}]" if ":" in ip else ip
            inner = f"{host}:{p['PublicPort']}->{inner}"
        if inner not in out:
            out.append(inner)
    return out


def container_row(c: dict[str, Any]) -> dict[str, Any]:
    """One container of ``GET /containers/json``, with the reason it needs attention (or ``None``)."""
    status = str(c.get("Status") or "")
    state = str(c.get("State") or "").lower()
    code_match = _STATUS_CODE.match(status)
    exit_code = int(code_match.group(1)) if code_match else None
    health_match = _STATUS_HEALTH.search(status)
    health = health_match.group(1).removeprefix("health: ") if health_match else None
    labels = c.get("Labels") or {}
    project, service = labels.get("com.docker.compose.project"), labels.get("com.docker.compose.service")
    problem = None
    if state == "restarting":
        problem = "restarting" + (f" (last exit code {exit_code})" if exit_code is not None else "")
    elif state == "dead":
        problem = "dead"
    elif state == "exited" and exit_code not in (None, 0):
        problem = f"exited with code {exit_code}"
    elif health == "unhealthy":
        problem = "unhealthy"
    names = [str(n).lstrip("/") for n in c.get("Names") or []]
    return {
        "id": _short(c.get("Id")),
        "name": names[0] if names else _short(c.get("Id")),
        "image": c.get("Image"),
        "state": state,
        "status": status,
        "health": health,
        "exit_code": exit_code,
        "restart_count": None,
        "problem": problem,
        "ports": _summary_ports(c.get("Ports")),
        "compose": f"{project}/{service}" if project and service else None,
        "created": _iso_epoch(c.get("Created")),
    }


def _attention(row: dict[str, Any]) -> int:
    """Sort key: crash-looping or dead first, then failed starts and failed exits, then unhealthy."""
    problem = row["problem"] or ""
    for rank, prefix in enumerate(("restarting", "dead", "failed to start", "exited", "unhealthy")):
        if problem.startswith(prefix):
            return rank
    return 5


def status_counts(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """How many containers are in each state, and which ones need attention."""
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["state"]] = counts.get(r["state"], 0) + 1
    nonzero = [f"{r['name']} ({r['exit_code']})" for r in rows if r["state"] == "exited" and r["exit_code"]]
    summary: dict[str, Any] = {
        "by_state": counts,
        "exited_nonzero": nonzero,
        "restarting": [r["name"] for r in rows if r["state"] == "restarting"],
        "unhealthy": [r["name"] for r in rows if r["health"] == "unhealthy"],
    }
    failed = [r["name"] for r in rows if str(r["problem"] or "").startswith("failed to start")]
    if failed:
        summary["failed_to_start"] = failed
    return summary


def _state(state: dict[str, Any], restart_count: Any) -> dict[str, Any]:
    health = state.get("Health") or None
    last_check = None
    if health and health.get("Log"):
        last = health["Log"][-1]
        last_check = {
            "exit_code": last.get("ExitCode"),
            "output": str(last.get("Output") or "").strip()[:HEALTH_OUTPUT_CHARS],
            "start": last.get("Start"),
            "end": last.get("End"),
        }
    return {
        "status": state.get("Status"),
        "running": bool(state.get("Running")),
        "exit_code": state.get("ExitCode"),
        "oom_killed": bool(state.get("OOMKilled")),
        "error": state.get("Error") or None,
        "started_at": _time(state.get("StartedAt")),
        "finished_at": _time(state.get("FinishedAt")),
        "restart_count": restart_count,
        "health": (
            {
                "status": health.get("Status"),
                "failing_streak": health.get("FailingStreak"),
                "last_check": last_check,
            }
            if health
            else None
        ),
    }


def _limits(host: dict[str, Any]) -> dict[str, Any]:
    """Resource limits that are set (0 means unlimited in the API)."""
    out: dict[str, Any] = {}
    for key, name in (
        ("Memory", "memory"),
        ("MemoryReservation", "memory_reservation"),
        ("MemorySwap", "memory_swap"),
    ):
        value = host.get(key)
        if value and value > 0:
            out[name] = _human(value)
            out[f"{name}_bytes"] = value
    if host.get("NanoCpus"):
        out["cpus"] = host["NanoCpus"] / 1e9
    elif host.get("CpuQuota") and host.get("CpuPeriod"):
        out["cpus"] = round(host["CpuQuota"] / host["CpuPeriod"], 3)
    for key, name in (("CpuShares", "cpu_shares"), ("PidsLimit", "pids_limit")):
        if isinstance(host.get(key), int) and host[key] > 0:
            out[name] = host[key]
    if host.get("CpusetCpus"):
        out["cpuset_cpus"] = host["CpusetCpus"]
    return out


def _bindings(ports: dict[str, Any] | None) -> list[str]:
    out: list[str] = []
    for inner, binds in (ports or {}).items():
        if not binds:
            out.append(inner)
            continue
        for b in binds:
            ip = b.get("HostIp") or "0.0.0.0"
            host = f"[{ip}]" if ":" in ip else ip
            out.append(f"{host}:{b.get('HostPort')}->{inner}")
    return out


_SECRET_NAME = r"[\w.-]*(?:password|passwd|secret|token|api[-_]?key|requirepass|masterauth)[\w.-]*"
_SECRET_INLINE = re.compile(rf"(?i)((?:^|(?<=[\s'\"]))-{{0,2}}{_SECRET_NAME})(=|\s+)((?!-)[^\s'\"]+)")
_SECRET_FLAG = re.compile(rf"(?i)^-{{0,2}}{_SECRET_NAME}$")
_URL_PASSWORD = re.compile(r"(://[^/\s:@]+:)[^@\s/]+@")
_NOT_A_SECRET = re.compile(r"(?i)[-_.](?:file|path|dir|stdin)$")  # --token-file /run/secrets/t
REDACTED = "<redacted>"


def _secret_flag(name: str) -> bool:
    return bool(_SECRET_FLAG.match(name)) and not _NOT_A_SECRET.search(name)


def _hide_inline(match: re.Match[str]) -> str:
    if _NOT_A_SECRET.search(match.group(1)):
        return match.group(0)
    return f"{match.group(1)}{match.group(2)}{REDACTED}"


def redact_args(args: Any) -> Any:
    """A command line (``Cmd``, ``Entrypoint``, a health check's ``Test``) with secret values hidden.

    Values of password/secret/token/API-key options (``--requirepass X``, ``--api-token=X``,
    ``-c password=X``, also inside ``sh -c`` scripts) and passwords in URLs
    (``postgres://user:X@db``) become ``<redacted>``; everything else is kept as the daemon says.
    """
    if isinstance(args, str):
        return _URL_PASSWORD.sub(rf"\1{REDACTED}@", _SECRET_INLINE.sub(_hide_inline, args))
    if not isinstance(args, list):
        return args
    out: list[Any] = []
    hide_next = False
    for arg in args:
        if hide_next and isinstance(arg, str):
            out.append(REDACTED)
            hide_next = False
            continue
        hide_next = isinstance(arg, str) and _secret_flag(arg)
        out.append(arg if hide_next else redact_args(arg))
    return out


def inspect_summary(obj: dict[str, Any]) -> dict[str, Any]:
    """A `docker inspect` digest: state and health, command, env names, mounts, networks, limits.

    Environment values are left out on purpose: they often hold passwords and tokens; secret
    values in the command line are redacted (:func:`redact_args`).
    """
    config, host = obj.get("Config") or {}, obj.get("HostConfig") or {}
    net = obj.get("NetworkSettings") or {}
    policy = host.get("RestartPolicy") or {}
    health_cfg = config.get("Healthcheck") or {}
    return {
        "id": _short(obj.get("Id")),
        "name": str(obj.get("Name") or "").lstrip("/"),
        "image": config.get("Image"),
        "image_id": _short(obj.get("Image")),
        "created": obj.get("Created"),
        "state": _state(obj.get("State") or {}, obj.get("RestartCount")),
        "entrypoint": redact_args(config.get("Entrypoint")),
        "command": redact_args(config.get("Cmd")),
        "working_dir": config.get("WorkingDir") or None,
        "user": config.get("User") or None,
        "env_names": [str(e).split("=", 1)[0] for e in config.get("Env") or []],
        "labels": config.get("Labels") or {},
        "healthcheck": (
            {
                "test": redact_args(health_cfg.get("Test")),
                "interval_s": (health_cfg.get("Interval") or 0) / 1e9 or None,
                "timeout_s": (health_cfg.get("Timeout") or 0) / 1e9 or None,
                "retries": health_cfg.get("Retries"),
            }
            if health_cfg.get("Test")
            else None
        ),
        "mounts": [
            {
                "type": m.get("Type"),
                "source": m.get("Name") if m.get("Type") == "volume" else m.get("Source"),
                "destination": m.get("Destination"),
                "rw": m.get("RW"),
            }
            for m in obj.get("Mounts") or []
        ],
        "networks": {
            name: {
                "ip": n.get("IPAddress") or None,
                "gateway": n.get("Gateway") or None,
                "aliases": n.get("Aliases") or n.get("DNSNames") or [],
            }
            for name, n in (net.get("Networks") or {}).items()
        },
        "ports": _bindings(net.get("Ports")),
        "restart_policy": {
            "name": policy.get("Name") or "no",
            "max_retries": policy.get("MaximumRetryCount") or 0,
        },
        "limits": _limits(host),
        "privileged": bool(host.get("Privileged")),
        "log_driver": (host.get("LogConfig") or {}).get("Type"),
    }


def _total_usage(cpu: dict[str, Any]) -> int:
    return int((cpu.get("cpu_usage") or {}).get("total_usage") or 0)


def cpu_percent(stats: dict[str, Any]) -> float:
    """CPU use over the sampling interval, in percent of one CPU, as `docker stats` computes it."""
    cpu, pre = stats.get("cpu_stats") or {}, stats.get("precpu_stats") or {}
    cpu_delta = _total_usage(cpu) - _total_usage(pre)
    system_delta = int(cpu.get("system_cpu_usage") or 0) - int(pre.get("system_cpu_usage") or 0)
    online = cpu.get("online_cpus") or len((cpu.get("cpu_usage") or {}).get("percpu_usage") or [])
    if system_delta <= 0 or cpu_delta <= 0:
        return 0.0
    return cpu_delta / system_delta * online * 100.0


def memory_used(memory: dict[str, Any]) -> int:
    """Usage without the page cache that can be reclaimed, as `docker stats` shows it.

    cgroup v1 reports ``total_inactive_file``, cgroup v2 ``inactive_file``.
    """
    usage = int(memory.get("usage") or 0)
    extra = memory.get("stats") or {}
    for key in ("total_inactive_file", "inactive_file"):
        if key in extra and extra[key] < usage:
            return usage - int(extra[key])
    return usage


def stats_summary(stats: dict[str, Any]) -> dict[str, Any]:
    """One ``GET /containers/{id}/stats?stream=false`` sample as `docker stats` would show it."""
    memory = stats.get("memory_stats") or {}
    used, limit = memory_used(memory), int(memory.get("limit") or 0)
    networks = (stats.get("networks") or {}).values()
    blkio = (stats.get("blkio_stats") or {}).get("io_service_bytes_recursive") or []
    read = sum(int(e.get("value") or 0) for e in blkio if str(e.get("op") or "")[:1].lower() == "r")
    write = sum(int(e.get("value") or 0) for e in blkio if str(e.get("op") or "")[:1].lower() == "w")
    cpu, pre = stats.get("cpu_stats") or {}, stats.get("precpu_stats") or {}
    throttling, pre_throttling = cpu.get("throttling_data") or {}, pre.get("throttling_data") or {}
    periods = int(throttling.get("periods") or 0) - int(pre_throttling.get("periods") or 0)
    throttled = int(throttling.get("throttled_periods") or 0) - int(
        pre_throttling.get("throttled_periods") or 0
    )
    pids = stats.get("pids_stats") or {}
    pids_limit = pids.get("limit")
    return {
        "name": str(stats.get("name") or "").lstrip("/"),
        "id": _short(stats.get("id")),
        "read": _time(stats.get("read")),
        "running": _time(stats.get("read")) is not None,
        "cpu_percent": round(cpu_percent(stats), 2),
        "online_cpus": cpu.get("online_cpus"),
        "cpu_throttled_percent": round(throttled / periods * 100.0, 2) if periods > 0 else None,
        "memory": {
            "used": _human(used),
            "limit": _human(limit) if limit else None,
            "percent": round(used / limit * 100.0, 2) if limit else None,
            "used_bytes": used,
            "limit_bytes": limit or None,
        },
        "network": {
            "rx_bytes": sum(int(n.get("rx_bytes") or 0) for n in networks),
            "tx_bytes": sum(int(n.get("tx_bytes") or 0) for n in networks),
            "errors": sum(int(n.get("rx_errors") or 0) + int(n.get("tx_errors") or 0) for n in networks),
            "dropped": sum(int(n.get("rx_dropped") or 0) + int(n.get("tx_dropped") or 0) for n in networks),
        },
        "block_io": {"read_bytes": read, "write_bytes": write},
        "pids": pids.get("current"),
        # cgroups report "max" as the largest uint64
        "pids_limit": pids_limit if isinstance(pids_limit, int) and pids_limit < 2**62 else None,
    }


def image_row(image: dict[str, Any]) -> dict[str, Any]:
    tags = [t for t in image.get("RepoTags") or [] if t != "<none>:<none>"]
    return {
        "id": _short(image.get("Id")),
        "repo_tags": tags,
        "dangling": not tags,
        "size": _human(image.get("Size")),
        "size_bytes": image.get("Size"),
        "created": _iso_epoch(image.get("Created")),
        "containers": image.get("Containers") if (image.get("Containers") or -1) >= 0 else None,
    }


# --- logs ----------------------------------------------------------------------------------------


def _tail_bytes(raw: bytes, cap: int) -> tuple[bytes, bool]:
    """The last ``cap`` bytes, starting at a line boundary when cut."""
    if len(raw) <= cap:
        return raw, False
    cut = raw[-cap:]
    newline = cut.find(b"\n")
    return (cut[newline + 1 :] if 0 <= newline < len(cut) - 1 else cut), True


def build(settings: Settings) -> ToolsetBuilder:
    """The Docker toolset; raises ImportError naming the extra when ``docker`` is missing."""
    _import_client()
    ts = ToolsetBuilder(NAME, DESCRIPTION)

    @contextmanager
    def client(conf: _Conf) -> Iterator[Any]:
        api = _open(conf)
        try:
            yield api
        finally:
            api.close()

    def call(what: str, fn: Callable[[Any, _Conf], ToolResult]) -> ToolResult:
        docker = _import_client()
        import requests

        conf = _config(settings)
        try:
            with client(conf) as api:
                return fn(api, conf)
        except _Failure as failure:
            return failure.result
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            return map_error(exc, what, conf.where)

    def state_after(api: Any, container: str) -> dict[str, Any] | None:
        """The container's state after a change, or ``None`` when it cannot be read (e.g. removed)."""
        docker = _import_client()
        try:
            obj = api.inspect_container(container)
        except docker.errors.APIError:
            return None
        return _state(obj.get("State") or {}, obj.get("RestartCount"))

    @ts.tool(category="containers", read_only=True)
    def docker_containers(
        all: bool = False, name: str | None = None, label: str | None = None, limit: int = 50
    ) -> ToolResult:
        """List containers like `docker ps`: state, status, health, exit code, ports, restarts.

        Containers that need attention (restarting, exited with a non-zero code, unhealthy,
        dead) come first, with their restart count and whether they were OOM-killed.

        Args:
            all: include stopped containers (default: running ones only, as `docker ps`).
            name: only containers whose name contains this text.
            label: only containers with this label: "key" or "key=value",
                e.g. "com.docker.compose.project=shop".
            limit: most containers to return (1-500); all are counted.
        """
        limit = max(1, min(limit, LIMIT_MAX))

        def run(api: Any, conf: _Conf) -> ToolResult:
            docker = _import_client()
            filters = {k: v for k, v in (("name", name), ("label", label)) if v}
            # The API's own `limit` would include stopped containers; cut here instead.
            rows = [container_row(c) for c in api.containers(all=all, filters=filters or None)]
            if not rows:
                which = "containers" if all else "running containers (all=True includes stopped ones)"
                wanted = f" matching {filters}" if filters else ""
                return ToolResult.empty(f"no {which}{wanted} on {conf.where}")
            rows.sort(key=_attention)
            # A container whose start failed (port taken, command not found, bad mount) stays in
            # state "created" with the reason only in its inspect; a plain `docker create` has none.
            suspects = [r for r in rows if r["problem"]] + [r for r in rows if r["state"] == "created"]
            for row in suspects[:INSPECT_MAX]:
                try:
                    obj = api.inspect_container(row["id"])
                except docker.errors.NotFound:
                    continue  # removed since the list was read
                state = _state(obj.get("State") or {}, obj.get("RestartCount"))
                row["restart_count"] = state["restart_count"]
                row["oom_killed"] = state["oom_killed"]
                if state["error"]:
                    row["error"] = state["error"]
                if row["state"] == "created" and (state["error"] or state["exit_code"]):
                    row["exit_code"] = state["exit_code"]
                    row["problem"] = "failed to start" + (
                        f": {state['error']}" if state["error"] else f" (exit code {state['exit_code']})"
                    )
            rows.sort(key=_attention)
            data = {
                "daemon": conf.where,
                "total": len(rows),
                "summary": status_counts(rows),
                "containers": rows[:limit],
                "truncated": len(rows) > limit,
            }
            return ToolResult.ok(data, source="docker containers")

        return call("container list", run)

    @ts.tool(category="containers", read_only=True)
    def docker_inspect(container: str) -> ToolResult:
        """A `docker inspect` digest of one container: state, exit code, OOM kill, health checks, restarts,
        image, command, env variable names (never values), mounts, networks, restart policy, limits.

        Args:
            container: the container's name or id.
        """

        def run(api: Any, conf: _Conf) -> ToolResult:
            return ToolResult.ok(inspect_summary(api.inspect_container(container)), source="docker inspect")

        return call(f"container {container}", run)

    @ts.tool(category="containers", read_only=True)
    def docker_logs(
        container: str,
        tail: int = 200,
        since: str | None = None,
        timestamps: bool = True,
        summarize: bool = True,
    ) -> ToolResult:
        """Read the last lines of a container's log (stdout and stderr merged, as `docker logs`).

        A long log comes back summarized: error signatures (message templates of error lines,
        with counts, first/last seen and quoted example lines), the other templates, and the
        last lines, instead of `text` (the full log is kept for the user); summarize=False
        returns the text.

        Args:
            container: the container's name or id.
            tail: how many of the last lines to read (1-5000); the read is capped in bytes too.
            since: only lines from this time on: 15m, 2h, 1d, '2 hours ago', an ISO date.
            timestamps: prefix each line with the daemon's receive time.
            summarize: summarize a long log instead of returning all of it.
        """
        tail = max(1, min(tail, TAIL_MAX))
        try:
            start = parse_since(since) if since else None
        except UserError as exc:
            return ToolResult.fail(exc.message, exc.hint)

        def run(api: Any, conf: _Conf) -> ToolResult:
            raw = api.logs(
                container,
                stdout=True,
                stderr=True,
                stream=False,
                follow=False,
                timestamps=timestamps,
                tail=tail,
                since=int(start.timestamp()) if start else None,
            )
            body, truncated = _tail_bytes(raw, conf.logs_max_bytes)
            text = body.decode("utf-8", errors="replace")
            data: dict[str, Any] = {
                "container": container,
                "lines": len(text.splitlines()),
                "bytes": len(body),
                "truncated": truncated,
                "since": start.isoformat() if start else None,
                "text": text,
            }
            if not text.strip():
                window = f" since {data['since']}" if start else ""
                return ToolResult.empty(f"the log of {container} is empty{window}", container=container)
            summary = summarize_log(text, f"docker/{container}") if summarize else None
            if summary is None:
                return ToolResult.ok(data, source="docker logs", truncated=truncated)
            del data["text"]
            return ToolResult.ok(data | summary, source="docker logs", truncated=truncated).with_raw(text)

        return call(f"container {container}", run)

    @ts.tool(category="containers", read_only=True)
    def docker_stats(container: str) -> ToolResult:
        """One resource snapshot of a container, as `docker stats --no-stream` shows it: CPU %,
        memory used/limit/% (without reclaimable page cache), network and block I/O, process count.

        Args:
            container: the container's name or id.
        """

        def run(api: Any, conf: _Conf) -> ToolResult:
            data = stats_summary(api.stats(container, stream=False))
            if not data["running"]:
                return ToolResult.empty(
                    f"{container} is not running: it has no live stats", container=container
                )
            return ToolResult.ok(data, source="docker stats")

        return call(f"container {container}", run)

    @ts.tool(category="containers", read_only=True)
    def docker_images(name: str | None = None, dangling: bool | None = None, limit: int = 50) -> ToolResult:
        """List local images, newest first: repository tags, id, size, created.

        Args:
            name: only images whose reference matches, e.g. "registry.example.com/shop/api" or "redis:7*".
            dangling: True for untagged images only, False for tagged ones only.
            limit: most images to return (1-500); all are counted.
        """
        limit = max(1, min(limit, LIMIT_MAX))

        def run(api: Any, conf: _Conf) -> ToolResult:
            filters = {"dangling": dangling} if dangling is not None else None
            rows = [image_row(i) for i in api.images(name=name, filters=filters)]
            if not rows:
                return ToolResult.empty(f"no images match on {conf.where}")
            rows.sort(key=lambda r: r["created"] or "", reverse=True)
            data = {
                "total": len(rows),
                "total_size": _human(sum(int(r["size_bytes"] or 0) for r in rows)),
                "dangling": sum(r["dangling"] for r in rows),
                "images": rows[:limit],
                "truncated": len(rows) > limit,
            }
            return ToolResult.ok(data, source="docker images")

        return call(f"image {name}" if name else "image list", run)

    def stop_or_restart(container: str, timeout_s: int, verb: Literal["stop", "restart"]) -> ToolResult:
        timeout_s = max(0, min(timeout_s, 600))

        def run(api: Any, conf: _Conf) -> ToolResult:
            getattr(api, verb)(container, timeout=timeout_s)
            data = {
                "container": container,
                "action": "stopped" if verb == "stop" else "restarted",
                "timeout_s": timeout_s,
                "state": state_after(api, container),
            }
            return ToolResult.ok(data, source=f"docker {verb}")

        return call(f"container {container}", run)

    @ts.tool(category="containers", read_only=False, risk="sensitive")
    def docker_restart(container: str, timeout_s: int = 10) -> ToolResult:
        """Restart a container, like `docker restart`: SIGTERM, then SIGKILL after timeout_s, then start.

        Args:
            container: the container's name or id.
            timeout_s: seconds to wait for a graceful stop before killing (0-600).
        """
        return stop_or_restart(container, timeout_s, "restart")

    @ts.tool(category="containers", read_only=False, risk="sensitive")
    def docker_stop(container: str, timeout_s: int = 10) -> ToolResult:
        """Stop a running container, like `docker stop`: SIGTERM, then SIGKILL after timeout_s.

        Args:
            container: the container's name or id.
            timeout_s: seconds to wait for a graceful stop before killing (0-600).
        """
        return stop_or_restart(container, timeout_s, "stop")

    @ts.tool(category="containers", read_only=False, risk="destructive")
    def docker_rm(container: str, force: bool = False) -> ToolResult:
        """Remove a container, like `docker rm`; its named volumes are kept.

        Args:
            container: the container's name or id.
            force: kill and remove a running container (otherwise the daemon refuses with a conflict).
        """

        def run(api: Any, conf: _Conf) -> ToolResult:
            api.remove_container(container, force=force)
            return ToolResult.ok(
                {"container": container, "action": "removed", "force": force}, source="docker rm"
            )

        return call(f"container {container}", run)

    return ts


def check(settings: Any) -> tuple[bool, str]:
    """Health check for ``devops-agent doctor``: does the daemon answer ``/_ping`` and ``/version``?"""
    try:
        docker = _import_client()
    except ImportError as exc:
        return False, str(exc)
    import requests

    conf = _config(settings)
    try:
        api = _open(conf)
    except _Failure as failure:
        failed = failure.result
        return False, f"docker: {failed.error}" + (f" ({failed.hint})" if failed.hint else "")
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        failed = map_error(exc, "daemon", conf.where)
        return False, f"docker: {failed.error}" + (f" ({failed.hint})" if failed.hint else "")
    try:
        api.ping()
        version = api.version()
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        failed = map_error(exc, "daemon", conf.where)
        return False, f"docker: {failed.error}" + (f" ({failed.hint})" if failed.hint else "")
    finally:
        api.close()
    return True, (
        f"docker: {conf.where} (Docker Engine {version.get('Version')}, API {api.api_version}, "
        f"{version.get('Os')}/{version.get('Arch')})"
    )


def register(registry: ToolRegistry) -> None:
    """Entry point of the ``devops_agent.toolsets`` group."""
    registry.add_toolset(NAME, build, DESCRIPTION, extra=EXTRA)
