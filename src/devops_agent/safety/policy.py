"""Decide what happens to a classified command in a session mode: allow, approve, or reject.

The decision is a pure function of a :class:`Classification`, the session mode and the
configured patterns; it never runs anything and never re-parses shell text. ``ask`` mode only
ever allows ``read_only``: no pattern can change that. In ``agent`` mode allow patterns may waive
the approval of ``mutating``/``unknown`` commands, never of ``destructive`` ones; deny patterns
reject in every mode. Must not import from ``cli/`` or ``agent/``.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

from devops_agent.safety.classifier import Classification, CommandResult
from devops_agent.safety.commands import impacts, program_name

Decision = Literal["allow", "approve", "approve_detailed", "reject"]
PolicyMode = Literal["ask", "agent"]

_READ_ONLY_HINTS = {
    "kubectl": "kubectl get, kubectl describe, kubectl logs or kubectl events",
    "oc": "oc get, oc describe or oc logs",
    "helm": "helm list, helm status, helm get values or helm history",
    "docker": "docker ps, docker logs, docker inspect or docker stats",
    "podman": "podman ps, podman logs or podman inspect",
    "systemctl": "systemctl status, systemctl show or journalctl -u UNIT",
    "git": "git status, git log, git diff or git show",
    "terraform": "terraform plan, terraform show or terraform state list",
    "aws": "the describe-*/list-*/get-* operations",
    "gcloud": "the list/describe commands",
    "az": "the list/show commands",
    "psql": "psql -c with a SELECT or \\d query",
    "mysql": "mysql -e with a SELECT or SHOW query",
    "curl": "curl -s URL (a GET printed to stdout)",
}


@dataclass(frozen=True)
class PolicyDecision:
    """What to do, why, and (for rejections) a hint the model can act on."""

    decision: Decision
    reason: str
    hint: str | None = None


@dataclass(frozen=True)
class Impact:
    """Texts for the detailed approval form of a destructive command."""

    what_changes: str
    what_could_be_lost: str
    how_to_undo: str


def normalized(argv: Sequence[str]) -> str:
    """The argv as one shell-quoted string (what string patterns are matched against)."""
    return shlex.join(argv)


def matches(pattern: str, result: CommandResult) -> bool:
    """Whether ``pattern`` matches one simple command.

    Two forms, both tried: (1) ``fnmatch`` of the pattern against the normalized argv string
    (``kubectl delete *``); (2) argv prefix — the pattern is split like a shell line and each of
    its words must ``fnmatch`` the command's word at the same position (``kubectl delete`` matches
    ``kubectl delete pod x``). The program word is compared by basename (``/bin/rm`` ≙ ``rm``).
    """
    if not result.argv:
        return False
    argv = [program_name(result.argv[0]), *result.argv[1:]]
    if fnmatchcase(normalized(argv), pattern) or fnmatchcase(normalized(result.argv), pattern):
        return True
    try:
        words = shlex.split(pattern)
    except ValueError:
        return False
    return 0 < len(words) <= len(argv) and all(fnmatchcase(a, w) for a, w in zip(argv, words, strict=False))


def decide(
    c: Classification,
    mode: PolicyMode,
    *,
    allow_patterns: Sequence[str] = (),
    deny_patterns: Sequence[str] = (),
) -> PolicyDecision:
    """The decision for ``c`` in ``mode`` (see the module docstring and docs/safety.md for the table)."""
    for pattern in deny_patterns:
        hit = next((r for r in c.commands if matches(pattern, r)), None)
        if hit is not None or fnmatchcase(c.command.strip(), pattern):
            shown = normalized(hit.argv) if hit else c.command.strip()
            return PolicyDecision(
                "reject",
                f"denied by pattern {pattern!r}: {shown}",
                "this command is denied by configuration; gather the evidence another way",
            )
    why = "; ".join(c.reasons) or c.level
    if c.level == "read_only":
        return PolicyDecision("allow", f"read-only: {why}")
    if mode == "ask":
        return PolicyDecision("reject", f"{c.level} command refused in ask mode: {why}", _ask_hint(c))
    if c.level == "destructive":
        return PolicyDecision("approve_detailed", f"destructive: {why}")
    if allow_patterns and _all_allowed(c, allow_patterns):
        return PolicyDecision("allow", f"{c.level}, allowed by configured pattern: {why}")
    return PolicyDecision("approve", f"{c.level}: {why}")


def _all_allowed(c: Classification, patterns: Sequence[str]) -> bool:
    """Every part that is not read-only must itself match an allow pattern (no piggybacking).

    A part that writes through a redirection (``kubectl rollout restart x > ~/.bashrc``) is never
    waived: patterns are matched against the argv, which does not show the file being written.
    """
    if c.parse_error is not None or not c.commands:
        return False
    risky = [r for r in c.commands if r.level != "read_only"]
    return all(
        r.level != "destructive" and not r.writes and any(matches(p, r) for p in patterns) for r in risky
    )


def _ask_hint(c: Classification) -> str:
    names = [program_name(r.argv[0]) for r in c.commands if r.argv and r.level != "read_only"]
    suggestion = next((_READ_ONLY_HINTS[n] for n in names if n in _READ_ONLY_HINTS), None)
    base = "this session is read-only (ask mode); use a read-only command"
    if suggestion:
        return f"{base} such as {suggestion}, or ask the user to switch the session to agent mode"
    return (
        f"{base} (ls, cat, grep, ps, df, kubectl get …), or ask the user to switch the session to agent mode"
    )


def impact(c: Classification) -> Impact:
    """Texts for the detailed approval form, from the most severe part's family."""
    keys = c.keys or [r.key for r in c.commands if r.key]
    changes, lost, undo = impacts.lookup(keys[0] if keys else "")
    return Impact(changes, lost, undo)
