"""The read-only sandbox around commands auto-allowed as read-only, with real processes.

Every test here starts real ``bwrap`` sandboxes (skipped only where bwrap cannot run; CI sets
DEVOPS_AGENT_REQUIRE_SANDBOX=1 so they fail there instead). The misrating tests make the real
classifier rate a write as read-only, which is exactly what the sandbox exists to catch.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from devops_agent.agent.approvals import ApprovalDecision
from devops_agent.agent.scripted import Script, ScriptedModel
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.events import ApprovalRequested, RunEvent, ToolResultEvent
from devops_agent.policies import guard
from devops_agent.privacy.vault import hmac_key
from devops_agent.safety import Classification, classify
from devops_agent.store import Store
from devops_agent.tools.base import ToolResult
from devops_agent.tools.sandbox import Availability, Sandbox
from devops_agent.tools.shell import run_command

pytestmark = pytest.mark.usefixtures("sandbox_ready")


def model(*turns: dict[str, Any]) -> ScriptedModel:
    return ScriptedModel(Script.model_validate({"turns": list(turns)}))


def shell(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"tool": "shell_run", "args": {"command": command}}]}


def run(
    command: str, sandbox: Sandbox | None, *, timeout_s: float = 30, cwd: Path | None = None
) -> ToolResult:
    return asyncio.run(run_command(command, cwd=cwd, timeout_s=timeout_s, max_bytes=100_000, sandbox=sandbox))


def misrate(monkeypatch: pytest.MonkeyPatch, *programs: str) -> None:
    """Make the real classifier rate commands starting with ``programs`` read-only."""

    def rated(command: str, **kwargs: Any) -> Classification:
        real = classify(command, **kwargs)
        if command.split()[0] in programs:
            return dataclasses.replace(real, level="read_only", reasons=["misrated on purpose"])
        return real

    monkeypatch.setattr(guard, "classify", rated)


def tool_results(events: list[RunEvent]) -> list[ToolResultEvent]:
    return [e for e in events if isinstance(e, ToolResultEvent)]


# -- a misrated write --------------------------------------------------------------------------


def test_a_misrated_write_fails_in_the_sandbox_and_is_audited(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "written-by-a-read-only-command"
    misrate(monkeypatch, "touch")
    assert guard.evaluate_command(f"touch {target}", "ask", Settings().safety).confine
    with Store(store_url) as store:
        service = SessionService(
            Settings(database_url=store_url),
            store,
            model=model(shell(f"touch {target}"), {"text": "done: {results}"}),
        )
        events, final = asyncio.run(service.run("make a file", mode="ask"))
        audit = store.list_audit(session_id=final.session_id)
    assert not target.exists(), "the sandbox kept the write off the host"
    [result] = tool_results(events)
    assert result.status == "error"
    assert (result.error or "").startswith("the sandbox refused a write: Read-only file system")
    assert "rated read-only" in (result.error or "")
    [entry] = audit
    assert (entry.outcome, entry.sandbox, entry.classification, entry.decision) == (
        "sandbox_denied",
        "bwrap",
        "read_only",
        "allow",
    )
    assert entry.exit_status == 1


def test_a_misrated_write_through_the_offline_path_is_audited(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # call_approved runs through the runbooks' call_tool: a command allowed as read-only is not
    # one the person approved, so it is confined there too.
    target = tmp_path / "offline-write"
    misrate(monkeypatch, "touch")
    with Store(store_url) as store:
        service = SessionService(Settings(database_url=store_url), store)
        session = service.open_session(None, title="offline")
        result = asyncio.run(
            service.call_approved(session.id, "shell_run", {"command": f"touch {target}"}, approver="bob")
        )
        audit = store.list_audit(session_id=session.id)
    assert not target.exists()
    assert result.metadata["sandbox_denied"] is True
    assert [(a.outcome, a.sandbox, a.actor) for a in audit] == [("sandbox_denied", "bwrap", "policy")]


def test_a_write_that_the_command_shrugs_off_is_still_flagged(tmp_path: Path) -> None:
    sandbox = Sandbox.from_settings(Settings())
    result = run(f"touch {tmp_path}/x; echo carried on", sandbox)
    assert result.status == "success"
    assert result.data["stdout"] == "carried on\n"
    assert result.metadata["sandbox_denied"] is True
    assert "sandbox refused a write" in (result.hint or "")
    assert not (tmp_path / "x").exists()


def test_approved_mutating_commands_run_outside_the_sandbox(store_url: str, tmp_path: Path) -> None:
    target = tmp_path / "made-with-approval"
    settings = Settings(database_url=store_url, mode="agent")
    with Store(store_url) as store:
        service = SessionService(
            settings, store, model=model(shell(f"touch {target}"), {"text": "done: {results}"})
        )
        events, final = asyncio.run(service.run("make a file"))
        request = next(e for e in events if isinstance(e, ApprovalRequested))
        assert final.status == "paused"
        answer = {request.tool_call_id: ApprovalDecision(True, approver="alice")}
        events, final = asyncio.run(service.run(None, session_id=final.session_id, approvals=answer))
        audit = store.list_audit(session_id=final.session_id)
    assert final.status == "completed"
    assert target.exists(), "approved: it ran on the host, not in the read-only sandbox"
    [result] = tool_results(events)
    assert result.status == "success"
    executed = next(a for a in audit if a.outcome == "executed")
    assert (executed.actor, executed.sandbox, executed.classification) == ("alice", None, "mutating")


# -- what a confined command can see -------------------------------------------------------------


@pytest.fixture
def agent_secrets(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A data dir with a real store and privacy key, a config file with a token, SSH keys in HOME."""
    home = tmp_path / "user"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n")
    (home / ".ssh" / "deploy").write_text("-----BEGIN RSA PRIVATE KEY-----\nsecret\n")
    (home / ".ssh" / "id_ed25519.pub").write_text("ssh-ed25519 AAAA public\n")
    (home / ".ssh" / "known_hosts").write_text("github.com ssh-ed25519 AAAA\n")
    monkeypatch.setenv("HOME", str(home))
    config = isolated_home / "config" / "devops-agent" / "devops-agent.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[jira]\ntoken = "jira-token-in-config"\n')
    project = tmp_path / "project"
    project.mkdir()
    (project / "devops-agent.toml").write_text('[github]\ntoken = "github-token-in-project"\n')
    (project / "README").write_text("project readme\n")
    monkeypatch.chdir(project)
    monkeypatch.setenv("DEVOPS_AGENT_MODEL__API_KEY", "sk-agent-model-key")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-key")
    settings = Settings()
    with Store.from_settings(settings):
        pass
    hmac_key(settings)  # writes the privacy key into the data dir
    data = Path(settings.data_dir)
    return {
        "data": data,
        "key": data / "privacy.key",
        "db": data / "devops-agent.db",
        "config": config,
        "project_config": project / "devops-agent.toml",
        "ssh": home / ".ssh",
    }


def test_the_agents_secrets_are_hidden_from_confined_commands(agent_secrets: dict[str, Path]) -> None:
    key, db = agent_secrets["key"], agent_secrets["db"]
    assert key.stat().st_size > 0
    assert db.stat().st_size > 0
    sandbox = Sandbox.from_settings(Settings())
    # The same reads outside the sandbox see everything (so these checks can fail).
    assert run(f"cat {key}", None).data["stdout"]
    assert "SQLite" in run(f"head -c 16 {db}", None).data["stdout"]

    listing = run(f"ls -A {agent_secrets['data']}", sandbox)
    assert listing.status == "success"
    assert listing.data["stdout"] == "", "the data dir is empty inside"
    for path in (key, db):
        refused = run(f"cat {path}", sandbox)
        assert refused.status == "error"
        assert "hidden from sandboxed commands" in (refused.error or "")
    for config in (agent_secrets["config"], agent_secrets["project_config"]):
        shown = run(f"cat {config}", sandbox)
        assert "token" not in shown.data["stdout"], config
        # An empty output must not pass for an empty file: the result says the file is hidden
        # (an error when its directory is hidden, a hint when the file reads as empty).
        assert "hidden from sandboxed commands" in f"{shown.error} {shown.hint}"
        assert shown.metadata["sandbox_hidden"] == str(config)
    ssh = agent_secrets["ssh"]
    keys = run(f"cat {ssh}/id_ed25519 {ssh}/deploy", sandbox)
    assert "PRIVATE KEY" not in keys.data["stdout"]
    public = run(f"cat {ssh}/id_ed25519.pub {ssh}/known_hosts", sandbox)
    assert public.status == "success"
    assert "public" in public.data["stdout"]
    assert "github.com" in public.data["stdout"]
    readme = run("cat README", sandbox)
    assert readme.data["stdout"] == "project readme\n", "the rest of the working directory is readable"


def test_the_agents_environment_and_memory_are_out_of_reach(agent_secrets: dict[str, Path]) -> None:
    sandbox = Sandbox.from_settings(Settings())
    env = run("env", sandbox)
    assert env.status == "success"
    assert "sk-agent-model-key" not in env.data["stdout"]
    assert "sk-openai-key" not in env.data["stdout"]
    assert "TMPDIR=/dev/shm" in env.data["stdout"]
    assert "HOME=" in env.data["stdout"], "ordinary variables pass"
    # An agent started with a key in its environment (a process like this test's, with the key
    # given at start): the sandbox can read neither its environment nor its memory.
    agent = subprocess.Popen(["sleep", "60"], env={**os.environ, "OPENAI_API_KEY": "sk-started-with"})
    try:
        for pid in (agent.pid, os.getpid()):
            assert run(f"head -c 100 /proc/{pid}/environ", None).data["stdout"], "readable outside"
            for path in (f"/proc/{pid}/environ", f"/proc/{pid}/mem"):
                peek = run(f"head -c 100000 {path}", sandbox)
                assert peek.status == "error", path
                assert peek.data["stdout"] == ""
                assert "Permission denied" in peek.data["stderr"], peek.data["stderr"]
        assert b"sk-started-with" in Path(f"/proc/{agent.pid}/environ").read_bytes()
    finally:
        agent.kill()
        agent.wait()


_OPEN_BY_HANDLE = """
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
handle = ctypes.create_string_buffer(8 + 128)
struct.pack_into("=Ii", handle, 0, 128, 0)
mount_id = ctypes.c_int()
if libc.name_to_handle_at(-100, sys.argv[1].encode(), handle, ctypes.byref(mount_id), 0) != 0:
    sys.exit(f"name_to_handle_at: errno {ctypes.get_errno()}")
fd = libc.open_by_handle_at(os.open("/", os.O_RDONLY), handle, os.O_RDONLY)
if fd < 0:
    sys.exit(f"open_by_handle_at: errno {ctypes.get_errno()}")
print(os.read(fd, 100).decode())
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="opening files by handle needs root's CAP_DAC_READ_SEARCH")
def test_root_reads_every_file_but_cannot_open_files_by_handle(tmp_path: Path) -> None:
    # As root, confined commands keep CAP_DAC_READ_SEARCH: a database's 0700 directory owned by
    # another user is readable (du of /var/lib/postgresql must be true) ...
    private = tmp_path / "pgdata"
    private.mkdir()
    (private / "base.dat").write_text("x" * 5000)
    os.chown(private / "base.dat", 65534, 65534)
    os.chown(private, 65534, 65534)
    private.chmod(0o700)
    sandbox = Sandbox.from_settings(Settings())
    listing = run(f"ls {private} && wc -c {private}/base.dat", sandbox)
    assert (listing.status, listing.data["stdout"]) == ("success", f"base.dat\n5000 {private}/base.dat\n")
    # ... but that capability's other power, opening a file by its inode handle past the mounts
    # that hide the agent's files, is taken away by the seccomp filter.
    script = tmp_path / "open_by_handle.py"
    script.write_text(_OPEN_BY_HANDLE)
    target = tmp_path / "visible.txt"
    target.write_text("opened by handle")
    command = f"{sys.executable} {script} {target}"
    assert run(command, None).data["stdout"] == "opened by handle\n", "the call works outside"
    blocked = run(command, sandbox)
    assert blocked.status == "error"
    assert blocked.data["stderr"].strip() == "open_by_handle_at: errno 1"


def test_password_hashes_are_hidden_when_the_host_has_them() -> None:
    shadow = Path("/etc/shadow")
    if not shadow.exists():
        pytest.skip("this host has no /etc/shadow")
    result = run("cat /etc/shadow", Sandbox.from_settings(Settings()))
    assert result.data["stdout"] == ""


def test_configured_extra_paths_are_hidden(tmp_path: Path) -> None:
    aws = tmp_path / "aws"
    aws.mkdir()
    (aws / "credentials").write_text("[default]\naws_secret_access_key = abc\n")
    token = tmp_path / "vault-token"
    token.write_text("hvs.secret\n")
    settings = Settings(safety={"sandbox_hide": [str(aws), str(token)]})
    sandbox = Sandbox.from_settings(settings)
    assert run(f"cat {aws}/credentials {token}", sandbox).data["stdout"] == ""
    assert "abc" in run(f"cat {aws}/credentials", None).data["stdout"]


def test_reads_of_the_configured_roots_work(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "app.log").write_text("INFO start\nERROR db timeout\nINFO done\n" * 100)
    settings = Settings(files={"roots": [str(logs), "/var/log"]}, safety={"shell_cwd": str(logs)})
    sandbox = Sandbox.from_settings(settings)
    grep = run(f"grep -c ERROR {logs}/app.log", sandbox, cwd=logs)
    assert (grep.status, grep.data["stdout"]) == ("success", "100\n")
    relative = run("wc -l app.log", sandbox, cwd=logs)
    assert relative.data["stdout"].split()[0] == "300"
    assert run("ls /var/log", sandbox).status == "success"
    # /tmp is the host's, read-only: sizes and listings there are true, not a private copy's.
    plain, confined = run(f"du -sb {tmp_path}", None), run(f"du -sb {tmp_path}", sandbox)
    assert plain.data["stdout"] == confined.data["stdout"]
    assert run("ps -e -o pid= | wc -l", sandbox).data["stdout"].strip() != "1", "ps sees the host's processes"
    scratch = run('sort -S 1K -T "$TMPDIR" app.log | uniq -c | sort -rn | head -1', sandbox, cwd=logs)
    assert "ERROR db timeout" in scratch.data["stdout"] or "INFO" in scratch.data["stdout"]


# -- killing --------------------------------------------------------------------------------------


def _unique_seconds() -> str:
    return f"{random.randint(100_000, 999_999)}"


def _running(seconds: str) -> list[psutil.Process]:
    """Every process on the machine running ``sleep SECONDS`` (an escaped one is no descendant)."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        if p.info["cmdline"] == ["sleep", seconds] and p.status() != psutil.STATUS_ZOMBIE:
            found.append(p)
    return found


def _wait_for(check: Callable[[], bool], timeout_s: float = 10) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def test_timeout_kills_everything_in_the_sandbox_even_what_left_the_group() -> None:
    escaped, foreground = _unique_seconds(), _unique_seconds()
    # setsid puts a sleeper in its own session: outside the process group the runner kills.
    command = f"setsid sleep {escaped} & sleep {foreground}"
    seen: list[psutil.Process] = []

    async def go() -> ToolResult:
        task = asyncio.create_task(
            run_command(
                command, cwd=None, timeout_s=3, max_bytes=1000, sandbox=Sandbox.from_settings(Settings())
            )
        )
        for _ in range(100):
            seen[:] = _running(escaped) + _running(foreground)
            if len(seen) == 2:
                break
            await asyncio.sleep(0.05)
        return await task

    result = asyncio.run(go())
    assert len(seen) == 2, "both sleepers were running"
    assert result.metadata["timed_out"] is True
    assert result.metadata["sandbox"] == "bwrap"
    assert _wait_for(lambda: not _running(escaped) and not _running(foreground))


def test_cancel_kills_the_sandboxed_process_tree() -> None:
    escaped, foreground = _unique_seconds(), _unique_seconds()
    command = f"setsid sleep {escaped} & sleep {foreground}"

    async def go() -> int:
        task = asyncio.create_task(
            run_command(
                command, cwd=None, timeout_s=60, max_bytes=1000, sandbox=Sandbox.from_settings(Settings())
            )
        )
        seen = 0
        for _ in range(200):
            seen = len(_running(escaped) + _running(foreground))
            if seen == 2:
                break
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return seen

    assert asyncio.run(go()) == 2
    assert _wait_for(lambda: not _running(escaped) and not _running(foreground))


def test_background_children_die_with_a_finished_confined_command() -> None:
    left = _unique_seconds()
    result = run(f"setsid sleep {left} > /dev/null 2>&1 & echo started", Sandbox.from_settings(Settings()))
    assert result.data["stdout"] == "started\n"
    assert _wait_for(lambda: not _running(left))


# -- settings and failures ------------------------------------------------------------------------


def test_sandbox_off_runs_read_only_commands_unconfined_and_says_so(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from structlog.testing import capture_logs

    from devops_agent.tools import shell as shell_module

    monkeypatch.setattr(shell_module, "_WARNED", set())
    target = tmp_path / "unconfined"
    misrate(monkeypatch, "touch")
    settings = Settings(database_url=store_url, safety={"sandbox": "off"})
    with Store(store_url) as store, capture_logs() as logs:
        service = SessionService(settings, store, model=model(shell(f"touch {target}"), {"text": "x"}))
        _events, final = asyncio.run(service.run("make a file", mode="ask"))
        audit = store.list_audit(session_id=final.session_id)
    [warning] = [e for e in logs if e["event"] == "sandbox_inactive"]
    assert warning["log_level"] == "warning"
    assert "safety.sandbox = off" in warning["detail"]
    assert target.exists(), "with the sandbox off a misrated write lands (that is why it warns)"
    assert [(a.outcome, a.sandbox) for a in audit] == [("executed", "inactive")]


def test_a_required_sandbox_that_cannot_run_refuses_read_only_commands(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("devops_agent.tools.sandbox.shutil.which", lambda _name: None)
    settings = Settings(database_url=store_url, safety={"sandbox": "bwrap"})
    with Store(store_url) as store:
        service = SessionService(settings, store, model=model(shell("uptime"), {"text": "{results}"}))
        events, _final = asyncio.run(service.run("uptime?", mode="ask"))
    [result] = tool_results(events)
    assert result.status == "error"
    assert "sandbox is required" in (result.error or "")
    assert "bubblewrap is not installed" in (result.error or "")


def test_a_hidden_working_directory_is_a_clear_sandbox_error(agent_secrets: dict[str, Path]) -> None:
    inside = agent_secrets["data"] / "knowledge"
    inside.mkdir()
    result = run("ls", Sandbox.from_settings(Settings()), cwd=inside)
    assert result.status == "error"
    assert (result.error or "").startswith("the sandbox could not start the command: Can't chdir")
    assert result.metadata["sandbox_error"] is True


def test_a_missing_program_is_reported_as_not_installed() -> None:
    result = run("kubectl-that-does-not-exist get pods", Sandbox.from_settings(Settings()))
    assert result.status == "error"
    assert result.data["exit_code"] == 127, "as a shell reports it, not bwrap's 1"
    assert "kubectl-that-does-not-exist` is not installed" in (result.error or "")


# -- doctor ---------------------------------------------------------------------------------------


def test_doctor_reports_an_active_sandbox_and_why_one_is_inactive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox_ready: Availability
) -> None:
    from devops_agent.agent import doctor
    from devops_agent.config import LoadedSettings
    from devops_agent.tools import sandbox as sandbox_module

    settings = Settings()
    Path(settings.data_dir).mkdir(parents=True, exist_ok=True)
    active = doctor.check_sandbox(LoadedSettings(settings))
    assert active.level == "ok"
    assert active.detail.startswith("active: ")
    assert active.facts is not None
    assert active.facts["active"] is True
    assert str(Path(settings.data_dir).resolve()) in active.facts["hidden"]

    off = doctor.check_sandbox(LoadedSettings(Settings(safety={"sandbox": "off"})))
    assert (off.level, off.facts and off.facts["active"]) == ("warn", False)
    assert "safety.sandbox = off" in off.detail

    monkeypatch.setattr(sandbox_module.shutil, "which", lambda _name: None)
    missing = doctor.check_sandbox(LoadedSettings(settings))
    assert missing.level == "warn"
    assert missing.detail == "inactive: bubblewrap is not installed (no bwrap on PATH)"
    assert "apt-get install bubblewrap" in (missing.hint or "")
    required = doctor.check_sandbox(LoadedSettings(Settings(safety={"sandbox": "bwrap"})))
    assert required.level == "fail"

    # A bwrap that the kernel refuses namespaces to (what it prints in a locked-down container).
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the kernel "
                    "does not allow non-privileged user namespaces.' >&2\nexit 1\n")  # fmt: skip
    fake.chmod(0o755)
    monkeypatch.setattr(sandbox_module.shutil, "which", lambda _name: str(fake))
    refused = doctor.check_sandbox(LoadedSettings(settings))
    assert refused.level == "warn"
    assert refused.detail.startswith("inactive: user namespaces are refused here")
    assert "unprivileged_userns_clone" in (refused.hint or "")

    monkeypatch.setattr(sandbox_module.sys, "platform", "darwin")
    assert "not Linux" in doctor.check_sandbox(LoadedSettings(settings)).detail


def test_doctor_json_carries_the_sandbox_state(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "devops_agent", "doctor", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    checks = {c["name"]: c for c in json.loads(proc.stdout)}
    sandbox = checks["sandbox"]
    assert sandbox["level"] == "ok"
    assert sandbox["facts"]["active"] is True
    assert sandbox["facts"]["mode"] == "auto"
    assert "facts" not in checks["config"], "checks without facts keep their shape"
    text = subprocess.run(
        [sys.executable, "-m", "devops_agent", "doctor"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "DEVOPS_AGENT_SAFETY__SANDBOX": "off"},
    )
    line = next(ln for ln in text.stdout.splitlines() if " sandbox: " in ln)
    assert line.startswith("warn sandbox: inactive: turned off")
