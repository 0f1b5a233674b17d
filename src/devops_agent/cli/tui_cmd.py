"""``devops-agent tui``: the terminal UI, over this machine's session service or a server's API.

The TUI needs the ``tui`` extra (Textual); without it this command says which to install.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Annotated

import typer

from devops_agent.cli.context import state, with_roots
from devops_agent.cli.run import ModeOpt, SessionOpt, _check_mode
from devops_agent.errors import ConfigError, UserError

TUI_MODULES = ("textual", "websockets")


def missing_tui_modules() -> list[str]:
    """The TUI's libraries that are not installed."""
    return [m for m in TUI_MODULES if importlib.util.find_spec(m) is None]


def tui(
    ctx: typer.Context,
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            envvar="DEVOPS_AGENT_SERVER",
            help="a server's URL (devops-agent serve), e.g. http://127.0.0.1:8080; default: run here",
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="DEVOPS_AGENT_TOKEN",
            help="API token for --server (`devops-agent users add NAME` prints one); "
            "prefer the environment variable: a flag shows in the process list",
        ),
    ] = None,
    session: SessionOpt = None,
    mode: ModeOpt = None,
    logs: Annotated[
        list[Path] | None,
        typer.Option(
            "--logs",
            exists=True,
            readable=True,
            help="log files or directories the questions may read (as investigate --logs); "
            "with --server, paths on the server",
        ),
    ] = None,
) -> None:
    """Open the terminal UI: sessions, a streaming conversation with tool-call panels, approvals
    (CONFIRM for destructive calls), plan and report views.

    Keys: Enter asks, Ctrl-C stops the run, Ctrl-T switches ask/agent mode, Ctrl-R shows the report,
    Ctrl-L the plan, Ctrl-O saves a tool call's full output to a file, Escape goes back, Ctrl-Q quits.
    """
    missing = missing_tui_modules()
    if missing:
        raise ConfigError(
            f"the TUI needs the 'tui' extra ({', '.join(missing)} not installed)",
            hint="pip install 'devops-agent[tui]'",
        )
    chosen = _check_mode(mode)
    from devops_agent.tui.app import AgentTui
    from devops_agent.tui.client import AgentClient

    inputs = {"logs": [str(p) for p in logs]} if logs else {}
    client: AgentClient
    if server:
        if not token:
            raise UserError(
                "--server needs a token",
                hint="pass --token or set DEVOPS_AGENT_TOKEN (`devops-agent users add NAME` prints one)",
            )
        from devops_agent.tui.remote import RemoteClient

        client = RemoteClient(server, token)
        default_mode = chosen or "ask"
    else:
        from devops_agent.agent.session import SessionService
        from devops_agent.tui.local import LocalClient

        app = state(ctx)
        if logs:
            inputs = {"logs": [str(p.resolve()) for p in logs]}
        settings = with_roots(app.settings, list(logs or []))
        client = LocalClient(SessionService(settings, app.store(), mcp=app.mcp_pool()))
        default_mode = chosen or app.settings.mode
    tui_app = AgentTui(client, mode=default_mode, session_id=session, inputs=inputs)
    tui_app.run()
    if tui_app.failure is not None:
        raise tui_app.failure
