"""The sandbox's settings, hidden-path list, environment and outcome reading (no bwrap needed).

What bwrap itself does with these is in ``tests/tools/test_sandbox.py`` (real processes).
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from devops_agent.config import Settings, load_settings
from devops_agent.errors import ConfigError
from devops_agent.policies.guard import evaluate_command
from devops_agent.tools.sandbox import Availability, Sandbox, agent_paths, read_outcome
from devops_agent.tools.sandbox_seccomp import program


def test_sandbox_settings_are_validated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert Settings().safety.sandbox == "auto"
    monkeypatch.setenv("DEVOPS_AGENT_SAFETY__SANDBOX", "sometimes")
    with pytest.raises(ConfigError, match="safety.sandbox"):
        load_settings(cwd=tmp_path)
    monkeypatch.delenv("DEVOPS_AGENT_SAFETY__SANDBOX")
    monkeypatch.setenv("DEVOPS_AGENT_SAFETY__SANDBOX_HIDE", '["relative/dir"]')
    with pytest.raises(ConfigError, match="give absolute paths"):
        load_settings(cwd=tmp_path)
    monkeypatch.setenv("DEVOPS_AGENT_SAFETY__SANDBOX_HIDE", '["/"]')
    with pytest.raises(ConfigError, match="would hide every program"):
        load_settings(cwd=tmp_path)
    monkeypatch.setenv("DEVOPS_AGENT_SAFETY__SANDBOX_HIDE", '["~/.aws/credentials"]')
    hide = load_settings(cwd=tmp_path).settings.safety.sandbox_hide
    assert hide == [Path.home() / ".aws" / "credentials"]


def test_only_commands_allowed_as_read_only_are_confined() -> None:
    safety = Settings().safety
    assert evaluate_command("ls -la /var/log", "ask", safety).confine
    assert evaluate_command("ls -la /var/log", "agent", safety).confine
    mutating = evaluate_command("touch /tmp/x", "agent", safety)
    assert (mutating.decision, mutating.confine) == ("approve", False), "approved: runs outside"
    patterned = Settings(safety={"allow_patterns": ["systemctl restart nginx"]}).safety
    waived = evaluate_command("systemctl restart nginx", "agent", patterned)
    assert (waived.decision, waived.confine) == ("allow", False), "an allow pattern is a decision to write"
    assert not evaluate_command("rm -rf /srv", "ask", safety).confine
    assert "confine" not in evaluate_command("touch /tmp/x", "agent", safety).to_metadata()


def test_the_agents_own_files_are_on_the_hidden_list(tmp_path: Path, isolated_home: Path) -> None:
    db = tmp_path / "elsewhere" / "agent.db"
    settings = Settings(database_url=f"sqlite:///{db}", safety={"sandbox_hide": [str(tmp_path / "extra")]})
    paths = agent_paths(settings)
    assert Path(settings.data_dir) in paths
    assert {db, db.with_name("agent.db-wal"), db.with_name("agent.db-journal")} <= set(paths)
    assert isolated_home / "config" / "devops-agent" in paths
    assert tmp_path / "extra" in paths
    postgres = Settings(database_url="postgresql://u:p@127.0.0.1/db")
    assert agent_paths(postgres)[0] == Path(postgres.data_dir)
    assert not any(str(p).endswith(("-wal", "-shm")) for p in agent_paths(postgres))


def test_hidden_paths_are_the_existing_ones_outermost_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    (data / "knowledge").mkdir(parents=True)
    (data / "privacy.key").write_text("k")
    link = tmp_path / "link-to-key"
    link.symlink_to(data / "privacy.key")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    for name in ("id_rsa", "github-deploy", "id_rsa.pub", "known_hosts", "config", "authorized_keys"):
        (home / ".ssh" / name).write_text(name)
    sandbox = Sandbox(
        "auto",
        Availability(True, "test"),
        hide=(data / "privacy.key", data, link, tmp_path / "missing"),
        home=home,
    )
    hidden = sandbox.hidden_now()
    assert data in hidden
    assert data / "privacy.key" not in hidden, "inside a hidden directory already"
    assert tmp_path / "missing" not in hidden, "nothing to hide (and bwrap cannot mount on it)"
    assert link not in hidden, "a link is hidden by hiding what it points to"
    ssh = [p.name for p in hidden if p.parent == home / ".ssh"]
    assert sorted(ssh) == ["github-deploy", "id_rsa"]
    depths = [len(p.parts) for p in hidden]
    assert depths == sorted(depths)


def test_the_environment_loses_the_agents_secrets_only() -> None:
    env = Sandbox.environment(
        {
            "PATH": "/usr/bin",
            "KUBECONFIG": "/home/u/.kube/config",
            "AWS_PROFILE": "prod",
            "DEVOPS_AGENT_MODEL__API_KEY": "sk-1",
            "DEVOPS_AGENT_JIRA__TOKEN": "t",
            "OPENAI_API_KEY": "sk-2",
            "anthropic_api_key": "sk-3",
            "TMPDIR": "/var/tmp",
        }
    )
    assert env == {
        "PATH": "/usr/bin",
        "KUBECONFIG": "/home/u/.kube/config",
        "AWS_PROFILE": "prod",
        "TMPDIR": "/dev/shm",
    }


@pytest.mark.parametrize(
    ("code", "stderr", "kind"),
    [
        (1, "touch: cannot touch '/etc/x': Read-only file system\n", "denied"),
        (0, "warning: could not write cache: read-only file system\n", "denied"),
        (1, "bwrap: execvp kubectl: No such file or directory\n", "not_found"),
        (1, "bwrap: execvp ./x: Permission denied\n", "not_executable"),
        (1, "bwrap: Can't chdir to /srv/x: No such file or directory\n", "setup_failed"),
        (1, "bwrap: Can't mkdir /x: Read-only file system\n", "setup_failed"),
        (2, "grep: /nope: No such file or directory\n", "ran"),
        (1, "", "ran"),
    ],
)
def test_reading_a_confined_run(code: int, stderr: str, kind: str) -> None:
    assert read_outcome(code, stderr).kind == kind


def test_the_seccomp_program_denies_open_by_handle_at_on_each_arch() -> None:
    """Run the assembled BPF on a tiny interpreter: the jumps land where they should."""
    raw = program()
    insns = [struct.unpack("=HBBI", raw[i : i + 8]) for i in range(0, len(raw), 8)]

    def verdict(arch: int, nr: int) -> int:
        acc, pc = 0, 0
        while True:
            code, jt, jf, k = insns[pc]
            if code == 0x20:
                acc = arch if k == 4 else nr
                pc += 1
            elif code == 0x15:
                pc += 1 + (jt if acc == k else jf)
            elif code == 0x35:
                pc += 1 + (jt if acc >= k else jf)
            elif code == 0x06:
                return k
            else:
                raise AssertionError(f"unexpected opcode {code:#x}")

    allow, eperm = 0x7FFF0000, 0x00050001
    x86_64, i386, aarch64 = 0xC000003E, 0x40000003, 0xC00000B7
    assert verdict(x86_64, 304) == eperm
    assert verdict(x86_64, 303) == allow
    assert verdict(x86_64, 0) == allow
    assert verdict(x86_64, 0x40000000 | 304) == eperm, "x32 ABI"
    assert verdict(i386, 342) == eperm
    assert verdict(i386, 304) == allow
    assert verdict(aarch64, 265) == eperm
    assert verdict(aarch64, 304) == allow
    assert verdict(0xDEADBEEF, 304) == allow
