"""``devops-agent mcp``: the MCP servers the agent uses, and the agent as an MCP server.

``list`` starts the configured servers (in parallel, each within its timeout) and shows their state
and tools with the rating the gate applies; ``tools NAME`` one server's tools; ``call NAME TOOL``
calls one tool through the same pipeline as a run (mode, approval, privacy guard, audit); ``serve``
makes DevOps Agent an MCP server over stdio or Streamable HTTP.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Column
from rich.text import Text

from devops_agent.cli.context import AppState, err, out, state
from devops_agent.cli.render import folding_table
from devops_agent.errors import NotFoundError, RuntimeFailure, UserError

if TYPE_CHECKING:
    from devops_agent.agent.approvals import ApprovalDecision
    from devops_agent.tools.mcp.connection import ServerConnection, ServerStatus
    from devops_agent.tools.mcp.pool import McpPool

mcp_app = typer.Typer(
    help="MCP: the servers whose tools the agent uses, and DevOps Agent as an MCP server.",
    no_args_is_help=True,
)
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON instead of a table")]
_NONE_HINT = "declare servers under [mcp.servers.NAME] or in .mcp.json; see docs/mcp.md"


def _pool(app: AppState) -> McpPool:
    pool = app.mcp_pool()
    if pool is None:
        raise UserError("no MCP server is configured", hint=_NONE_HINT)
    return pool


def _server(pool: McpPool, name: str) -> ServerConnection:
    conn = pool.servers.get(name)
    if conn is None:
        raise NotFoundError(
            f"no MCP server named {name!r}", hint=f"configured: {', '.join(sorted(pool.servers))}"
        )
    if not conn.settings.enabled:
        raise UserError(
            f"MCP server {name!r} is disabled", hint="enable it in the config (mcp.disabled, enabled)"
        )
    return conn


def tool_rows(conn: ServerConnection) -> list[dict[str, Any]]:
    """The server's tools as offered (after include/exclude, with the prefix), with their ratings."""
    from devops_agent.tools.mcp.toolset import offered_tools

    return [
        {
            "name": t.name,
            "tool": t.tool,
            "rating": t.rating.label,
            "risk": t.rating.spec.risk,
            "why": t.rating.why,
            "description": (t.definition.description or "").strip().split("\n")[0],
        }
        for t in offered_tools(conn, conn.tools or [])
    ]


def _state_text(s: ServerStatus) -> str:
    color = {"ready": "green", "down": "red", "failed": "red"}.get(s.state, "yellow")
    when = f", retry in {s.retry_in_s:.0f}s" if s.retry_in_s is not None else ""
    return f"[{color}]{s.state}[/]{when}"


@mcp_app.command("list")
def mcp_list(
    ctx: typer.Context,
    no_start: Annotated[
        bool, typer.Option("--no-start", help="show the configuration; start nothing")
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """The configured MCP servers: where each is declared, its state, and its tools with the rating
    the gate applies (read-only, changes, destructive). Servers are started in parallel, each within
    its timeout_s, unless --no-start."""
    pool = _pool(state(ctx))
    statuses = {s.name: s for s in pool.status()} if no_start else pool.preload_sync()
    if json_out:
        rows = []
        for name, s in statuses.items():
            rows.append({**s.to_dict(), "tool_list": tool_rows(pool.servers[name]) if s.tools else []})
        out.print_json(json.dumps(rows, default=str))
        return
    table = folding_table(
        "server", "state", "transport", "scope", "tools", Column("declared in / why", ratio=1)
    )
    for name, s in statuses.items():
        scope = ", ".join(s.profiles) + (" (exclusive)" if s.exclusive else "") if s.profiles else "global"
        conn = pool.servers[name]
        rated = tool_rows(conn)
        counts = {k: sum(r["rating"] == k for r in rated) for k in ("read-only", "changes", "destructive")}
        tools = ", ".join(f"{n} {k}" for k, n in counts.items() if n) if rated else "-"
        detail = s.source + (f"\n{s.error}" if s.error else "")
        table.add_row(Text(name), _state_text(s), s.transport, Text(scope), tools, Text(detail))
    out.print(table)


@mcp_app.command("tools")
def mcp_tools(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="the server")],
    json_out: JsonOpt = False,
) -> None:
    """One server's tools as the agent offers them: the name a run calls it by, the rating the gate
    applies and why (its annotations, or the config)."""
    pool = _pool(state(ctx))
    conn = _server(pool, name)
    status = pool.preload_sync([name])[name]
    if status.state != "ready" and not conn.tools:
        raise RuntimeFailure(
            f"MCP server {name!r} is {status.state}: {status.error}", hint="check its command or url"
        )
    rows = tool_rows(conn)
    if json_out:
        out.print_json(json.dumps(rows))
        return
    table = folding_table("tool", "rating", Column("why", ratio=1), Column("description", ratio=2))
    for r in rows:
        color = {"read-only": "green", "changes": "yellow", "destructive": "red"}[r["rating"]]
        table.add_row(Text(r["name"]), f"[{color}]{r['rating']}[/]", Text(r["why"]), Text(r["description"]))
    out.print(table)


def _parse_args(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise typer.BadParameter(f"not JSON: {exc}", param_hint="--args") from exc
    if not isinstance(value, dict):
        raise typer.BadParameter("give a JSON object of the tool's arguments", param_hint="--args")
    return value


@mcp_app.command("call")
def mcp_call(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="the server")],
    tool: Annotated[str, typer.Argument(help="the tool: the server's own name, or the prefixed one")],
    args: Annotated[str, typer.Option("--args", help="the arguments as a JSON object")] = "{}",
    mode: Annotated[
        str | None, typer.Option("--mode", help="ask (read-only tools only) or agent; default from config")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", help="approve without prompting")] = False,
    confirm: Annotated[
        str | None,
        typer.Option("--confirm", metavar="CONFIRM", help="with --yes, approve a destructive call"),
    ] = None,
    approver: Annotated[str | None, typer.Option("--approver", help="name recorded in the audit log")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="print the whole result as JSON")] = False,
) -> None:
    """Call one tool of a server through the same policies as a run: in ask mode only read-only
    tools run; in agent mode a tool that changes things needs approval (a destructive one CONFIRM),
    asked at the terminal or given with --yes [--confirm CONFIRM]. The call is recorded and audited
    in a session of its own."""
    from devops_agent.agent.session import SessionService
    from devops_agent.cli.run import _check_mode

    app = state(ctx)
    arguments = _parse_args(args)
    chosen = _check_mode(mode) or app.settings.mode
    pool = _pool(app)
    conn = _server(pool, name)
    status = pool.preload_sync([name])[name]
    offered = {r["tool"]: r["name"] for r in tool_rows(conn)}
    if tool not in offered.values():
        if tool not in offered:
            if status.state != "ready" and not conn.tools:
                raise RuntimeFailure(f"MCP server {name!r} is {status.state}: {status.error}")
            known = ", ".join(sorted(offered)) or "none offered (see include/exclude)"
            raise NotFoundError(f"server {name!r} offers no tool {tool!r}", hint=f"its tools: {known}")
        tool = offered[tool]
    service = SessionService(app.settings, app.store(), mcp=pool, use_configured_model=False)
    session = app.store().create_session(title=f"mcp call {name} {tool}", mode=chosen, model=None)
    ask = _asker(yes=yes, confirm=confirm, approver=approver)
    result = asyncio.run(
        service.call_tool(
            session.id, tool, arguments, mode=chosen, ask=ask, profiles=conn.settings.profiles, mcp=[name]
        )
    )
    if json_out:
        out.print_json(json.dumps({"session_id": session.id, **result.model_dump(mode="json")}, default=str))
    elif result.status in ("success", "no_data"):
        data = result.data if result.status == "success" else result.hint
        out.print(data if isinstance(data, str) else json.dumps(data, indent=1, default=str), markup=False)
    if result.status == "error":
        raise RuntimeFailure(result.error or "the call failed", hint=result.hint)


def _asker(*, yes: bool, confirm: str | None, approver: str | None) -> Any:
    """The approval question of ``mcp call``: the terminal's prompt, or --yes [--confirm CONFIRM]."""
    import getpass

    from devops_agent.agent.approvals import ApprovalDecision
    from devops_agent.cli.approve import _check_unattended, describe_pending, interactive, prompt_one

    who = approver or getpass.getuser()

    async def ask(pending: dict[str, Any]) -> ApprovalDecision:
        if yes or not interactive():
            describe_pending("call-1", pending)
            _check_unattended(["call-1"], {"call-1": pending}, yes=yes, deny=False, confirm=confirm)
            return ApprovalDecision(True, "", who)
        return prompt_one("call-1", pending, who)

    return ask


@mcp_app.command("serve")
def mcp_serve(
    ctx: typer.Context,
    http: Annotated[
        str | None,
        typer.Option(
            "--http", metavar="HOST:PORT", help="serve Streamable HTTP on HOST:PORT instead of stdio"
        ),
    ] = None,
    allow_mutating: Annotated[
        bool,
        typer.Option(
            "--allow-mutating",
            help="also offer tools that change things; each call still needs approval from the client's "
            "user (MCP elicitation), and is refused where the client cannot ask",
        ),
    ] = False,
    token: Annotated[
        str | None,
        typer.Option(
            "--token", envvar="DEVOPS_AGENT_MCP_TOKEN", help="with --http: the bearer token clients must send"
        ),
    ] = None,
) -> None:
    """Serve DevOps Agent to MCP clients (Claude Desktop, VS Code, another agent): our read-only tools,
    investigate, triage, search_knowledge and search_memory; runbooks as prompts; sessions and reports as
    resources. Calls go through the same safety, privacy and audit as the CLI's."""
    from devops_agent.mcp_server.run import serve_http, serve_stdio

    app = state(ctx)
    if http is None:
        if token:
            raise UserError("--token applies to --http", hint="a stdio server is reached only by its parent")
        serve_stdio(app.settings, app.store(), allow_mutating=allow_mutating)
        return
    host, _, port = http.rpartition(":")
    if not host or not port.isdigit():
        raise typer.BadParameter(f"{http!r}: give HOST:PORT, e.g. 127.0.0.1:8765", param_hint="--http")
    err.print(f"[dim]MCP over Streamable HTTP at http://{escape(host)}:{port}/mcp[/]")
    serve_http(
        app.settings, app.store(), host=host, port=int(port), allow_mutating=allow_mutating, token=token
    )
