"""Domain knowledge for ``systemctl``, ``service`` and ``journalctl``.

Must not run anything or parse shell syntax; it sees one argv whose ``argv[0]`` is the program.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import Recurse, Verdict, destr, has_flag, mut, positionals, ro, unk

_VALUED = (
    "-H",
    "--host",
    "-M",
    "--machine",
    "-t",
    "--type",
    "--state",
    "-p",
    "--property",
    "-n",
    "--lines",
    "-o",
    "--output",
    "-s",
    "--signal",
    "--kill-who",
)
_READ = {
    "status",
    "show",
    "list-units",
    "list-unit-files",
    "list-sockets",
    "list-timers",
    "list-jobs",
    "list-dependencies",
    "list-machines",
    "is-active",
    "is-enabled",
    "is-failed",
    "is-system-running",
    "cat",
    "help",
    "show-environment",
    "get-default",
}
_MUTATE = {
    "start",
    "stop",
    "restart",
    "reload",
    "try-restart",
    "reload-or-restart",
    "try-reload-or-restart",
    "enable",
    "disable",
    "reenable",
    "daemon-reload",
    "daemon-reexec",
    "reset-failed",
    "preset",
    "set-property",
    "edit",
    "link",
    "revert",
    "set-environment",
    "unset-environment",
    "condrestart",
}
_DESTROY = {
    "mask",
    "kill",
    "isolate",
    "poweroff",
    "reboot",
    "halt",
    "kexec",
    "suspend",
    "hibernate",
    "hybrid-sleep",
    "emergency",
    "rescue",
    "default",
    "switch-root",
    "set-default",
    "clean",
}


def systemctl(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Classify ``systemctl`` by verb."""
    pos = positionals(argv[1:], _VALUED)
    if not pos:
        return ro("systemctl with no verb lists units", "systemctl.list")
    verb = pos[0]
    if verb in _READ:
        return ro(f"systemctl {verb}: reads unit state", "systemctl.read")
    if verb in _DESTROY:
        return destr(f"systemctl {verb}: can take the host or its services down", f"systemctl.{verb}")
    if verb in _MUTATE:
        return mut(f"systemctl {verb}: changes unit state", "systemctl.mutate")
    if verb == "unmask":
        return mut("systemctl unmask: changes unit state", "systemctl.mutate")
    return unk(f"systemctl {verb}: not a verb this classifier knows", "systemctl")


def service(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Classify SysV ``service NAME ACTION``."""
    pos = positionals(argv[1:])
    if has_flag(argv[1:], "--status-all") or (len(pos) >= 2 and pos[1] == "status"):
        return ro("service status: reads service state", "systemctl.read")
    if len(pos) >= 2:
        return mut(f"service {pos[1]}: changes service state", "systemctl.mutate")
    return unk("service without an action", "systemctl")


def journalctl(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``journalctl`` reads logs, except the vacuum/rotate/flush maintenance options."""
    args = argv[1:]
    for a in args:
        if a.startswith("--vacuum-"):
            return mut(f"journalctl {a.split('=')[0]}: deletes archived journal files", "journalctl.vacuum")
    if has_flag(
        args,
        "--rotate",
        "--flush",
        "--sync",
        "--relinquish-var",
        "--smart-relinquish-var",
        "--setup-keys",
        "--update-catalog",
    ):
        return mut("journalctl maintenance option: changes journal files", "journalctl.maintenance")
    return ro("journalctl: reads the journal", "journalctl.read")
