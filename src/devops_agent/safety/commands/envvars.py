"""Environment variables a command line sets, judged for what the programs that read them do.

An assignment in front of a command (``GIT_EXTERNAL_DIFF=rm git diff``), given to ``env`` or
``sudo``, or exported earlier in the script is part of the command. Three kinds:

* **command variables** name a program something will run (``PAGER``, ``GIT_EXTERNAL_DIFF``,
  ``LESSOPEN``, ``EDITOR``, ``GIT_SSH_COMMAND`` … and any name ending in ``PAGER``, ``EDITOR``,
  ``OPEN``, ``CLOSE``, ``COMMAND``, ``ASKPASS``): their value is judged as a command line, so
  ``GIT_PAGER=cat`` stays read-only and ``LESSOPEN='|rm %s'`` is destructive;
* **behaviour variables** change which program runs or what it loads (``PATH``, ``LD_*``,
  ``BASH_ENV``, ``PS4``, ``GIT_*``, ``PYTHONPATH``, ``NODE_OPTIONS``, ``TAR_OPTIONS`` …):
  ``unknown``;
* **formatting and selection variables** known to be harmless to a read (``LC_*``, ``TZ``,
  ``KUBECONFIG``, ``AWS_PROFILE``, ``NO_COLOR`` …): nothing.

Names that by convention configure a program (``*_OPTIONS``, ``*_CONFIG``, ``*_PATH``, ``*_HOME``,
``*_PLUGINS`` …, and tool prefixes such as ``TF_``, ``ANSIBLE_``, ``npm_config_``) are behaviour
variables too; any other name (``FOO``, ``NAMESPACE``, ``REGION``) carries data and is harmless
to a read. A plain shell assignment (``f=/var/log/x``, not exported) is judged the same way,
because the variable may already be exported. Must not run anything.
"""

from __future__ import annotations

import re

from devops_agent.safety.commands.base import Recurse, Verdict, ro, unk, worst, write_target_verdict

_COMMAND_VARS = frozenset(
    {
        "PAGER",
        "EDITOR",
        "VISUAL",
        "BROWSER",
        "LESSOPEN",
        "LESSCLOSE",
        "LESSEDIT",
        "GIT_EXTERNAL_DIFF",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_PROXY_COMMAND",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "KUBECTL_EXTERNAL_DIFF",
        "KUBE_EDITOR",
        "PROMPT_COMMAND",
        "RSYNC_RSH",
        "CVS_RSH",
        "RUSTC_WRAPPER",
        "CC",
        "CXX",
        "TERMINAL",
    }
)
_COMMAND_SUFFIXES = ("PAGER", "EDITOR", "OPEN", "CLOSE", "COMMAND", "_CMD", "ASKPASS", "_DIFF", "_SSH")

_BEHAVIOUR = frozenset(
    {
        "PATH",
        "IFS",
        "BASH_ENV",
        "ENV",
        "PS1",
        "PS2",
        "PS3",
        "PS4",
        "SHELLOPTS",
        "BASHOPTS",
        "GLOBIGNORE",
        "HOME",
        "SHELL",
        "TMPDIR",
        "CDPATH",
        "HISTFILE",
        "INPUTRC",
        "ZDOTDIR",
        "GCONV_PATH",
        "GLIBC_TUNABLES",
        "LOCPATH",
        "NLSPATH",
        "HOSTALIASES",
        "RESOLV_HOST_CONF",
        "OPENSSL_CONF",
        "OPENSSL_ENGINES",
        "OPENSSL_MODULES",
        "SSLKEYLOGFILE",
        "TAR_OPTIONS",
        "GREP_OPTIONS",
        "LESS",
        "LESSKEY",
        "LESSKEYIN",
        "LESSKEY_CONTENT",
        "MANOPT",
        "MANPATH",
        "WGETRC",
        "CURL_HOME",
        "PSQLRC",
        "MYSQL_HOME",
        "NODE_OPTIONS",
        "NODE_PATH",
        "RUBYOPT",
        "RUBYLIB",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "CLASSPATH",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "GOFLAGS",
        "RUSTFLAGS",
        "MAKEFLAGS",
        "DOCKER_CONFIG",
        "AWS_CONFIG_FILE",
        "AWS_SHARED_CREDENTIALS_FILE",
        "HELM_PLUGINS",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_CONFIG_DIRS",
        "http_proxy",
        "https_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
    }
)
_BEHAVIOUR_PREFIXES = (
    "LD_",
    "GIT_",
    "PYTHON",
    "BASH_",
    "DYLD_",
    "SYSTEMD_",
    "KUBECTL_",
    "HELM_",
    "TF_",
    "ANSIBLE_",
    "npm_config_",
    "NPM_CONFIG_",
    "CARGO_",
    "RUSTC",
    "PERL",
    "RUBY",
    "NODE_",
    "JAVA",
    "MALLOC_",
    "OPENSSL_",
    "GNUPG",
    "GPG_",
    "XDG_",
)
# Names that by convention configure a program's options, files, paths, plugins or helpers.
_BEHAVIOUR_SUFFIXES = (
    "_OPTIONS",
    "_OPTS",
    "_FLAGS",
    "_ARGS",
    "_CONFIG",
    "_CONF",
    "_CONFIG_FILE",
    "_RC",
    "RC",
    "_HOME",
    "_PATH",
    "_DIR",
    "_DIRS",
    "_PLUGINS",
    "_PLUGIN",
    "_LIB",
    "_LIBS",
    "_PRELOAD",
    "_HOOK",
    "_HOOKS",
    "_SHELL",
    "_EXEC",
    "_PROGRAM",
    "_PROG",
    "_BIN",
    "_WRAPPER",
    "_HELPER",
    "_BROWSER",
    "_FILE",
)

_HARMLESS = frozenset(
    {
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "COLUMNS",
        "LINES",
        "NO_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "FORCE_COLOR",
        "COLORTERM",
        "KUBECONFIG",
        "AWS_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_DEFAULT_OUTPUT",
        "CLOUDSDK_CORE_PROJECT",
        "CLOUDSDK_COMPUTE_ZONE",
        "CLOUDSDK_COMPUTE_REGION",
        "DOCKER_HOST",
        "DOCKER_CONTEXT",
        "DOCKER_TLS_VERIFY",
        "HELM_NAMESPACE",
        "HELM_KUBECONTEXT",
        "SYSTEMD_COLORS",
        "SYSTEMD_URLIFY",
        "SYSTEMD_LOG_LEVEL",
        "DEBIAN_FRONTEND",
        "GREP_COLOR",
        "GREP_COLORS",
        "LS_COLORS",
        "TIME_STYLE",
        "QUOTING_STYLE",
        "BLOCK_SIZE",
        "BLOCKSIZE",
        "DF_BLOCK_SIZE",
        "DU_BLOCK_SIZE",
        "POSIXLY_CORRECT",
        "PGHOST",
        "PGPORT",
        "PGUSER",
        "PGDATABASE",
        "PGPASSWORD",
        "PGCONNECT_TIMEOUT",
        "PGSSLMODE",
        "PGAPPNAME",
        "MYSQL_PWD",
        "MYSQL_HOST",
        "MYSQL_TCP_PORT",
        "REDISCLI_AUTH",
        "VAULT_ADDR",
        "VAULT_TOKEN",
        "VAULT_NAMESPACE",
        "NOMAD_ADDR",
        "CONSUL_HTTP_ADDR",
        "ARGOCD_SERVER",
        "ARGOCD_AUTH_TOKEN",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GH_REPO",
        "GIT_TERMINAL_PROMPT",
        "GIT_OPTIONAL_LOCKS",
        "GIT_FLUSH",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONIOENCODING",
        "PYTHONHASHSEED",
        "PYTHONUTF8",
        "RUST_LOG",
        "RUST_BACKTRACE",
        "NODE_ENV",
        "CI",
        "USER",
        "LOGNAME",
        "MANWIDTH",
        "LESSCHARSET",
        "JQ_COLORS",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "CURL_CA_BUNDLE",
        "REQUESTS_CA_BUNDLE",
        "NO_PROXY",
        "no_proxy",
    }
)
_HARMLESS_PREFIXES = ("LC_",)

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def is_command_var(name: str) -> bool:
    """Whether ``name`` holds a command line some program runs (``PAGER``, ``LESSOPEN`` …)."""
    return name in _COMMAND_VARS or name.upper().endswith(_COMMAND_SUFFIXES)


def is_behaviour_var(name: str) -> bool:
    """Whether ``name`` changes which program runs or what it loads (``PATH``, ``LD_PRELOAD`` …),
    or by its name configures a program's options, files or helpers (``TAR_OPTIONS``, ``*_CONFIG``)."""
    return (
        name in _BEHAVIOUR
        or name.startswith(_BEHAVIOUR_PREFIXES)
        or name.upper().endswith(_BEHAVIOUR_SUFFIXES)
    )


def judge_env(name: str, value: str, dynamic: bool, recurse: Recurse, *, exported: bool) -> Verdict:
    """The verdict on setting ``name`` to ``value``.

    ``dynamic``: the value comes from an expansion (its text is not known); ``exported``: the
    variable reaches the environment of programs (a prefix assignment, ``env``, ``export``),
    rather than being a plain shell assignment.
    """
    if not _NAME.match(name):
        return unk(f"assignment to {name!r}: not a plain variable name", "shell.state")
    if name in _HARMLESS or name.startswith(_HARMLESS_PREFIXES):
        return ro(f"sets {name} (formatting or selection only)", "env")
    if name.startswith("GIT_TRACE") or name == "GIT_TRACE":
        return _trace_target(name, value, dynamic)
    if is_command_var(name):
        return _command_value(name, value, dynamic, recurse)
    if is_behaviour_var(name):
        return unk(f"sets {name}: changes which program runs or what it loads", "shell.env")
    if not exported:
        return ro(f"sets shell variable {name}", "env")
    return ro(f"sets {name}: not a variable that configures programs, options or files", "env")


def _command_value(name: str, value: str, dynamic: bool, recurse: Recurse) -> Verdict:
    if dynamic:
        return unk(f"sets {name} from an expansion: a program of the caller's choice", "shell.env")
    text = value.strip()
    if not text:
        return ro(f"sets {name} to nothing", "env")
    if name.startswith("LESS") and name.endswith(("OPEN", "CLOSE")):
        text = text.lstrip("|-").strip().replace("%s", "FILE")
    v = recurse(text)
    if v.level == "read_only":
        return ro(f"sets {name}={text} (judged: {v.reason})", "env")
    return Verdict(v.level, f"sets {name} to a command that runs later → {v.reason}", v.key or "shell.env")


def _trace_target(name: str, value: str, dynamic: bool) -> Verdict:
    """``GIT_TRACE=1|2|true`` traces to stderr; an absolute path appends to that file."""
    if dynamic:
        return unk(f"sets {name} from an expansion (may name a file)", "shell.env")
    v = value.strip().lower()
    if v in ("", "0", "1", "2", "true", "false", "yes", "no", "on", "off") or v.isdigit():
        return ro(f"sets {name} (trace to stderr)", "env")
    return worst([write_target_verdict(value, f"{name}=FILE", "files.write")]) or unk(name, "shell.env")
