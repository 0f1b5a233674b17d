"""Domain knowledge for the ``argocd`` CLI (cobra): list/get/diff/history/logs read, sync and
set change applications, delete and rm destroy.

Like kubectl, a global flag that takes a value swallows the next word, so the command path is
found the way cobra finds it; a flag this module does not know before it makes the command
``unknown``. Must not run anything or parse shell syntax.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import Recurse, Verdict, destr, mut, ro, unk
from devops_agent.safety.commands.options import CobraFlags, cobra_path

ARGOCD_GLOBAL = CobraFlags.of(
    "--auth-token --client-crt --client-crt-key --config --controller-name --grpc-web-root-path -H "
    "--header --http-retry-max --kube-context --logformat --loglevel --port-forward-namespace "
    "--redis-haproxy-name --redis-name --repo-server-name --server --server-crt --redis-compress "
    "--argocd-context",
    "--core --grpc-web --insecure --plaintext --port-forward -h --help",
)
_READ_ACTIONS = frozenset(
    {
        "list", "get", "diff", "history", "logs", "manifests", "resources", "wait", "get-user-info",
        "can-i", "version", "completion", "ls", "windows", "bcrypt",
    }
)  # fmt: skip
_DESTROY_ACTIONS = frozenset({"delete", "rm", "delete-resource", "remove"})
_GROUPS = frozenset(
    {
        "account", "app", "appset", "cert", "cluster", "gpg", "proj", "repo", "repocreds",
        "context", "login", "logout", "relogin", "version", "completion", "admin", "configure",
    }
)  # fmt: skip


def argocd(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Classify ``argocd GROUP ACTION`` (``argocd app sync``, ``argocd proj role list`` …)."""
    args = list(argv[1:])
    words, blind, at, _end = cobra_path(args, ARGOCD_GLOBAL, levels=3)
    if blind is not None and (at == 0 or (at == 1 and words[0] not in ("version", "completion", "context"))):
        return unk(
            f"argocd {blind}: a flag this classifier does not know comes before the subcommand", "argocd"
        )
    if not words:
        return ro("argocd with no command prints help", "argocd.read")
    group = words[0]
    if group not in _GROUPS:
        return unk(f"argocd {group}: not a command this classifier knows", "argocd")
    if group in ("version", "completion"):
        return ro(f"argocd {group}", "argocd.read")
    if group == "context":
        if len(words) == 1 and "--delete" not in args:
            return ro("argocd context: lists contexts", "argocd.read")
        return mut("argocd context NAME: switches or deletes the current context", "argocd.mutate")
    if group in ("login", "logout", "relogin", "configure"):
        return mut(f"argocd {group}: changes local credentials or settings", "argocd.mutate")
    if group == "admin":
        return unk("argocd admin: administrative commands act on the cluster directly", "argocd")
    action = words[1] if len(words) > 1 else ""
    if action in ("actions", "role", "windows") and len(words) > 2:
        action = words[2] if words[2] not in ("list", "get") else "list"
    if action in _READ_ACTIONS:
        return ro(f"argocd {group} {action}: reads", "argocd.read")
    if action in _DESTROY_ACTIONS:
        return destr(f"argocd {group} {action}: deletes {group} objects", "argocd.delete")
    if action == "edit":
        return unk(f"argocd {group} edit: opens an editor", "argocd")
    if not action:
        return ro(f"argocd {group} prints help", "argocd.read")
    return mut(f"argocd {group} {action}: changes Argo CD state", "argocd.mutate")
