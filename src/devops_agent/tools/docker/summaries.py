"""Docker Engine API answers as the ``docker`` tools report them: the API's own field names,
trimmed to what matters for triage (why a container needs attention, its state and health, limits,
a `docker stats`-like sample).

Pure functions over the JSON the daemon sent: this module must not talk to the daemon. Secret
values never leave it: environment variable values are dropped and secret options in a command
line are redacted (:func:`redact_args`).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

HEALTH_OUTPUT_CHARS = 500
_STATUS_CODE = re.compile(r"^(?:Exited|Restarting) \((-?\d+)\)")
_STATUS_HEALTH = re.compile(r"\((healthy|unhealthy|health: starting)\)\s*$")


def _short(ident: Any) -> str:
    return str(ident or "").removeprefix("sha256:")[:12]


def _iso_epoch(epoch: Any) -> str | None:
    if not isinstance(epoch, int | float) or epoch <= 0:
        return None
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def _time(stamp: Any) -> str | None:
    """An API timestamp, or ``None`` for Go's zero time (never started/finished)."""
    return None if not stamp or str(stamp).startswith("0001-01-01") else str(stamp)


def human_size(n: float | None) -> str | None:
    """A byte count as `docker` prints sizes (``12.3MiB``)."""
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


def attention(row: dict[str, Any]) -> int:
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


def state_summary(state: dict[str, Any], restart_count: Any) -> dict[str, Any]:
    """A container's ``State``: status, exit code, OOM kill, error, times, restarts, last health check."""
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
            out[name] = human_size(value)
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
        "state": state_summary(obj.get("State") or {}, obj.get("RestartCount")),
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
            "used": human_size(used),
            "limit": human_size(limit) if limit else None,
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
    """One image of ``GET /images/json``: tags, id, size, created, containers using it."""
    tags = [t for t in image.get("RepoTags") or [] if t != "<none>:<none>"]
    return {
        "id": _short(image.get("Id")),
        "repo_tags": tags,
        "dangling": not tags,
        "size": human_size(image.get("Size")),
        "size_bytes": image.get("Size"),
        "created": _iso_epoch(image.get("Created")),
        "containers": image.get("Containers") if (image.get("Containers") or -1) >= 0 else None,
    }


def tail_bytes(raw: bytes, cap: int) -> tuple[bytes, bool]:
    """The last ``cap`` bytes, starting at a line boundary when cut."""
    if len(raw) <= cap:
        return raw, False
    cut = raw[-cap:]
    newline = cut.find(b"\n")
    return (cut[newline + 1 :] if 0 <= newline < len(cut) - 1 else cut), True
