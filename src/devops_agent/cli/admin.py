"""Inspection commands: sessions, tools, runbooks, config and doctor."""

from __future__ import annotations

import dataclasses
import json
import sys
from datetime import UTC, datetime
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Column
from rich.text import Text

from devops_agent.agent.plugins import available_runbooks
from devops_agent.cli.context import out, state
from devops_agent.cli.render import describe_usage, folding_table, print_markdown
from devops_agent.config import describe
from devops_agent.errors import NotFoundError, UserError
from devops_agent.events import RunFinished, event_from_json
from devops_agent.runbooks import get_runbook
from devops_agent.textsafe import visible
from devops_agent.tools.kept import stored_result
from devops_agent.tools.registry import build_catalog, default_registry

_EVENT_IDS = {"v", "session_id", "run_id", "seq"}
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON instead of a table")]

sessions_app = typer.Typer(help="List, show and delete saved sessions.", no_args_is_help=True)
tools_app = typer.Typer(help="Tools the agent can call and their circuit breakers.", no_args_is_help=True)
runbooks_app = typer.Typer(help="Offline runbooks (used when no model is configured).", no_args_is_help=True)
config_app = typer.Typer(help="Effective configuration.", no_args_is_help=True)


def _emit_json(data: Any) -> None:
    out.print_json(json.dumps(data, default=str))


def _ago(ts: datetime) -> str:
    s = (datetime.now(UTC) - ts).total_seconds()
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= size:
            return f"{s / size:.0f}{unit} ago"
    return f"{s:.0f}s ago"


@sessions_app.command("list")
def sessions_list(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option(min=1, help="how many sessions to list")] = 20,
    json_out: JsonOpt = False,
) -> None:
    """Saved sessions, newest first."""
    records = state(ctx).store().list_sessions(limit=limit)
    if json_out:
        _emit_json([dataclasses.asdict(r) for r in records])
        return
    table = folding_table("id", "mode", "status", "model", "updated", "title")
    for r in records:
        table.add_row(
            r.id[:12], r.mode, r.status, Text(r.model or "offline"), _ago(r.updated_at), Text(r.title[:120])
        )
    out.print(table)


@sessions_app.command("show")
def sessions_show(
    ctx: typer.Context,
    session_id: Annotated[str, typer.Argument(help="session id or a unique prefix")],
    events: Annotated[bool, typer.Option("--events", help="also list the events")] = False,
    json_out: JsonOpt = False,
) -> None:
    """A session's conversation (and events with --events), and what its runs used and cost."""
    from devops_agent.agent.messages import load_message
    from devops_agent.agent.usage import merge_usage
    from devops_agent.privacy.vault import restore_text

    app = state(ctx)
    store = app.store()
    rec = store.get_session(session_id)
    payloads = store.load_messages(rec.id)
    all_events = [event_from_json(e.payload) for e in store.list_events(rec.id)]
    evs = all_events if events or json_out else []
    usage = merge_usage(e.usage for e in all_events if isinstance(e, RunFinished))
    if json_out:
        _emit_json(
            {
                "session": dataclasses.asdict(rec),
                # As stored: pydantic-ai's own message JSON (ModelMessagesTypeAdapter's form).
                "messages": [json.loads(p) for p in payloads],
                "events": [e.model_dump(mode="json") for e in evs],
                "usage": usage,
            }
        )
        return
    messages = [load_message(p) for p in payloads]
    # What a session holds is printed literally: a question may say "[/var/log]" or "[error]".
    out.print(f"[bold]{escape(rec.title)}[/]  ({rec.id}, {rec.mode} mode, {rec.status})")
    if describe_usage(usage):
        out.print(f"[dim]{escape(describe_usage(usage))}[/]", highlight=False)
    lines = _conversation(messages)
    if app.settings.privacy.restore_output:  # the model saw placeholders; its user sees the values
        texts, restored = restore_text(store, rec.id, [t for _, t in lines])
        lines = [(kind, t) for (kind, _), t in zip(lines, texts, strict=True)]
        if not restored:
            out.print("[yellow](identifiers are shown masked: the privacy vault could not be read)[/]")
    for kind, text in lines:
        if kind == "user-prompt":
            out.print(f"\n[bold cyan]user:[/] {escape(text)}")
        elif kind == "text":
            out.print("\n[bold green]agent:[/]")
            print_markdown(text)
        else:
            out.print(text, style="dim", markup=False, highlight=False)
    for e in evs:
        line = f"{e.seq:4} {e.type} {e.model_dump_json(exclude=_EVENT_IDS)[:160]}"
        out.print(line, style="dim", markup=False, highlight=False)


def _conversation(messages: list[Any]) -> list[tuple[str, str]]:
    """The parts of a stored conversation worth showing, as ``(part kind, text)``."""
    lines: list[tuple[str, str]] = []
    for m in messages:
        for part in m.parts:
            kind = part.part_kind
            if kind in ("user-prompt", "text"):
                lines.append((kind, str(part.content)))
            elif kind == "tool-call":
                lines.append((kind, f"→ {part.tool_name}({part.args_as_json_str()})"))
            elif kind == "tool-return":
                lines.append((kind, f"← {part.tool_name}: {str(part.content)[:200]}"))
    return lines


@sessions_app.command("output")
def sessions_output(
    ctx: typer.Context,
    session_id: Annotated[str, typer.Argument(help="session id or a unique prefix")],
    call_id: Annotated[str | None, typer.Argument(help="tool call id; omit to list what was kept")] = None,
    json_out: JsonOpt = False,
) -> None:
    """The full output of a tool call whose result the model saw summarized or capped.

    Secrets in it were scrubbed before it was stored. Without CALL_ID, lists the calls that have one.
    """
    store = state(ctx).store()
    rec = store.get_session(session_id)
    if call_id is None:
        kept = store.kept_outputs(rec.id)
        if json_out:
            _emit_json([{"tool_call_id": c, "tool": t, "chars": n} for c, t, n in kept])
            return
        if not kept:
            out.print(f"session {rec.id} kept no full tool output (every result reached the model whole)")
            return
        table = folding_table("tool call", "tool", "characters")
        for c, t, n in kept:
            table.add_row(Text(c), t, str(n))
        out.print(table)
        return
    text = store.tool_output(rec.id, call_id)
    if text is None:  # a result that reached the model whole (a summary of it may have since)
        text = stored_result(store, rec.id, call_id)
    if text is None:
        raise UserError(
            f"session {rec.id} kept no full output for tool call {call_id!r}",
            hint=f"list the calls that have one: devops-agent sessions output {rec.id}",
        )
    if json_out:
        _emit_json({"session_id": rec.id, "tool_call_id": call_id, "output": text})
        return
    shown = visible(readable_output(text))
    sys.stdout.write(shown if shown.endswith("\n") else shown + "\n")


def readable_output(text: str) -> str:
    """A kept tool output as a person reads it: a structured result (stored as JSON, e.g. a
    command's ``{"stdout": "…\\n…"}``) as ``key: value`` lines, multi-line text fields as the text
    itself; anything that is not JSON as it is (``--json`` gives the stored form)."""
    if not text.lstrip().startswith(("{", "[", '"')):
        return text
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if isinstance(data, str):
        return data
    if isinstance(data, list):
        return "\n".join(_field_text(item) for item in data)
    if not isinstance(data, dict):
        return text
    lines: list[str] = []
    for key, value in data.items():
        shown = _field_text(value)
        if "\n" in shown or isinstance(value, dict | list) and value:
            lines += [f"{key}:", shown.rstrip("\n")]
        else:
            lines.append(f"{key}: {shown}".rstrip())
    return "\n".join(lines)


def _field_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return json.dumps(value, ensure_ascii=False, indent=1, default=str)


@sessions_app.command("delete")
def sessions_delete(
    ctx: typer.Context, session_id: Annotated[str, typer.Argument(help="session id or prefix")]
) -> None:
    """Delete a session with its messages, events and tool calls."""
    store = state(ctx).store()
    rec = store.get_session(session_id)
    store.delete_session(rec.id)
    out.print(f"deleted session {rec.id}")


@tools_app.command("list")
def tools_list(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Every tool with its category, whether it is read-only, and its risk."""
    registry = default_registry()
    catalog = build_catalog(state(ctx).settings, registry)
    rows = [
        {
            "tool": e.name,
            "toolset": e.toolset,
            "category": e.spec.category,
            "read_only": e.spec.read_only,
            "risk": e.spec.risk,
            "description": e.description,
        }
        for e in catalog.entries.values()
    ]
    if json_out:
        _emit_json({"tools": rows, "unavailable": [u.__dict__ for u in registry.unavailable]})
        return
    table = folding_table("tool", "category", "read-only", "risk", Column("description", ratio=1))
    for e in catalog.entries.values():
        read_only = "yes" if e.spec.read_only else "[yellow]no[/]"
        table.add_row(e.name, e.spec.category, read_only, e.spec.risk, Text(_first_sentence(e.description)))
    out.print(table)
    for u in registry.unavailable:
        out.print(f"[yellow]unavailable:[/] {escape(u.name)}: {escape(u.reason)}")


def _first_sentence(text: str) -> str:
    """A tool's description up to its first full stop (the whole of it with --json): what the
    tool does, whole, rather than the first 70 characters of how."""
    first, dot, _ = " ".join(text.split()).partition(". ")
    return first + dot.strip()


@tools_app.command("status")
def tools_status(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Circuit breaker state per tool, and recent call counts from the store."""
    store = state(ctx).store()
    breakers = store.load_breakers()
    calls = store.list_tool_calls(limit=1000)
    stats: dict[str, dict[str, int]] = {}
    for c in calls:
        s = stats.setdefault(c.tool, {"calls": 0, "errors": 0})
        s["calls"] += 1
        s["errors"] += c.status == "error"
    by_tool = {b.tool: b for b in breakers}
    rows: list[dict[str, Any]] = []
    for name in sorted(set(by_tool) | set(stats)):
        b = by_tool.get(name)
        retry: float | None = None
        if b is not None and b.state == "open" and b.retry_after_s is not None:
            # retry_after_s was measured when the state was saved; count down from then.
            retry = max(0.0, b.retry_after_s - (datetime.now(UTC) - b.updated_at).total_seconds())
        counts = stats.get(name, {"calls": 0, "errors": 0})
        rows.append(
            {
                "tool": name,
                "state": b.state if b else "closed",
                "failures": b.failures if b else 0,
                "retry_after_s": None if retry is None else round(retry, 1),
                "calls": counts["calls"],
                "errors": counts["errors"],
            }
        )
    if json_out:
        _emit_json(rows)
        return
    if not rows:
        out.print("No tool has been called yet.")
        return
    table = folding_table("tool", "breaker", "failures", "retry in", "recent calls", "errors")
    colour = {"closed": "green", "open": "red", "half_open": "yellow"}
    for r in rows:
        retry_text = "-" if r["retry_after_s"] is None else f"{r['retry_after_s']:.0f}s"
        state_text = f"[{colour[str(r['state'])]}]{r['state']}[/]"
        table.add_row(
            str(r["tool"]), state_text, str(r["failures"]), retry_text, str(r["calls"]), str(r["errors"])
        )
    out.print(table)


_TRIAGE_SELECTED_BY = "a Jira key in the question (Jira configured), or `devops-agent triage KEY`"


@runbooks_app.command("list")
def runbooks_list(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Installed runbooks and the words that select them, and the triage workflow."""
    from devops_agent.runbooks import triage as triage_flow

    books = available_runbooks(state(ctx).settings)
    triage = not any(b.name == triage_flow.NAME for b in books)  # a runbook of that name shadows it
    steps = len(triage_flow.plan_steps())
    if json_out:
        rows = [
            {"name": b.name, "title": b.title, "keywords": b.keywords, "steps": len(b.steps)} for b in books
        ]
        if triage:
            rows.append(
                {
                    "name": triage_flow.NAME,
                    "title": triage_flow.TITLE,
                    "keywords": [],
                    "steps": steps,
                    "workflow": True,
                    "selected_by": _TRIAGE_SELECTED_BY,
                }
            )
        _emit_json(rows)
        return
    # Keywords wrap between words (a word wider than the column folds); none is ever cut off.
    table = folding_table("name", "title", "steps", Column("keywords", overflow="fold"))
    for b in books:
        table.add_row(Text(b.name), Text(b.title), str(len(b.steps)), Text(", ".join(b.keywords)))
    if triage:
        table.add_row(triage_flow.NAME, triage_flow.TITLE, str(steps), _TRIAGE_SELECTED_BY)
    out.print(table)


@runbooks_app.command("show")
def runbooks_show(ctx: typer.Context, name: str, json_out: JsonOpt = False) -> None:
    """A runbook's steps, analyzers and advice (``triage``: the workflow's steps)."""
    from devops_agent.runbooks import triage as triage_flow

    books = available_runbooks(state(ctx).settings)
    if name == triage_flow.NAME and not any(b.name == name for b in books):
        _show_triage(json_out)
        return
    try:
        book = get_runbook(name, books)
    except NotFoundError as exc:
        known = ", ".join([*(b.name for b in books), triage_flow.NAME])
        raise NotFoundError(f"unknown runbook {name!r} (known: {known})", hint=exc.hint) from None
    if json_out:
        _emit_json(book.model_dump(mode="json"))
        return
    # A runbook's text is printed literally (your own runbooks may say "[/var/log]").
    out.print(f"[bold]{escape(book.name)}[/] — {escape(book.title)}\n{escape(book.description)}\n")
    out.print("[bold]steps[/]")
    for s in book.steps:
        when = f" (when {s.when})" if s.when else ""
        out.print(f"  {s.id}: {s.tool}({json.dumps(s.args)}){when}", markup=False, highlight=False)
    out.print("[bold]analyzers[/]: " + escape(", ".join(a.use for a in book.analyzers)))
    if book.next_steps:
        out.print("[bold]next steps[/]")
        for n in book.next_steps:
            out.print(f"  - {n}", markup=False, highlight=False)


def _show_triage(json_out: bool) -> None:
    from devops_agent.runbooks import triage as triage_flow

    steps = triage_flow.plan_steps()
    if json_out:
        _emit_json(
            {
                "name": triage_flow.NAME,
                "title": triage_flow.TITLE,
                "description": triage_flow.DESCRIPTION,
                "workflow": True,
                "selected_by": _TRIAGE_SELECTED_BY,
                "steps": steps,
                "sections": list(triage_flow.SECTIONS),
            }
        )
        return
    out.print(f"[bold]{triage_flow.NAME}[/] — {triage_flow.TITLE}\n{escape(triage_flow.DESCRIPTION)}\n")
    out.print("[bold]steps[/]")
    for step in steps:
        out.print(f"  {step}", markup=False, highlight=False)
    out.print("[bold]report sections[/]: " + ", ".join(triage_flow.SECTIONS))


@config_app.command("show")
def config_show(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Every setting, its value (secrets masked) and where it came from."""
    loaded = state(ctx).loaded
    rows = describe(loaded)
    if json_out:
        _emit_json(
            {
                "files": [str(f) for f in loaded.files],
                "settings": [{"key": k, "value": v, "source": s} for k, v, s in rows],
            }
        )
        return
    out.print("config files: " + (", ".join(str(f) for f in loaded.files) or "(none)"), markup=False)
    # Keys and sources fold rather than end in "…": they are what a user copies into a file or shell.
    table = folding_table(
        Column("setting", no_wrap=True, overflow="fold"),
        Column("value", overflow="fold"),
        Column("source", overflow="fold"),
    )
    for key, value, source in rows:
        table.add_row(key, Text(value), Text(source))
    out.print(table)
