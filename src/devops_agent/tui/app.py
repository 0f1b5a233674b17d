"""The Textual application of ``devops-agent tui``: the client it works through, who it acts as,
and the keys that hold on every screen (Ctrl-C stops the run in flight; Ctrl-Q quits).

The client is connected when the app starts (a server's WebSocket belongs to the app's event loop)
and closed when it ends; a failure to connect ends the app with :attr:`AgentTui.failure` set, which
the CLI reports as any other error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import App
from textual.binding import Binding

from devops_agent.errors import DevOpsAgentError
from devops_agent.tui.client import AgentClient, Identity
from devops_agent.tui.screens import ChatScreen, SessionsScreen, tell


class AgentTui(App[None]):
    """Sessions list → chat of a session (→ approval, plan, save dialogs; report screen)."""

    TITLE = "DevOps Agent"
    BINDINGS = [Binding("ctrl+c", "cancel_run", "Stop run", priority=True)]

    def __init__(
        self,
        client: AgentClient,
        *,
        mode: str = "ask",
        session_id: str | None = None,
        inputs: dict[str, Any] | None = None,
        save_dir: Path | None = None,
    ) -> None:
        super().__init__()
        self.client = client
        self.default_mode = mode
        self.open_session = session_id
        self.inputs = dict(inputs or {})
        self.save_dir = save_dir or Path.cwd()
        self.identity: Identity | None = None
        self.failure: DevOpsAgentError | None = None

    async def on_mount(self) -> None:
        try:
            self.identity = await self.client.connect()
        except DevOpsAgentError as exc:
            self.failure = exc
            self.exit(return_code=exc.exit_code)
            return
        if self.default_mode == "agent" and not self.identity.may_use_agent_mode:
            self.default_mode = "ask"
        await self.push_screen(SessionsScreen())
        if self.open_session is not None:
            await self.push_screen(ChatScreen(self.open_session))

    async def on_unmount(self) -> None:
        await self.client.close()

    async def action_cancel_run(self) -> None:
        screen = self.screen
        if isinstance(screen, ChatScreen):
            await screen.cancel_run()
        else:
            tell(screen, "no run here to stop (ctrl+q quits)")
