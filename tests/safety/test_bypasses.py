"""Regression tests from a security review of safe execution: classifier bypasses, the executor,
allow patterns and the approval CLI. Each test failed before its fix."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from devops_agent.cli.approve import _check_unattended, describe_pending
from devops_agent.cli.context import err
from devops_agent.errors import UserError
from devops_agent.safety import classify, decide
from devops_agent.textsafe import visible
from devops_agent.tools.shell import plan, run_command


def level(command: str) -> str:
    return classify(command).level


def run(command: str, timeout_s: float = 10, max_bytes: int = 10_000):  # type: ignore[no-untyped-def]
    return asyncio.run(run_command(command, cwd=None, timeout_s=timeout_s, max_bytes=max_bytes))


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("sudo rm -v -rf /etc", "destructive"),  # -v belongs to rm, not to sudo
        ("sudo -k rm -rf /srv", "destructive"),  # sudo -k CMD still runs CMD
        ("sudo -l", "read_only"),
        ("sudo -v", "read_only"),
        ("sudo -l rm -rf /srv", "read_only"),  # -l with a command only lists whether it is allowed
        ("sudo -i", "unknown"),
    ],
)
def test_sudo_judges_only_its_own_options(command: str, expected: str) -> None:
    assert level(command) == expected


@pytest.mark.parametrize(
    "command", ["env -S 'rm -rf /srv'", "env --split-string='rm -rf /srv'", "env -S'rm -rf /srv'"]
)
def test_env_split_string_is_unwrapped(command: str) -> None:
    assert level(command) == "destructive"


def test_env_still_unwraps_assignments_and_prints_alone() -> None:
    assert level("env FOO=1 ip route show") == "read_only"
    assert level("env") == "read_only"
    assert level("env -i PATH=/bin rm x") == "destructive"


@pytest.mark.parametrize(
    "command",
    [
        "ssh -o ProxyCommand='rm -rf /srv' host uptime",
        "ssh -oProxyCommand='touch /tmp/x' host uptime",
        "ssh -o 'LocalCommand rm -rf /srv' -o PermitLocalCommand=yes host uptime",
    ],
)
def test_ssh_options_that_run_local_commands_are_not_read_only(command: str) -> None:
    assert level(command) == "unknown"
    assert level("ssh -o ConnectTimeout=5 host uptime") == "read_only"


def test_find_judges_every_exec_action() -> None:
    assert level("find . -exec true \\; -exec rm -rf {} \\;") == "destructive"
    assert level("find . -name '*.log' -exec ls -l {} \\; -fprint out.txt") == "mutating"
    assert level("find /var/log -name '*.gz' -exec ls -l {} +") == "read_only"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("sed -ni 's/a/b/' f", "mutating"),
        ("sed -Ei 's/a/b/' f", "mutating"),
        ("sed -e s/a/b/ -i f", "mutating"),
        ("sed --expression='1e rm -rf x' f", "unknown"),
        ("echo x | sed 's/.*/id/e'", "unknown"),
        ("sed -f script.sed f", "unknown"),
        ("sed -nf script.sed f", "unknown"),
        ("sed -n '/error/p' /var/log/syslog", "read_only"),
        ("sed -s p f", "read_only"),
        ("sed 's/warning/W/g;/^$/d' f", "read_only"),
    ],
)
def test_sed_in_place_bundles_execute_flags_and_script_files(command: str, expected: str) -> None:
    assert level(command) == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("awk '{print $0 > f}' x", "mutating"),
        ("awk '{\"date\"|getline d; print d}' x", "unknown"),
        ("awk 'BEGIN{system (\"rm -rf x\")}'", "unknown"),
        ("awk -f prog.awk x", "unknown"),
        ("awk '$3 > 100 {print $1}' f", "read_only"),
        ("awk '{ if ($1 > 5) print $2 }' f", "read_only"),
        ('awk \'$1=="a" || $2=="b"\' f', "read_only"),
    ],
)
def test_awk_programs_that_run_or_write(command: str, expected: str) -> None:
    assert level(command) == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git -c core.pager='rm -rf x' log", "unknown"),
        ("git -c core.fsmonitor='rm -rf x' status", "unknown"),
        ("git -c core.sshCommand='rm -rf ~' push", "unknown"),
        ("git --exec-path=/tmp log", "unknown"),
        ("git grep -O'rm -rf x' foo", "unknown"),
        ("git difftool -x 'rm -rf x'", "unknown"),
        ("git log --output=/etc/passwd", "destructive"),
        ("git diff --output=x", "mutating"),
        ("git -c x.y=1 push --force", "destructive"),
        ("git -c color.ui=always log --oneline", "read_only"),
        ("git -c safe.directory='*' status", "read_only"),
        ("git grep -n foo", "read_only"),
    ],
)
def test_git_options_that_run_programs_or_write_files(command: str, expected: str) -> None:
    assert level(command) == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("uniq a /etc/passwd", "destructive"),
        ("xxd -r dump.hex out.bin", "mutating"),
        ("yq -i '.a=1' f.yaml", "mutating"),
        ("tree -o listing.txt", "mutating"),
        ("rg --pre=sh foo", "unknown"),
        ("fd -x rm", "destructive"),
        ("bat --paging=always --pager='rm -rf x' f", "unknown"),
        ("timedatectl set-time 2020-01-01", "mutating"),
        ("hostnamectl set-hostname x", "mutating"),
        ("loginctl terminate-user bob", "mutating"),
        ("busctl call org.freedesktop.login1 /org/freedesktop/login1 x PowerOff b false", "unknown"),
        ("ethtool -s eth0 speed 10", "mutating"),
        ("arp -d 10.0.0.1", "mutating"),
        ("route del default", "mutating"),
        ("amtool silence add alertname=x", "mutating"),
        # the daily read-only forms stay read-only
        ("sort access.log | uniq -c", "read_only"),
        ("xxd x", "read_only"),
        ("yq '.spec' deploy.yaml", "read_only"),
        ("tree -L 2", "read_only"),
        ("rg -n timeout src/", "read_only"),
        ("timedatectl", "read_only"),
        ("hostnamectl", "read_only"),
        ("loginctl list-sessions", "read_only"),
        ("ethtool -S eth0", "read_only"),
        ("route -n", "read_only"),
        ("amtool alert query", "read_only"),
    ],
)
def test_read_only_programs_with_writing_or_running_forms(command: str, expected: str) -> None:
    assert level(command) == expected


@pytest.mark.parametrize("command", ["tee /./etc/passwd", "ls > /tmp/../etc/passwd", "cp x /tmp/../etc/x"])
def test_system_paths_are_recognised_after_dot_segments(command: str) -> None:
    assert level(command) == "destructive"


def test_carriage_return_does_not_split_words_differently_at_run_time(tmp_path: Path) -> None:
    victim = tmp_path / "x"
    victim.write_text("keep me")
    command = f"find {tmp_path} -name x\r-delete"
    assert level(command) == "read_only"  # bash and the classifier see one word `x\r-delete`
    assert plan(command)[0] == "bash"  # … so it must run under bash, not shlex's split
    run(command)
    assert victim.exists()


def test_background_child_holding_stdout_does_not_become_a_timeout() -> None:
    started = time.monotonic()
    result = run("sleep 30 & echo done", timeout_s=5)
    assert time.monotonic() - started < 4
    assert result.status == "success"
    assert result.data["stdout"] == "done\n"


def test_timeout_keeps_the_output_printed_before_the_kill() -> None:
    result = run("echo first-line; echo oops >&2; sleep 30", timeout_s=1)
    assert result.metadata["timed_out"] is True
    assert result.data["stdout"] == "first-line\n"
    assert result.data["stderr"] == "oops\n"


def test_allow_pattern_does_not_waive_a_redirect_write() -> None:
    patterns = ["kubectl rollout restart"]
    plain = classify("kubectl rollout restart deploy/api 2>/dev/null")
    assert decide(plain, "agent", allow_patterns=patterns).decision == "allow"
    writes = classify("kubectl rollout restart deploy/api > ~/.ssh/authorized_keys")
    assert writes.level == "mutating"
    assert decide(writes, "agent", allow_patterns=patterns).decision == "approve"


def test_approving_without_a_terminal_needs_yes() -> None:
    pending = {"c1": {"decision": "approve", "command": "systemctl restart nginx"}}
    with pytest.raises(UserError, match="--yes"):
        _check_unattended(["c1"], pending, yes=False, deny=False)
    _check_unattended(["c1"], pending, yes=True, deny=False)
    _check_unattended(["c1"], pending, yes=False, deny=True)
    destructive = {"c1": {"decision": "approve_detailed", "command": "rm -rf /srv"}}
    with pytest.raises(UserError, match="CONFIRM"):
        _check_unattended(["c1"], destructive, yes=False, deny=False)


def test_approval_prompt_shows_control_characters_instead_of_obeying_them() -> None:
    command = "rm -rf /srv #\x1b[1G\x1b[2Kls -la"
    with err.capture() as captured:
        describe_pending("c1", {"decision": "approve_detailed", "command": command})
    shown = captured.get()
    assert "\x1b" not in shown
    assert visible(command) in shown
    assert "rm -rf /srv" in shown
