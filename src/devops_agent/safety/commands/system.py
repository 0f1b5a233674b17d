"""Domain knowledge for host administration: processes, power, cron, firewall, packages, users, mounts.

Must not run anything or parse shell syntax; it sees one argv whose ``argv[0]`` is the program.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import Recurse, Verdict, destr, has_flag, mut, positionals, ro, unk


def kill(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``kill``/``pkill``/``killall``: mutating; PID 1, ``-1`` (all) or ``killall -9`` destructive."""
    name = argv[0]
    args = argv[1:]
    if name == "kill" and has_flag(args, "-l", "-L", "--list"):
        return ro("kill -l: lists signal names", "kill.read")
    pos = [a for a in args if not a.startswith("-") or a == "-1"]
    hard = any(a in ("-9", "-KILL", "-SIGKILL", "-s9") for a in args) or "KILL" in args
    if name == "kill" and any(p in ("1", "-1") for p in pos):
        return destr("kill 1 / kill -1: kills init or every process you can signal", "kill.init")
    if name == "killall5" or (name == "killall" and hard):
        return destr(f"{name} -9: force-kills every process with that name (no clean shutdown)", "kill.all")
    if name == "pkill" and has_flag(args, "-u", "-U") and hard:
        return destr("pkill -9 -u: force-kills every process of a user", "kill.all")
    return mut(f"{name}: sends a signal that stops processes", "kill.signal")


def power(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``shutdown``/``reboot``/``halt``/``poweroff``/``init 0|6``: destructive (the host goes away)."""
    if argv[0] == "shutdown" and has_flag(argv[1:], "-c"):
        return mut("shutdown -c: cancels a scheduled shutdown", "power.cancel")
    if argv[0] in ("init", "telinit") and not set(argv[1:]) & {"0", "6", "1", "s", "S"}:
        return unk(f"{argv[0]}: changes runlevel", "power")
    return destr(f"{argv[0]}: takes the host down", "power.off")


def crontab(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``crontab -l`` reads, ``-r`` removes every job, ``-e`` or a file replaces the table."""
    args = argv[1:]
    if has_flag(args, "-r"):
        return destr("crontab -r: deletes every cron job of the user", "crontab.remove")
    if has_flag(args, "-l"):
        return ro("crontab -l: lists cron jobs", "crontab.read")
    return mut("crontab: edits or replaces the cron table", "crontab.edit")


def iptables(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``iptables``/``ip6tables``/``nft``/``ufw``: listing reads; flushing destroys; rules mutate."""
    name = argv[0]
    args = argv[1:]
    if name == "nft":
        pos = positionals(args)
        if pos and pos[0] == "list":
            return ro("nft list: reads rules", "firewall.read")
        if pos and pos[0] in ("flush", "delete"):
            return destr(f"nft {pos[0]}: removes firewall rules", "firewall.flush")
        return mut("nft: changes firewall rules", "firewall.mutate")
    if name == "ufw":
        pos = positionals(args)
        if pos and pos[0] in ("status", "show", "version", "app"):
            return ro(f"ufw {pos[0]}", "firewall.read")
        if pos and pos[0] in ("disable", "reset", "delete"):
            return destr(f"ufw {pos[0]}: removes firewall protection", "firewall.flush")
        return mut("ufw: changes firewall rules", "firewall.mutate")
    if name.endswith("-save"):
        return ro(f"{name}: prints rules", "firewall.read")
    if name.endswith("-restore"):
        return destr(f"{name}: replaces every firewall rule", "firewall.flush")
    if has_flag(args, "-F", "--flush", "-X", "--delete-chain", "-Z", "--zero"):
        return destr(f"{name} -F/-X: flushes firewall rules", "firewall.flush")
    if has_flag(args, "-P", "--policy") and any(a in ("DROP", "REJECT") for a in args):
        return destr(f"{name} -P DROP: can cut off all traffic including this session", "firewall.flush")
    if has_flag(
        args,
        "-A",
        "--append",
        "-I",
        "--insert",
        "-D",
        "--delete",
        "-R",
        "--replace",
        "-N",
        "--new-chain",
        "-P",
        "--policy",
        "-E",
        "--rename-chain",
    ):
        return mut(f"{name}: changes firewall rules", "firewall.mutate")
    if has_flag(args, "-L", "--list", "-S", "--list-rules", "-C", "--check", "-h", "--help"):
        return ro(f"{name} -L: lists rules", "firewall.read")
    return unk(f"{name}: no recognised action", "firewall")


def admin(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """User, mount, kernel-module and sysctl administration."""
    name = argv[0]
    args = argv[1:]
    if name in ("userdel", "groupdel", "deluser", "delgroup", "rmmod", "modprobe") and (
        name != "modprobe" or has_flag(args, "-r", "--remove")
    ):
        return destr(f"{name}: removes users, groups or kernel modules", "admin.remove")
    if name == "mount" and not positionals(args, ("-t", "-o")):
        return ro("mount with no arguments lists mounts", "admin.read")
    if (
        name == "sysctl"
        and not any("=" in a for a in args)
        and not has_flag(args, "-w", "-p", "--load", "--system")
    ):
        return ro("sysctl: reads kernel parameters", "admin.read")
    if name in ("swapoff", "umount"):
        return mut(f"{name}: detaches storage", "admin.mutate")
    return mut(f"{name}: changes host administration state", "admin.mutate")
