"""The shell tool: argv vs bash, process groups on timeout and cancel, failure guidance."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import time
import warnings
from pathlib import Path

import psutil
import pytest

from devops_agent.tools.shell import plan, run_command
from devops_agent.tools.shell_errors import analyze, program_of


def run(command: str, timeout_s: float = 10, cwd: Path | None = None, max_bytes: int = 100_000):  # type: ignore[no-untyped-def]
    return asyncio.run(run_command(command, cwd=cwd, timeout_s=timeout_s, max_bytes=max_bytes))


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    # Zombies of our own children still count as members until reaped; ignore them.
    return any(p.status() != psutil.STATUS_ZOMBIE for p in psutil.process_iter() if _pgid(p) == pgid)


def _pgid(p: psutil.Process) -> int | None:
    try:
        return os.getpgid(p.pid)
    except (ProcessLookupError, PermissionError):
        return None


def test_plan_uses_argv_without_shell_syntax_and_bash_otherwise() -> None:
    assert plan("ls -la '/var/log'") == ["ls", "-la", "/var/log"]
    assert plan("ps aux | grep nginx") == ["bash", "-o", "pipefail", "-c", "ps aux | grep nginx"]
    assert plan("echo $HOME")[-1] == "echo $HOME"
    assert plan("cat a > b")[0] == "bash"


def test_success_returns_exit_code_and_output(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("one\ntwo\n")
    result = run("wc -l f.txt", cwd=tmp_path)
    assert result.status == "success"
    assert result.data["exit_code"] == 0
    assert result.data["stdout"].split()[0] == "2"
    assert result.data["shell"] is False
    piped = run("printf 'a\\nb\\nc\\n' | wc -l")
    assert piped.data["stdout"].strip() == "3"
    assert piped.data["shell"] is True


def test_output_is_capped_and_counted() -> None:
    result = run("head -c 50000 /dev/zero | tr '\\0' x", max_bytes=1_000)
    assert len(result.data["stdout"]) == 1_000
    assert result.data["stdout_dropped_bytes"] == 49_000
    assert result.metadata["truncated"] is True


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "pids"
    # A shell that starts two background sleepers and a foreground one, recording their pids.
    command = (
        f"sleep 300 & echo $! >> {marker}; sleep 300 & echo $! >> {marker}; echo $$ >> {marker}; sleep 300"
    )
    started = time.monotonic()
    result = run(command, timeout_s=1.5)
    assert time.monotonic() - started < 10
    assert result.status == "error"
    assert result.metadata["timed_out"] is True
    assert "killed with its process group" in (result.error or "")
    assert "narrow it" in (result.hint or "")
    pids = [int(p) for p in marker.read_text().split()]
    assert len(pids) == 3
    time.sleep(0.2)
    for pid in pids:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, pid


async def _written(marker: Path, within_s: float = 60) -> None:
    """Until the command wrote its background child's pid to ``marker`` (it runs by then)."""
    for _ in range(int(within_s / 0.05)):
        if _has_pid(marker):
            return
        await asyncio.sleep(0.05)


def _has_pid(marker: Path) -> bool:
    return marker.exists() and bool(marker.read_text().strip())


def test_cancel_kills_the_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    unhandled: list[dict[str, object]] = []

    async def go() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: unhandled.append(ctx))
        task = asyncio.create_task(
            run_command(f"sleep 300 & echo $! > {marker}; sleep 300", cwd=None, timeout_s=60, max_bytes=1000)
        )
        # Cancel once the command runs (a cancel during the start is the next test's case).
        await _written(marker)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        del task
        gc.collect()  # a future whose error nobody read complains when it is collected

    asyncio.run(go())
    # The readers' gather is cancelled with the run; its CancelledError must be consumed, not
    # logged as "exception was never retrieved" when the CLI or service exits.
    assert [str(ctx.get("message")) for ctx in unhandled] == []
    child = int(marker.read_text())
    time.sleep(0.2)
    assert not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE


def test_cancel_while_the_process_is_being_started_does_not_wait_for_its_background_child(
    tmp_path: Path,
) -> None:
    """A cancel that lands before asyncio has connected the pipes: asyncio's own clean-up would
    kill the shell alone and wait for the background child holding stdout (30 s here, 300 s in the
    test above on a loaded machine)."""
    marker = tmp_path / "pid"

    async def go() -> float:
        task = asyncio.create_task(
            run_command(f"sleep 30 & echo $! > {marker}; sleep 30", cwd=None, timeout_s=60, max_bytes=1000)
        )
        await asyncio.sleep(0)  # the task ran up to its first wait: the spawn's pipe connection
        started = time.perf_counter()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.perf_counter() - started

    elapsed = asyncio.run(go())
    assert elapsed < 10
    time.sleep(0.2)
    if marker.exists() and marker.read_text().strip():  # the shell got as far as the child
        child = int(marker.read_text())
        assert not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE


def test_a_cancelled_run_whose_pipe_outlives_its_group_leaves_no_open_transport(tmp_path: Path) -> None:
    """`setsid` takes the child out of the group the cancel kills, so it keeps stdout open: the
    run gives up on reading it after a grace period and must close the pipes itself (else the
    transport warns when it is collected, in whatever test runs next)."""
    marker = tmp_path / "pid"

    async def go() -> None:
        task = asyncio.create_task(
            run_command(
                f"setsid sleep 30 & echo $! > {marker}; sleep 30", cwd=None, timeout_s=60, max_bytes=1000
            )
        )
        await _written(marker)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            asyncio.run(go())
            gc.collect()
    finally:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(marker.read_text()), signal.SIGKILL)
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_leftover_background_processes_are_cleaned_up_after_success(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    result = run(f"sleep 300 > /dev/null 2>&1 & echo $! > {marker}; echo done")
    assert result.status == "success"
    child = int(marker.read_text())
    time.sleep(0.2)
    assert not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE


def test_command_not_found_names_the_package() -> None:
    result = run("kubectl-that-does-not-exist get pods")
    assert result.status == "error"
    assert result.metadata["exit_code"] == 127
    assert "not installed" in (result.error or "")
    through_shell = run("jq-missing-binary . | head")
    assert "not installed" in (through_shell.error or "")
    error, hint = analyze("jq .x", 127, "bash: jq: command not found", timed_out=False, timeout_s=5)
    assert "package jq" in hint


def test_permission_denied_says_what_privilege_is_missing(tmp_path: Path) -> None:
    error, hint = analyze(
        "cat /var/log/secure", 1, "cat: /var/log/secure: Permission denied", timed_out=False, timeout_s=5
    )
    assert "permission denied" in error
    assert "root or membership" in hint


def test_non_zero_exit_quotes_the_relevant_stderr_lines() -> None:
    result = run("echo 'starting' >&2; echo 'fatal: not a git repository' >&2; exit 3")
    assert result.status == "error"
    assert result.data["exit_code"] == 3
    assert "fatal: not a git repository" in (result.error or "")
    assert "starting" not in (result.error or "")


def test_program_of_skips_wrappers_and_assignments() -> None:
    assert program_of("sudo env LANG=C /usr/bin/kubectl get pods") == "kubectl"
    assert program_of("FOO=1 timeout 5 jq .") == "jq"
    assert program_of("nice -n 10 tar czf x.tgz dir") == "tar"
    # an option's value is not the program: `sudo -u postgres psql` runs psql
    assert program_of("sudo -u postgres psql -c 'select 1'") == "psql"
    assert program_of("sudo -g adm --chdir /var/log journalctl -n 5") == "journalctl"
    assert program_of("xargs -I {} -P 4 curl -s {}") == "curl"


def test_group_helper_sees_live_groups() -> None:
    proc = psutil.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert group_alive(proc.pid)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert not group_alive(proc.pid)
