"""Which MCP servers are configured: ``[mcp.servers.NAME]`` tables and ``mcpServers`` JSON files.

Editors and other agents keep their MCP servers in JSON (Claude Desktop's
``claude_desktop_config.json``, a project's ``.mcp.json``, VS Code's ``mcp.json``)::

    {"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]}}}

:func:`configured_servers` reads those files (``mcp.files``, then ``./.mcp.json`` when
``mcp.project_file``), then our own tables, which override a file's server of the same name key by
key. Unknown keys of a file entry are ignored (the file is shared with other clients); ``disabled``
and ``type`` are understood. ``${VAR}`` and ``${VAR:-default}`` are expanded by :func:`expand` only
when a server connects, so a variable that is not set fails that server, not every command.

This module reads configuration only: it must not start a server.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import SecretStr, ValidationError

from devops_agent.config import Settings
from devops_agent.config.mcp import McpServerSettings
from devops_agent.errors import ConfigError

PROJECT_FILE = ".mcp.json"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_TYPES = {"stdio": "stdio", "http": "http", "streamable-http": "http", "streamableHttp": "http", "sse": "sse"}
_OURS = set(McpServerSettings.model_fields) - {"transport", "enabled"}


@dataclass(frozen=True)
class ServerEntry:
    """A configured server: its name, settings and where they came from (a file, or ``config``)."""

    name: str
    settings: McpServerSettings
    source: str


def expand(text: str, environ: Mapping[str, str] | None = None) -> str:
    """``text`` with ``${VAR}`` replaced by the variable's value and ``${VAR:-default}`` by the value,
    or ``default`` when the variable is unset or empty. Raises :class:`ConfigError` naming a variable
    that is not set and has no default."""
    env = os.environ if environ is None else environ

    def value(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        got = env.get(name)
        if got:
            return got
        if default is not None:
            return default
        if got is not None:
            return got
        raise ConfigError(
            f"environment variable {name} is not set",
            hint=f"export {name}=…, or write ${{{name}:-default}} to give a default",
        )

    return _VAR.sub(value, text)


def expand_secrets(values: Mapping[str, SecretStr]) -> dict[str, str]:
    """A table of secrets (``env``, ``headers``) with variables expanded, as plain strings."""
    return {k: expand(v.get_secret_value()) for k, v in values.items()}


def _entry_from_json(name: str, raw: Any, source: Path) -> McpServerSettings:
    """One ``mcpServers`` entry as our settings; a clear :class:`ConfigError` when it is not one."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: server {name!r} is not an object", hint="see docs/mcp.md")
    data = {k: v for k, v in raw.items() if k in _OURS and v is not None}
    kind = raw.get("type")
    if isinstance(kind, str):
        if kind not in _TYPES:
            raise ConfigError(
                f"{source}: server {name!r} has type {kind!r}", hint=f"use one of {', '.join(sorted(_TYPES))}"
            )
        data["transport"] = _TYPES[kind]
    if raw.get("disabled") is True or raw.get("enabled") is False:
        data["enabled"] = False
    try:
        return McpServerSettings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(
            f"{source}: server {name!r}: {where + ': ' if where else ''}{first['msg']}",
            hint="an mcpServers entry needs a command (with args) or a url; see docs/mcp.md",
        ) from exc


def read_servers_file(path: Path) -> dict[str, McpServerSettings]:
    """The servers of an ``mcpServers`` JSON file (VS Code's ``servers`` key is read too)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read MCP servers file {path}: {exc.strerror or exc}") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid JSON: {exc}", hint="fix the syntax or remove the file") from exc
    servers = data.get("mcpServers", data.get("servers")) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(
            f"{path}: no mcpServers object", hint='the file holds {"mcpServers": {"NAME": {"command": …}}}'
        )
    return {str(name): _entry_from_json(str(name), raw, path) for name, raw in servers.items()}


def server_files(settings: Settings, cwd: Path | None = None) -> list[Path]:
    """The ``mcpServers`` files read, in order (later wins): ``mcp.files``, then the project's."""
    files = [p.expanduser() for p in settings.mcp.files]
    project = (cwd or Path.cwd()) / PROJECT_FILE
    if settings.mcp.project_file and project.is_file():
        files.append(project)
    return files


def configured_servers(settings: Settings, cwd: Path | None = None) -> dict[str, ServerEntry]:
    """Every configured server by name, enabled or not: the files' (a later file's server replaces
    an earlier one of the same name), then our config's tables, which replace a file's server of the
    same name; ``mcp.disabled`` turns servers off by name. Raises :class:`ConfigError` for an
    unreadable or invalid file, or a disabled name that no server has."""
    entries: dict[str, ServerEntry] = {}
    for path in server_files(settings, cwd):
        for name, server in read_servers_file(path).items():
            entries[name] = ServerEntry(name, server, str(path))
    for name, server in settings.mcp.servers.items():
        entries[name] = ServerEntry(name, server, "config")
    for name in settings.mcp.disabled:
        entry = entries.get(name)
        if entry is None:
            known = ", ".join(sorted(entries)) or "none are configured"
            raise ConfigError(f"mcp.disabled names {name!r}, which is not a server", hint=f"servers: {known}")
        off = entry.settings.model_copy(update={"enabled": False})
        entries[name] = ServerEntry(name, off, entry.source)
    return entries
