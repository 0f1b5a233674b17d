"""``[mcp]``: the MCP servers DevOps Agent uses as tools (``[mcp.servers.NAME]``) and the
``mcpServers`` JSON files it also reads. Only the settings; connecting is ``tools/mcp``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from devops_agent.config.section import Section

McpTransport = Literal["auto", "stdio", "http", "sse"]
_MCP_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_MCP_PREFIX = re.compile(r"^[A-Za-z0-9_-]{0,40}$")


class McpServerSettings(Section):
    """One MCP server whose tools the agent may call: a command (stdio) or a URL (Streamable HTTP,
    legacy SSE). Strings may hold ``${VAR}`` / ``${VAR:-default}``, expanded when it connects."""

    command: str | None = Field(None, description="program to start (stdio), e.g. npx")
    args: list[str] = Field(default_factory=list)
    env: dict[str, SecretStr] = Field(
        default_factory=dict, description="environment of the server process (on top of PATH, HOME, …)"
    )
    cwd: str | None = Field(None, description="working directory of the server process")
    url: str | None = Field(None, description="Streamable HTTP endpoint, or a legacy SSE one (…/sse)")
    headers: dict[str, SecretStr] = Field(
        default_factory=dict, description="HTTP headers, e.g. Authorization"
    )
    transport: McpTransport = Field(
        "auto", description="auto: stdio for a command; for a URL, sse when its path ends in /sse, else http"
    )
    timeout_s: float = Field(10.0, gt=0, description="longest wait for the server to start and answer")
    enabled: bool = True
    include: list[str] = Field(default_factory=list, description="globs of the tools to offer (empty: all)")
    exclude: list[str] = Field(default_factory=list, description="globs of the tools never offered")
    prefix: str | None = Field(None, description='tool name prefix; default: the server name; "" for none')
    read_only: list[str] = Field(
        default_factory=list,
        description="globs of tools rated read-only though not annotated so (never one annotated as writing)",
    )
    mutating: list[str] = Field(
        default_factory=list,
        description="globs of tools rated as changing things (approval) whatever they say",
    )
    destructive: list[str] = Field(
        default_factory=list, description="globs of tools rated destructive (approval with CONFIRM)"
    )
    profiles: list[str] = Field(
        default_factory=list, description="profiles the server belongs to; none: global (every run)"
    )
    exclusive: bool = Field(False, description="only runs that name one of its profiles get the server")
    fallback: str | None = Field(
        None, description="built-in toolset offered for the same intent while the server is unreachable"
    )

    @field_validator("prefix")
    @classmethod
    def _valid_prefix(cls, value: str | None) -> str | None:
        if value is not None and not _MCP_PREFIX.match(value):
            raise ValueError("a prefix holds letters, digits, _ and - only (at most 40)")
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a stdio server) or url (an HTTP server)")
        if self.command is not None and self.transport in ("http", "sse"):
            raise ValueError(f"transport {self.transport} needs a url, not a command")
        if self.url is not None and self.transport == "stdio":
            raise ValueError("transport stdio needs a command, not a url")
        if self.exclusive and not self.profiles:
            raise ValueError("exclusive needs profiles: the server is exclusive to which profile?")
        return self


class McpSettings(Section):
    """MCP servers as tools: declared here and in ``mcpServers`` JSON files (see docs/mcp.md)."""

    servers: dict[str, McpServerSettings] = Field(default_factory=dict)
    files: list[Path] = Field(
        default_factory=list,
        description="more mcpServers JSON files (Claude Desktop, VS Code, …); a server of the same name "
        "in this config replaces the file's",
    )
    project_file: bool = Field(True, description="also read .mcp.json in the current directory")
    disabled: list[str] = Field(
        default_factory=list, description="servers not to start (from this config or from a file)"
    )
    preload: bool = Field(True, description="start the servers when serve or chat starts")
    reconnect_max_s: float = Field(60.0, gt=0, description="longest wait between reconnect attempts")

    @field_validator("servers")
    @classmethod
    def _valid_names(cls, value: dict[str, McpServerSettings]) -> dict[str, McpServerSettings]:
        bad = [n for n in value if not _MCP_NAME.match(n)]
        if bad:
            raise ValueError(f"server name {bad[0]!r}: use letters, digits, _ . and - (at most 63)")
        return value
