"""``devops-agent privacy …``: the vault of placeholders."""

from __future__ import annotations

from typing import Annotated

import typer

from devops_agent.cli.context import out, state
from devops_agent.errors import UserError
from devops_agent.privacy.vault import purge_expired

privacy_app = typer.Typer(
    help="The privacy vault (placeholder → original, per session).", no_args_is_help=True
)


@privacy_app.command("purge")
def purge(
    ctx: typer.Context,
    session: Annotated[
        str | None, typer.Option("--session", "-s", help="purge one session's entries")
    ] = None,
    expired: Annotated[
        bool, typer.Option("--expired", help="purge entries past their namespace's TTL")
    ] = False,
    everything: Annotated[bool, typer.Option("--all", help="purge every entry")] = False,
) -> None:
    """Delete vault entries: one session's, the expired ones (privacy.ttl_hours), or all."""
    app = state(ctx)
    store = app.store()
    if sum([session is not None, expired, everything]) != 1:
        raise UserError("choose exactly one of --session, --expired, --all")
    if expired:
        count = purge_expired(store, app.settings.privacy.ttl_hours)
    elif session is not None:
        count = store.vault_purge(session_id=store.get_session(session).id)
    else:
        count = store.vault_purge()
    out.print(f"purged {count} vault entr{'y' if count == 1 else 'ies'}")
