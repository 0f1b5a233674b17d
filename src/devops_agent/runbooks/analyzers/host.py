"""Host analyzers: identity and uptime (``host_overview``) and unhealthy processes and units
(``failing_processes``), from ``system_overview`` and ``system_failing_processes``.

Must not call tools or do I/O.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from devops_agent.report import Finding, Gap, Severity
from devops_agent.runbooks.analyzers.base import (
    CannotAnalyze,
    Evidence,
    Item,
    as_mapping,
    checked,
    describe_item,
    fmt_duration,
    number,
    register_analyzer,
    results_for,
    source_of,
    structured,
)


def _uptime_s(data: dict[str, Any]) -> float | None:
    uptime = number(data.get("uptime_s"))
    if uptime is not None:
        return uptime
    boot = data.get("boot_time")
    if (epoch := number(boot)) is not None:
        return time.time() - epoch
    try:
        return time.time() - datetime.fromisoformat(str(boot)).timestamp()
    except ValueError:
        return None


@register_analyzer("host_overview")
def host_overview(evidence: Evidence, params: dict[str, Any], inputs: dict[str, Any]) -> list[Item]:
    """An info finding naming the host; a reboot less than ``recent_reboot_s`` (3600) ago is medium."""
    recent = float(params.get("recent_reboot_s", 3600))
    findings: list[Item] = []
    for result in results_for(evidence, "system_overview"):
        if result.status != "success":
            continue
        data = as_mapping(structured(result))
        if not any(data.get(k) for k in ("hostname", "os", "kernel", "uptime_s", "boot_time")):
            raise CannotAnalyze("system_overview output has none of hostname/os/kernel/uptime_s")
        findings.append(checked(result, 1, "host snapshot"))
        host = str(data.get("hostname") or "this host")
        uptime = _uptime_s(data)
        lines = [
            f"hostname {host}",
            f"os {data.get('os', '?')}, kernel {data.get('kernel', '?')}, {data.get('cpu_count', '?')} CPUs",
        ]
        if uptime is not None:
            lines.append(f"up {fmt_duration(uptime)} (boot time {data.get('boot_time', '?')})")
        if data.get("platform"):
            lines.append(f"platform {data['platform']}")
        users = data.get("users")
        if isinstance(users, list):
            names = sorted({str(u.get("name", u)) if isinstance(u, dict) else str(u) for u in users})
            lines.append(f"logged in: {', '.join(names) if names else 'nobody'}")
        elif number(data.get("users_logged_in")) is not None:
            lines.append(f"logged in: {data['users_logged_in']} session(s)")
        up = f", up {fmt_duration(uptime)}" if uptime is not None else ""
        findings.append(
            Finding(
                severity="info",
                title=f"Host {host}: {data.get('os', 'unknown OS')}{up}",
                evidence=lines,
                source=source_of(result),
            )
        )
        if uptime is not None and uptime < recent:
            findings.append(
                Finding(
                    severity="medium",
                    title=f"{host} rebooted {fmt_duration(uptime)} ago",
                    detail="A recent reboot explains restarted services and lost in-memory state; "
                    "find out whether it was planned.",
                    evidence=lines[2:3],
                    source=source_of(result),
                    next_steps=[
                        "Who or what rebooted it: `last -x reboot shutdown | head`",
                        "End of the previous boot (panic, OOM, watchdog?): "
                        "`journalctl -b -1 -n 200 --no-pager`",
                    ],
                )
            )
    return findings


def _section(data: dict[str, Any], check: _Check) -> tuple[int, list[Any], str | None]:
    """``(count, records, unavailable_reason)`` for one check.

    Accepts a list of records (with an optional ``<name>_count`` for the uncapped total), a bare
    count, or a sub-report ``{available, reason, count, <list>}`` as the system tool returns for
    parts it may not be able to read (systemd, the kernel log).
    """
    key = next((k for k in check.keys if k in data), None)
    if key is None:
        return 0, [], None
    value = data[key]
    if isinstance(value, dict):
        if value.get("available") is False:
            return 0, [], str(value.get("reason") or "not available on this host")
        records = next((v for k, v in value.items() if isinstance(v, list)), [])
        return int(number(value.get("count")) or len(records)), records, None
    if isinstance(value, list):
        total = number(data.get(check.count_key)) if check.count_key else None
        return int(total if total is not None else len(value)), value, None
    return int(number(value) or 0), [], None


@dataclass(frozen=True)
class _Check:
    keys: tuple[str, ...]
    count_key: str | None
    one: str
    many: str
    detail: str
    next_step: str
    severity: Severity


_CHECKS = (
    _Check(
        ("oom_kills", "oom"),
        None,
        "OOM kill",
        "OOM kills",
        "The kernel's out-of-memory killer ended processes; whatever ran there restarted or died.",
        "Compare the victim's memory limit (cgroup/container) with its usage: "
        "`journalctl -k | grep -i -A5 'out of memory'`",
        "high",
    ),
    _Check(
        ("failed_units", "systemd"),
        None,
        "failed systemd unit",
        "failed systemd units",
        "Failed units are services that exited with an error or could not start.",
        "`systemctl status <unit>` and `journalctl -u <unit> -n 100 --no-pager` for the reason; "
        "`systemctl reset-failed <unit>` once fixed",
        "medium",
    ),
    _Check(
        ("uninterruptible", "d_state"),
        "uninterruptible_count",
        "process in uninterruptible sleep (D state)",
        "processes in uninterruptible sleep (D state)",
        "D-state processes wait on I/O that does not complete: a slow disk, a hung NFS mount, a driver.",
        "Check `dmesg -T | tail -50` for I/O errors and hung tasks, and `iostat -x 1 3` for saturated disks",
        "medium",
    ),
    _Check(
        ("zombies",),
        "zombie_count",
        "zombie process",
        "zombie processes",
        "Zombies use no CPU or memory, only a PID; their parent is not reaping its children.",
        "Find the parent with `ps -o ppid= -p <pid>` and fix or restart it",
        "low",
    ),
)


@register_analyzer("failing_processes")
def failing_processes(evidence: Evidence, params: dict[str, Any], inputs: dict[str, Any]) -> list[Item]:
    """OOM kills (high), failed units and D-state processes (medium), zombies (low; medium from
    ``zombie_warn`` (10) on). A part the host does not let us read (no systemd, no kernel log)
    is "not checked" and a gap: its silence is no all-clear."""
    zombie_warn = int(params.get("zombie_warn", 10))
    findings: list[Item] = []
    for result in results_for(evidence, "system_failing_processes"):
        if result.status != "success":
            continue
        data = as_mapping(structured(result))
        findings.append(checked(result, 1, "process table snapshot"))
        not_checked: list[tuple[str, str]] = []
        for check in _CHECKS:
            count, records, unavailable = _section(data, check)
            if unavailable:
                not_checked.append((check.many, unavailable))
            if not count:
                continue
            severity = check.severity
            if check.keys[0] == "zombies" and count >= zombie_warn:
                severity = "medium"
            names = ", ".join(_label(r) for r in records[:3])
            title = f"{count} {check.one if count == 1 else check.many}" + (f": {names}" if names else "")
            findings.append(
                Finding(
                    severity=severity,
                    title=title,
                    detail=check.detail,
                    evidence=[describe_item(r) for r in records[:10]],
                    source=source_of(result),
                    next_steps=[check.next_step],
                )
            )
        if not any(isinstance(f, Finding) for f in findings):
            findings.append(
                Finding(
                    severity="info",
                    title="No OOM kills, failed units, D-state or zombie processes"
                    + (" among the parts checked" if not_checked else ""),
                    source=source_of(result),
                )
            )
        if not_checked:
            findings.append(
                Finding(
                    severity="info",
                    title="Not checked: " + ", ".join(what for what, _ in not_checked),
                    detail="; ".join(f"{what}: {why}" for what, why in not_checked) + ".",
                    source=source_of(result),
                )
            )
            step = str(result.metadata.get("step") or "system_failing_processes")
            findings += [
                Gap(step=step, tool="system_failing_processes", reason=f"{what} not checked: {why}")
                for what, why in not_checked
            ]
    return findings


def _label(record: Any) -> str:
    if isinstance(record, dict):
        return str(record.get("unit") or record.get("name") or record.get("pid") or "?")
    return str(record)
