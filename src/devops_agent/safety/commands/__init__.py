"""Domain knowledge per tool family, and the table that routes a program name to its family.

:func:`classify_argv` is the only entry point the classifier uses. Program names are reduced to
their basename (``/bin/rm`` → ``rm``) before lookup; names not in the table are ``unknown``.
Nothing here parses shell syntax or runs anything.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from devops_agent.safety.commands import (
    cloud,
    containers,
    databases,
    files,
    kubernetes,
    network,
    readonly,
    system,
    systemd,
    terraform,
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
_register(files.mv_cp, "mv", "cp", "install", "ln", "rsync", "scp")
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
_register(files.sed, "sed", "gsed")
_register(files.awk, "awk", "gawk", "mawk", "nawk")
_register(files.find, "find")
_register(files.archive, "tar", "unzip", "zip", "gzip", "gunzip", "bzip2", "xz", "zstd", "zipinfo")
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
    system.package_manager,
    "apt",
    "apt-get",
    "yum",
    "dnf",
    "zypper",
    "apk",
    "pip",
    "pip3",
    "npm",
    "gem",
    "brew",
    "snap",
    "dpkg",
    "rpm",
    "apt-cache",
    "pacman",
    "conda",
    "uv",
    "pipx",
    "cargo",
)
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
_register(network.httpie, "http", "https")
_register(readonly.dmesg, "dmesg")
_register(readonly.date, "date")
_register(readonly.hostname, "hostname")
_register(readonly.top, "top", "btop")
_register(readonly.ip, "ip")
_register(readonly.output_option, "sort", "tree", "sar", "dstat")
_register(readonly.tcpdump, "tcpdump")
_register(readonly.uniq, "uniq")
_register(readonly.xxd, "xxd")
_register(readonly.yq, "yq")
_register(readonly.search_runner, "rg", "fd")
_register(readonly.pager, "bat", "delta", "man")
_register(readonly.subcommand_tool, *readonly._SUBCOMMAND_READS)
_register(readonly.ethtool, "ethtool")
_register(readonly.arp_route, "arp", "route")
_register(
    readonly.interpreter, "python", "python3", "python2", "perl", "ruby", "node", "php", "lua", "Rscript"
)
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
_register(wrappers.ssh, "ssh")
_register(wrappers.su, "su")
_register(wrappers.chroot, "chroot")

_VERSIONED = re.compile(r"^(python|pip|perl|ruby|node|mkfs)[0-9.]*(?:\..*)?$")


def program_name(word: str) -> str:
    """The name used for lookup: basename, with version suffixes (``python3.11``) and ``mkfs.ext4`` folded."""
    base = posixpath.basename(word) if "/" in word else word
    m = _VERSIONED.match(base)
    if m and base not in _TABLE:
        return m.group(1) if m.group(1) != "pip" else "pip"
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
    if name in readonly.SHELL_STATE:
        return ro(f"{name}: changes only the shell's own variables or options", "readonly")
    return unk(f"{name}: a program this classifier does not know", "unknown")
