"""Utilities that only read, and the few flags that turn some of them into writers.

A name belongs in :data:`READ_ONLY` only if no flag of it can change state; tools with such
flags get a small function here instead. Must not run anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import (
    Recurse,
    Verdict,
    flag_value,
    has_flag,
    mut,
    positionals,
    ro,
    unk,
    write_target_verdict,
)

READ_ONLY = frozenset(
    {
        "ls",
        "cat",
        "head",
        "tail",
        "less",
        "more",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "wc",
        "sort",
        "uniq",
        "cut",
        "jq",
        "yq",
        "df",
        "du",
        "free",
        "uptime",
        "ps",
        "pstree",
        "pgrep",
        "ss",
        "netstat",
        "lsof",
        "dig",
        "nslookup",
        "host",
        "ping",
        "ping6",
        "traceroute",
        "tracepath",
        "mtr",
        "echo",
        "printf",
        "whoami",
        "id",
        "uname",
        "which",
        "whereis",
        "type",
        "stat",
        "file",
        "md5sum",
        "sha1sum",
        "sha256sum",
        "sha512sum",
        "cksum",
        "diff",
        "cmp",
        "comm",
        "tree",
        "realpath",
        "readlink",
        "basename",
        "dirname",
        "pwd",
        "true",
        "false",
        ":",
        "test",
        "[",
        "seq",
        "tr",
        "column",
        "nl",
        "fold",
        "fmt",
        "paste",
        "join",
        "expand",
        "rev",
        "tac",
        "strings",
        "od",
        "hexdump",
        "xxd",
        "base64",
        "base32",
        "zcat",
        "vmstat",
        "iostat",
        "mpstat",
        "sar",
        "pidstat",
        "nproc",
        "lscpu",
        "lsblk",
        "lsmem",
        "lspci",
        "lsusb",
        "lsmod",
        "blkid",
        "findmnt",
        "getent",
        "groups",
        "last",
        "lastlog",
        "who",
        "w",
        "users",
        "locale",
        "tty",
        "arch",
        "getconf",
        "printenv",
        "cd",
        "nstat",
        "ethtool",
        "arp",
        "route",
        "iwconfig",
        "resolvectl",
        "timedatectl",
        "hostnamectl",
        "loginctl",
        "localectl",
        "networkctl",
        "busctl",
        "systemd-analyze",
        "ldd",
        "nm",
        "objdump",
        "readelf",
        "sleep",
        "wait",
        "jobs",
        "history",
        "man",
        "help",
        "info",
        "htop",
        "atop",
        "iotop",
        "iftop",
        "nload",
        "glances",
        "dstat",
        "numastat",
        "ulimit",
        "look",
        "gawk-version",
        "whois",
        "promtool",
        "amtool",
        "logcli",
        "kubeval",
        "kubeconform",
        "shellcheck",
        "hadolint",
        "yamllint",
        "jsonlint",
        "envsubst",
        "numfmt",
        "expr",
        "factor",
        "cal",
        "ncal",
        "bc",
        "dc",
        "tput",
        "clear",
        "lsns",
        "fc-list",
        "sestatus",
        "getenforce",
        "aa-status",
        "getfacl",
        "lsattr",
        "namei",
        "pwdx",
        "pmap",
        "ipcs",
        "sensors",
        "dmidecode",
        "chronyc",
        "ntpq",
        "kubectl-neat",
        "stern",
        "uuidgen",
        "delta",
        "bat",
        "fd",
        "fzf",
        "exa",
        "eza",
    }
)


def dmesg(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``dmesg`` reads the kernel ring buffer; ``-C``/``-c`` clear it and ``-n`` changes the console level."""
    if has_flag(argv[1:], "-C", "--clear", "-c", "--read-clear", "-n", "--console-level", "-D", "-E"):
        return mut("dmesg -C/-c/-n: clears the kernel log or changes its level", "dmesg.clear")
    return ro("dmesg: reads the kernel log", "readonly")


def date(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``date`` prints the time; ``-s``/``--set`` changes the system clock."""
    if has_flag(argv[1:], "-s", "--set"):
        return mut("date -s: sets the system clock", "admin.mutate")
    return ro("date: prints the time", "readonly")


def hostname(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``hostname`` prints; ``hostname NAME`` or ``-F FILE`` renames the host."""
    if positionals(argv[1:]) or has_flag(argv[1:], "-F", "--file", "-b", "--boot"):
        return mut("hostname NAME: renames the host", "admin.mutate")
    return ro("hostname: prints the host name", "readonly")


def top(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``top`` only reads (interactive without ``-b``, which the executor's timeout bounds)."""
    return ro(f"{argv[0]}: reads process usage", "readonly")


def ip(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``ip OBJECT [show|list|get]`` reads; ``add``/``del``/``set``/``flush``/``change`` change networking."""
    pos = positionals(argv[1:], ("-n", "-netns", "-f", "-family"))
    if len(pos) <= 1:
        return ro(f"ip {' '.join(pos)}: shows network state", "readonly")
    action = pos[1]
    if action in ("show", "list", "lst", "ls", "get", "help", "monitor", "sh", "s", "l"):
        return ro(f"ip {pos[0]} {action}: shows network state", "readonly")
    if action in ("flush", "del", "delete") and pos[0] in ("addr", "address", "a", "route", "r", "link", "l"):
        return mut(f"ip {pos[0]} {action}: removes addresses or routes (can cut off the host)", "net.ip")
    return mut(f"ip {pos[0]} {action}: changes network configuration", "net.ip")


def env(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``env`` alone prints the environment (a command after it is unwrapped by ``wrappers``)."""
    return ro("env: prints the environment", "readonly")


def output_option(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``sort -o FILE``, ``tree -o FILE``, ``sar -o FILE``, ``dstat --output FILE`` write a file;
    otherwise they only print."""
    out = flag_value(argv[1:], "-o", "--output")
    if out is not None:
        return write_target_verdict(out, f"{argv[0]} -o", "files.write")
    return ro(f"{argv[0]}: prints to stdout", "readonly")


def tcpdump(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``tcpdump`` captures; ``-w FILE`` writes a capture file."""
    out = flag_value(argv[1:], "-w")
    if out is not None:
        return write_target_verdict(out, "tcpdump -w", "files.write")
    return ro("tcpdump: prints captured packets", "readonly")


def interpreter(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``python``/``perl``/``ruby``/``node``: inline code and scripts cannot be judged; a few modules read."""
    args = argv[1:]
    if not args or args == ["-"]:
        return unk(f"{argv[0]}: reads a program from stdin", "shell.stdin")
    if has_flag(args, "--version", "-V", "--help", "-h"):
        return ro(f"{argv[0]} --version", "readonly")
    module = flag_value(args, "-m")
    if module in (
        "json.tool",
        "site",
        "platform",
        "sysconfig",
        "pydoc",
        "tabnanny",
        "py_compile",
        "pip",
    ) and (module != "pip" or (positionals(args, ("-m",))[:1] in (["list"], ["show"], ["freeze"]))):
        return ro(f"{argv[0]} -m {module}: reads", "readonly")
    if module == "pip":
        return mut(f"{argv[0]} -m pip: installs or removes packages", "pkg.install")
    return unk(f"{argv[0]}: runs code this classifier cannot see", "interpreter")


SHELL_STATE = frozenset(
    {"export", "unset", "set", "alias", "unalias", "pushd", "popd", "shopt", "declare", "local", "typeset"}
)
"""Builtins that change only the running shell's own state (variables, options, directory stack)."""


def uniq(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``uniq [INPUT [OUTPUT]]``: a second operand is a file it overwrites."""
    pos = positionals(argv[1:], ("-f", "--skip-fields", "-s", "--skip-chars", "-w", "--check-chars"))
    if len(pos) >= 2:
        return write_target_verdict(pos[1], "uniq INPUT OUTPUT", "files.write")
    return ro("uniq: filters text to stdout", "readonly")


def xxd(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``xxd [INFILE [OUTFILE]]``: a second operand is a file it overwrites (also with ``-r``)."""
    pos = positionals(argv[1:], ("-c", "-g", "-l", "-o", "-s", "-n", "-cols", "-len", "-seek", "-name"))
    if len(pos) >= 2:
        return write_target_verdict(pos[1], "xxd INFILE OUTFILE", "files.write")
    return ro("xxd: dumps to stdout", "readonly")


def yq(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``yq`` filters to stdout; ``-i``/``--inplace`` rewrites the file."""
    if has_flag(argv[1:], "-i", "--inplace", "--in-place") or any(a.startswith("-i") for a in argv[1:]):
        return mut("yq -i: edits the file in place", "files.sed_inplace")
    return ro("yq: filters to stdout", "readonly")


def search_runner(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``rg --pre CMD`` runs CMD on every file; ``fd -x/-X CMD`` runs CMD on every match."""
    args = list(argv[1:])
    if argv[0] == "rg" and any(a == "--pre" or a.startswith("--pre=") for a in args):
        return unk("rg --pre: runs a preprocessor command on every file", "unknown")
    for i, a in enumerate(args):
        if argv[0] == "fd" and (a in ("-x", "-X", "--exec", "--exec-batch")):
            inner = [x for x in args[i + 1 :] if x not in ("{}", ";", "\\;")] or ["true"]
            v = recurse(" ".join(inner))
            return Verdict(v.level, f"fd {a} (for every match) → {v.reason}", v.key)
    return ro(f"{argv[0]}: searches files", "readonly")


def pager(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``bat``/``delta --pager CMD``, ``man -P CMD``: the pager is a command of the caller's choice."""
    short = ("-P",) if argv[0] == "man" else ()  # bat -P means --no-paging
    if any(a == "--pager" or a.startswith(("--pager=", *short)) for a in argv[1:]):
        return unk(f"{argv[0]} --pager: runs a command of the caller's choice", "unknown")
    return ro(f"{argv[0]}: reads only", "readonly")


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
