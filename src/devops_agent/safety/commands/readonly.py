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


def sort_uniq(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``sort -o FILE`` writes a file; otherwise it filters to stdout."""
    out = flag_value(argv[1:], "-o", "--output")
    if out is not None:
        return write_target_verdict(out, f"{argv[0]} -o", "files.write")
    return ro(f"{argv[0]}: filters text to stdout", "readonly")


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
