"""Domain knowledge for ``kubectl`` (and ``oc``) and ``helm``: which subcommands only read.

Both are cobra programs: a persistent flag that takes a value swallows the next word
(``kubectl --cache-dir get delete ns prod`` runs ``delete``), so the subcommand is found the way
cobra finds it (:func:`~devops_agent.safety.commands.options.cobra_split`); a flag this module
does not know, before the subcommand, makes the command ``unknown``. ``--dry-run`` with
``client``/``server`` (or bare, or ``true``) makes a changing verb read-only: nothing is
persisted. Must not run anything or parse shell syntax.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import (
    Recurse,
    Verdict,
    destr,
    mut,
    ro,
    shell_join,
    unk,
    write_target_verdict,
)
from devops_agent.safety.commands.options import CobraArgs, CobraFlags, cobra_path, cobra_split

KUBECTL_GLOBAL = CobraFlags.of(
    "--as --as-group --as-uid --cache-dir --certificate-authority --client-certificate --client-key "
    "--cluster --context --kubeconfig --log-flush-frequency -n --namespace --password --profile "
    "--profile-output --request-timeout -s --server --tls-server-name --token --user --username -v --v "
    "--vmodule --log-file --log-dir",
    "--disable-compression --insecure-skip-tls-verify --match-server-version --warnings-as-errors -h --help",
)
# Local flags of common verbs, so their values are not read as resource names; ``--dry-run`` is
# boolean to cobra (bare means "client"), so it never swallows a word.
_KUBECTL_LOCAL = CobraFlags.of(
    "-o --output -l --selector -f --filename -k --kustomize -c --container --field-selector --since "
    "--since-time --tail --type --replicas --image --sort-by --timeout --grace-period --to-revision "
    "-L --label-columns --template --chunk-size --for --subresource --raw --port --target-port "
    "--name --from-literal --from-file --from-env-file --cascade --output-directory --field-manager "
    "--patch-file --local-ssd-count --limits --requests --overrides --env -e --serviceaccount --max "
    "--min --cpu-percent --namespace-selector --prune-allowlist --selector",
    "--dry-run -A --all-namespaces --all --force --overwrite --record --server-side --prune --wait -w "
    "--watch -i -t --stdin --tty --rm --ignore-daemonsets --delete-emptydir-data --show-labels --local "
    "--recursive -R --no-headers --ignore-not-found --include-uninitialized --show-managed-fields --now",
)

_KUBECTL_READ = frozenset(
    {
        "get", "describe", "logs", "top", "events", "explain", "api-resources", "api-versions",
        "version", "diff", "wait", "completion", "options", "convert", "help",
    }
)  # fmt: skip
_DRY_RUNNABLE = frozenset(
    {
        "apply", "create", "replace", "patch", "scale", "autoscale", "label", "annotate", "set",
        "expose", "run", "rollout", "drain", "cordon", "uncordon", "taint", "delete",
    }
)  # fmt: skip
_KUBECTL_MUTATE = frozenset(
    _DRY_RUNNABLE
    | {"exec", "cp", "port-forward", "attach", "debug", "proxy", "certificate", "alpha", "rollout"}
)
_ROLLOUT_READ = frozenset({"status", "history"})
_CLUSTER_SCOPED_DANGER = frozenset(
    {
        "namespace", "namespaces", "ns", "node", "nodes", "no", "pv", "persistentvolume",
        "persistentvolumes", "crd", "crds", "customresourcedefinition", "customresourcedefinitions",
        "clusterrole", "clusterroles", "clusterrolebinding", "clusterrolebindings", "pvc",
        "persistentvolumeclaim", "persistentvolumeclaims",
    }
)  # fmt: skip


def _resource_kinds(pos: Sequence[str]) -> set[str]:
    kinds: set[str] = set()
    for p in pos:
        for part in p.split(","):
            kinds.add(part.split("/")[0].split(".")[0].lower())
    return kinds


def dry_run(parsed: CobraArgs) -> bool | None:
    """``True`` for ``--dry-run``, ``--dry-run=client|server|true``; ``False`` when absent or
    ``none``/``false``; ``None`` for a value kubectl would reject (or one built at run time)."""
    value = parsed.flag("--dry-run")
    if value is None:
        return False
    if getattr(value, "dynamic", False):
        return None
    v = value.lower()
    if v in ("", "client", "server", "true", "unchanged"):
        return True
    if v in ("none", "false"):
        return False
    return None


Path = tuple[list[str], str | None, int, int]


def _two_level_path(args: list[str], persistent: CobraFlags, full: CobraFlags) -> Path:
    """The subcommand and its action as cobra finds them: the root knows only the persistent
    flags; below it, the subcommand's own flags are known too."""
    words, blind, at, end = cobra_path(args, persistent, levels=1)
    if blind is not None or not words:
        return words, blind, at, end
    more, blind, at, end2 = cobra_path(args[end:], full, levels=1)
    return words + more, blind, (at + 1 if blind is not None else -1), end + end2


def blind_verdict(name: str, path: Path, need: int) -> Verdict | None:
    """``unknown`` when a flag the table does not know comes before subcommand word ``need``."""
    _, flag, at, _end = path
    if flag is None or at >= need + 1 or at < 0:
        return None
    return unk(
        f"{name} {flag}: a flag this classifier does not know comes before the subcommand "
        "(it may take the next word, so the subcommand read may not be the one that runs)",
        name,
    )


def kubectl(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Classify a ``kubectl``/``oc`` invocation by the subcommand cobra runs and, for deletes,
    by what is deleted."""
    name = argv[0]
    args = list(argv[1:])
    parsed = cobra_split(args, KUBECTL_GLOBAL | _KUBECTL_LOCAL)
    path = _two_level_path(args, KUBECTL_GLOBAL, KUBECTL_GLOBAL | _KUBECTL_LOCAL)
    words = path[0]
    if (blind := blind_verdict(name, path, 0)) is not None:
        return blind
    if not words:
        return _global_risk(name, parsed) or ro(f"{name} with no subcommand prints help", "kubectl.help")
    rest = (
        parsed.positionals[parsed.positionals.index(words[0]) + 1 :] if words[0] in parsed.positionals else []
    )
    v = _kubectl_verb(name, words[0], rest, parsed, args, recurse, path)
    risk = _global_risk(name, parsed)
    return v if risk is None or v.level in ("destructive", "unknown") else risk


def _global_risk(name: str, parsed: CobraArgs) -> Verdict | None:
    profile = parsed.flag("--profile")
    if profile not in (None, "none"):
        out = parsed.flag("--profile-output") or "profile.pprof"
        return write_target_verdict(out, f"{name} --profile", "files.write")
    for flag in ("--log-file", "--log-dir"):
        target = parsed.flag(flag)
        if target:
            return write_target_verdict(target, f"{name} {flag}", "files.write")
    return None


def _kubectl_verb(
    name: str,
    sub: str,
    rest: list[str],
    parsed: CobraArgs,
    args: list[str],
    recurse: Recurse,
    path: Path,
) -> Verdict:
    dry = dry_run(parsed)
    if sub in _DRY_RUNNABLE and dry is None:
        return unk(f"{name} {sub} --dry-run with a value kubectl does not accept", "kubectl")
    if sub in _DRY_RUNNABLE and dry:
        return ro(f"{name} {sub} --dry-run: validates or prints without persisting", "kubectl.dry_run")
    if sub in _KUBECTL_READ:
        return ro(f"{name} {sub}: reads cluster state", f"kubectl.{sub}")
    if sub == "cluster-info":
        if parsed.flag("--output-directory"):
            return mut(f"{name} cluster-info dump --output-directory: writes files", "files.write")
        return ro(f"{name} cluster-info: reads cluster state", "kubectl.cluster-info")
    if sub == "kustomize":
        if parsed.has("--helm-command", "--enable-alpha-plugins", "--enable-exec"):
            return unk(f"{name} kustomize: runs helm or plugins of the caller's choice", "kubectl")
        if parsed.has("--enable-helm", "-o", "--output"):
            return mut(f"{name} kustomize --enable-helm/-o: downloads charts or writes files", "files.write")
        return ro(f"{name} kustomize: renders manifests", "kubectl.kustomize")
    nested = sub in ("config", "auth", "rollout", "plugin", "apply")
    if nested and (blind := blind_verdict(name, path, 1)) is not None:
        return blind
    action = path[0][1] if len(path[0]) > 1 else ""
    if sub == "plugin":
        return ro(f"{name} plugin list", "kubectl.plugin") if action in ("list", "") else unk(sub, "kubectl")
    if sub == "auth":
        if action in ("can-i", "whoami"):
            return ro(f"{name} auth {action}: reads permissions", "kubectl.auth")
        if action == "reconcile":
            return mut(f"{name} auth reconcile: creates or updates RBAC objects", "kubectl.apply")
        return unk(f"{name} auth {action}: not a subcommand this classifier knows", "kubectl")
    if sub == "config":
        if action in ("view", "get-contexts", "current-context", "get-clusters", "get-users"):
            return ro(f"{name} config {action}: reads kubeconfig", "kubectl.config")
        return mut(f"{name} config {action}: changes the kubeconfig", "kubectl.config")
    if sub == "apply" and action == "view-last-applied":
        return ro(f"{name} apply view-last-applied: reads an annotation", "kubectl.apply")
    if sub == "rollout":
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
        return _delete(name, rest, parsed)
    if sub == "edit":
        return unk(f"{name} edit: opens an editor and applies the result", "kubectl.edit")
    if sub in ("exec", "debug") and "--" in args:
        inner = args[args.index("--") + 1 :]
        return _inside(f"{name} {sub}", inner, recurse)
    if sub in _KUBECTL_MUTATE:
        return mut(f"{name} {sub}: changes cluster state", f"kubectl.{sub}")
    return unk(f"{name} {sub}: not a subcommand this classifier knows (it may be a plugin)", "kubectl")


def _delete(name: str, rest: list[str], parsed: CobraArgs) -> Verdict:
    kinds = _resource_kinds(rest)
    if parsed.has("--all", "-A", "--all-namespaces"):
        return destr(f"{name} delete --all: deletes every matching resource", "kubectl.delete_all")
    if kinds & {"namespace", "namespaces", "ns"}:
        return destr(f"{name} delete namespace: deletes every resource in the namespace", "kubectl.delete_ns")
    if kinds & {"node", "nodes", "no"}:
        return destr(f"{name} delete node: removes nodes from the cluster", "kubectl.delete_node")
    if kinds & _CLUSTER_SCOPED_DANGER:
        kind = sorted(kinds & _CLUSTER_SCOPED_DANGER)[0]
        return destr(f"{name} delete {kind}: deletes data or cluster-wide objects", "kubectl.delete_cluster")
    if parsed.has("-l", "--selector", "--field-selector"):
        return destr(f"{name} delete by selector: deletes every matching resource", "kubectl.delete_all")
    return destr(f"{name} delete: deletes resources", "kubectl.delete")


HELM_GLOBAL = CobraFlags.of(
    "--burst-limit --kube-apiserver --kube-as-group --kube-as-user --kube-ca-file --kube-context "
    "--kube-tls-server-name --kube-token --kubeconfig -n --namespace --qps --registry-config "
    "--repository-cache --repository-config --content-cache --color --colour",
    "--debug --kube-insecure-skip-tls-verify -h --help",
)
_HELM_LOCAL = CobraFlags.of(
    "-f --values --set --set-string --set-file --set-json --set-literal --version -o --output "
    "--revision --repo --timeout --output-dir --post-renderer --post-renderer-args -r --release-name "
    "--description --kube-version -a --api-versions --show-only -s --max --offset --filter -d "
    "--destination --untardir --username --password --ca-file --cert-file --key-file --keyring "
    "--history-max --wait-for-jobs --name-template --label -l --selector",
    "--dry-run --install -i --all -A --all-namespaces --wait --atomic --force --create-namespace "
    "--untar --verify --devel --validate --include-crds --skip-crds --skip-tests --no-hooks "
    "--reuse-values --reset-values --reset-then-reuse-values --debug --short -q --failed --pending",
)
_HELM_READ = frozenset(
    {
        "list", "ls", "status", "get", "history", "hist", "show", "inspect", "template", "lint",
        "search", "version", "env", "verify", "help", "diff", "completion",
    }
)  # fmt: skip
_HELM_SUB_READS = {
    "dependency": frozenset({"list", "ls"}),
    "dep": frozenset({"list", "ls"}),
    "plugin": frozenset({"list", "ls"}),
    "repo": frozenset({"list", "ls"}),
    "registry": frozenset(),
}
_HELM_MUTATE = frozenset(
    {"install", "upgrade", "rollback", "pull", "fetch", "package", "push", "test", "create", "plugin"}
)


def helm(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Classify ``helm`` by the subcommand cobra runs: list/status/get/history/show/template read;
    install/upgrade/rollback mutate (read-only with ``--dry-run``); uninstall destroys."""
    args = list(argv[1:])
    parsed = cobra_split(args, HELM_GLOBAL | _HELM_LOCAL)
    path = _two_level_path(args, HELM_GLOBAL, HELM_GLOBAL | _HELM_LOCAL)
    if (blind := blind_verdict("helm", path, 0)) is not None:
        return blind
    if not path[0]:
        return ro("helm with no subcommand prints help", "helm.help")
    sub = path[0][0]
    if parsed.has("--post-renderer"):
        return unk(f"helm {sub} --post-renderer: runs a program of the caller's choice", "helm")
    out_dir = parsed.flag("--output-dir")
    if out_dir is not None:
        return write_target_verdict(out_dir or ".", f"helm {sub} --output-dir", "files.write")
    dry = dry_run(parsed)
    if sub in ("install", "upgrade", "rollback", "uninstall", "delete", "del", "un") and dry:
        return ro(f"helm {sub} --dry-run: renders or simulates without changing the release", "helm.dry_run")
    if sub in _HELM_READ:
        return ro(f"helm {sub}: reads releases or charts", f"helm.{sub}")
    if sub in ("uninstall", "delete", "del", "un"):
        return destr("helm uninstall: deletes the release and every resource it created", "helm.uninstall")
    if sub in _HELM_SUB_READS:
        if (blind := blind_verdict("helm", path, 1)) is not None:
            return blind
        action = path[0][1] if len(path[0]) > 1 else ""
        if action in _HELM_SUB_READS[sub]:
            return ro(f"helm {sub} {action}: lists", f"helm.{sub}")
        return mut(f"helm {sub} {action}: changes local configuration or chart files", f"helm.{sub}")
    if sub in _HELM_MUTATE:
        return mut(f"helm {sub}: changes releases or local files", f"helm.{sub}")
    return unk(f"helm {sub}: not a subcommand this classifier knows (it may be a plugin)", "helm")


def _inside(what: str, inner: Sequence[str], recurse: Recurse) -> Verdict:
    """A command run inside a container: at least mutating (it runs code there), worse if the command is."""
    if not inner:
        return mut(f"{what}: runs a shell in the container", "kubectl.exec")
    v = recurse(shell_join(inner))
    if v.level in ("destructive", "unknown") and v.key not in ("shell.stdin", "program.path"):
        return Verdict(v.level, f"{what} → {v.reason}", v.key)
    return mut(f"{what}: runs {inner[0]} inside a container", "kubectl.exec")
