"""Domain knowledge for the GitHub CLI ``gh`` (cobra): list/view/status/diff read, the rest changes.

``gh api`` reads with its default GET and writes with ``-X``/``--method`` other than GET or with
``-f``/``-F``/``--field``/``--raw-field``/``--input`` (which make it POST). Subcommands this
module does not know may be extensions (programs of the caller's choice): ``unknown``. Must not
run anything or parse shell syntax.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import Recurse, Verdict, mut, ro, unk
from devops_agent.safety.commands.options import CobraFlags, cobra_path

GH_GLOBAL = CobraFlags.of("-R --repo --hostname", "--help -h --version")
_READ_ACTIONS = frozenset(
    {"list", "ls", "view", "status", "diff", "checks", "watch", "get", "logs", "verify", "search"}
)
_GROUPS = frozenset(
    {
        "pr", "issue", "run", "workflow", "repo", "release", "gist", "label", "secret", "variable",
        "cache", "codespace", "project", "org", "ruleset", "extension", "alias", "config", "auth",
        "search", "status", "browse", "api", "attestation", "gpg-key", "ssh-key", "completion",
        "version", "help",
    }
)  # fmt: skip
_API_SEND = ("-f", "-F", "--field", "--raw-field", "--input")


def gh(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Classify ``gh GROUP ACTION``."""
    args = list(argv[1:])
    words, blind, at, _end = cobra_path(args, GH_GLOBAL, levels=2)
    if blind is not None and at == 0:
        return unk(f"gh {blind}: a flag this classifier does not know comes before the command", "gh")
    if not words:
        return ro("gh prints help", "gh.read")
    group = words[0]
    if group not in _GROUPS:
        return unk(f"gh {group}: not a command this classifier knows (it may be an extension)", "gh")
    if group in ("status", "completion", "version", "help", "search"):
        return ro(f"gh {group}: reads", "gh.read")
    if group == "api":
        return _api(args)
    if group == "browse":
        return unk("gh browse: opens a browser", "gh")
    action = words[1] if len(words) > 1 else ""
    if group == "auth" and action in ("status", "token"):
        return ro(f"gh auth {action}: reads", "gh.read")
    if group == "config" and action in ("get", "list"):
        return ro(f"gh config {action}: reads", "gh.read")
    if action in _READ_ACTIONS:
        return ro(f"gh {group} {action}: reads", "gh.read")
    if group == "extension" and action in ("exec",):
        return unk("gh extension exec: runs an extension", "gh")
    if not action:
        return ro(f"gh {group} prints help", "gh.read")
    return mut(f"gh {group} {action}: changes GitHub or local state", "gh.mutate")


def _api(args: list[str]) -> Verdict:
    method = "GET"
    for i, a in enumerate(args):
        if a in ("-X", "--method") and i + 1 < len(args):
            method = args[i + 1].upper()
        elif a.startswith(("--method=", "-X")) and len(a) > 2:
            method = a.split("=", 1)[-1].removeprefix("-X").upper()
        elif a in _API_SEND or a.startswith(tuple(f"{f}=" for f in _API_SEND if f.startswith("--"))):
            method = "POST" if method == "GET" else method
    if method in ("GET", "HEAD"):
        return ro("gh api (GET): reads", "gh.read")
    return mut(f"gh api {method}: sends a changing request", "net.request")
