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
* failures explained by :mod:`devops_agent.tools.shell_errors`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import time
from pathlib import Path

from devops_agent.config import Settings
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.registry import ToolRegistry
from devops_agent.tools.shell_errors import analyze

# Characters that make a command need a shell (pipes, redirections, expansions, globs, lists).
_SHELL_SYNTAX = set("|&;<>()$`*?[]{}~!#\n\\")


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


async def _read_capped(stream: asyncio.StreamReader | None, limit: int) -> tuple[bytes, int]:
    """Read all of ``stream``; keep the first ``limit`` bytes, count the rest."""
    if stream is None:
        return b"", 0
    kept = bytearray()
    dropped = 0
    while chunk := await stream.read(65536):
        room = limit - len(kept)
        kept += chunk[:room] if room > 0 else b""
        dropped += max(0, len(chunk) - max(room, 0))
    return bytes(kept), dropped


async def kill_group(proc: asyncio.subprocess.Process, grace_s: float = 2.0) -> None:
    """Terminate the process group of ``proc`` (TERM, then KILL after ``grace_s``) and reap it."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            await asyncio.wait_for(proc.wait(), grace_s)
            return
        except TimeoutError:
            continue


async def run_command(command: str, *, cwd: Path | None, timeout_s: float, max_bytes: int) -> ToolResult:
    """Run ``command`` and return exit code, stdout and stderr; failures come with a hint."""
    argv = plan(command)
    started = time.perf_counter()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            start_new_session=True,
        )
    except FileNotFoundError:
        error, hint = analyze(command, 127, "", timed_out=False, timeout_s=timeout_s)
        return ToolResult.fail(error, hint, exit_code=127)
    except NotADirectoryError:
        return ToolResult.fail(f"working directory {cwd} is not a directory", "set safety.shell_cwd")
    timed_out = False
    readers = asyncio.gather(
        _read_capped(proc.stdout, max_bytes), _read_capped(proc.stderr, max_bytes), proc.wait()
    )
    # When the run is cancelled, wait_for cancels the gather but never reads its CancelledError,
    # which asyncio would then log as "exception was never retrieved" at exit.
    readers.add_done_callback(lambda f: f.cancelled() or f.exception())
    try:
        (out, out_dropped), (err, err_dropped), _ = await asyncio.wait_for(readers, timeout_s)
    except TimeoutError:
        timed_out = True
        await kill_group(proc)
        out, err, out_dropped, err_dropped = b"", b"", 0, 0
    except asyncio.CancelledError:
        await kill_group(proc)
        raise
    else:
        # The command is done; anything it left running in its group goes too.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
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
    if timed_out or proc.returncode != 0:
        error, hint = analyze(command, proc.returncode, stderr, timed_out=timed_out, timeout_s=timeout_s)
        return ToolResult(
            status="error", data=data, error=error, hint=hint, metadata={"timed_out": timed_out}
        )
    return ToolResult.ok(data, truncated=bool(out_dropped or err_dropped))


def build(settings: Settings) -> ToolsetBuilder:
    ts = ToolsetBuilder("shell", "Run commands on this host, gated by the command safety policy")
    safety = settings.safety

    @ts.tool(category="shell", read_only=False, risk="sensitive", command_arg="command")
    async def shell_run(command: str, timeout_s: float | None = None) -> ToolResult:
        """Run a shell command on this host and return its exit code, stdout and stderr.

        Every command is parsed and classified first. Read-only commands (ls, cat, grep, ps,
        df, kubectl get, git log, journalctl ...) run directly; in ask mode nothing else runs,
        and in agent mode commands that change something wait for a person's approval.
        Prefer the dedicated tools (files_*, logs_*, git_*, system_*) when one fits.

        Args:
            command: the command line, as you would type it in bash.
            timeout_s: seconds before the command and everything it started are killed.
        """
        limit = min(timeout_s or safety.shell_timeout_s, safety.shell_timeout_s * 10)
        return await run_command(
            command, cwd=safety.shell_cwd, timeout_s=limit, max_bytes=safety.shell_output_bytes
        )

    return ts


def register(registry: ToolRegistry) -> None:
    registry.add_toolset("shell", build, "Run commands, classified and gated by the safety policy")
