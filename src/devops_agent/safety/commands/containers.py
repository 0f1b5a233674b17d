"""Domain knowledge for ``docker``, ``podman`` and ``docker compose``.

Must not run anything or parse shell syntax; it sees one argv whose ``argv[0]`` is the program.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands import kubernetes
from devops_agent.safety.commands.base import Recurse, Verdict, destr, has_flag, mut, positionals, ro, unk
from devops_agent.safety.commands.options import CobraFlags, cobra_path

# Global options of the docker CLI (cobra): a valued one before the subcommand swallows a word.
DOCKER_GLOBAL = CobraFlags.of(
    "--config -c --context -H --host -l --log-level --tlscacert --tlscert --tlskey",
    "-D --debug --tls --tlsverify -v --version -h --help",
)
PODMAN_GLOBAL = CobraFlags.of(
    "-c --connection --url --identity --log-level --root --runroot --storage-driver --storage-opt "
    "--tmpdir --cgroup-manager --events-backend --hooks-dir --module --network-cmd-path --runtime "
    "--ssh --imagestore --cni-config-dir --conmon --network-config-dir --volumepath --out",
    "-r --remote --syslog --debug -D -v --version -h --help --noout",
)

_VALUED = (
    "-H",
    "--host",
    "--context",
    "-c",
    "--config",
    "--log-level",
    "-f",
    "--filter",
    "--format",
    "--since",
    "--until",
    "-n",
    "--tail",
    "-p",
    "--project-name",
    "--file",
    "--env-file",
)
_READ = {
    "ps",
    "logs",
    "inspect",
    "images",
    "stats",
    "top",
    "version",
    "info",
    "history",
    "port",
    "diff",
    "events",
    "search",
    "help",
    "ls",
    "list",
    "config",
    "df",
    "services",
}
_MUTATE = {
    "run",
    "start",
    "stop",
    "restart",
    "exec",
    "pull",
    "build",
    "create",
    "tag",
    "push",
    "login",
    "logout",
    "cp",
    "pause",
    "unpause",
    "rename",
    "update",
    "commit",
    "attach",
    "load",
    "import",
    "save",
    "export",
    "up",
    "wait",
    "buildx",
    "compose",
    "scale",
    "connect",
    "disconnect",
}
_DESTROY = {"rm", "rmi", "kill", "prune", "down"}
_OBJECTS = {
    "container",
    "image",
    "volume",
    "network",
    "system",
    "builder",
    "node",
    "service",
    "stack",
    "secret",
    "config",
    "plugin",
    "context",
    "pod",
    "manifest",
    "machine",
    "buildx",
    "trust",
}


def docker(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Classify ``docker``/``podman``/``docker-compose`` by (object) subcommand."""
    name = argv[0]
    args = list(argv[1:])
    table = PODMAN_GLOBAL if name == "podman" else DOCKER_GLOBAL
    if name in ("docker", "podman", "nerdctl"):
        words, blind, at, end = cobra_path(args, table, levels=1)
        if blind is not None and at == 0:
            return unk(
                f"{name} {blind}: an option this classifier does not know comes before the subcommand "
                "(it may take the next word)",
                "docker",
            )
        if "--out" in args[: end - 1]:
            return mut(f"{name} --out: writes its output to a file", "files.write")
        args = args[end - 1 :] if words else []
    pos = positionals(args, _VALUED)
    if name in ("docker-compose", "podman-compose"):
        pos = ["compose", *pos]
    if not pos:
        return ro(f"{name} with no subcommand prints help", "docker.help")
    sub = pos[0]
    if sub == "compose" and len(pos) > 1:
        action = pos[1]
        if action == "down":
            lost = " and its volumes" if has_flag(args, "-v", "--volumes") else ""
            return destr(f"{name} compose down: removes the project's containers{lost}", "docker.rm")
        if action == "rm":
            return destr(f"{name} compose rm: removes containers", "docker.rm")
        if action in _READ:
            return ro(f"{name} compose {action}: reads project state", "docker.read")
        return mut(f"{name} compose {action}: changes project containers", "docker.mutate")
    if sub in _OBJECTS and len(pos) > 1:
        obj, action = sub, pos[1]
        if action == "prune":
            every = " including unused images" if has_flag(args, "-a", "--all") else ""
            return destr(f"{name} {obj} prune: deletes unused {obj} data{every}", "docker.prune")
        if action in ("rm", "remove", "delete", "kill", "rmi"):
            return destr(f"{name} {obj} {action}: deletes {obj} objects", f"docker.{obj}_rm")
        if action in (
            "ls",
            "list",
            "services",
            "inspect",
            "df",
            "events",
            "info",
            "ps",
            "logs",
            "history",
            "show",
            "top",
            "stats",
            "port",
            "diff",
        ):
            return ro(f"{name} {obj} {action}: reads state", "docker.read")
        return mut(f"{name} {obj} {action}: changes {obj} state", "docker.mutate")
    if sub in ("exec", "run") and len(pos) > 2:
        container_args = _after_container(args, sub)
        if container_args:
            return kubernetes._inside(f"{name} {sub}", container_args, recurse)
    if sub in _DESTROY:
        what = {"rm": "removes containers", "rmi": "deletes images", "kill": "kills containers"}.get(sub, sub)
        return destr(f"{name} {sub}: {what}", f"docker.{sub}")
    if sub in _READ:
        return ro(f"{name} {sub}: reads state", "docker.read")
    if sub in _MUTATE:
        return mut(f"{name} {sub}: changes containers or images", "docker.mutate")
    return unk(f"{name} {sub}: not a subcommand this classifier knows", "docker")


_RUN_VALUED = {
    "-e",
    "--env",
    "-u",
    "--user",
    "-w",
    "--workdir",
    "--env-file",
    "-v",
    "--volume",
    "-p",
    "--publish",
    "--name",
    "--network",
    "--net",
    "--entrypoint",
    "--mount",
    "-l",
    "--label",
    "--restart",
    "--cpus",
    "-m",
    "--memory",
    "--platform",
    "--pull",
    "-h",
    "--hostname",
    "--add-host",
    "--dns",
    "--device",
    "--cap-add",
    "--cap-drop",
    "--security-opt",
    "--ulimit",
    "--log-driver",
    "--log-opt",
    "--tmpfs",
    "--shm-size",
    "--gpus",
    "--pid",
    "--ipc",
}


def _after_container(args: Sequence[str], sub: str) -> list[str]:
    """The command given after the container (``exec``) or image (``run``), skipping options."""
    i = args.index(sub) + 1 if sub in args else 0
    while i < len(args):
        a = args[i]
        if a in _RUN_VALUED:
            i += 2
        elif a.startswith("-"):
            i += 1
        else:
            return list(args[i + 1 :])
    return []
