"""Domain knowledge for ``systemctl``, ``service`` and ``journalctl``.

Both systemd tools parse options with getopt_long: long options may be abbreviated
(``journalctl --vac=1d``, ``--rot``) and options may come before, between or after the verb;
an option that takes a value takes the next word (``systemctl -p status kill nginx`` runs
``kill``). Their option tables (systemd 252) are below; an option not in them is ``unknown``.
Must not run anything or parse shell syntax.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from devops_agent.safety.commands.base import Recurse, Verdict, destr, has_flag, mut, positionals, ro, unk
from devops_agent.safety.commands.options import Spec, parse

SYSTEMCTL = Spec(
    short="ht:p:P:alqfs:H:M:n:o:iTr",
    long="help|h version system user host=|H machine=|M type=|t state= failed property=|p all|a "
    "full|l recursive|r reverse with-dependencies job-mode= show-transaction|T show-types value "
    "check-inhibitors= kill-whom= kill-who= kill-value= signal=|s what= now dry-run quiet|q no-warn "
    "wait no-block no-wall no-reload legend= no-pager no-ask-password global runtime force|f "
    "preset-mode= root= image= image-policy= lines=|n output=|o firmware-setup boot-loader-menu= "
    "boot-loader-entry= reboot-argument= plain timestamp= read-only mkdir marked drop-in= when= "
    "ignore-inhibitors",
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
    "list-automounts",
    "list-paths",
    "is-active",
    "is-enabled",
    "is-failed",
    "is-system-running",
    "cat",
    "help",
    "show-environment",
    "get-default",
    "whoami",
}
_GET_OR_SET = {"log-level", "log-target", "service-watchdogs"}
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
    "preset-all",
    "set-property",
    "link",
    "revert",
    "set-environment",
    "unset-environment",
    "import-environment",
    "condrestart",
    "force-reload",
    "unmask",
    "freeze",
    "thaw",
    "bind",
    "mount-image",
    "add-wants",
    "add-requires",
}
_DESTROY = {
    "mask",
    "kill",
    "clean",
    "isolate",
    "poweroff",
    "reboot",
    "halt",
    "kexec",
    "suspend",
    "hibernate",
    "hybrid-sleep",
    "suspend-then-hibernate",
    "emergency",
    "rescue",
    "default",
    "switch-root",
    "set-default",
    "exit",
    "soft-reboot",
}


def _options_verdict(tool: str, parsed_unknown: Sequence[str], injectable: Sequence[str]) -> Verdict | None:
    if parsed_unknown:
        return unk(f"{tool} {parsed_unknown[0]}: an option this classifier does not know", tool)
    if injectable:
        return unk(f"{tool}: an argument built at run time may be an option", tool)
    return None


def systemctl(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Classify ``systemctl`` by the verb getopt leaves as the first operand."""
    parsed = parse(argv[1:], SYSTEMCTL)
    if (bad := _options_verdict("systemctl", parsed.unknown, parsed.injectable)) is not None:
        return bad
    pos = parsed.operands
    if not pos:
        return ro("systemctl with no verb lists units", "systemctl.list")
    verb = pos[0]
    if verb in _READ:
        return ro(f"systemctl {verb}: reads unit state", "systemctl.read")
    if verb in _GET_OR_SET:
        if len(pos) == 1:
            return ro(f"systemctl {verb}: prints the setting", "systemctl.read")
        return mut(f"systemctl {verb} VALUE: changes the service manager", "systemctl.mutate")
    if verb in _DESTROY:
        return destr(f"systemctl {verb}: can take the host or its services down", f"systemctl.{verb}")
    if verb in _MUTATE:
        return mut(f"systemctl {verb}: changes unit state", "systemctl.mutate")
    if verb == "edit":
        return unk("systemctl edit: opens an editor", "systemctl")
    return unk(f"systemctl {verb}: not a verb this classifier knows", "systemctl")


def service(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Classify SysV ``service NAME ACTION``."""
    pos = positionals(argv[1:])
    if has_flag(argv[1:], "--status-all") or (len(pos) >= 2 and pos[1] == "status"):
        return ro("service status: reads service state", "systemctl.read")
    if len(pos) >= 2:
        return mut(f"service {pos[1]}: changes service state", "systemctl.mutate")
    return unk("service without an action", "systemctl")


JOURNALCTL = Spec(
    short="hefo:aS:U:p:g:c:t:u:NF:xrM:D:i:bkn::qmb::",
    long="system user machine=|M merge|m directory=|D file= root= image= image-policy= namespace= "
    "since=|S until=|U cursor=|c after-cursor= cursor-file= boot?|b unit=|u user-unit= identifier=|t "
    "exclude-identifier= priority=|p facility= grep=|g case-sensitive? dmesg|k output=|o "
    "output-fields= lines?|n reverse|r show-cursor utc catalog|x no-hostname no-full full all|a "
    "follow|f no-tail quiet|q no-pager pager-end|e interval= verify-key= force help|h version "
    "fields|N field=|F list-boots disk-usage vacuum-size= vacuum-files= vacuum-time= verify sync "
    "relinquish-var smart-relinquish-var flush rotate header list-catalog dump-catalog "
    "update-catalog setup-keys new-id128 list-namespaces truncate-newline invocation= "
    "list-invocations",
)
_BOOT_ID = re.compile(r"^(?:[+-]?\d+|[0-9a-f]{32}(?:[+-]\d+)?|all)$")
_JOURNAL_WRITES = {
    "vacuum-size": "deletes archived journal files",
    "vacuum-files": "deletes archived journal files",
    "vacuum-time": "deletes archived journal files",
    "rotate": "rotates the journal files",
    "flush": "moves the journal to /var",
    "sync": "writes unwritten entries to disk",
    "relinquish-var": "stops logging to disk",
    "smart-relinquish-var": "stops logging to disk",
    "setup-keys": "generates a new sealing key pair",
    "update-catalog": "rebuilds the message catalog",
    "cursor-file": "updates the cursor file",
}


def journalctl(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``journalctl`` reads logs, except the maintenance options (matched by abbreviation too)."""
    args = list(argv[1:])
    for i, a in enumerate(args[:-1]):
        # journalctl itself takes the next word as the boot of a bare -b when it looks like one.
        if a in ("-b", "--boot") and _BOOT_ID.match(args[i + 1]):
            args[i : i + 2] = [f"--boot={args[i + 1]}", ""]
    parsed = parse([a for a in args if a != ""], JOURNALCTL)
    names = parsed.names()
    for opt, what in _JOURNAL_WRITES.items():
        if opt in names:
            key = "journalctl.vacuum" if opt.startswith("vacuum") else "journalctl.maintenance"
            return mut(f"journalctl --{opt}: {what}", key)
    if (bad := _options_verdict("journalctl", parsed.unknown, parsed.injectable)) is not None:
        return bad
    return ro("journalctl: reads the journal", "journalctl.read")
