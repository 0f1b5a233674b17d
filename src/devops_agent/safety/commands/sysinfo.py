"""Host and network information tools, and the arguments that make them change the host.

``date``, ``hostname``, ``dmesg``, ``ip``, ``tcpdump``, ``sar``, ``iwconfig``, ``sensors``,
``systemd-analyze``, ``nstat``, ``promtool``, the systemd ``*ctl`` tools, ``ethtool``, ``arp``,
``route``: each reads by default and changes the host with a particular operand or option
(``date MMDDhhmm`` sets the clock as ``date -s`` does; ``ip -b -`` runs ip commands read from
stdin; ``ip netns exec NS CMD`` runs CMD). Options are read as the program reads them (getopt
abbreviation and bundling for the GNU tools, ``ip``'s own prefix matching). Must not run anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import (
    Recurse,
    Verdict,
    has_flag,
    is_harmless_sink,
    mut,
    positionals,
    ro,
    shell_join,
    unk,
    write_target_verdict,
)
from devops_agent.safety.commands.options import Spec, parse
from devops_agent.safety.commands.readers import Reader, judge_options

DATE = Spec(
    "d:f:I::r:Rs:u",
    "date=|d debug file=|f iso-8601?|I reference=|r resolution rfc-email|R rfc-3339= set=|s "
    "universal|u utc uct help version",
)


def date(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``date`` prints the time; ``-s``/``--set`` (or any abbreviation) and an operand that is not
    ``+FORMAT`` (``date 010100002020``) set the system clock."""
    parsed = parse(argv[1:], DATE)
    if parsed.has("set") or any(not op.startswith("+") for op in parsed.operands):
        return mut("date -s / date MMDDhhmm: sets the system clock", "admin.mutate")
    return judge_options("date", Reader(DATE, what="prints the time"), parsed)


HOSTNAME = Spec(
    "aAbdfF:hiIlsvVy",
    "alias|a all-fqdns|A boot|b domain|d fqdn|f long file=|F help|h ip-address|i all-ip-addresses|I "
    "nis|y yp short|s verbose|v version|V",
)


def hostname(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``hostname`` prints; ``hostname NAME``, ``-F FILE`` or ``-b`` renames the host."""
    parsed = parse(argv[1:], HOSTNAME)
    if parsed.operands or parsed.has("file", "boot"):
        return mut("hostname NAME: renames the host", "admin.mutate")
    return judge_options("hostname", Reader(HOSTNAME, what="prints the host name"), parsed)


DMESG = Reader(
    Spec(
        "CcDdEeF:f:HhJkLl:n:PprSs:TtuVWwx",
        "buffer-size=|s clear|C color?|L console-level=|n console-off|D console-on|E ctime|T decode|x "
        "facility=|f file=|F follow|w follow-new|W force-prefix|p help|h human|H json|J kernel|k "
        "level=|l noescape nopager|P notime|t raw|r read-clear|c reltime|e show-delta|d since= "
        "syslog|S time-format= until= userspace|u version|V",
    ),
    changes=("clear", "read-clear", "console-off", "console-on", "console-level"),
    what="reads the kernel log",
)


def dmesg(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``dmesg`` reads the kernel ring buffer; ``-C``/``-c``/``-n``/``-D``/``-E`` clear it or change
    the console (also bundled, ``-Tc``, and abbreviated, ``--cl``)."""
    return judge_options("dmesg", DMESG, parse(argv[1:], DMESG.spec))


def top(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``top`` only reads (interactive without ``-b``, which the executor's timeout bounds)."""
    return ro(f"{argv[0]}: reads process usage", "readonly")


_IP_VALUED = ("-family", "-loops", "-netns", "-rcvbuf", "-rc")
_IP_READ_ACTIONS = (
    "show",
    "list",
    "lst",
    "ls",
    "get",
    "help",
    "monitor",
    "sh",
    "s",
    "l",
    "list-id",
    "pids",
    "identify",
)


def ip(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``ip OBJECT [show|list|get]`` reads; ``add``/``del``/``set``/``flush`` change networking;
    ``-b``/``-batch FILE`` runs ip commands from a file or stdin; ``netns exec``/``vrf exec`` run a
    command. ip matches its options by prefix (``-b`` is ``-batch``, ``-br`` ``-brief``)."""
    args = list(argv[1:])
    i = 0
    while i < len(args) and args[i].startswith("-") and len(args[i]) > 1:
        a = args[i].split("=", 1)[0]
        if len(a) >= 2 and "-batch".startswith(a):
            return unk(f"ip {a}: runs ip commands read from a file or stdin", "net.ip")
        if a in ("-n", "-f", "-l") or any(len(a) >= 3 and v.startswith(a) for v in _IP_VALUED):
            i += 2
            continue
        i += 1
    pos = args[i:]
    if len(pos) <= 1:
        return ro(f"ip {' '.join(pos)}: shows network state", "readonly")
    obj, action = pos[0], pos[1]
    if obj in ("netns", "vrf") and action == "exec" and len(pos) > 3:
        v = recurse(shell_join(pos[3:]))
        return Verdict(v.level, f"ip {obj} exec → {v.reason}", v.key)
    if action in _IP_READ_ACTIONS:
        return ro(f"ip {obj} {action}: shows network state", "readonly")
    if action in ("flush", "del", "delete") and obj in ("addr", "address", "a", "route", "r", "link", "l"):
        return mut(f"ip {obj} {action}: removes addresses or routes (can cut off the host)", "net.ip")
    return mut(f"ip {obj} {action}: changes network configuration", "net.ip")


TCPDUMP = Spec(
    "aAb:B:c:C:dDeE:fF:G:hHi:I:j:J:KlLm:M:nNOpq:Qr:s:StT:uUvV:w:W:xXy:Yz:Z:#",
    "buffer-size=|B count= direction=|Q help immediate-mode interface=|i list-interfaces|D "
    "list-time-stamp-types|J monitor-mode|I no-optimize|O no-promiscuous-mode|p number|# print "
    "relinquish-privileges=|Z snapshot-length=|s time-stamp-precision= time-stamp-type=|j version "
    "micro nano linktype=|y",
)


def tcpdump(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``tcpdump`` prints captured packets; ``-w FILE`` writes a capture, ``-z CMD`` runs CMD on
    every rotated file."""
    parsed = parse(argv[1:], TCPDUMP)
    if parsed.has("-z"):
        return unk("tcpdump -z: runs a program on every capture file", "unknown")
    r = Reader(TCPDUMP, writes=("-w",), what="prints captured packets")
    return judge_options("tcpdump", r, parsed)


def stats_output(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``sar -o [FILE]`` and ``dstat --output FILE`` write their samples to a file."""
    args = list(argv[1:])
    for i, a in enumerate(args):
        if a in ("-o", "--output") or a.startswith("--output="):
            target = a.split("=", 1)[1] if "=" in a else (args[i + 1] if i + 1 < len(args) else "")
            if target and not target.isdigit() and not target.startswith("-"):
                return write_target_verdict(target, f"{argv[0]} -o", "files.write")
            return mut(f"{argv[0]} -o: writes samples to its data file", "files.write")
    return ro(f"{argv[0]}: prints statistics", "readonly")


def iwconfig(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``iwconfig [IFACE]`` shows; any setting after the interface changes it."""
    if len(positionals(argv[1:])) > 1:
        return mut("iwconfig IFACE SETTING: changes wireless settings", "net.ip")
    return ro("iwconfig: shows wireless settings", "readonly")


def sensors(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``sensors -s``/``--set`` writes limits to the chips."""
    if has_flag(argv[1:], "-s", "--set"):
        return mut("sensors -s: writes limits to the sensor chips", "admin.mutate")
    return ro("sensors: reads hardware sensors", "readonly")


_ANALYZE_SET = frozenset({"set-log-level", "set-log-target", "service-watchdogs", "log-level", "log-target"})
_ANALYZE_READ = frozenset(
    {
        "", "time", "blame", "critical-chain", "dump", "plot", "dot", "unit-paths", "exit-status",
        "capability", "condition", "syscall-filter", "filesystems", "calendar", "timestamp",
        "timespan", "cat-config", "unit-files", "security", "inspect-elf", "fdstore", "malloc",
        "image-policy", "pcrs", "srk", "architectures", "smbios11", "verify", "has-tpm2", "help",
    }
)  # fmt: skip


def systemd_analyze(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``systemd-analyze`` verbs read, except those that set the manager's log level or target."""
    pos = positionals(
        argv[1:],
        (
            "-H",
            "--host",
            "-M",
            "--machine",
            "--root",
            "--image",
            "--man",
            "--generators",
            "--iterations",
            "--base-time",
            "--unit",
            "--profile",
            "--threshold",
            "--security-policy",
            "--json",
            "--offline",
            "--from-pattern",
            "--to-pattern",
            "--fuzz",
            "--order",
        ),
    )
    verb = pos[0] if pos else ""
    if verb in _ANALYZE_SET:
        if verb.startswith("set-") or len(pos) > 1:
            return mut(f"systemd-analyze {verb} VALUE: changes the service manager", "admin.mutate")
        return ro(f"systemd-analyze {verb}: prints the setting", "readonly")
    if verb in _ANALYZE_READ:
        return ro(f"systemd-analyze {verb}: analyses the boot or units", "readonly")
    return unk(f"systemd-analyze {verb}: not a verb this classifier knows", "unknown")


def nstat(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``nstat`` prints counters; ``-r``/``--reset``, ``-n``/``--nooutput`` and ``-d`` rewrite its history."""
    args = argv[1:]
    if has_flag(args, "-r", "--reset", "-n", "--nooutput", "-d", "--scan"):
        return mut("nstat -r/-n/-d: resets or rewrites its counter history", "admin.mutate")
    return ro("nstat: prints network counters", "readonly")


_PROMTOOL_READ = frozenset({"check", "query", "test", "help", "--version", "--help"})


def promtool(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``promtool check|query|test`` and ``tsdb analyze|list|dump`` read; ``push``, ``debug`` and
    ``tsdb create-blocks-from|bench`` write or send."""
    pos = [a for a in argv[1:] if not a.startswith("-")]
    sub = pos[0] if pos else ""
    if sub in _PROMTOOL_READ or not sub:
        return ro(f"promtool {sub}: checks or queries", "readonly")
    if sub == "tsdb":
        action = pos[1] if len(pos) > 1 else ""
        if action in ("analyze", "list", "dump", "dump-openmetrics"):
            return ro(f"promtool tsdb {action}: reads blocks", "readonly")
        return mut(f"promtool tsdb {action}: writes blocks", "files.write")
    if sub in ("push", "debug"):
        return mut(f"promtool {sub}: sends metrics or writes debug archives", "files.write")
    return unk(f"promtool {sub}: not a command this classifier knows", "unknown")


def atop_glances(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``atop -w FILE`` writes raw samples; ``glances --export``/``-w``/``-s`` export or serve."""
    args = list(argv[1:])
    if argv[0] == "atop":
        for i, a in enumerate(args):
            if a == "-w" and i + 1 < len(args):
                return write_target_verdict(args[i + 1], "atop -w", "files.write")
        return ro("atop: reads process usage", "readonly")
    for a in args:
        if a.startswith("--export") or a in ("-w", "--webserver", "-s", "--server", "--browser"):
            return mut(f"glances {a}: exports data or starts a server", "net.listen")
    return ro("glances: reads system usage", "readonly")


def harmless_sink(path: str) -> bool:
    """Re-exported for callers that judge output files (``/dev/null`` …)."""
    return is_harmless_sink(path)


# systemd-style ``TOOL [SUBCOMMAND]`` programs: the subcommands that only read; any other changes state.
_SUBCOMMAND_READS: dict[str, frozenset[str]] = {
    "timedatectl": frozenset({"", "status", "show", "list-timezones", "timesync-status", "show-timesync"}),
    "hostnamectl": frozenset({"", "status"}),
    "localectl": frozenset(
        {
            "",
            "status",
            "list-locales",
            "list-keymaps",
            "list-x11-keymap-models",
            "list-x11-keymap-layouts",
            "list-x11-keymap-variants",
            "list-x11-keymap-options",
        }
    ),
    "loginctl": frozenset(
        {
            "",
            "list-sessions",
            "session-status",
            "show-session",
            "list-users",
            "user-status",
            "show-user",
            "list-seats",
            "seat-status",
            "show-seat",
        }
    ),
    "networkctl": frozenset({"", "list", "status", "lldp", "label", "cat"}),
    "resolvectl": frozenset(
        {
            "",
            "status",
            "query",
            "service",
            "openpgp",
            "tlsa",
            "statistics",
            "show-cache",
            "show-server-state",
            "monitor",
        }
    ),
    "busctl": frozenset(
        {"", "list", "status", "monitor", "capture", "tree", "introspect", "get-property", "help"}
    ),
    "chronyc": frozenset(
        {
            "",
            "tracking",
            "sources",
            "sourcestats",
            "activity",
            "ntpdata",
            "clients",
            "serverstats",
            "rtcdata",
            "selectdata",
            "authdata",
            "sourcename",
            "waitsync",
        }
    ),
    "amtool": frozenset({"", "alert", "silence", "check-config", "config", "template"}),
}
# ``hostnamectl hostname`` prints; ``hostnamectl hostname NAME`` sets (same for these).
_GET_OR_SET = frozenset({"hostname", "icon-name", "chassis", "deployment", "location"})


def subcommand_tool(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """timedatectl, hostnamectl, loginctl, networkctl, resolvectl, busctl, chronyc, amtool …:
    status/list/show read; set-*, terminate, call, makestep, silence add … change state."""
    name = argv[0]
    pos = positionals(
        argv[1:],
        (
            "-H",
            "--host",
            "-M",
            "--machine",
            "-p",
            "--property",
            "-o",
            "--output",
            "--alertmanager.url",
            "-t",
            "--timeout",
        ),
    )
    sub = pos[0] if pos else ""
    if name == "hostnamectl" and sub in _GET_OR_SET and len(pos) == 1:
        return ro(f"hostnamectl {sub}: prints the setting", "readonly")
    if name == "amtool" and sub in ("alert", "silence"):
        action = pos[1] if len(pos) > 1 else "query"
        if action not in ("add", "a", "expire", "e", "expire-all", "import", "i", "update", "u"):
            return ro(f"amtool {sub} query: lists {sub}s", "readonly")
        return mut(f"amtool {sub} {action}: changes Alertmanager state", "admin.mutate")
    if sub in _SUBCOMMAND_READS[name]:
        return ro(f"{name} {sub or 'status'}: reads state", "readonly")
    if name == "busctl" and sub in ("call", "emit", "set-property"):
        return unk(f"busctl {sub}: calls a D-Bus method (anything from a reload to a power-off)", "unknown")
    return mut(f"{name} {sub}: changes system settings", "admin.mutate")


_ETHTOOL_READ = frozenset(
    {
        "-i",
        "--driver",
        "-S",
        "--statistics",
        "-k",
        "--show-features",
        "--show-offload",
        "-g",
        "--show-ring",
        "-a",
        "--show-pause",
        "-c",
        "--show-coalesce",
        "-l",
        "--show-channels",
        "-T",
        "--show-time-stamping",
        "-d",
        "--register-dump",
        "-e",
        "--eeprom-dump",
        "-m",
        "--dump-module-eeprom",
        "--module-info",
        "-P",
        "--show-permaddr",
        "--show-eee",
        "--show-fec",
        "--show-priv-flags",
        "-h",
        "--help",
        "--version",
        "-x",
        "--show-rxfh-indir",
        "--show-rxfh",
        "-u",
        "--show-ntuple",
        "--show-nfc",
        "-n",
        "--json",
        "--phy-statistics",
        "--show-tunable",
        "--show-phy-tunable",
        "--get-dump",
        "--show-module",
    }
)


def ethtool(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``ethtool [DEV]`` and its ``--show-*``/``-i``/``-S`` forms read; ``-s``/``-K``… change the NIC."""
    opts = [a for a in argv[1:] if a.startswith("-")]
    changing = [a for a in opts if a not in _ETHTOOL_READ]
    if changing:
        return mut(f"ethtool {changing[0]}: changes network interface settings", "net.ip")
    return ro("ethtool: shows interface settings", "readonly")


def arp_route(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``arp``/``route`` print tables; ``arp -s/-d/-f`` and ``route add/del`` change them."""
    args = argv[1:]
    if argv[0] == "arp" and has_flag(args, "-s", "--set", "-d", "--delete", "-f", "--file"):
        return mut("arp -s/-d: changes the ARP table", "net.ip")
    if argv[0] == "route" and set(positionals(args)) & {"add", "del", "delete", "flush", "change"}:
        return mut("route add/del: changes the routing table", "net.ip")
    return ro(f"{argv[0]}: shows network tables", "readonly")
