"""The ``system`` toolset: host resource usage and unhealthy processes, read through psutil.

Read-only by construction: these tools observe the local host (CPU, memory, disks, processes,
listening sockets, failed systemd units, OOM kills) and never signal, renice or kill anything, and
never run a command other than the fixed read-only ``systemctl --failed`` and ``dmesg`` calls.
Processes that vanish or deny access while being inspected are skipped or reported with unknown
fields, never raised.
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
import shutil
import socket
import subprocess
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import psutil
from pydantic import Field

from devops_agent.config import Settings
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.registry import ToolRegistry

NAME = "system"
DESCRIPTION = "Host resource usage (CPU, memory, disks, processes, ports) via psutil"

# Filesystems that do not hold data (kernel interfaces, memory-backed, read-only images).
# overlay is kept: it is the root filesystem of most containers.
# fmt: off
PSEUDO_FS = frozenset({
    "autofs", "binfmt_misc", "bpf", "cgroup", "cgroup2", "configfs", "debugfs", "devpts", "devtmpfs",
    "efivarfs", "fusectl", "fuse.gvfsd-fuse", "fuse.lxcfs", "fuse.portal", "hugetlbfs", "mqueue", "nfsd",
    "nsfs", "proc", "pstore", "ramfs", "rpc_pipefs", "securityfs", "selinuxfs", "squashfs", "sysfs",
    "tmpfs", "tracefs",
})
# fmt: on
STATVFS_TIMEOUT_S = 2.0
OOM_RE = re.compile(r"Killed process (\d+) \(([^)]*)\)")
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_SELF_CGROUP = Path("/proc/self/cgroup")
# cgroup v1 writes "no limit" as 2**63-1 rounded down to a page; anything this large is no limit
CGROUP_V1_UNLIMITED = 1 << 60


def human_bytes(n: float | None) -> str | None:
    """``1536`` → ``"1.5 KiB"``; ``None`` stays ``None``."""
    if n is None:
        return None
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def _iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, UTC).isoformat()


def _disk_stats(mount: str) -> dict[str, Any]:
    """Bytes and inode usage of one mount. Raises OSError when the mount cannot be read."""
    usage = psutil.disk_usage(mount)
    out: dict[str, Any] = {
        "total_bytes": usage.total,
        "used_bytes": usage.used,
        "free_bytes": usage.free,
        "percent": usage.percent,
        "inodes_percent": None,
    }
    if hasattr(os, "statvfs"):
        st = os.statvfs(mount)
        if st.f_files > 0:
            out["inodes_percent"] = round((st.f_files - st.f_ffree) / st.f_files * 100, 1)
    return out


def _stats_with_timeout(mounts: list[str]) -> dict[str, dict[str, Any]]:
    """Stat every mount in parallel daemon threads: a hung network mount cannot hang the tool."""
    results: dict[str, dict[str, Any]] = {}

    def worker(mount: str) -> None:
        try:
            results[mount] = _disk_stats(mount)
        except OSError as exc:
            results[mount] = {"error": exc.strerror or str(exc)}

    threads = [threading.Thread(target=worker, args=(m,), daemon=True) for m in mounts]
    for t in threads:
        t.start()
    deadline = time.monotonic() + STATVFS_TIMEOUT_S
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    return {m: results.get(m, {"error": "statvfs timed out (hung network filesystem?)"}) for m in mounts}


def _cgroup_paths() -> tuple[str | None, str | None]:
    """This process's cgroup: ``(v2 path, v1 memory-controller path)``, ``None`` where absent."""
    v2 = v1 = None
    try:
        lines = PROC_SELF_CGROUP.read_text().splitlines()
    except OSError:
        return None, None
    for line in lines:
        hier, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hier == "0" and controllers == "":
            v2 = path
        elif "memory" in controllers.split(","):
            v1 = path
    return v2, v1


def _cgroup_file(controller_dir: Path, cgroup: str | None, name: str) -> Path | None:
    """``name`` in this process's own cgroup directory, else at the top of ``controller_dir`` (a
    container sees its own cgroup there, under whatever path /proc/self/cgroup names)."""
    dirs = [controller_dir / cgroup.lstrip("/")] if cgroup and cgroup != "/" else []
    for d in [*dirs, controller_dir]:
        if (d / name).is_file():
            return d / name
    return None


def _read_int(path: Path | None) -> int | None:
    """An integer cgroup file (``max`` or an unreadable file: ``None``)."""
    if path is None:
        return None
    try:
        text = path.read_text().split()
        return int(text[0]) if text and text[0] != "max" else None
    except (OSError, ValueError):
        return None


def _stat_value(path: Path | None, key: str) -> int | None:
    """One ``key value`` line of a cgroup ``memory.stat`` file."""
    if path is None:
        return None
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        return None
    return None


def cgroup_memory(host_total: int) -> dict[str, Any] | None:
    """The memory limit of this process's cgroup (a container's ``--memory``, a systemd unit's
    ``MemoryMax``) and the usage counted against it; ``None`` without a limit below ``host_total``.

    The OOM killer acts at this limit, whatever the host's totals say. ``working_set_bytes`` is
    usage less inactive page cache, the figure the kubelet and ``docker stats`` compare to the limit.
    """
    v2, v1 = _cgroup_paths()
    if v2 is not None and (f := _cgroup_file(CGROUP_ROOT, v2, "memory.max")) is not None:
        limit, usage = _read_int(f), _read_int(f.with_name("memory.current"))
        inactive = _stat_value(f.with_name("memory.stat"), "inactive_file")
        version = 2
    else:
        mem = CGROUP_ROOT / "memory"
        f = _cgroup_file(mem, v1, "memory.limit_in_bytes")
        if f is None:
            return None
        limit, usage = _read_int(f), _read_int(f.with_name("memory.usage_in_bytes"))
        inactive = _stat_value(f.with_name("memory.stat"), "total_inactive_file")
        version = 1
    if limit is None or limit >= CGROUP_V1_UNLIMITED or limit >= host_total:
        return None
    out: dict[str, Any] = {"cgroup_version": version, "limit_bytes": limit, "usage_bytes": usage}
    if usage is not None:
        working = max(0, usage - (inactive or 0))
        out["working_set_bytes"] = working
        out["percent"] = round(working / limit * 100, 1) if limit else None
    return out


def cgroup_cpu_limit() -> float | None:
    """CPUs this process's cgroup may use (``cpu.max`` / CFS quota), ``None`` when unlimited."""
    v2, _ = _cgroup_paths()
    quota = period = None
    if v2 is not None and (f := _cgroup_file(CGROUP_ROOT, v2, "cpu.max")) is not None:
        with contextlib.suppress(OSError, ValueError):
            q, p = f.read_text().split()[:2]
            quota, period = (None if q == "max" else int(q)), int(p)
    else:
        cpu = CGROUP_ROOT / "cpu"
        quota = _read_int(cpu / "cpu.cfs_quota_us")
        period = _read_int(cpu / "cpu.cfs_period_us")
    if not quota or quota < 0 or not period:
        return None
    return round(quota / period, 2)


def _fresh_processes() -> list[psutil.Process]:
    """A new ``Process`` object per running pid, shared with no other caller.

    ``psutil.process_iter`` hands out cached objects, and ``cpu_percent(None)`` measures since the
    previous call on the same object: two samplings running at once (parallel runbook steps) would
    reset each other's interval and report impossible percentages.
    """
    procs = []
    for pid in psutil.pids():
        with contextlib.suppress(psutil.Error):
            procs.append(psutil.Process(pid))
    return procs


def _run(argv: list[str], timeout: float = 5.0) -> tuple[int, str, str]:
    proc = subprocess.run(argv, capture_output=True, timeout=timeout, check=False)
    return proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")


def _failed_units() -> dict[str, Any]:
    if shutil.which("systemctl") is None:
        return {"available": False, "reason": "systemctl is not installed"}
    if not os.path.isdir("/run/systemd/system"):
        try:
            init = psutil.Process(1).name()
        except psutil.Error:
            init = "unknown"
        return {"available": False, "reason": f"systemd is not the init system (PID 1 is {init})"}
    try:
        rc, out, err = _run(["systemctl", "--failed", "--no-legend", "--plain", "--no-pager"])
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"available": False, "reason": f"systemctl failed: {exc}"}
    if rc != 0:
        return {"available": False, "reason": f"systemctl exited {rc}: {err.strip()[:300]}"}
    units = []
    for line in out.splitlines():
        parts = line.split(None, 4)
        if len(parts) >= 4:
            units.append(
                {
                    "unit": parts[0],
                    "load": parts[1],
                    "active": parts[2],
                    "sub": parts[3],
                    "description": parts[4] if len(parts) > 4 else "",
                }
            )
    return {"available": True, "failed_units": units[:100], "count": len(units)}


def _oom_kills(limit: int = 20) -> dict[str, Any]:
    if shutil.which("dmesg") is None:
        return {"available": False, "reason": "dmesg is not installed"}
    try:
        rc, out, err = _run(["dmesg"])
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"available": False, "reason": f"dmesg failed: {exc}"}
    if rc != 0:
        return {"available": False, "reason": f"kernel log not readable: {err.strip()[:300]}"}
    kills = []
    for line in out.splitlines():
        if m := OOM_RE.search(line):
            kills.append({"pid": int(m.group(1)), "name": m.group(2), "line": line.strip()[:300]})
    return {"available": True, "recent": kills[-limit:], "count": len(kills)}


def build(settings: Settings) -> ToolsetBuilder:
    """The system toolset; it needs no settings."""
    ts = ToolsetBuilder(NAME, DESCRIPTION)

    @ts.tool(category="system", read_only=True)
    def system_overview() -> ToolResult:
        """Summarize the host: name, OS, kernel, uptime, load average, CPU count and usage, users.

        Use it first when investigating a machine, to see whether it is overloaded or was rebooted.
        """
        boot = psutil.boot_time()
        load = psutil.getloadavg()
        cpus = psutil.cpu_count() or 1
        data = {
            "hostname": socket.gethostname(),
            "os": platform.system(),
            "platform": platform.platform(),
            "kernel": platform.release(),
            "uptime_s": int(time.time() - boot),
            "boot_time": _iso(boot),
            "load_avg": {"1m": round(load[0], 2), "5m": round(load[1], 2), "15m": round(load[2], 2)},
            "load_per_cpu_1m": round(load[0] / cpus, 2),
            "cpu_count": cpus,
            "cpu_count_physical": psutil.cpu_count(logical=False),
            # what this process may actually use: its CPU affinity and its cgroup's quota
            "cpu_count_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cpus,
            "cpu_limit": cgroup_cpu_limit(),
            "cpu_percent": psutil.cpu_percent(interval=0.2),
            "users_logged_in": len(psutil.users()),
        }
        return ToolResult.ok(data, source="psutil")

    @ts.tool(category="system", read_only=True)
    def system_disk_usage(include_pseudo: bool = False) -> ToolResult:
        """List mounted filesystems with size, used, free and inode usage, fullest first.

        Use it when a disk may be full ("No space left on device", failing writes). Pseudo and
        memory-backed filesystems (proc, sysfs, tmpfs, squashfs snaps …) are skipped by default.

        Args:
            include_pseudo: also list pseudo/virtual filesystems such as tmpfs and proc.
        """
        seen: dict[str, Any] = {}
        for part in psutil.disk_partitions(all=True):
            if part.mountpoint in seen:
                continue
            if not include_pseudo and (part.fstype in PSEUDO_FS or not os.path.isdir(part.mountpoint)):
                continue  # not a directory: a container's bind-mounted /etc/hosts and friends
            seen[part.mountpoint] = part
        stats = _stats_with_timeout(list(seen))
        rows = []
        for mount, part in seen.items():
            row: dict[str, Any] = {"mount": mount, "device": part.device, "fstype": part.fstype}
            row.update(stats[mount])
            if "total_bytes" in row:
                for key in ("total", "used", "free"):
                    row[key] = human_bytes(row[f"{key}_bytes"])
            rows.append(row)
        rows.sort(key=lambda r: -(r.get("percent") or -1))
        if not rows:
            return ToolResult.empty("no filesystems found (try include_pseudo=True)")
        return ToolResult.ok({"filesystems": rows}, source="psutil")

    @ts.tool(category="system", read_only=True)
    def system_memory() -> ToolResult:
        """Report RAM and swap usage (total, available, used, percent), in bytes and human units.

        Use it when processes are slow, swapping, or being OOM-killed.
        """
        vm = psutil.virtual_memory()
        sw = psutil.swap_memory()
        virtual: dict[str, Any] = {
            "total_bytes": vm.total,
            "available_bytes": vm.available,
            "used_bytes": vm.used,
            "percent": vm.percent,
        }
        for extra in ("cached", "buffers"):
            if hasattr(vm, extra):
                virtual[f"{extra}_bytes"] = getattr(vm, extra)
        swap: dict[str, Any] = {"total_bytes": sw.total, "used_bytes": sw.used, "percent": sw.percent}
        limit = cgroup_memory(vm.total)
        sections = [virtual, swap] + ([limit] if limit else [])
        for section in sections:
            for key in [k for k in section if k.endswith("_bytes")]:
                section[key.removesuffix("_bytes")] = human_bytes(section[key])
        data: dict[str, Any] = {"virtual": virtual, "swap": swap}
        if limit:
            data["cgroup"] = limit
            data["note"] = (
                f"this process runs under a cgroup memory limit of {limit['limit']} (host total"
                f" {virtual['total']}); the OOM killer acts at the cgroup limit, so judge memory"
                " pressure by cgroup.percent, not virtual.percent"
            )
        return ToolResult.ok(data, source="psutil")

    @ts.tool(category="system", read_only=True)
    def system_top_processes(
        by: Literal["cpu", "memory"] = "cpu", limit: Annotated[int, Field(ge=1, le=200)] = 10
    ) -> ToolResult:
        """List the processes using the most CPU or memory right now.

        CPU is measured over ~0.3 s; 100 means one full core. Use it to find what is loading the
        host; access-denied fields come back as null.

        Args:
            by: sort by "cpu" (percent over the sample) or "memory" (resident set size).
            limit: how many processes to return (1-200).
        """
        procs = _fresh_processes()
        for p in procs:
            with contextlib.suppress(psutil.Error):
                p.cpu_percent(None)  # first sample; the second call reports usage since this one
        time.sleep(0.3)
        cpu_ceiling = 100.0 * (psutil.cpu_count() or 1)
        attrs = [
            "pid",
            "name",
            "username",
            "cpu_percent",
            "memory_percent",
            "memory_info",
            "status",
            "create_time",
            "cmdline",
        ]
        rows = []
        for p in procs:
            try:
                info = p.as_dict(attrs=attrs, ad_value=None)
            except psutil.Error:  # gone since the first sample
                continue
            mem = info["memory_info"]
            cmd = info["cmdline"]
            rows.append(
                {
                    "pid": info["pid"],
                    "name": info["name"],
                    "username": info["username"],
                    # Clock-tick rounding can overshoot a fully busy process by a few percent.
                    "cpu_percent": round(min(info["cpu_percent"] or 0.0, cpu_ceiling), 1),
                    "memory_percent": round(info["memory_percent"] or 0.0, 2),
                    "rss_bytes": mem.rss if mem is not None else None,
                    "rss": human_bytes(mem.rss) if mem is not None else None,
                    "status": info["status"],
                    "started": _iso(info["create_time"]),
                    "cmdline": " ".join(cmd)[:200] if cmd else None,
                }
            )
        key = "cpu_percent" if by == "cpu" else "memory_percent"
        rows.sort(key=lambda r: (r[key], r["rss_bytes"] or 0), reverse=True)
        return ToolResult.ok(
            {"by": by, "process_count": len(rows), "processes": rows[:limit]},
            source="psutil",
            sample_interval_s=0.3,
        )

    @ts.tool(category="system", read_only=True)
    def system_failing_processes() -> ToolResult:
        """Find unhealthy processes: zombies, processes stuck in uninterruptible sleep (D state),
        failed systemd units, and recent out-of-memory kills from the kernel log.

        Use it when a host misbehaves but nothing obvious is using CPU or memory. Parts that cannot
        be checked here (no systemd, kernel log not readable) are reported as unavailable.
        """
        zombies: list[dict[str, Any]] = []
        stuck: list[dict[str, Any]] = []
        for p in psutil.process_iter(["pid", "ppid", "name", "status"]):
            info = p.info
            if info["status"] == psutil.STATUS_ZOMBIE:
                try:
                    parent = psutil.Process(info["ppid"]).name() if info["ppid"] else None
                except psutil.Error:
                    parent = None
                zombies.append(
                    {"pid": info["pid"], "ppid": info["ppid"], "name": info["name"], "parent_name": parent}
                )
            elif info["status"] == psutil.STATUS_DISK_SLEEP:
                try:
                    cmd = " ".join(p.cmdline())[:200] or None
                except psutil.Error:
                    cmd = None
                stuck.append({"pid": info["pid"], "name": info["name"], "cmdline": cmd})
        units = _failed_units()
        ooms = _oom_kills()
        summary = (
            f"{len(zombies)} zombie, {len(stuck)} in uninterruptible sleep, "
            f"{units['count'] if units['available'] else 'unknown'} failed systemd units, "
            f"{ooms['count'] if ooms['available'] else 'unknown'} OOM kills in the kernel log"
        )
        data = {
            "summary": summary,
            "zombies": zombies[:100],
            "zombie_count": len(zombies),
            "uninterruptible": stuck[:100],
            "uninterruptible_count": len(stuck),
            "systemd": units,
            "oom_kills": ooms,
        }
        return ToolResult.ok(data, source="psutil")

    @ts.tool(category="system", read_only=True)
    def system_listening_ports(limit: Annotated[int, Field(ge=1, le=1000)] = 100) -> ToolResult:
        """List sockets listening for connections (TCP LISTEN, bound UDP) with the owning process.

        Use it to check whether a service is up and on which address, or what holds a port.
        The pid and process are null when the OS does not reveal them (run as root to see all).

        Args:
            limit: how many sockets to return (1-1000), ordered by port.
        """
        note = None
        # (family, type, laddr, raddr, status, pid), whichever way we could read them
        conns: list[tuple[Any, ...]] = []
        try:
            conns = [
                (c.family, c.type, c.laddr, c.raddr, c.status, c.pid) for c in psutil.net_connections("inet")
            ]
        except psutil.AccessDenied:  # macOS without root: ask each process we may inspect
            for p in psutil.process_iter():
                try:
                    own = p.net_connections(kind="inet")
                except psutil.Error:
                    continue
                conns.extend((c.family, c.type, c.laddr, c.raddr, c.status, p.pid) for c in own)
            note = "system-wide socket list denied; only sockets of inspectable processes are shown"
        names: dict[int, str | None] = {}
        rows: dict[tuple[Any, ...], dict[str, Any]] = {}
        for family, kind, laddr, raddr, status, pid in conns:
            is_tcp = kind == socket.SOCK_STREAM
            if (is_tcp and status != psutil.CONN_LISTEN) or (not is_tcp and raddr) or not laddr:
                continue
            proto = ("tcp" if is_tcp else "udp") + ("6" if family == socket.AF_INET6 else "")
            if pid is not None and pid not in names:
                try:
                    names[pid] = psutil.Process(pid).name()
                except psutil.Error:
                    names[pid] = None
            key = (proto, laddr.ip, laddr.port, pid)
            rows[key] = {
                "proto": proto,
                "address": laddr.ip,
                "port": laddr.port,
                "pid": pid,
                "process": names.get(pid) if pid is not None else None,
            }
        ordered = sorted(rows.values(), key=lambda r: (r["port"], r["proto"], r["address"]))
        if not ordered:
            return ToolResult.empty("no listening sockets found")
        meta: dict[str, Any] = {"source": "psutil"}
        if note:
            meta["note"] = note
        data = {"count": len(ordered), "sockets": ordered[:limit], "truncated": len(ordered) > limit}
        return ToolResult.ok(data, **meta)

    return ts


def register(registry: ToolRegistry) -> None:
    """Entry point of the ``devops_agent.toolsets`` group."""
    registry.add_toolset(NAME, build, DESCRIPTION)
