"""The query sandbox: where ``query_result`` runs a jq filter, a grep or a Python snippet.

A snippet the model wrote is a program of the model's choice, so it runs as one confined
process (:mod:`devops_agent.tools.query_runner`) under bubblewrap with everything the read-only
sandbox of shell commands has (:mod:`devops_agent.tools.sandbox`: the filesystem read-only, a
private ``/dev``, its own PID namespace, the agent's data dir — store, privacy key, vault —
config files, SSH keys and password hashes hidden, the agent's environment variables not passed)
and more:

* **no network**: its own empty network namespace (``--unshare-net``), and its own IPC namespace;
* **no capabilities at all** (the shell sandbox keeps ``CAP_DAC_READ_SEARCH`` for root; this one
  does not);
* **no new processes**: a seccomp filter refuses ``fork``, ``vfork``, ``clone3`` and ``clone``
  without ``CLONE_THREAD`` (a fork bomb cannot start), and the runner adds ``execve`` to it before
  it reads the question;
* **nothing writable**: ``/tmp``, ``/dev`` and ``/dev/shm`` are private read-only mounts (the shell
  sandbox has a scratch directory; this one needs none), and the file-size limit is 0;
* **limits**: address space (``memory_mb``), CPU seconds (``cpu_s``), 64 open files; the whole
  sandbox is killed after ``wall_s`` seconds;
* **output capped**: at most ``max_chars`` of answer is read back; a process that writes more is
  killed.

The data reaches it on stdin; nothing of the store is mounted. Python snippets need bubblewrap;
jq filters and greps (not programs: no I/O, no imports) run in the same confined runner with the
same limits, under bubblewrap when it works here and as a plain subprocess otherwise. This
module must not import policies, agent or interface code.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devops_agent.tools import query_runner
from devops_agent.tools.sandbox import Sandbox
from devops_agent.tools.sandbox_seccomp import filter_fd

RUNNER = Path(query_runner.__file__)
_EMPTY_MOUNTS = (Path("/tmp"), Path("/dev"))


@dataclass(frozen=True)
class QueryLimits:
    memory_mb: int = 512
    cpu_s: int = 5
    wall_s: float = 10.0
    max_chars: int = 20_000


class QueryRefused(RuntimeError):
    """The question cannot be run here (a Python snippet without a working sandbox)."""


def command(sandbox: Sandbox, seccomp_fd: int | None) -> list[str]:
    """The command line that starts the runner (confined when ``sandbox`` is active)."""
    argv = [sys.executable, "-I", "-B", str(RUNNER)]
    if not sandbox.active or seccomp_fd is None:
        return argv
    assert sandbox.available.bwrap is not None
    args = [
        sandbox.available.bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--tmpfs", "/tmp", "--remount-ro", "/tmp",
        "--tmpfs", "/dev/shm", "--remount-ro", "/dev/shm",
        "--remount-ro", "/dev",
        "--unshare-pid", "--unshare-net", "--unshare-ipc",
        "--die-with-parent", "--new-session",
        "--cap-drop", "ALL",
        "--seccomp", str(seccomp_fd),
    ]  # fmt: skip
    for path in sandbox.hidden_now():
        if any(path.is_relative_to(empty) for empty in _EMPTY_MOUNTS):
            continue  # inside a mount that is empty in the sandbox already
        if path.is_dir():
            args += ["--tmpfs", str(path), "--remount-ro", str(path)]
        else:
            args += ["--ro-bind", "/dev/null", str(path)]
    return [*args, "--chdir", "/", "--", *argv]


def run_query(sandbox: Sandbox, request: dict[str, Any], limits: QueryLimits | None = None) -> dict[str, Any]:
    """Answer one question (``mode``, ``query``, ``data`` …) in the runner; returns its JSON answer,
    or ``{"ok": False, "error": …}`` when it was killed, timed out or wrote too much."""
    lim = limits or QueryLimits()
    if request.get("mode") == "python" and not sandbox.active:
        raise QueryRefused(
            f"Python snippets run only in the sandbox, which is not active here: {sandbox.available.detail}"
        )
    fd = filter_fd(query_runner.filter_program(deny_exec=False)) if sandbox.active else None
    env = Sandbox.environment(os.environ) | {
        "QUERY_MEMORY_BYTES": str(lim.memory_mb * 1024 * 1024),
        "QUERY_CPU_S": str(lim.cpu_s),
    }
    payload = json.dumps({**request, "max_chars": lim.max_chars}).encode()
    proc = subprocess.Popen(
        command(sandbox, fd),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        pass_fds=(fd,) if fd is not None else (),
        start_new_session=True,
    )
    if fd is not None:
        os.close(fd)
    try:
        return _exchange(proc, payload, lim)
    finally:
        if proc.poll() is None:
            _kill(proc)
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, 9)
    proc.kill()
    proc.wait(timeout=5)


def _exchange(proc: subprocess.Popen[bytes], payload: bytes, lim: QueryLimits) -> dict[str, Any]:
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        proc.stdin.write(payload)
        proc.stdin.close()
    except BrokenPipeError:
        pass  # it died before reading: its exit status says why
    deadline = time.monotonic() + lim.wall_s
    out = bytearray()
    read_cap = lim.max_chars * 4 + 4096  # bytes: JSON escapes and UTF-8 widen the answer
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            _kill(proc)
            return {"ok": False, "error": f"the query took longer than {lim.wall_s:g}s and was stopped"}
        ready, _, _ = select.select([proc.stdout], [], [], min(left, 0.5))
        if not ready:
            if proc.poll() is not None:
                break
            continue
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            break
        out += chunk
        if len(out) > read_cap:
            _kill(proc)
            return {
                "ok": False,
                "error": f"the query wrote more than {lim.max_chars} characters and was stopped",
            }
    status = proc.wait(timeout=max(deadline - time.monotonic(), 1))
    if not out:
        why = _signal_reason(status, lim)
        return {"ok": False, "error": f"the query ended without an answer ({why})"}
    try:
        answer: dict[str, Any] = json.loads(out)
    except ValueError:
        return {"ok": False, "error": "the query's answer was not readable"}
    return answer


def _signal_reason(status: int, lim: QueryLimits) -> str:
    if status in (-24, 152):  # SIGXCPU
        return f"CPU limit of {lim.cpu_s}s reached"
    if status in (-25, 153):  # SIGXFSZ: it tried to write a file
        return "it tried to write a file, which the sandbox refuses"
    if status in (-9, 137):
        return "killed; memory or time limit"
    if status in (-6, 134):  # SIGABRT: a C library (jq) that could not allocate gives up
        return f"aborted, most likely at the memory limit of {lim.memory_mb} MB"
    return f"exit status {status}"
