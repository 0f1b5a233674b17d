"""The read-only sandbox that shell commands auto-allowed as read-only run in (bubblewrap).

A classifier's rating is a prediction; this module makes "read-only" enforceable on Linux. A
command the safety guard allowed *because it was rated read-only* runs under ``bwrap`` with:

* the whole filesystem mounted **read-only** (``--ro-bind / /``), so a misrated write fails with
  "Read-only file system" instead of changing anything, and a private minimal ``/dev`` (no disks
  to write to through a device node, which a read-only mount would not stop);
* a small private scratch directory (``/dev/shm``, ``TMPDIR`` points there) for programs that
  need temporary files; the host's ``/tmp`` stays visible read-only, so ``du``/``ls``/``cat``
  of ``/tmp`` tell the truth;
* its own PID namespace (the host's ``/proc`` is still shown, so ``ps`` sees every process): when
  the command's first process ends, or ``bwrap`` is killed (timeout, cancel, the agent dies:
  ``--die-with-parent``), the kernel kills everything it started, even what left our process
  group with ``setsid``;
* no capabilities (``--cap-drop ALL``) but, for root, ``CAP_DAC_READ_SEARCH`` (read any file:
  ``du -sh /var/*``, logs owned by ``syslog:adm``), with ``open_by_handle_at`` removed by a
  seccomp filter (:mod:`devops_agent.tools.sandbox_seccomp`) so that capability cannot open the
  hidden files by inode; no new privileges (bwrap always sets ``no_new_privs``); a new session
  (no terminal to inject keystrokes into);
* the agent's own secrets hidden: its data directory (store, privacy HMAC key, vault, indexes),
  an SQLite store elsewhere, its config files (they may hold tokens), SSH private keys, the
  host's password hashes and SSH host keys, and the extra paths in ``safety.sandbox_hide``;
  the agent's environment variables (``DEVOPS_AGENT_*``, model provider keys) are not passed in.

The network stays available (``kubectl get`` needs it); requests through sockets (the Docker
socket, D-Bus, HTTP) are judged by the classifier alone.

This module knows how to build the ``bwrap`` command line and whether bwrap works here. It does
not decide which commands are confined: the safety guard does, and says so per call through
:func:`confinement` (see ``policies/guard.py``). It must not import policies, agent or interface
code.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from devops_agent.config import Settings
from devops_agent.config.settings import config_files, user_config_dir
from devops_agent.tools.sandbox_seccomp import filter_fd

SandboxMode = Literal["auto", "bwrap", "off"]

SCRATCH = "/dev/shm"
"""The sandbox's writable scratch directory (``TMPDIR``): private, in memory, capped."""
SCRATCH_BYTES = 512 * 1024 * 1024

PROBE_TIMEOUT_S = 10.0

# What every confined command gets; the hidden paths and the working directory come after.
_BASE = (
    "--ro-bind", "/", "/",
    "--dev", "/dev",
    "--perms", "1777", "--size", str(SCRATCH_BYTES), "--tmpfs", SCRATCH,
    "--unshare-pid",
    "--die-with-parent",
    "--new-session",
)  # fmt: skip

# Secrets of the host that no read-only investigation needs (readable when the agent runs as root).
_SYSTEM_SECRETS = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-")
_SSH_HOST_KEYS = ("/etc/ssh", "ssh_host_*_key")
# What stays visible in ~/.ssh: public material and client settings; everything else (id_rsa,
# deploy keys under any name, agent sockets) is hidden.
_SSH_PUBLIC = ("*.pub", "known_hosts", "known_hosts.old", "config", "authorized_keys", "authorized_keys2")

# Environment variables not passed into the sandbox: the agent's own settings (tokens, the HMAC
# key, the model's API key) and the model providers' keys the agent reads. The tools a command
# runs (kubectl, aws, gcloud …) keep theirs.
_ENV_PREFIXES = ("DEVOPS_AGENT_",)
_ENV_NAMES = frozenset(
    {
        "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GROQ_API_KEY",
        "MISTRAL_API_KEY", "CO_API_KEY", "COHERE_API_KEY", "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY",
        "AZURE_OPENAI_API_KEY", "XAI_API_KEY", "TOGETHER_API_KEY", "FIREWORKS_API_KEY",
        "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "OLLAMA_API_KEY", "LLM_API_KEY",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Availability:
    """Whether confined commands can run here, and why not."""

    active: bool
    detail: str
    hint: str | None = None
    bwrap: str | None = None


_PROBED: dict[str, Availability] = {}


def _privileges(seccomp_fd: int) -> list[str]:
    """Capabilities kept and the seccomp filter (see the module docstring)."""
    keep = ["--cap-add", "CAP_DAC_READ_SEARCH"] if os.geteuid() == 0 else []
    return ["--cap-drop", "ALL", *keep, "--seccomp", str(seccomp_fd)]


def _probe(bwrap: str) -> Availability:
    """Start one real sandbox (``true``) with the options every command gets; cached per binary."""
    if bwrap in _PROBED:
        return _PROBED[bwrap]
    fd = filter_fd()
    try:
        proc = subprocess.run(
            [bwrap, *_BASE, *_privileges(fd), "true"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
            pass_fds=(fd,),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        # Not cached: a probe that timed out on a busy machine says nothing lasting.
        return Availability(False, f"{bwrap} cannot be started: {exc}", "check `bwrap --ro-bind / / true`")
    finally:
        os.close(fd)
    if proc.returncode == 0:
        found = Availability(True, f"{_version(bwrap)} at {bwrap}", bwrap=bwrap)
    else:
        found = _refusal(bwrap, proc.stderr.strip())
    _PROBED[bwrap] = found
    return found


def _version(bwrap: str) -> str:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=5, check=False)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    return "bubblewrap"


def _refusal(bwrap: str, stderr: str) -> Availability:
    """Why bwrap could not start a sandbox, from its own message."""
    line = stderr.splitlines()[-1] if stderr else "no message"
    lowered = stderr.lower()
    if any(s in lowered for s in ("namespace", "uid map", "operation not permitted", "permission denied")):
        return Availability(
            False,
            f"user namespaces are refused here ({line})",
            "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 or "
            "user.max_user_namespaces > 0; in a container, run it with a seccomp/AppArmor profile "
            "that permits them), or run the agent as root",
        )
    return Availability(False, f"{bwrap} cannot start a sandbox: {line}", "check `bwrap --ro-bind / / true`")


def availability(mode: SandboxMode) -> Availability:
    """Whether auto-allowed read-only commands will run confined under ``mode``."""
    if mode == "off":
        return Availability(
            False,
            "turned off (safety.sandbox = off): read-only commands run unconfined",
            'set safety.sandbox = "auto" to confine them',
        )
    if not sys.platform.startswith("linux"):
        return Availability(
            False,
            f"not Linux ({sys.platform}): the sandbox needs Linux namespaces",
            "read-only commands run unconfined; the classifier alone decides",
        )
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Availability(
            False,
            "bubblewrap is not installed (no bwrap on PATH)",
            "install it: `apt-get install bubblewrap` (or run scripts/sandbox.sh as root)",
        )
    return _probe(bwrap)


# -- the guard's per-call decision ------------------------------------------------------------

_CONFINE: ContextVar[bool | None] = ContextVar("devops_agent_confine", default=None)


@contextlib.contextmanager
def confinement(confine: bool) -> Iterator[None]:
    """Run the tool calls made inside this block confined (or explicitly not).

    The safety guard wraps each call it allowed in this, with ``True`` for a command it allowed
    because it rated it read-only. A context variable carries it because pydantic-ai calls the
    tool function itself; it follows the call into worker threads (``contextvars.copy_context``).
    """
    token = _CONFINE.set(confine)
    try:
        yield
    finally:
        _CONFINE.reset(token)


def confinement_requested() -> bool:
    """Whether the current tool call was asked to run confined (no guard around it: no)."""
    return bool(_CONFINE.get())


# -- the sandbox for one set of settings -------------------------------------------------------


@dataclass(frozen=True)
class Sandbox:
    """How confined commands run: which bwrap, what they cannot see."""

    mode: SandboxMode
    available: Availability
    hide: tuple[Path, ...] = ()
    """Paths hidden in every confined command (directories appear empty, files empty)."""
    home: Path | None = None

    @property
    def active(self) -> bool:
        return self.available.active

    @classmethod
    def from_settings(cls, settings: Settings) -> Sandbox:
        """The sandbox ``settings`` ask for, with the agent's own secrets in its hidden paths."""
        mode: SandboxMode = settings.safety.sandbox
        return cls(mode, availability(mode), tuple(agent_paths(settings)), _home())

    def hidden_now(self) -> list[Path]:
        """Every existing path to hide, outermost first, none inside another hidden directory."""
        candidates = [*self.hide, *_system_secrets(), *_ssh_private_keys(self.home)]
        resolved: dict[Path, None] = {}
        for path in candidates:
            try:
                real = path.expanduser().resolve()
            except (OSError, RuntimeError):
                continue
            if real != Path("/") and os.path.lexists(real):
                resolved[real] = None
        hidden: list[Path] = []
        for path in sorted(resolved, key=lambda p: (len(p.parts), str(p))):
            if not any(path.is_relative_to(h) for h in hidden if h.is_dir()):
                hidden.append(path)
        return hidden

    def hidden_in(self, command: str) -> str | None:
        """A hidden path the command names (as configured or as resolved), if any."""
        names = {str(p.expanduser()) for p in self.hide} | {str(p) for p in self.hidden_now()}
        return next((n for n in sorted(names, key=len, reverse=True) if n in command), None)

    def wrap(self, argv: list[str], cwd: Path | None, seccomp_fd: int) -> list[str]:
        """``argv`` as a confined command line (``bwrap … -- argv``).

        ``seccomp_fd`` comes from :func:`~devops_agent.tools.sandbox_seccomp.filter_fd` and must
        be passed to the process (``pass_fds``), then closed.
        """
        assert self.available.bwrap is not None, "wrap() needs an active sandbox"
        args = [self.available.bwrap, *_BASE, *_privileges(seccomp_fd)]
        for path in self.hidden_now():
            if path.is_dir():
                args += ["--tmpfs", str(path), "--remount-ro", str(path)]
            else:
                args += ["--ro-bind", "/dev/null", str(path)]
        args += ["--chdir", str(Path(cwd or os.getcwd()).absolute()), "--", *argv]
        return args

    @staticmethod
    def environment(environ: Mapping[str, str]) -> dict[str, str]:
        """The environment a confined command gets: the agent's secrets removed, scratch as TMPDIR."""
        env = {k: v for k, v in environ.items() if not _agent_secret(k)}
        env["TMPDIR"] = SCRATCH
        return env


# sqlite:///relative.db, sqlite:////absolute.db, sqlite+pysqlite:///…; not :memory: or file: URIs.
_SQLITE_FILE = re.compile(r"^sqlite(?:\+\w+)?:///(?!:memory:|file:)([^?]+)")


def _agent_secret(name: str) -> bool:
    return name.startswith(_ENV_PREFIXES) or name.upper() in _ENV_NAMES


def agent_paths(settings: Settings) -> list[Path]:
    """The agent's own secrets on disk: data dir, an SQLite store elsewhere, config files, extras."""
    paths = [Path(settings.data_dir)]
    sqlite = _SQLITE_FILE.match(settings.resolved_database_url())
    if sqlite is not None:  # a store outside the data dir, with its journal files
        db = Path(sqlite.group(1))
        paths += [db, *(db.with_name(db.name + s) for s in ("-wal", "-shm", "-journal"))]
    paths.append(user_config_dir())
    with contextlib.suppress(Exception):  # a config file that vanished is not ours to report here
        paths += config_files()
    paths += list(settings.safety.sandbox_hide)
    return paths


def _home() -> Path | None:
    try:
        return Path.home()
    except RuntimeError:
        return None


def _system_secrets() -> list[Path]:
    directory, pattern = _SSH_HOST_KEYS
    with contextlib.suppress(OSError):
        return [Path(p) for p in _SYSTEM_SECRETS] + sorted(Path(directory).glob(pattern))
    return [Path(p) for p in _SYSTEM_SECRETS]


def _ssh_private_keys(home: Path | None) -> list[Path]:
    """Everything in ``~/.ssh`` but public keys, known hosts and client settings."""
    if home is None:
        return []
    ssh = home / ".ssh"
    try:
        entries = list(ssh.iterdir())
    except OSError:
        return []
    return [p for p in entries if not any(p.match(pattern) for pattern in _SSH_PUBLIC)]


# -- reading what happened ---------------------------------------------------------------------

EROFS = "read-only file system"

DENIED = (
    "the sandbox refused a write: Read-only file system — this command was rated read-only, so it ran "
    "in the read-only sandbox, and it tried to change the filesystem; nothing it wrote reached the host"
)
DENIED_HINT = (
    "the safety classifier misrated this command (the audit log records it as sandbox_denied); "
    "gather the evidence with a command that only reads, or ask the user to make the change"
)


@dataclass(frozen=True)
class Outcome:
    """What a confined run's exit status and stderr say about the sandbox itself."""

    kind: Literal["ran", "denied", "not_found", "not_executable", "setup_failed"]
    detail: str = ""


def read_outcome(returncode: int | None, stderr: str) -> Outcome:
    """Tell bwrap's own failures and a refused write apart from the command's ordinary failures.

    bwrap reports its errors on stderr as ``bwrap: …`` with status 1, before the command starts
    (``execvp`` failing means the program is missing). A write refused by the read-only mounts
    shows up as the command's own "Read-only file system" error (EROFS), whatever its status.
    """
    first = stderr.lstrip().splitlines()[0] if stderr.strip() else ""
    if returncode == 1 and first.startswith("bwrap: "):
        message = first.removeprefix("bwrap: ")
        if message.startswith("execvp "):
            if "no such file" in message.lower():
                return Outcome("not_found", message)
            return Outcome("not_executable", message)
        return Outcome("setup_failed", message)
    if EROFS in stderr.lower():
        line = next((ln.strip() for ln in stderr.splitlines() if EROFS in ln.lower()), "")
        return Outcome("denied", line)
    return Outcome("ran")
