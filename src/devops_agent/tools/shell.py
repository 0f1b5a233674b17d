"""The shell toolset: run a command on this host, bounded in time and output.

The tool itself does not decide whether a command may run: its ``ToolSpec`` names the
``command`` argument, and the safety gate (``policies/guard.py``) classifies every command with a
real shell parser and allows, refuses or asks for approval *before* this code sees it. Here we
only run it safely:

* without a shell (argv) when the command uses no shell syntax, under ``bash -o pipefail -c``
  otherwise;
* in a new process group, so a timeout or a cancelled run kills the command and everything it
  started (``kill -TERM`` to the group, then ``-KILL``);
* with stdin closed and stdout/stderr capped (head kept, the rest counted);
* failures explained by :mod:`devops_agent.tools.shell_errors`;
* inside the read-only sandbox (:mod:`devops_agent.tools.sandbox`) when the guard says so: it
  does for commands it allowed because it rated them read-only. A write the sandbox refused is
  reported as such (``metadata.sandbox_denied``), so the guard can audit the misrating.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import time
from pathlib import Path
from typing import Any

import structlog

from devops_agent.config import Settings
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.registry import ToolRegistry
from devops_agent.tools.sandbox import DENIED, DENIED_HINT, Sandbox, confinement_requested, read_outcome
from devops_agent.tools.sandbox_seccomp import filter_fd
from devops_agent.tools.shell_errors import analyze

log = structlog.get_logger(__name__)

# Characters that make a command need a shell (pipes, redirections, expansions, globs, lists).
# A carriage return is here too: shlex splits words on it, bash (and the classifier) does not, so
# `find . -name x\r-delete` would be judged as one thing and run as another.
_SHELL_SYNTAX = set("|&;<>()$`*?[]{}~!#\n\r\\")


def plan(command: str) -> list[str]:
    """The argv to execute: the command itself when it needs no shell, else ``bash -c``."""
    if not (set(command) & _SHELL_SYNTAX):
        try:
            argv = shlex.split(command)
        except ValueError:
            argv = []
        if argv:
            return argv
    # pipefail: a failure early in a pipeline must not hide behind the exit status of `head`.
    return ["bash", "-o", "pipefail", "-c", command]


class _Capped:
    """The head of one output stream (at most ``limit`` bytes) and a count of the bytes cut."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.dropped = 0

    async def drain(self, stream: asyncio.StreamReader | None) -> None:
        """Read ``stream`` to its end; what was read stays here even if this is cancelled."""
        if stream is None:
            return
        while chunk := await stream.read(65536):
            room = self.limit - len(self.kept)
            self.kept += chunk[:room] if room > 0 else b""
            self.dropped += max(0, len(chunk) - max(room, 0))


async def _read_capped(stream: asyncio.StreamReader | None, limit: int) -> tuple[bytes, int]:
    """Read all of ``stream``; keep the first ``limit`` bytes, count the rest."""
    capped = _Capped(limit)
    await capped.drain(stream)
    return bytes(capped.kept), capped.dropped


# After the command exits, how long its pipes may stay open (held by a leftover background process
# that is killed with the group) before the output read so far is taken as the whole output.
_DRAIN_GRACE_S = 1.0


async def _exited(proc: asyncio.subprocess.Process) -> int:
    """The exit status, as soon as the command itself has exited.

    ``proc.wait()`` also waits until its pipes are closed, which a background child (``cmd &``)
    holding stdout can put off until the timeout; the return code is known before that.
    """
    delay = 0.002
    while proc.returncode is None:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)
    return proc.returncode


def _release(proc: asyncio.subprocess.Process) -> None:
    """Close the pipes asyncio still holds for ``proc`` once their readers are given up on.

    A process outside the group (``setsid cmd &``) can keep them open; left to the garbage
    collector, the transport then warns in whatever code happens to run next.
    """
    transport = getattr(proc, "_transport", None)  # asyncio keeps no public handle on it
    if transport is not None:
        transport.close()


async def kill_group(proc: asyncio.subprocess.Process, grace_s: float = 2.0) -> None:
    """Terminate the process group of ``proc`` (TERM, then KILL after ``grace_s``) and reap it."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            await asyncio.wait_for(_exited(proc), grace_s)
            return
        except TimeoutError:
            continue


async def run_command(
    command: str, *, cwd: Path | None, timeout_s: float, max_bytes: int, sandbox: Sandbox | None = None
) -> ToolResult:
    """Run ``command`` and return exit code, stdout and stderr; failures come with a hint.

    With an active ``sandbox`` the command runs confined in it (see :mod:`devops_agent.tools.sandbox`).
    """
    argv = plan(command)
    run_argv, env = argv, None
    fds: tuple[int, ...] = ()
    if sandbox is not None:
        fds = (filter_fd(),)
        run_argv, env = sandbox.wrap(argv, cwd, fds[0]), Sandbox.environment(os.environ)
    started = time.perf_counter()
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *run_argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
            pass_fds=fds,
        )
    )
    try:
        # Shielded: a cancel that lands while asyncio is still connecting the pipes would make
        # asyncio kill the shell alone and wait for its pipes to close, i.e. for any background
        # child (`cmd &`) holding them, up to that child's own end. We let the spawn finish and
        # end the whole process group ourselves instead.
        proc = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            proc = await spawn
            await kill_group(proc)
            with contextlib.suppress(TimeoutError):  # read the pipes to EOF so they close now
                await asyncio.wait_for(proc.communicate(), _DRAIN_GRACE_S)
        raise
    except FileNotFoundError:
        if sandbox is not None:
            return ToolResult.fail(
                f"the sandbox program {run_argv[0]} is gone", "reinstall bubblewrap", sandbox="bwrap"
            )
        missing, install = analyze(command, 127, "", timed_out=False, timeout_s=timeout_s)
        return ToolResult.fail(missing, install, exit_code=127)
    except NotADirectoryError:
        return ToolResult.fail(f"working directory {cwd} is not a directory", "set safety.shell_cwd")
    finally:
        for fd in fds:  # the child has its copy (bwrap reads the filter from it)
            os.close(fd)
    timed_out = False
    out_buf, err_buf = _Capped(max_bytes), _Capped(max_bytes)
    readers = asyncio.gather(out_buf.drain(proc.stdout), err_buf.drain(proc.stderr))
    # When the run is cancelled, the gather is cancelled too but nobody reads its CancelledError,
    # which asyncio would then log as "exception was never retrieved" at exit.
    readers.add_done_callback(lambda f: f.cancelled() or f.exception())
    try:
        # Wait for the command itself, not for EOF on its pipes: a background child (`cmd &`)
        # holding stdout open must not turn a finished command into a timeout.
        await asyncio.wait_for(_exited(proc), timeout_s)
    except TimeoutError:
        timed_out = True
        await kill_group(proc)
    except asyncio.CancelledError:
        await kill_group(proc)
        # Let the pipes reach EOF so their transports close with the run, not at interpreter exit
        # (in the sandbox the last processes die a moment after bwrap, by the kernel's hand).
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(readers), _DRAIN_GRACE_S)
        readers.cancel()
        _release(proc)
        raise
    # The command is done (or was killed); anything it left running in its group goes too.
    # (In the sandbox the kernel has already ended its whole PID namespace with bwrap.)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        await asyncio.wait_for(asyncio.shield(readers), _DRAIN_GRACE_S)
    except TimeoutError:
        readers.cancel()  # a process outside the group still holds a pipe: keep what was read
        _release(proc)
    out, err = bytes(out_buf.kept), bytes(err_buf.kept)
    out_dropped, err_dropped = out_buf.dropped, err_buf.dropped
    stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace")
    data = {
        "command": command,
        "exit_code": proc.returncode,
        "stdout": stdout,
        "stderr": stderr,
        "shell": argv[0] == "bash" and argv[-2] == "-c",
        "duration_s": round(time.perf_counter() - started, 3),
        "stdout_dropped_bytes": out_dropped,
        "stderr_dropped_bytes": err_dropped,
    }
    meta: dict[str, Any] = {"sandbox": "bwrap"} if sandbox is not None else {}
    error: str | None = None
    hint: str | None = None
    exit_code = proc.returncode
    if sandbox is not None and not timed_out:
        outcome = read_outcome(proc.returncode, stderr)
        if outcome.kind == "setup_failed":
            return ToolResult(
                status="error",
                data=data,
                error=f"the sandbox could not start the command: {outcome.detail}",
                hint="a path in the command or the working directory may be hidden from confined "
                "commands (the agent's data and config, SSH keys); `devops-agent doctor` shows the sandbox",
                metadata={**meta, "sandbox_error": True, "timed_out": False},
            )
        if outcome.kind in ("not_found", "not_executable"):
            # bwrap exits 1 when it cannot exec the program; report the shell's status for that.
            exit_code = data["exit_code"] = 127 if outcome.kind == "not_found" else 126
        elif outcome.kind == "denied":
            meta["sandbox_denied"] = True
            error, hint = DENIED, DENIED_HINT
        elif (hidden := sandbox.hidden_in(command)) is not None:
            meta["sandbox_hidden"] = hidden
            error = (
                f"{hidden} is hidden from sandboxed commands: the agent's own data, or secrets (keys, hashes)"
            )
            hint = (
                "inside the sandbox it is empty or missing whatever it holds, so the output says nothing "
                "about it; gather the evidence from other files"
            )
    if timed_out or exit_code != 0:
        if error is None:
            error, hint = analyze(command, exit_code, stderr, timed_out=timed_out, timeout_s=timeout_s)
        return ToolResult(
            status="error", data=data, error=error, hint=hint, metadata={**meta, "timed_out": timed_out}
        )
    if error is not None:  # it worked, but a write was refused or a path hidden: say so
        return ToolResult(status="success", data=data, hint=f"{error}; {hint}", metadata=meta)
    return ToolResult.ok(data, truncated=bool(out_dropped or err_dropped), **meta)


_WARNED: set[str] = set()


def _warn_inactive(sandbox: Sandbox) -> None:
    """Say once per process why read-only commands will run unconfined."""
    detail = sandbox.available.detail
    if detail not in _WARNED:
        _WARNED.add(detail)
        log.warning("sandbox_inactive", detail=detail, hint=sandbox.available.hint)


def build(settings: Settings) -> ToolsetBuilder:
    ts = ToolsetBuilder("shell", "Run commands on this host, gated by the command safety policy")
    safety = settings.safety
    sandbox = Sandbox.from_settings(settings)
    if not sandbox.active and sandbox.mode != "bwrap":
        _warn_inactive(sandbox)

    @ts.tool(category="shell", read_only=False, risk="sensitive", command_arg="command")
    async def shell_run(command: str, timeout_s: float | None = None) -> ToolResult:
        """Run a shell command on this host and return its exit code, stdout and stderr.

        Every command is parsed and classified first. Read-only commands (ls, cat, grep, ps,
        df, kubectl get, git log, journalctl ...) run directly, in a read-only sandbox without
        privileges where the host supports it; in ask mode nothing else runs, and in agent mode
        commands that change something wait for a person's approval.
        Prefer the dedicated tools (files_*, logs_*, git_*, system_*) when one fits: they also
        see what the sandbox hides from commands (e.g. the processes behind listening ports).

        Args:
            command: the command line, as you would type it in bash.
            timeout_s: seconds before the command and everything it started are killed.
        """
        limit = min(timeout_s or safety.shell_timeout_s, safety.shell_timeout_s * 10)
        confined: Sandbox | None = None
        if confinement_requested():
            if sandbox.active:
                confined = sandbox
            elif sandbox.mode == "bwrap":
                return ToolResult.fail(
                    f"the read-only sandbox is required (safety.sandbox = bwrap) but unavailable: "
                    f"{sandbox.available.detail}",
                    sandbox.available.hint,
                    sandbox="unavailable",
                )
        cwd, max_bytes = safety.shell_cwd, safety.shell_output_bytes
        result = await run_command(command, cwd=cwd, timeout_s=limit, max_bytes=max_bytes, sandbox=confined)
        if confinement_requested() and confined is None:
            result.metadata["sandbox"] = "inactive"
        return result

    return ts


def register(registry: ToolRegistry) -> None:
    registry.add_toolset("shell", build, "Run commands, classified and gated by the safety policy")
