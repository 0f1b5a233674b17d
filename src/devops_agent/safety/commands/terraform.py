"""Domain knowledge for ``terraform`` and ``tofu`` (OpenTofu).

Must not run anything or parse shell syntax; it sees one argv whose ``argv[0]`` is the program.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import (
    Recurse,
    Verdict,
    destr,
    has_flag,
    mut,
    positionals,
    ro,
    unk,
    write_target_verdict,
)

_READ = {
    "plan",
    "show",
    "validate",
    "output",
    "version",
    "providers",
    "graph",
    "fmt",
    "console",
    "help",
    "metadata",
    "modules",
}
_MUTATE = {
    "apply",
    "import",
    "init",
    "refresh",
    "taint",
    "untaint",
    "get",
    "login",
    "logout",
    "force-unlock",
    "workspace",
}


def terraform(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Classify ``terraform``: plan/show/validate read, apply/import mutate, destroy and state rm destroy."""
    name = argv[0]
    args = [a for a in argv[1:] if not a.startswith("-chdir")]
    pos = positionals(args)
    if not pos:
        return ro(f"{name} with no subcommand prints help", "terraform.help")
    sub = pos[0]
    for i, a in enumerate(args):
        flag, eq, value = a.lstrip("-").partition("=")
        if a.startswith("-") and flag in ("out", "state-out", "backup"):
            target = value if eq else (args[i + 1] if i + 1 < len(args) else "")
            if target and target != "-":
                return write_target_verdict(target, f"{name} {sub} -{flag}", "files.write")
    if sub == "providers" and len(pos) > 1 and pos[1] in ("lock", "mirror"):
        return mut(f"{name} providers {pos[1]}: writes the lock file or a provider mirror", "terraform.init")
    if sub == "test":
        return mut(
            f"{name} test: applies the configuration to real infrastructure to test it", "terraform.apply"
        )
    if sub == "destroy" or (sub == "apply" and has_flag(args, "-destroy", "--destroy")):
        return destr(f"{name} destroy: deletes every resource the configuration manages", "terraform.destroy")
    if sub == "fmt" and not has_flag(args, "-check", "-diff"):
        return mut(f"{name} fmt: rewrites .tf files in place", "terraform.fmt")
    if sub == "state":
        action = pos[1] if len(pos) > 1 else ""
        if action in ("list", "show", "pull"):
            return ro(f"{name} state {action}: reads state", "terraform.state_read")
        if action == "rm":
            return destr(f"{name} state rm: forgets resources (they will be orphaned)", "terraform.state_rm")
        if action == "push" and has_flag(args, "-force"):
            return destr(f"{name} state push -force: overwrites remote state", "terraform.state_rm")
        return mut(f"{name} state {action}: changes state", "terraform.state")
    if sub == "workspace":
        action = pos[1] if len(pos) > 1 else ""
        if action in ("list", "show"):
            return ro(f"{name} workspace {action}", "terraform.read")
        if action == "delete":
            return destr(f"{name} workspace delete: deletes a workspace and its state", "terraform.destroy")
    if sub in _READ:
        return ro(f"{name} {sub}: reads configuration or state", "terraform.read")
    if sub in _MUTATE:
        return mut(f"{name} {sub}: changes infrastructure or state", f"terraform.{sub}")
    return unk(f"{name} {sub}: not a subcommand this classifier knows", "terraform")
