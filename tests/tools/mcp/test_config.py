"""MCP configuration without starting a server: both formats, variables, secrets masked, the
safety rating of annotations, and which servers a run's profiles get."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_types import Tool, ToolAnnotations

from devops_agent.config import Settings, describe, load_settings
from devops_agent.config.mcp import McpServerSettings
from devops_agent.errors import ConfigError
from devops_agent.tools.mcp import pool_for
from devops_agent.tools.mcp.config import ServerEntry, configured_servers, expand
from devops_agent.tools.mcp.connection import ServerConnection, transport_of
from devops_agent.tools.mcp.rating import rate
from devops_agent.tools.mcp.toolset import offered_tools, tool_name
from fixtures_mcp import mcp_settings

SECRET = "ghp_Tq8Zm2Lx7Vc4Nb1Rw9Ky3Hd6Gs0Fa5eUjQpX"


def write_project(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "fs": {
                        "command": "npx",
                        "args": ["-y", "server-filesystem", "."],
                        "env": {"T": "${TOK}"},
                    },
                    "old": {"command": "old-server", "disabled": True},
                    "legacy": {
                        "url": "https://mcp.example.com/sse",
                        "headers": {"Authorization": "Bearer x"},
                    },
                    "remote": {"type": "http", "url": "https://mcp.example.com/mcp", "someOtherClientKey": 1},
                }
            }
        )
    )


def test_servers_come_from_mcp_json_and_our_toml_replaces_a_file_server(tmp_path: Path) -> None:
    write_project(tmp_path)
    (tmp_path / "devops-agent.toml").write_text(
        '[mcp.servers.fs]\ncommand = "mcp-fs"\nargs = ["/srv"]\nprefix = "files"\nprofiles = ["storage"]\n'
        '[mcp.servers.prom]\nurl = "http://127.0.0.1:9/mcp"\nexclusive = true\nprofiles = ["metrics"]\n'
        '[mcp]\ndisabled = ["legacy"]\n'
    )
    settings = load_settings(cwd=tmp_path).settings
    entries = configured_servers(settings, cwd=tmp_path)
    assert set(entries) == {"fs", "old", "legacy", "remote", "prom"}
    fs = entries["fs"]
    assert (fs.source, fs.settings.command, fs.settings.args, fs.settings.prefix) == (
        "config", "mcp-fs", ["/srv"], "files"
    )  # fmt: skip
    assert fs.settings.env == {}, "our table replaces the file's server whole"
    assert entries["old"].settings.enabled is False, "the file's own disabled flag is read"
    assert entries["legacy"].settings.enabled is False, "mcp.disabled turns a file's server off"
    assert entries["remote"].source == str(tmp_path / ".mcp.json")
    assert [transport_of(entries[n].settings) for n in ("fs", "legacy", "remote", "prom")] == [
        "stdio", "sse", "http", "http"
    ]  # fmt: skip
    # A second file in mcp.files comes first; the project's file is read after it.
    other = tmp_path / "claude.json"
    other.write_text(
        json.dumps({"mcpServers": {"remote": {"command": "from-claude"}, "gh": {"command": "gh"}}})
    )
    settings = settings.model_copy(update={"mcp": settings.mcp.model_copy(update={"files": [other]})})
    entries = configured_servers(settings, cwd=tmp_path)
    assert entries["gh"].source == str(other)
    assert entries["remote"].settings.url == "https://mcp.example.com/mcp", "the later file wins"


def test_project_file_can_be_turned_off_and_no_server_means_no_pool(tmp_path: Path) -> None:
    write_project(tmp_path)
    off = Settings(mcp={"project_file": False})
    assert configured_servers(off, cwd=tmp_path) == {}
    assert pool_for(off, cwd=tmp_path) is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"servers_typo": {}}', "no mcpServers object"),
        ('{"mcpServers": {"x": {"args": ["a"]}}}', "give either command"),
        ('{"mcpServers": {"x": {"command": "a", "url": "http://h/mcp"}}}', "give either command"),
        ('{"mcpServers": {"x": {"type": "websocket", "url": "ws://h"}}}', "has type 'websocket'"),
    ],
)
def test_a_broken_mcp_json_is_a_config_error_naming_the_file(
    tmp_path: Path, content: str, message: str
) -> None:
    (tmp_path / ".mcp.json").write_text(content)
    with pytest.raises(ConfigError, match=message) as info:
        configured_servers(Settings(), cwd=tmp_path)
    assert str(tmp_path / ".mcp.json") in info.value.message


def test_config_validation_of_our_tables() -> None:
    with pytest.raises(ValueError, match="exclusive needs profiles"):
        McpServerSettings(command="x", exclusive=True)
    with pytest.raises(ValueError, match="transport sse needs a url"):
        McpServerSettings(command="x", transport="sse")
    with pytest.raises(ValueError, match="server name"):
        Settings(mcp={"servers": {"bad name!": {"command": "x"}}})
    with pytest.raises(ConfigError, match="mcp.disabled names 'nope'"):
        configured_servers(Settings(mcp={"disabled": ["nope"], "project_file": False}))


def test_variables_are_expanded_with_defaults_and_a_missing_one_is_named() -> None:
    env = {"TOKEN": "abc", "EMPTY": ""}
    assert expand("Bearer ${TOKEN}", env) == "Bearer abc"
    assert expand("${NOPE:-fallback}/${TOKEN:-x}", env) == "fallback/abc"
    assert expand("${EMPTY:-used}", env) == "used", "an empty variable takes the default, as in the shell"
    assert expand("${EMPTY}", env) == ""
    with pytest.raises(ConfigError, match="environment variable MISSING is not set") as info:
        expand("--key=${MISSING}", env)
    assert "${MISSING:-default}" in (info.value.hint or "")


def test_config_show_masks_server_env_and_headers(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(
        f'[mcp.servers.gh]\nurl = "https://mcp.example.com/mcp"\nheaders = {{ Authorization = "Bearer {SECRET}" }}\n'
        f'[mcp.servers.fs]\ncommand = "mcp-fs"\nenv = {{ API_KEY = "{SECRET}" }}\n'
    )
    loaded = load_settings(config)
    rows = {k: v for k, v, _ in describe(loaded)}
    assert rows["mcp.servers.gh.headers"] == "Authorization=********"
    assert rows["mcp.servers.fs.env"] == "API_KEY=********"
    assert rows["mcp.servers.fs.command"] == "mcp-fs"
    env = dict(os.environ, DEVOPS_AGENT_CONFIG=str(config))
    proc = subprocess.run(
        [sys.executable, "-m", "devops_agent", "config", "show", "--json"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert SECRET not in proc.stdout
    assert "Authorization=********" in proc.stdout


def test_a_bad_mcp_environment_value_does_not_echo_its_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEVOPS_AGENT_MCP__SERVERS", f'{{"gh": {{"env": {{"K": "{SECRET}"}}')  # broken JSON
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert SECRET not in info.value.message
    assert "DEVOPS_AGENT_MCP__SERVERS (value not shown)" in info.value.message


def annotated(**hints: bool) -> dict[str, Any]:
    return ToolAnnotations(**hints).model_dump(by_alias=True, exclude_none=True)


@pytest.mark.parametrize(
    ("hints", "read_only", "risk"),
    [
        ({"readOnlyHint": True, "openWorldHint": False}, True, "safe"),
        ({"readOnlyHint": True}, True, "safe"),
        ({"readOnlyHint": True, "openWorldHint": True}, False, "sensitive"),  # may send data out
        ({"readOnlyHint": False, "destructiveHint": False}, False, "sensitive"),
        ({"readOnlyHint": False, "destructiveHint": True}, False, "destructive"),
        ({"readOnlyHint": False}, False, "destructive"),  # MCP's default destructiveHint is true
        ({"idempotentHint": True}, False, "destructive"),  # says nothing about reading
        (None, False, "destructive"),  # no annotations at all
    ],
)
def test_annotations_map_to_a_tool_spec(hints: dict[str, bool] | None, read_only: bool, risk: str) -> None:
    rating = rate("srv", McpServerSettings(command="x"), "t", annotated(**hints) if hints else None)
    assert (rating.spec.read_only, rating.spec.risk) == (read_only, risk), rating.why
    assert rating.spec.category == "mcp:srv"


def test_the_config_overrides_annotations_only_towards_safer() -> None:
    config = McpServerSettings(
        command="x", read_only=["plain_*", "writer", "eraser"], mutating=["reader"], destructive=["adder"]
    )
    reader = rate("s", config, "reader", annotated(readOnlyHint=True))
    assert (reader.spec.read_only, reader.spec.risk) == (False, "sensitive")
    adder = rate("s", config, "adder", annotated(readOnlyHint=False, destructiveHint=False))
    assert adder.spec.risk == "destructive"
    # An unannotated tool may be declared read-only by the operator; a tool that says it writes may not.
    assert rate("s", config, "plain_list", None).spec.read_only is True
    writer = rate("s", config, "writer", annotated(readOnlyHint=False, destructiveHint=False))
    assert writer.spec.read_only is False
    assert "the server says it writes" in writer.why
    assert rate("s", config, "eraser", annotated(destructiveHint=True)).spec.read_only is False
    # destructive/mutating win over read_only when a tool matches both
    both = McpServerSettings(command="x", read_only=["*"], destructive=["drop_*"])
    assert rate("s", both, "drop_table", None).spec.risk == "destructive"


def conn(name: str, **settings: Any) -> ServerConnection:
    entry = ServerEntry(name, McpServerSettings(command="x", **settings), "config")
    return ServerConnection(entry, log_dir=None, call_timeout_s=10, backoff_max_s=10)


def test_tools_offered_after_include_exclude_with_the_prefix() -> None:
    tools = [
        Tool(name=n, input_schema={"type": "object"}, annotations=ToolAnnotations(readOnlyHint=True))
        for n in ("read_file", "read_dir", "write_file", "get-sum", "ns/op.x")
    ]
    names = [
        t.name
        for t in offered_tools(conn("fs", include=["read_*", "get-*", "ns/*"], exclude=["read_dir"]), tools)
    ]
    assert names == ["fs_read_file", "fs_get-sum", "fs_ns_op_x"]
    assert [t.name for t in offered_tools(conn("fs", prefix=""), tools)][:2] == ["read_file", "read_dir"]
    assert [t.tool for t in offered_tools(conn("fs", prefix="files"), tools)][-1] == "ns/op.x"
    assert tool_name("my.srv", "a b") == "my.srv_a_b"  # the server name is made safe by offered_tools


def test_a_run_gets_global_servers_and_those_of_its_profiles(tmp_path: Path) -> None:
    settings = mcp_settings(
        tmp_path,
        {
            "everyone": {"command": "a"},
            "k8s": {"command": "b", "profiles": ["kubernetes"]},
            "db": {"command": "c", "profiles": ["database"], "exclusive": True},
            "off": {"command": "d", "enabled": False},
        },
    )
    pool = pool_for(settings)
    assert pool is not None
    try:

        def names(*profiles: str) -> list[str]:
            return [c.name for c in pool.in_scope(profiles)]

        assert names() == ["everyone", "k8s"], "a general run: all but exclusive and disabled ones"
        assert names("kubernetes") == ["everyone", "k8s"]
        assert names("database") == ["everyone", "db"], "a specialist gets its own and the global ones"
        assert names("other") == ["everyone"]
        assert pool.unknown_profiles(["database", "typo"]) == ["typo"]
    finally:
        pool.close()
