"""Package managers and build tools: queries read, installs change, builds run code.

``pip list``, ``npm ls``, ``apt-cache policy`` read; ``install``/``upgrade`` change the host;
``remove``/``purge`` destroy. Some reading-sounding subcommands write or run code and are judged
by what they do: ``npm config set``, ``pip config set``, ``pip download`` (fetches and builds
sdists), ``npm audit fix``, ``npm version patch``, ``apt-get download``. Build and test commands
(``cargo check``, ``cargo build``, ``go test``, ``npm test``) run build scripts, proc macros and
package scripts: a program of the repository's choice, so ``unknown``. Must not run anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import Recurse, Verdict, destr, has_flag, mut, positionals, ro, unk

_PKG_READ = {
    "list", "search", "show", "info", "policy", "depends", "rdepends", "freeze", "check", "help",
    "madison", "showpkg", "provides", "whatprovides", "history", "repolist", "outdated", "changelog",
    "why", "view", "ls", "inspect", "la", "ll", "explain", "fund", "prefix", "root", "bin", "whoami",
    "ping", "doctor", "query", "sbom", "deplist", "repoquery", "updateinfo", "check-update", "leaves",
    "uses", "desc", "deps", "contents", "which", "environment", "dependency", "spec", "stats",
    "v", "index", "debug", "hash",
}  # fmt: skip
_PKG_REMOVE = {"remove", "purge", "uninstall", "erase", "autoremove", "autopurge", "rm", "prune", "un", "r"}
_PKG_MUTATE = {
    "install", "upgrade", "update", "dist-upgrade", "full-upgrade", "reinstall", "downgrade", "add",
    "i", "makecache", "clean", "autoclean", "build-dep", "ci", "link", "mark", "localinstall", "group",
    "swap", "distro-sync", "refresh", "in", "up", "download", "source", "wheel", "pack", "publish",
    "unpublish", "deprecate", "dedupe", "rebuild", "cache", "login", "logout", "adduser", "set",
    "star", "unstar", "tag", "untag", "owner", "team", "access", "token", "init", "create",
}  # fmt: skip
_RUNS_CODE = {
    "run",
    "run-script",
    "test",
    "t",
    "tst",
    "start",
    "stop",
    "restart",
    "exec",
    "x",
    "rebuild",
    "build",
}
# "config" and "cache" subcommands that only read
_CONFIG_READS = {
    "get",
    "list",
    "ls",
    "show",
    "--show",
    "--get",
    "debug",
    "dir",
    "info",
    "--list",
    "--show-sources",
    "--describe",
}


def package_manager(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """apt/yum/dnf/zypper/apk/pip/npm/gem/conda…: listing reads; install mutates; remove/purge destroys."""
    name = argv[0]
    args = list(argv[1:])
    if name in ("dpkg", "rpm", "dpkg-query"):
        return _dpkg_rpm(name, args)
    if name == "apt-cache":
        if positionals(args)[:1] == ["gencaches"]:
            return mut("apt-cache gencaches: rebuilds the package cache", "pkg.install")
        return ro("apt-cache: queries packages", "pkg.read")
    if has_flag(args, "--version", "-v", "-V", "--help", "-h") and len(args) == 1:
        return ro(f"{name} {args[0]}: prints its version or usage", "pkg.read")
    pos = positionals(
        args,
        (
            "-r", "--requirement", "-c", "--constraint", "-t", "--target", "-o", "--index-url", "-i",
            "--root", "--prefix", "-C", "-d", "--dest", "--registry", "-w", "--workspace", "--only",
        ),
    )  # fmt: skip
    if not pos:
        return ro(f"{name} with no command prints help", "pkg.read")
    sub = pos[0]
    if sub in ("config", "cache"):
        action = pos[1] if len(pos) > 1 else next((a for a in args if a.startswith("--")), "")
        if action in _CONFIG_READS or (not action and sub == "config"):
            return ro(f"{name} {sub} {action}: reads settings", "pkg.read")
        return mut(f"{name} {sub} {action}: changes settings or the cache", "pkg.install")
    if sub == "audit":
        if "fix" in pos[1:]:
            return mut(f"{name} audit fix: installs updated packages", "pkg.install")
        return ro(f"{name} audit: reports vulnerabilities", "pkg.read")
    if sub == "version" and name in ("npm", "yarn", "pnpm"):
        if len(pos) > 1:
            return mut(f"{name} version {pos[1]}: bumps the version and tags a commit", "pkg.install")
        return ro(f"{name} version: prints versions", "pkg.read")
    if sub in _PKG_REMOVE:
        return destr(f"{name} {sub}: uninstalls packages (services that depend on them break)", "pkg.remove")
    if sub in ("run", "run-script") and len(pos) == 1 and name in ("npm", "pnpm"):
        return ro(f"{name} {sub}: lists the package's scripts", "pkg.read")
    if sub in _RUNS_CODE and name in ("npm", "yarn", "pnpm", "bun", "uv", "poetry", "pipx", "conda"):
        return unk(f"{name} {sub}: runs package scripts or programs of the project's choice", "interpreter")
    if sub in _PKG_READ:
        return ro(f"{name} {sub}: queries packages", "pkg.read")
    if sub in _PKG_MUTATE:
        return mut(f"{name} {sub}: installs, downloads or changes packages", "pkg.install")
    return unk(f"{name} {sub}: not a command this classifier knows", "pkg")


def _dpkg_rpm(name: str, args: list[str]) -> Verdict:
    if has_flag(
        args, "-l", "--list", "-L", "--listfiles", "-s", "--status", "-S", "--search", "-q", "--query",
        "-V", "--verify", "--get-selections", "--print-architecture", "-p", "--print-avail", "-C",
        "--audit", "-W", "--show", "--version", "--help", "-c", "--contents", "-I", "--info",
    ) or name == "dpkg-query":  # fmt: skip
        return ro(f"{name} query", "pkg.read")
    if has_flag(args, "-r", "--remove", "-P", "--purge", "-e", "--erase"):
        return destr(f"{name} remove: uninstalls packages", "pkg.remove")
    return mut(f"{name}: installs or changes packages", "pkg.install")


# tree and metadata resolve dependencies (and may refresh Cargo.lock) but run no crate code.
_CARGO_READ = {
    "version", "search", "help", "locate-project", "pkgid", "read-manifest", "verify-project", "info",
    "report", "tree", "metadata",
}  # fmt: skip
_CARGO_CODE = {
    "check",
    "build",
    "b",
    "c",
    "test",
    "t",
    "run",
    "r",
    "bench",
    "clippy",
    "doc",
    "d",
    "fix",
    "miri",
    "install",
    "rustc",
    "rustdoc",
}


def cargo(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``cargo``: check/build/test/clippy/doc run build scripts and proc macros (code of the
    crate's choice); version/search/help read; the rest changes the project or the registry."""
    args = list(argv[1:])
    if not args or args[0] in ("--version", "-V", "--list", "--help", "-h", "-vV"):
        return ro("cargo --version/--list: prints", "pkg.read")
    pos = positionals(args, ("-Z", "--config", "-C", "--color"))
    if any(a.startswith("--config") or a == "-Z" for a in args):
        return unk("cargo --config/-Z: configuration that can run programs", "interpreter")
    sub = pos[0] if pos else ""
    if sub in _CARGO_READ:
        return ro(f"cargo {sub}: reads", "pkg.read")
    if sub == "fmt" and ("--check" in args):
        return ro("cargo fmt --check: reports formatting", "pkg.read")
    if sub in _CARGO_CODE:
        return unk(
            f"cargo {sub}: runs build scripts and procedural macros (code of the crate's choice)",
            "interpreter",
        )
    if sub in (
        "fetch",
        "update",
        "generate-lockfile",
        "vendor",
        "package",
        "publish",
        "add",
        "remove",
        "new",
        "init",
        "clean",
        "fmt",
        "login",
        "logout",
        "yank",
        "uninstall",
    ):
        return mut(f"cargo {sub}: changes the project, the lock file or the registry", "pkg.install")
    return unk(f"cargo {sub}: not a command this classifier knows (it may be an alias or a plugin)", "pkg")


_GO_READ = {"version", "env", "list", "doc", "help"}


def go(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``go version|env|list|doc`` read (``go env -w`` writes); build/run/test/generate run code."""
    args = list(argv[1:])
    sub = args[0] if args else ""
    if sub == "env" and any(a in ("-w", "-u") for a in args):
        return mut("go env -w/-u: writes the go env file", "pkg.install")
    if sub == "list" and any(a.startswith("-toolexec") or a.startswith("-exec") for a in args):
        return unk("go list -toolexec: runs a program", "interpreter")
    if sub in _GO_READ:
        return ro(f"go {sub}: reads", "pkg.read")
    if (
        sub == "mod"
        and len(args) > 1
        and args[1] in ("graph", "why", "verify", "edit")
        and "-json" in args
        or (sub == "mod" and len(args) > 1 and args[1] in ("graph", "why"))
    ):
        return ro(f"go mod {args[1]}: reads module information", "pkg.read")
    if sub in ("build", "run", "test", "generate", "vet", "install", "tool", "bug"):
        return unk(f"go {sub}: builds and runs code (generators, cgo, tests)", "interpreter")
    return mut(f"go {sub}: changes modules or the build cache", "pkg.install")
