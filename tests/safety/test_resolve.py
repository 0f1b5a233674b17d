"""Programs are resolved by their real path, not trusted by base name (issue 20).

Real files and real ``PATH`` lookups: a temporary directory holds executables named like
system tools, and the classifier is given a ``PATH`` (or a resolver) that reaches them.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from devops_agent.config.settings import SafetySettings
from devops_agent.policies.guard import evaluate_command
from devops_agent.safety import classify
from devops_agent.safety.resolve import DEFAULT_TRUSTED_DIRS, PathResolver, check_program


def _executable(directory: Path, name: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.parametrize(
    "cmd",
    [
        "./ls -la",
        "~/bin/kubectl get pods",
        "/tmp/x/cat /etc/hosts",
        "../bin/git status",
        "bin/ls",
        "/opt/bin/kubectl get pods",
        "/usr/bin/../../tmp/ls",
        "/proc/self/cwd/ls",
        "$HOME/bin/helm list",
        "sudo ./ls",
        "env ./ls",
        "xargs ./cat < files.txt",
        "find . -exec ./cat {} \\;",
        "timeout 5 ./kubectl get pods",
    ],
)
def test_programs_named_by_a_path_outside_the_system_directories_are_unknown(cmd: str) -> None:
    assert classify(cmd).level == "unknown", classify(cmd).reasons


@pytest.mark.parametrize(
    "cmd", ["/usr/bin/ls -la", "/bin/cat /etc/hostname", "/usr//bin/ls", "/usr/bin/../bin/ls -l"]
)
def test_programs_in_system_directories_are_judged_by_name(cmd: str) -> None:
    assert classify(cmd).level == "read_only", classify(cmd).reasons


def test_a_name_shadowed_through_path_is_unknown(tmp_path: Path) -> None:
    _executable(tmp_path / "bin", "ls")
    path = f"{tmp_path / 'bin'}:/usr/bin:/bin"
    c = classify("ls -la", resolver=path)
    assert c.level == "unknown"
    assert str(tmp_path / "bin" / "ls") in c.reasons[0]
    # The same PATH without the shadowing directory first: ls is /usr/bin/ls or /bin/ls.
    assert classify("ls -la", resolver="/usr/bin:/bin").level == "read_only"


def test_a_relative_path_entry_makes_every_lookup_depend_on_the_directory(tmp_path: Path) -> None:
    assert classify("cat /etc/hosts", resolver=".:/usr/bin:/bin").level == "unknown"
    assert classify("cat /etc/hosts", resolver=":/usr/bin").level == "unknown"


def test_builtins_are_not_looked_up_and_missing_programs_are_judged_by_name(tmp_path: Path) -> None:
    _executable(tmp_path, "echo")
    path = f"{tmp_path}:/usr/bin"
    assert classify("echo hi", resolver=path).level == "read_only"  # the builtin runs, not the file
    assert classify("argocd app list", resolver=str(tmp_path / "empty")).level == "read_only"


def test_trusted_directories_are_configurable(tmp_path: Path) -> None:
    tool = _executable(tmp_path / "tools", "kubectl")
    path = str(tmp_path / "tools")
    assert classify("kubectl get pods", resolver=path).level == "unknown"
    trusted = (*DEFAULT_TRUSTED_DIRS, str(tmp_path / "tools"))
    assert classify("kubectl get pods", resolver=path, trusted_dirs=trusted).level == "read_only"
    assert classify(f"{tool} get pods", trusted_dirs=trusted).level == "read_only"
    assert check_program("kubectl", PathResolver(path), trusted) == ("kubectl", None)


def test_a_which_like_function_works_as_resolver() -> None:
    assert classify("ls", resolver=lambda name: f"/home/u/.local/bin/{name}").level == "unknown"
    assert classify("ls", resolver=lambda name: None).level == "read_only"


def test_the_guard_resolves_through_the_process_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _executable(tmp_path, "cat")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}/usr/bin{os.pathsep}/bin")
    v = evaluate_command("cat /etc/hostname", "ask", SafetySettings())
    assert v.decision == "reject"
    assert v.classification == "unknown"
    trusted = SafetySettings(trusted_bin_dirs=[*DEFAULT_TRUSTED_DIRS, str(tmp_path)])
    assert evaluate_command("cat /etc/hostname", "ask", trusted).decision == "allow"


def test_settings_default_matches_the_classifier_default() -> None:
    assert tuple(SafetySettings().trusted_bin_dirs) == DEFAULT_TRUSTED_DIRS
