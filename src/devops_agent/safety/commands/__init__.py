"""Domain knowledge per tool family, and the table that routes a program name to its family.

:func:`classify_argv` is the only entry point the classifier uses. It is given the program's
name once the walker has checked where the program lives (:mod:`devops_agent.safety.resolve`);
version suffixes are folded (``kubectl-1.28``, ``helm3``, ``python3.11``). Names not in the
table or in :data:`~devops_agent.safety.commands.readonly.READ_ONLY` are ``unknown``, except
``NAME --version``/``--help``. Nothing here parses shell syntax or runs anything.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from devops_agent.safety.commands import (
    argocd,
    clis,
    cloud,
    containers,
    databases,
    files,
    forges,
    interpreters,
    kubernetes,
    network,
    packages,
    readers,
    readonly,
    remote,
    shell_builtins,
    sysinfo,
    system,
    systemd,
    terraform,
    textproc,
    vcs,
    wrappers,
)
from devops_agent.safety.commands.base import ArgvClassifier, Recurse, Verdict, ro, unk

_TABLE: dict[str, ArgvClassifier] = {}


def _register(fn: ArgvClassifier, *names: str) -> None:
    for n in names:
        _TABLE[n] = fn


_register(kubernetes.kubectl, "kubectl", "oc", "kubecolor")
_register(kubernetes.helm, "helm")
_register(argocd.argocd, "argocd")
_register(forges.gh, "gh")
_register(clis.cli, *clis.TOOLS)
_register(containers.docker, "docker", "podman", "nerdctl", "docker-compose", "podman-compose")
_register(systemd.systemctl, "systemctl")
_register(systemd.service, "service")
_register(systemd.journalctl, "journalctl")
_register(vcs.git, "git")
_register(terraform.terraform, "terraform", "tofu")
_register(cloud.aws, "aws")
_register(cloud.gcloud_az, "gcloud", "az")
_register(databases.psql, "psql")
_register(databases.mysql, "mysql", "mariadb")
_register(databases.sqlite3, "sqlite3")
_register(databases.redis_cli, "redis-cli")
_register(files.rm, "rm", "rmdir", "unlink", "srm")
_register(files.mv_cp, "mv", "cp", "install", "ln", "rsync")
_register(files.chmod_chown, "chmod", "chown", "chgrp", "setfacl", "chattr")
_register(files.create, "mkdir", "touch", "mktemp")
_register(files.tee, "tee")
_register(files.truncate, "truncate")
_register(files.dd, "dd")
_register(
    files.disk,
    "mkfs",
    "fdisk",
    "sfdisk",
    "parted",
    "gdisk",
    "sgdisk",
    "wipefs",
    "shred",
    "mkswap",
    "blkdiscard",
    "pvremove",
    "vgremove",
    "lvremove",
    "mdadm",
    "cryptsetup",
    "zpool",
    "badblocks",
)
_register(textproc.sed, "sed", "gsed")
_register(textproc.awk, "awk", "gawk", "mawk", "nawk", "busybox-awk")
_register(files.find, "find")
_register(files.tar, "tar", "gtar", "bsdtar")
_register(
    files.archive,
    "unzip",
    "zip",
    "gzip",
    "gunzip",
    "bzip2",
    "bunzip2",
    "xz",
    "unxz",
    "zstd",
    "lz4",
    "zipinfo",
)
_register(files.editor, "vi", "vim", "nvim", "nano", "emacs", "ed", "vipw", "visudo")
_register(system.kill, "kill", "pkill", "killall", "killall5")
_register(system.power, "shutdown", "reboot", "halt", "poweroff", "init", "telinit")
_register(system.crontab, "crontab")
_register(
    system.iptables,
    "iptables",
    "ip6tables",
    "nft",
    "ufw",
    "iptables-save",
    "iptables-restore",
    "ip6tables-save",
    "ip6tables-restore",
)
_register(
    packages.package_manager,
    "apt",
    "apt-get",
    "yum",
    "dnf",
    "zypper",
    "apk",
    "pip",
    "pip3",
    "npm",
    "yarn",
    "pnpm",
    "gem",
    "brew",
    "snap",
    "dpkg",
    "dpkg-query",
    "rpm",
    "apt-cache",
    "pacman",
    "conda",
    "uv",
    "pipx",
    "poetry",
)
_register(packages.cargo, "cargo")
_register(packages.go, "go")
_register(
    system.admin,
    "useradd",
    "usermod",
    "userdel",
    "groupadd",
    "groupdel",
    "passwd",
    "chpasswd",
    "deluser",
    "delgroup",
    "adduser",
    "mount",
    "umount",
    "swapoff",
    "swapon",
    "sysctl",
    "modprobe",
    "rmmod",
    "insmod",
    "hwclock",
    "ifup",
    "ifdown",
    "update-alternatives",
    "ldconfig",
    "setenforce",
)
_register(network.curl, "curl")
_register(network.wget, "wget")
_register(network.nc, "nc", "ncat", "netcat", "socat", "telnet")
_register(network.openssl, "openssl")
_register(network.httpie, "http", "https", "xh")
_register(sysinfo.dmesg, "dmesg")
_register(sysinfo.date, "date")
_register(sysinfo.hostname, "hostname")
_register(sysinfo.top, "top", "btop")
_register(sysinfo.ip, "ip")
_register(sysinfo.tcpdump, "tcpdump")
_register(sysinfo.stats_output, "sar", "dstat")
_register(sysinfo.subcommand_tool, *sysinfo._SUBCOMMAND_READS)
_register(sysinfo.ethtool, "ethtool")
_register(sysinfo.arp_route, "arp", "route")
_register(sysinfo.iwconfig, "iwconfig")
_register(sysinfo.sensors, "sensors")
_register(sysinfo.systemd_analyze, "systemd-analyze")
_register(sysinfo.nstat, "nstat")
_register(sysinfo.promtool, "promtool")
_register(sysinfo.atop_glances, "atop", "glances")
for _name, _reader in readers.READERS.items():
    _register(readers.reader(_reader), _name)
_register(readers.uniq, "uniq")
_register(readers.xxd, "xxd")
_register(readers.tree, "tree")
_register(readers.yq, "yq")
_register(readers.jsonlint, "jsonlint")
_register(readers.search_runner, "rg", "fd", "fdfind")
_register(readers.pager, "bat", "batcat", "delta", "man")
_register(readers.fzf, "fzf")
_register(readers.dc, "dc")
_register(
    interpreters.interpreter,
    "python",
    "python3",
    "python2",
    "perl",
    "ruby",
    "node",
    "php",
    "lua",
    "Rscript",
    "deno",
    "bun",
    "java",
    "pwsh",
    "tclsh",
)
_register(shell_builtins.builtin, *sorted(shell_builtins.HANDLED))
_register(wrappers.sudo, "sudo", "doas", "pkexec", "runuser")
_register(wrappers.env, "env")
_register(wrappers.timeout, "timeout", "gtimeout")
_register(
    wrappers.plain,
    "nohup",
    "nice",
    "ionice",
    "time",
    "stdbuf",
    "setsid",
    "exec",
    "command",
    "builtin",
    "taskset",
    "chrt",
    "flock",
    "cgexec",
    "unbuffer",
    "busybox",
    "strace",
    "ltrace",
    "caffeinate",
)
_register(wrappers.xargs, "xargs", "parallel")
_register(wrappers.watch, "watch")
_register(wrappers.shell, *wrappers._SHELLS)
_register(wrappers.eval_, "eval")
_register(remote.ssh, "ssh")
_register(remote.scp, "scp")
_register(wrappers.su, "su")
_register(wrappers.chroot, "chroot")

_VERSION_QUERIES = frozenset({"--version", "--help", "-version"})
_VERSIONED = re.compile(r"^(python|pip|perl|ruby|node|mkfs)[0-9.]*(?:\..*)?$")
_VERSION_SUFFIX = re.compile(r"^(?P<stem>[A-Za-z][A-Za-z_-]*?)[-_]?v?\d+(?:\.\d+)*$")


def program_name(word: str) -> str:
    """The name used for lookup: basename, with version suffixes folded (``python3.11``,
    ``kubectl-1.28``, ``helm3`` and ``mkfs.ext4`` are python, kubectl, helm and mkfs)."""
    base = posixpath.basename(word) if "/" in word else word
    if base in _TABLE or base in readonly.READ_ONLY:
        return base
    m = _VERSIONED.match(base)
    if m:
        return m.group(1) if m.group(1) != "pip" else "pip"
    v = _VERSION_SUFFIX.match(base)
    if v and (v.group("stem") in _TABLE or v.group("stem") in readonly.READ_ONLY):
        return v.group("stem")
    return base


def classify_argv(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """The verdict for one simple command ``argv`` (non-empty); ``recurse`` classifies nested shell text."""
    name = program_name(argv[0])
    if name == "source" or name == ".":
        return unk(f"{name}: runs a script file this classifier cannot see", "shell.script")
    fn = _TABLE.get(name)
    if fn is not None:
        return fn([name, *argv[1:]], recurse)
    if name in readonly.READ_ONLY:
        return ro(f"{name}: reads only", "readonly")
    if len(argv) == 2 and argv[1] in _VERSION_QUERIES:
        # The GNU convention every maintained CLI follows; only programs judged by name (in a
        # system directory, see resolve.py) get here.
        return ro(f"{name} {argv[1]}: prints its version or usage", "readonly")
    return unk(f"{name}: a program this classifier does not know", "unknown")
