"""Operations CLIs judged by their command path: ``vault kv get`` reads, ``vault kv put`` writes.

Each tool lists the command paths (one or two words) that only read and those that delete; any
other path changes state. An option before the command path makes the invocation ``unknown``
(it may take the next word as its value, so the path read may not be the one that runs), and
so does a tool with no command when it needs one. Must not run anything or parse shell syntax.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from devops_agent.safety.commands.base import Recurse, Verdict, destr, mut, ro, unk


@dataclass(frozen=True)
class Tool:
    """Read-only and deleting command paths (``"kv get"``, ``"status"``); ``""`` is the bare tool."""

    reads: frozenset[str]
    deletes: frozenset[str] = frozenset()
    kind: str = "paths"
    """``paths``; ``pure`` (reads whatever its arguments, but ``--fix``); ``switch`` (no argument
    lists, an argument switches the current context: kubectx, kubens)."""

    @staticmethod
    def of(reads: str, deletes: str = "", kind: str = "paths") -> Tool:
        """From ``|``-separated paths."""
        return Tool(
            frozenset(p.strip() for p in reads.split("|")),
            frozenset(p.strip() for p in deletes.split("|") if p.strip()),
            kind,
        )


TOOLS: dict[str, Tool] = {
    "vault": Tool.of(
        "status|version|read|list|kv get|kv list|kv metadata|token lookup|token capabilities|"
        "secrets list|auth list|policy list|policy read|audit list|operator members|print|path-help",
        "delete|kv delete|kv destroy|kv metadata delete|secrets disable|auth disable|token revoke",
    ),
    "consul": Tool.of(
        "members|info|version|catalog services|catalog nodes|catalog datacenters|kv get|kv export|"
        "operator raft|intention list|intention get|acl token read|acl policy list",
        "kv delete|leave|force-leave",
    ),
    "nomad": Tool.of(
        "status|version|job status|job inspect|job history|node status|alloc status|alloc logs|"
        "server members|namespace list|var get|var list|system gc",
        "job stop|stop|var purge",
    ),
    "etcdctl": Tool.of(
        "get|version|endpoint health|endpoint status|member list|alarm list|user list|role list|watch",
        "del|member remove",
    ),
    "crictl": Tool.of(
        "ps|pods|images|img|inspect|inspectp|inspecti|logs|stats|statsp|info|version|imagefsinfo",
        "rm|rmp|rmi",
    ),
    "ctr": Tool.of(
        "version|containers ls|containers list|c ls|images ls|images list|i ls|tasks ls|tasks list|"
        "t ls|namespaces ls|ns ls|snapshots ls|content ls|plugins ls",
        "containers rm|c rm|images rm|i rm|tasks kill|tasks rm|namespaces rm",
    ),
    "virsh": Tool.of(
        "list|dominfo|domstate|domblklist|domiflist|nodeinfo|version|capabilities|net-list|pool-list|"
        "vol-list|dumpxml|net-dumpxml|hostname|uri|sysinfo",
        "destroy|undefine|vol-delete|pool-destroy|pool-delete|net-destroy|net-undefine",
    ),
    "minikube": Tool.of(
        "status|ip|version|profile list|service list|addons list|logs|kubectl -- get", "delete"
    ),
    "kind": Tool.of("get clusters|get nodes|get kubeconfig|version", "delete cluster|delete clusters"),
    "kubectx": Tool.of("-c|--current|--help|-h", kind="switch"),
    "kubens": Tool.of("-c|--current|--help|-h", kind="switch"),
    "flux": Tool.of("get|version|check|logs|stats|tree|trace|diff|export|events", "delete|uninstall"),
    "k9s": Tool.of("version|info|help"),
    "velero": Tool.of(
        "get|describe|logs|version|backup get|backup describe|backup logs|restore get|"
        "restore describe|restore logs|schedule get|schedule describe",
        "delete|backup delete|restore delete|schedule delete|uninstall",
    ),
    "istioctl": Tool.of(
        "proxy-status|ps|proxy-config|pc|version|analyze|x describe|experimental describe|"
        "verify-install|dashboard",
        "uninstall|x uninstall|experimental uninstall",
    ),
    "rustup": Tool.of("show|which|toolchain list|component list|target list|--version|-V|doc --path"),
    "composer": Tool.of("show|outdated|licenses|validate|--version|-V|depends|why|why-not|info|search"),
    "bundle": Tool.of("list|show|outdated|--version|version|info|platform|check"),
    "ansible-inventory": Tool.of("--list|--graph|--host"),
    "cloc": Tool.of("", kind="pure"),
    "actionlint": Tool.of("", kind="pure"),
    "mongosh": Tool.of("--version|--help"),
    "xmllint": Tool.of("--version"),
}


def cli(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Judge ``TOOL [PATH…] [args]`` by the table of :data:`TOOLS`."""
    name = argv[0]
    tool = TOOLS[name]
    args = [str(a) for a in argv[1:]]
    if tool.kind == "switch":
        if not args or args[0] in tool.reads:
            return ro(f"{name}: lists or prints the current context", "readonly")
        return mut(f"{name} {args[0]}: switches the current context", "admin.mutate")
    if tool.kind == "pure":
        if any(a.startswith("--fix") for a in args):
            return mut(f"{name} --fix: rewrites files", "files.write")
        return ro(f"{name}: reads", "readonly")
    if not args:
        return unk(f"{name} without a command", "unknown")
    if args[0].startswith("-") and args[0] not in tool.reads:
        return unk(f"{name} {args[0]}: an option before the command", "unknown")
    first = args[0]
    pair = " ".join(args[:2]) if len(args) > 1 else first
    for path in (pair, first):
        if path in tool.deletes:
            return destr(f"{name} {path}: deletes", f"{name}.delete")
        if path in tool.reads:
            return ro(f"{name} {path}: reads", "readonly")
    return mut(f"{name} {pair}: changes state", f"{name}.mutate")
