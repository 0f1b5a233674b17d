"""Domain knowledge for the ``aws``, ``gcloud`` and ``az`` CLIs, judged by the operation verb.

Must not run anything or parse shell syntax; it sees one argv whose ``argv[0]`` is the program.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import Recurse, Verdict, destr, has_flag, mut, positionals, ro, unk

_READ_PREFIXES = (
    "describe",
    "list",
    "get",
    "show",
    "ls",
    "wait",
    "help",
    "lookup",
    "search",
    "head",
    "query",
    "print",
    "check",
    "estimate",
    "filter",
    "read",
    "tail",
    "validate",
    "version",
    "info",
    "whoami",
    "account-show",
    "exists",
)
_DESTROY_PREFIXES = (
    "delete",
    "terminate",
    "remove",
    "destroy",
    "purge",
    "deregister",
    "revoke",
    "rb",
    "disable-key",
    "schedule-key-deletion",
    "wipe",
    "rm",
    "detach-volume",
)
_VALUED = (
    "--region",
    "--profile",
    "--output",
    "--query",
    "--project",
    "--format",
    "-g",
    "--resource-group",
    "--subscription",
    "--zone",
    "--endpoint-url",
    "--configuration",
    "--account",
    "-o",
)


def _verb_level(cli: str, verb: str, path: str) -> Verdict:
    v = verb.lower()
    if v in ("get-credentials", "get-login-password", "update-kubeconfig") and cli != "aws":
        return mut(f"{cli} {path}: writes credentials into the local kubeconfig", "cloud.mutate")
    if v.startswith(_DESTROY_PREFIXES):
        return destr(f"{cli} {path}: deletes cloud resources", f"cloud.{v.split('-')[0]}")
    if v.startswith(_READ_PREFIXES):
        return ro(f"{cli} {path}: reads cloud resources", "cloud.read")
    return mut(f"{cli} {path}: changes cloud resources", "cloud.mutate")


def _s3(argv: Sequence[str], pos: list[str]) -> Verdict:
    action = pos[1] if len(pos) > 1 else ""
    args = argv[1:]
    if action in ("ls", "presign"):
        return ro(f"aws s3 {action}: reads objects", "cloud.read")
    if action == "rb" or (action == "rm" and has_flag(args, "--recursive")):
        return destr(f"aws s3 {action}: deletes a bucket or objects", "cloud.s3_delete")
    if action == "rm":
        return destr("aws s3 rm: deletes an object", "cloud.s3_delete")
    if action == "sync" and has_flag(args, "--delete"):
        return destr(
            "aws s3 sync --delete: deletes destination objects missing at the source", "cloud.s3_delete"
        )
    if action in ("cp", "mv", "sync", "mb", "website"):
        if action == "cp" and len(pos) > 3 and pos[3] == "-":
            return ro("aws s3 cp to stdout: reads an object", "cloud.read")
        return mut(f"aws s3 {action}: writes objects", "cloud.mutate")
    return unk(f"aws s3 {action}: not an action this classifier knows", "cloud")


def aws(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Classify ``aws SERVICE OPERATION``; ``s3api get-object … OUTFILE`` writes OUTFILE."""
    pos = positionals(argv[1:], _VALUED)
    if len(pos) >= 2 and pos[1] in ("get-object", "get-object-torrent"):
        return mut(f"aws {pos[0]} {pos[1]}: writes the object to a local file", "cloud.mutate")
    if not pos:
        return ro("aws with no service prints help", "cloud.read")
    if pos[0] == "s3":
        return _s3(argv, pos)
    if pos[0] in ("sts", "configure") and len(pos) > 1 and pos[1] in ("get-caller-identity", "list", "get"):
        return ro(f"aws {pos[0]} {pos[1]}", "cloud.read")
    if pos[0] == "configure":
        return mut("aws configure: changes local credentials", "cloud.mutate")
    if len(pos) < 2:
        return ro(f"aws {pos[0]} prints help", "cloud.read")
    return _verb_level("aws", pos[1], f"{pos[0]} {pos[1]}")


def gcloud_az(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Classify ``gcloud``/``az``: the verb is the last positional word of the command group path."""
    cli = argv[0]
    pos = positionals(argv[1:], _VALUED)
    if not pos:
        return ro(f"{cli} with no command prints help", "cloud.read")
    # The verb is the first word that is a known verb; groups are nouns (compute instances …).
    for i, word in enumerate(pos):
        w = word.lower()
        if w.startswith(_DESTROY_PREFIXES + _READ_PREFIXES) or w in (
            "create",
            "update",
            "set",
            "start",
            "stop",
            "restart",
            "deploy",
            "add",
            "resize",
            "scale",
            "attach",
            "detach",
            "import",
            "export",
            "run",
            "ssh",
            "login",
            "apply",
            "reset",
            "patch",
            "upgrade",
            "enable",
            "disable",
            "activate",
            "init",
            "submit",
            "cancel",
            "move",
            "copy",
            "cp",
            "mv",
            "reboot",
            "suspend",
            "resume",
            "tag",
            "untag",
            "config",
        ):
            if w in ("config", "auth") and i + 1 < len(pos) and pos[i + 1] in ("list", "get", "get-value"):
                return ro(f"{cli} {w} {pos[i + 1]}", "cloud.read")
            if w in ("rm",) and cli == "gcloud" and pos[0] == "storage":
                return destr(f"{cli} storage rm: deletes objects", "cloud.s3_delete")
            return _verb_level(cli, w, " ".join(pos[: i + 1]))
    return unk(f"{cli} {' '.join(pos[:3])}: no operation verb this classifier knows", "cloud")
