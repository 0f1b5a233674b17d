"""``devops-agent users``: the service's users and their API tokens (``add`` shows a token once)."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated

import typer
from rich.text import Text

from devops_agent.cli.context import err, out, state
from devops_agent.cli.render import folding_table

users_app = typer.Typer(
    help="Users of the service (devops-agent serve) and their API tokens.", no_args_is_help=True
)
ROLES_HELP = (
    "viewer (ask mode, own sessions), operator (agent mode, approves mutating calls), admin "
    "(approves destructive calls, sees every session and the audit log), alerts (may only post alerts)"
)


@users_app.command("add")
def users_add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="the user's name, e.g. alice (no spaces)")],
    role: Annotated[str, typer.Option("--role", help=ROLES_HELP)] = "viewer",
    json_out: Annotated[bool, typer.Option("--json", help="print the user and token as JSON")] = False,
) -> None:
    """Add a user and print their API token. It is shown only now: the store keeps only its hash."""
    from devops_agent.api.tokens import new_token, token_hash
    from devops_agent.store import ROLES

    if role not in ROLES:
        raise typer.BadParameter(
            f"{role!r} is not a role; use one of: {', '.join(ROLES)}", param_hint="--role"
        )
    token = new_token()
    user = state(ctx).store().create_user(name, role, token_hash(token))
    if json_out:
        out.print_json(json.dumps({**dataclasses.asdict(user), "token": token}, default=str))
        return
    out.print(token, markup=False, highlight=False)
    err.print(
        f"added {user.name} ({user.role}). The token above is shown once; send it as "
        "`Authorization: Bearer TOKEN`.",
        markup=False,
        highlight=False,
    )


@users_app.command("list")
def users_list(
    ctx: typer.Context, json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False
) -> None:
    """Every user with their role (tokens are never shown again)."""
    users = state(ctx).store().list_users()
    if json_out:
        out.print_json(json.dumps([dataclasses.asdict(u) for u in users], default=str))
        return
    if not users:
        out.print("No users yet: `devops-agent users add NAME --role admin` adds one.")
        return
    table = folding_table("name", "role", "created")
    for u in users:
        table.add_row(Text(u.name), u.role, f"{u.created_at:%Y-%m-%d %H:%M}")
    out.print(table)


@users_app.command("remove")
def users_remove(ctx: typer.Context, name: Annotated[str, typer.Argument(help="the user to remove")]) -> None:
    """Remove a user: their token stops working at once; their sessions and audit entries stay."""
    gone = state(ctx).store().delete_user(name)
    out.print(f"removed {gone.name} ({gone.role})", markup=False, highlight=False)
