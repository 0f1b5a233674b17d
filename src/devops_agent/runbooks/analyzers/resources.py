"""Resource pressure analyzers: disk, memory and CPU load from the ``system_*`` tools.

Thresholds come from the runbook's ``params`` with the defaults documented on each analyzer.
When nothing crosses a threshold, one ``info`` finding records what was checked, so the report
shows evidence that the resource was looked at. Must not call tools or do I/O.
"""

from __future__ import annotations

from typing import Any

from devops_agent.report import Finding, Severity
from devops_agent.results import ToolResult
from devops_agent.runbooks.analyzers.base import (
    CannotAnalyze,
    Evidence,
    Item,
    as_mapping,
    as_records,
    checked,
    dict_field,
    fmt_bytes,
    number,
    register_analyzer,
    results_for,
    shorten,
    source_of,
    structured,
)

# Read-only images (snaps, ISOs) are always 100% full by design; kernel filesystems have no space.
IGNORED_FSTYPES = ("squashfs", "iso9660", "udf", "devtmpfs", "proc", "sysfs", "cgroup", "cgroup2", "nsfs")


def _level(value: float, warn: float, high: float, critical: float) -> Severity | None:
    if value >= critical:
        return "critical"
    if value >= high:
        return "high"
    if value >= warn:
        return "medium"
    return None


def _thresholds(params: dict[str, Any]) -> tuple[float, float, float]:
    warn = float(params.get("warn_percent", 85))
    critical = float(params.get("critical_percent", 95))
    high = float(params.get("high_percent", (warn + critical) / 2))
    return warn, high, critical


def process_line(proc: dict[str, Any]) -> str:
    """One quoted line for a process record from ``system_top_processes``."""
    cmd = proc.get("cmdline")
    if isinstance(cmd, list):
        cmd = " ".join(str(c) for c in cmd)
    cpu, mem = number(proc.get("cpu_percent")), number(proc.get("memory_percent"))
    parts = [f"pid {proc.get('pid', '?')}", str(proc.get("name") or "?")]
    if proc.get("username"):
        parts.append(f"({proc['username']})")
    parts.append(f"cpu {cpu:.1f}%" if cpu is not None else "cpu ?")
    parts.append(f"mem {mem:.1f}%" if mem is not None else "mem ?")
    if proc.get("rss_bytes") is not None:
        parts.append(f"rss {fmt_bytes(proc['rss_bytes'])}")
    if cmd:
        parts.append(shorten(cmd, 100))
    return " ".join(parts)


def top_processes(evidence: Evidence, by: str, limit: int = 5) -> list[str]:
    """Quoted lines for the top processes sorted ``by`` cpu or memory, if that step ran."""
    for result in results_for(evidence, "system_top_processes"):
        if result.metadata.get("args", {}).get("by", "cpu") != by or result.status != "success":
            continue
        procs = as_records(structured(result), "processes")
        return [process_line(p) for p in procs[:limit]]
    return []


def _bytes(section: dict[str, Any], key: str) -> float | None:
    """``key_bytes`` if the tool gave it (then ``key`` is often a human string), else ``key``."""
    exact = number(section.get(f"{key}_bytes"))
    return exact if exact is not None else number(section.get(key))


def _only_success(results: list[ToolResult]) -> list[ToolResult]:
    return [r for r in results if r.status == "success"]


@register_analyzer("disk_pressure")
def disk_pressure(evidence: Evidence, params: dict[str, Any], inputs: dict[str, Any]) -> list[Item]:
    """One finding per filesystem whose space or inode use crosses ``warn_percent`` (85).

    ``high_percent`` (default: halfway to critical) makes it high, ``critical_percent`` (95)
    critical. Filesystems of ``ignore_fstypes`` (read-only images, kernel filesystems) are skipped.
    """
    warn, high, critical = _thresholds(params)
    ignored = set(params.get("ignore_fstypes", IGNORED_FSTYPES))
    findings: list[Item] = []
    looked: list[tuple[float, str]] = []
    sources: list[str] = []
    for result in _only_success(list(results_for(evidence, "system_disk_usage"))):
        parts = as_records(structured(result), "partitions", "disks", "filesystems")
        sources.append(source_of(result))
        if not parts:
            raise CannotAnalyze("system_disk_usage reported no filesystems")
        findings.append(checked(result, len(parts), "filesystems"))
        for part in parts:
            mount = str(part.get("mount") or part.get("mountpoint") or "?")
            if part.get("fstype") in ignored or mount.startswith("/snap/"):
                continue
            total, used = number(part.get("total_bytes")), number(part.get("used_bytes"))
            pct = number(part.get("percent"))
            if pct is None and total and used is not None:
                pct = used / total * 100
            if pct is None:
                if part.get("error"):
                    findings.append(_unreadable_mount(mount, part, result))
                continue
            line = (
                f"{mount} {pct:.1f}% used: {fmt_bytes(used)} of {fmt_bytes(total)}, "
                f"{fmt_bytes(part.get('free_bytes'))} free "
                f"({part.get('device', '?')}, {part.get('fstype', '?')})"
            )
            looked.append((pct, line))
            severity = _level(pct, warn, high, critical)
            if severity:
                findings.append(
                    Finding(
                        severity=severity,
                        title=f"Disk {mount} is {pct:.0f}% full",
                        detail=f"{fmt_bytes(part.get('free_bytes'))} left on {mount}. A full filesystem "
                        "stops writes: logs, databases and temp files fail first.",
                        evidence=[line],
                        source=source_of(result),
                        next_steps=[
                            f"Find what grew: `du -xh --max-depth=2 {mount} 2>/dev/null "
                            "| sort -h | tail -20`",
                            "Look for deleted files still held open by a process: `lsof +L1`",
                            "Check log rotation, old journals (`journalctl --disk-usage`) and container "
                            "images (`docker system df`) before deleting anything by hand",
                        ],
                    )
                )
            inodes = number(part.get("inodes_percent"))
            inode_severity = _level(inodes, warn, high, critical) if inodes is not None else None
            if inode_severity:
                findings.append(
                    Finding(
                        severity=inode_severity,
                        title=f"Inodes on {mount} are {inodes:.0f}% used",
                        detail="When inodes run out no new file can be created even with free space; "
                        "usually millions of small files (sessions, caches, mail queues).",
                        evidence=[f"{mount} inodes {inodes:.1f}% used ({part.get('device', '?')})"],
                        source=source_of(result),
                        next_steps=[
                            f"Find directories with the most files: "
                            f"`du --inodes -x --max-depth=3 {mount} 2>/dev/null | sort -n | tail -20`"
                        ],
                    )
                )
    if not any(isinstance(f, Finding) for f in findings) and looked:
        looked.sort(reverse=True)
        findings.append(
            Finding(
                severity="info",
                title=f"Disk space below {warn:.0f}% on "
                + ("the only filesystem" if len(looked) == 1 else f"all {len(looked)} filesystems"),
                detail=f"Fullest: {looked[0][1].split(':')[0]}.",
                evidence=[line for _, line in looked[:5]],
                source=", ".join(sources),
            )
        )
    return findings


def _unreadable_mount(mount: str, part: dict[str, Any], result: ToolResult) -> Finding:
    return Finding(
        severity="medium",
        title=f"Filesystem {mount} could not be read",
        detail=f"{shorten(part['error'], 200)}. Anything touching a hung mount blocks in D state.",
        evidence=[
            f"{mount} ({part.get('device', '?')}, {part.get('fstype', '?')}): {shorten(part['error'], 200)}"
        ],
        source=source_of(result),
        next_steps=[f"Check the server behind {mount} (NFS/CIFS?) and `dmesg -T | tail` for timeouts"],
    )


@register_analyzer("memory_pressure")
def memory_pressure(evidence: Evidence, params: dict[str, Any], inputs: dict[str, Any]) -> list[Item]:
    """High when available memory < ``low_available_percent`` (10).

    Medium when swap use exceeds ``swap_percent`` (50).
    """
    low_available = float(params.get("low_available_percent", 10))
    swap_limit = float(params.get("swap_percent", 50))
    findings: list[Item] = []
    for result in _only_success(list(results_for(evidence, "system_memory"))):
        data = as_mapping(structured(result))
        findings.append(checked(result, 1, "memory snapshot"))
        virtual = dict_field(data, "virtual") or data
        total, available = _bytes(virtual, "total"), _bytes(virtual, "available")
        used_pct = number(virtual.get("percent"))
        if total and available is not None:
            avail_pct = available / total * 100
        elif used_pct is not None:
            avail_pct = 100 - used_pct
        else:
            raise CannotAnalyze("system_memory output has neither total/available nor percent")
        mem_line = (
            f"memory: {fmt_bytes(total)} total, {fmt_bytes(available)} available ({avail_pct:.1f}%), "
            f"{fmt_bytes(_bytes(virtual, 'used'))} used"
        )
        swap = dict_field(data, "swap")
        swap_total, swap_pct = _bytes(swap, "total"), number(swap.get("percent"))
        swap_line = (
            f"swap: {fmt_bytes(swap_total)} total, {fmt_bytes(_bytes(swap, 'used'))} used ({swap_pct:.0f}%)"
            if swap_total and swap_pct is not None
            else "swap: none configured"
        )
        hogs = top_processes(evidence, "memory")
        before = len(findings)
        if avail_pct < low_available:
            findings.append(
                Finding(
                    severity="high",
                    title=f"Only {avail_pct:.1f}% of memory is available",
                    detail="The kernel will reclaim cache, swap, and then invoke the OOM killer.",
                    evidence=[mem_line, swap_line, *hogs],
                    source=source_of(result),
                    next_steps=[
                        "Check whether the OOM killer already fired: `journalctl -k | grep -i -E 'out of "
                        "memory|killed process'`",
                        "Watch the top consumers grow: `ps -eo pid,rss,etime,cmd --sort=-rss | head`",
                        "If one service leaks, capture a heap profile before restarting it",
                    ],
                )
            )
        if swap_total and swap_pct is not None and swap_pct > swap_limit:
            findings.append(
                Finding(
                    severity="medium",
                    title=f"Swap is {swap_pct:.0f}% used",
                    detail="Heavy swap use slows everything that touches swapped pages.",
                    evidence=[swap_line, mem_line],
                    source=source_of(result),
                    next_steps=["`vmstat 1 5`: sustained si/so columns mean the host is thrashing now"],
                )
            )
        if len(findings) == before:
            findings.append(
                Finding(
                    severity="info",
                    title=f"Memory OK: {avail_pct:.0f}% available",
                    evidence=[mem_line, swap_line, *hogs[:3]],
                    source=source_of(result),
                )
            )
    return findings


@register_analyzer("cpu_load")
def cpu_load(evidence: Evidence, params: dict[str, Any], inputs: dict[str, Any]) -> list[Item]:
    """Load per CPU (1-minute) above ``warn_per_cpu`` (1.5) is medium, above ``high_per_cpu`` (3) high."""
    warn, high = float(params.get("warn_per_cpu", 1.5)), float(params.get("high_per_cpu", 3.0))
    findings: list[Item] = []
    for result in _only_success(list(results_for(evidence, "system_overview"))):
        data = as_mapping(structured(result))
        load = data.get("load_avg")
        if isinstance(load, dict):  # {"1m": .., "5m": .., "15m": ..}
            load = [load.get(k) for k in ("1m", "5m", "15m")] if "1m" in load else list(load.values())
        cpus = number(data.get("cpu_count"))
        if not isinstance(load, list | tuple) or not load or number(load[0]) is None or not cpus:
            raise CannotAnalyze("system_overview output has no load_avg/cpu_count")
        findings.append(checked(result, 1, "load snapshot"))
        loads = [number(v) or 0.0 for v in load[:3]]
        per_cpu = loads[0] / cpus
        evidence_lines = [
            f"load average {' / '.join(f'{v:.2f}' for v in loads)} on {cpus:.0f} CPUs ({per_cpu:.2f} per CPU)"
        ]
        if number(data.get("cpu_percent")) is not None:
            evidence_lines.append(f"cpu busy {number(data.get('cpu_percent')):.0f}%")
        evidence_lines += top_processes(evidence, "cpu")
        severity: Severity = "high" if per_cpu > high else "medium" if per_cpu > warn else "info"
        if severity == "info":
            title = f"CPU load normal: {per_cpu:.2f} per CPU"
            steps: list[str] = []
        else:
            title = f"Load average {loads[0]:.1f} is {per_cpu:.1f}× the {cpus:.0f} CPUs"
            steps = [
                "See who is on CPU right now: `top -o %CPU` or `pidstat 1 5`",
                "High load with idle CPUs means I/O wait or D-state processes: `vmstat 1 5` "
                "(wa and b columns) and `iostat -x 1 3`",
            ]
        findings.append(
            Finding(
                severity=severity,
                title=title,
                detail="" if severity == "info" else "More runnable tasks than CPUs: requests queue.",
                evidence=evidence_lines,
                source=source_of(result),
                next_steps=steps,
            )
        )
    return findings
