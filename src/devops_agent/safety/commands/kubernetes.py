"""Domain knowledge for ``kubectl`` (and ``oc``) and ``helm``: which subcommands only read.

Must not run anything or parse shell syntax; it sees one argv whose ``argv[0]`` is the program.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from devops_agent.safety.commands.base import Recurse, Verdict, destr, has_flag, mut, positionals, ro, unk

_KUBECTL_VALUED = (
    "-n",
    "--namespace",
    "--context",
    "--kubeconfig",
    "--cluster",
    "--user",
    "-l",
    "--selector",
    "-o",
    "--output",
    "-c",
    "--container",
    "-f",
    "--filename",
    "-s",
    "--server",
    "--field-selector",
    "--since",
    "--tail",
    "-p",
    "--patch",
    "--type",
    "--replicas",
    "--image",
    "--sort-by",
    "--as",
    "--token",
    "--timeout",
    "--grace-period",
    "--to-revision",
    "-k",
    "--kustomize",
    "-L",
)

_KUBECTL_READ = {
    "get",
    "describe",
    "logs",
    "top",
    "events",
    "explain",
    "api-resources",
    "api-versions",
    "version",
    "cluster-info",
    "diff",
    "wait",
    "auth",
    "completion",
    "plugin",
    "kustomize",
    "options",
}
_KUBECTL_MUTATE = {
    "apply",
    "create",
    "scale",
    "autoscale",
    "exec",
    "cordon",
    "uncordon",
    "patch",
    "edit",
    "label",
    "annotate",
    "set",
    "expose",
    "run",
    "cp",
    "port-forward",
    "attach",
    "debug",
    "replace",
    "taint",
    "proxy",
    "certificate",
}
_ROLLOUT_READ = {"status", "history"}
_CLUSTER_SCOPED_DANGER = {
    "namespace",
    "namespaces",
    "ns",
    "node",
    "nodes",
    "no",
    "pv",
    "persistentvolume",
    "persistentvolumes",
    "crd",
    "crds",
    "customresourcedefinition",
    "customresourcedefinitions",
    "clusterrole",
    "clusterroles",
    "clusterrolebinding",
    "clusterrolebindings",
    "pvc",
    "persistentvolumeclaim",
    "persistentvolumeclaims",
}


def _resource_kinds(pos: Sequence[str]) -> set[str]:
    kinds: set[str] = set()
    for p in pos:
        for part in p.split(","):
            kinds.add(part.split("/")[0].split(".")[0].lower())
    return kinds


def kubectl(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Classify a ``kubectl``/``oc`` invocation by subcommand and, for deletes, by what is deleted."""
    args = list(argv[1:])
    pos = positionals(args, _KUBECTL_VALUED)
    name = argv[0]
    if not pos:
        return ro(f"{name} with no subcommand prints help", "kubectl.help")
    sub, rest = pos[0], pos[1:]
    if sub in _KUBECTL_READ:
        return ro(f"{name} {sub}: reads cluster state", f"kubectl.{sub}")
    if sub == "config":
        if rest and rest[0] in ("view", "get-contexts", "current-context", "get-clusters", "get-users"):
            return ro(f"{name} config {rest[0]}: reads kubeconfig", "kubectl.config")
        return mut(f"{name} config {' '.join(rest[:1])}: changes the kubeconfig", "kubectl.config")
    if sub == "rollout":
        action = rest[0] if rest else ""
        if action in _ROLLOUT_READ:
            return ro(f"{name} rollout {action}: reads rollout state", "kubectl.rollout")
        if action == "undo":
            return mut(
                f"{name} rollout undo: rolls a workload back to an earlier revision", "kubectl.rollout"
            )
        return mut(f"{name} rollout {action}: restarts or changes a rollout", "kubectl.rollout")
    if sub == "drain":
        return mut(f"{name} drain: evicts every pod from the node", "kubectl.drain")
    if sub == "delete":
        kinds = _resource_kinds(rest)
        if has_flag(args, "--all", "-A", "--all-namespaces"):
            return destr(f"{name} delete --all: deletes every matching resource", "kubectl.delete_all")
        if kinds & {"namespace", "namespaces", "ns"}:
            return destr(
                f"{name} delete namespace: deletes every resource in the namespace", "kubectl.delete_ns"
            )
        if kinds & {"node", "nodes", "no"}:
            return destr(f"{name} delete node: removes nodes from the cluster", "kubectl.delete_node")
        if kinds & _CLUSTER_SCOPED_DANGER:
            return destr(
                f"{name} delete {sorted(kinds & _CLUSTER_SCOPED_DANGER)[0]}: deletes data or "
                "cluster-wide objects",
                "kubectl.delete_cluster",
            )
        if has_flag(args, "-l", "--selector", "--field-selector"):
            return destr(f"{name} delete by selector: deletes every matching resource", "kubectl.delete_all")
        return destr(f"{name} delete: deletes resources", "kubectl.delete")
    if sub in ("exec", "debug") and "--" in args:
        inner = args[args.index("--") + 1 :]
        return _inside(f"{name} {sub}", inner, recurse)
    if sub in _KUBECTL_MUTATE:
        return mut(f"{name} {sub}: changes cluster state", f"kubectl.{sub}")
    return unk(f"{name} {sub}: not a subcommand this classifier knows", "kubectl")


_HELM_VALUED = (
    "-n",
    "--namespace",
    "--kube-context",
    "--kubeconfig",
    "-f",
    "--values",
    "--set",
    "--version",
    "-o",
    "--output",
    "--revision",
    "--repo",
    "--set-string",
    "--timeout",
)


def helm(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Classify ``helm``: list/status/get/history/show/template read; install/upgrade/rollback mutate."""
    pos = positionals(argv[1:], _HELM_VALUED)
    if not pos:
        return ro("helm with no subcommand prints help", "helm.help")
    sub = pos[0]
    if sub in (
        "list",
        "ls",
        "status",
        "get",
        "history",
        "hist",
        "show",
        "inspect",
        "template",
        "lint",
        "search",
        "version",
        "env",
        "verify",
        "help",
        "diff",
    ):
        return ro(f"helm {sub}: reads releases or charts", f"helm.{sub}")
    if sub in ("uninstall", "delete", "del", "un"):
        return destr("helm uninstall: deletes the release and every resource it created", "helm.uninstall")
    if sub == "repo":
        action = pos[1] if len(pos) > 1 else ""
        if action == "list":
            return ro("helm repo list", "helm.repo")
        return mut(f"helm repo {action}: changes local repository configuration", "helm.repo")
    if sub in (
        "install",
        "upgrade",
        "rollback",
        "pull",
        "fetch",
        "dependency",
        "dep",
        "package",
        "push",
        "plugin",
        "test",
        "create",
        "registry",
    ):
        return mut(f"helm {sub}: changes releases or local files", f"helm.{sub}")
    return unk(f"helm {sub}: not a subcommand this classifier knows", "helm")


def _inside(what: str, inner: Sequence[str], recurse: Recurse) -> Verdict:
    """A command run inside a container: at least mutating (it runs code there), worse if the command is."""
    if not inner:
        return mut(f"{what}: runs a shell in the container", "kubectl.exec")
    v = recurse(shlex.join(inner))
    if v.level in ("destructive", "unknown") and v.key != "shell.stdin":
        return Verdict(v.level, f"{what} → {v.reason}", v.key)
    return mut(f"{what}: runs {inner[0]} inside a container", "kubectl.exec")
