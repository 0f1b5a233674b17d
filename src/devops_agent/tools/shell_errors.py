"""Turn a failed command into guidance the model and the user can act on.

Pure functions over the command, its exit status and stderr: command not found (which package
provides it), permission denied (what privilege is missing), timeouts (how to narrow), missing
files, and otherwise the stderr lines that matter.
"""

from __future__ import annotations

import getpass
import os
import re

_WRAPPERS = {"sudo", "env", "nohup", "time", "timeout", "nice", "ionice", "stdbuf", "xargs"}
_WRAPPER_ARG = re.compile(r"^(-\S*|\d+(\.\d+)?[smhd]?|\w+=.*)$")
# Wrapper options whose value is the next word (`sudo -u postgres psql`: the program is psql).
_WRAPPER_VALUED = {
    name: frozenset(options.split())
    for name, options in {
        "sudo": "-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role "
        "-t --type -U --other-user",
        "env": "-u --unset -C --chdir",
        "nice": "-n --adjustment",
        "ionice": "-c --class -n --classdata -p --pid",
        "timeout": "-s --signal -k --kill-after",
        "xargs": "-I -n --max-args -P --max-procs -L --max-lines -d --delimiter -E -s --max-chars "
        "-a --arg-file",
    }.items()
}

# Debian package names for tools operators reach for.
PACKAGES = {
    "kubectl": "kubectl (the upstream binary or Debian's kubernetes-client)",
    "helm": "helm (upstream binary)",
    "docker": "docker.io or docker-ce-cli",
    "jq": "jq",
    "yq": "yq",
    "rg": "ripgrep",
    "netstat": "net-tools",
    "ifconfig": "net-tools",
    "ss": "iproute2",
    "ip": "iproute2",
    "dig": "dnsutils (bind9-dnsutils)",
    "nslookup": "dnsutils (bind9-dnsutils)",
    "host": "bind9-host",
    "psql": "postgresql-client",
    "mysql": "default-mysql-client",
    "redis-cli": "redis-tools",
    "aws": "awscli",
    "gcloud": "google-cloud-cli",
    "az": "azure-cli",
    "terraform": "terraform (HashiCorp apt repository)",
    "lsof": "lsof",
    "strace": "strace",
    "tcpdump": "tcpdump",
    "traceroute": "traceroute",
    "ping": "iputils-ping",
    "nc": "netcat-openbsd",
    "iostat": "sysstat",
    "sar": "sysstat",
    "vmstat": "procps",
    "free": "procps",
    "ps": "procps",
    "top": "procps",
    "htop": "htop",
    "curl": "curl",
    "wget": "wget",
    "git": "git",
    "journalctl": "systemd",
    "systemctl": "systemd",
    "perf": "linux-perf",
    "openssl": "openssl",
}

_RELEVANT = re.compile(r"error|fail|denied|invalid|not found|unable|cannot|can't|fatal|refused|no such", re.I)


def program_of(command: str) -> str:
    """The first word of the command that is not an assignment or a wrapper."""
    wrapper, skip = "", False
    for word in command.split():
        if skip:  # the value of a wrapper's option (`-u postgres`)
            skip = False
            continue
        # Skip wrappers, their options and durations (timeout 5), and VAR=value assignments.
        if word in _WRAPPERS:
            wrapper = word
            continue
        if _WRAPPER_ARG.match(word):
            skip = word in _WRAPPER_VALUED.get(wrapper, ())
            continue
        return os.path.basename(word)
    return ""


def relevant_lines(stderr: str, limit: int = 6) -> list[str]:
    lines = [ln.rstrip() for ln in stderr.splitlines() if ln.strip()]
    hits = [ln for ln in lines if _RELEVANT.search(ln)]
    return (hits or lines)[-limit:]


def analyze(
    command: str, exit_code: int | None, stderr: str, *, timed_out: bool, timeout_s: float
) -> tuple[str, str]:
    """``(error, hint)`` for a command that failed."""
    program = program_of(command)
    lowered = stderr.lower()
    if timed_out:
        return (
            f"`{program}` did not finish within {timeout_s:.0f}s and was killed with its process group",
            "narrow it: add limits (head, --since, -n, --tail, LIMIT), filter earlier in the pipe, "
            "or ask for a longer timeout_s if the command is known to be slow",
        )
    if exit_code == 127 or "command not found" in lowered:
        package = PACKAGES.get(program)
        where = (
            f"it is provided by the package {package}"
            if package
            else "find its package with `apt-file search`"
        )
        return f"`{program}` is not installed on this host", f"{where}; or use a tool that is"
    if exit_code == 126 or "permission denied" in lowered or "operation not permitted" in lowered:
        user = getpass.getuser()
        return (
            f"permission denied running `{program}` as user {user}",
            "this needs root or membership of the group owning the file/socket (e.g. adm for /var/log, "
            "docker for the Docker socket); ask an operator, or read what this user can read",
        )
    if "no such file or directory" in lowered:
        return (
            "a path in the command does not exist",
            "list the parent directory first and retry with a real path",
        )
    lines = relevant_lines(stderr)
    detail = "; ".join(lines) if lines else "no error output"
    return (
        f"`{program}` exited with status {exit_code}: {detail}",
        "read the error lines and adjust the command",
    )
