"""The ``devops-agent`` command line (Typer + Rich).

Every error ends the same way, printed by :class:`AgentGroup` (so the console script and
in-process test runners behave alike): one ``error:`` line with a hint on stderr, a JSON error
object on stdout with ``--json``, and a non-zero exit — 2 for a usage error or anything the caller
must change (:class:`~devops_agent.errors.UserError`), 1 otherwise. An unexpected exception (a
bug) is one line naming it; ``--debug`` adds its traceback. No traceback ever shows local
variables: they can hold secrets and user data.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.core
import typer.main
from rich.markup import escape
from typer import Abort

# Typer's own copy of click; its exception types are what a usage error raises.
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError

from devops_agent import __version__
from devops_agent.cli import approve, plan_cmd, run
from devops_agent.cli.context import AppState, err, out, state
from devops_agent.cli.signals import install_sigterm_handler, terminated
from devops_agent.errors import ConfigError, DevOpsAgentError


@dataclass(frozen=True)
class LazyCommand:
    """A command whose module is imported only when it runs (or its own --help is asked for):
    ``devops-agent --help`` must not load the knowledge index, the log analysis, the Prometheus
    client … to list one line about each. ``attr`` is a sub-Typer, or a command function."""

    module: str
    attr: str
    help: str


LAZY_COMMANDS = {
    "index": LazyCommand(
        "devops_agent.cli.knowledge_cmd",
        "index",
        "Index directories or Confluence spaces (code, runbooks, postmortems) for retrieval.",
    ),
    "search": LazyCommand(
        "devops_agent.cli.knowledge_cmd", "search", "Search an index; hits carry path:line citations."
    ),
    "logs": LazyCommand("devops_agent.cli.logs_cmd", "logs_app", "Analyze log files without a model."),
    "metrics": LazyCommand(
        "devops_agent.cli.metrics_cmd", "metrics_app", "Find anomalies in metrics without a model."
    ),
    "privacy": LazyCommand(
        "devops_agent.cli.privacy_cmd",
        "privacy_app",
        "The privacy guard: preview masking, and the vault (placeholder → original, per session).",
    ),
    "memory": LazyCommand(
        "devops_agent.cli.memory_cmd",
        "memory_app",
        "Findings memory: remember what an investigation found; recall it in later ones.",
    ),
    "worker": LazyCommand(
        "devops_agent.cli.worker_cmd",
        "worker",
        'Take investigations from the durable queue (execution = "queue", PostgreSQL).',
    ),
    "queue": LazyCommand(
        "devops_agent.cli.worker_cmd",
        "queue_app",
        "The run queue of durable workers: list, cancel, retry, alert.",
    ),
    "sessions": LazyCommand(
        "devops_agent.cli.admin", "sessions_app", "List, show and delete saved sessions."
    ),
    "tools": LazyCommand(
        "devops_agent.cli.admin", "tools_app", "Tools the agent can call and their circuit breakers."
    ),
    "runbooks": LazyCommand(
        "devops_agent.cli.admin", "runbooks_app", "Offline runbooks (used when no model is configured)."
    ),
    "config": LazyCommand("devops_agent.cli.admin", "config_app", "Effective configuration."),
    "serve": LazyCommand(
        "devops_agent.cli.serve_cmd",
        "serve",
        "Serve the API: REST under /v1 (docs at /docs), the WebSocket /v1/ws, SSE, /metrics.",
    ),
    "tui": LazyCommand(
        "devops_agent.cli.tui_cmd",
        "tui",
        "Open the terminal UI: sessions, a streaming conversation with tool-call panels, approvals "
        "(CONFIRM for destructive calls), plan and report views.",
    ),
    "users": LazyCommand(
        "devops_agent.cli.users_cmd",
        "users_app",
        "Users of the service (devops-agent serve) and their API tokens.",
    ),
    "eval": LazyCommand(
        "devops_agent.cli.eval_cmd",
        "eval_app",
        "Evaluate the agent on recorded incident cases (HolmesGPT's format and ours).",
    ),
    "specialists": LazyCommand(
        "devops_agent.cli.specialists_cmd",
        "specialists",
        "The specialist agents a model run can delegate to, with the tools each gets here.",
    ),
    "mcp": LazyCommand(
        "devops_agent.cli.mcp_cmd",
        "mcp_app",
        "MCP: the servers whose tools the agent uses, and DevOps Agent as an MCP server.",
    ),
}
"""Commands loaded on first use, listed in --help in this order (before ``doctor``). ``help`` is
what the root --help shows; a test keeps it equal to the command's own."""


def load_lazy(name: str) -> Any:
    """The click command of a :data:`LAZY_COMMANDS` entry, its module imported now."""
    lazy = LAZY_COMMANDS[name]
    target = getattr(importlib.import_module(lazy.module), lazy.attr)
    command: Any
    if isinstance(target, typer.Typer):
        command = typer.main.get_group(target)  # a group even with one command (config show)
    else:  # a command function: a one-command Typer makes the same click command app.command would
        single = typer.Typer(add_completion=False)
        # Its --help: the line the root listing shows, then the rest of its docstring (options, …).
        rest = (inspect.getdoc(target) or "").split("\n\n", 1)[1:]
        single.command(name=name, help="\n\n".join([lazy.help, *rest]))(target)
        command = typer.main.get_command(single)
    command.name = name
    return _reflow_tree(command)


class AgentGroup(typer.core.TyperGroup):
    """The root command group: :data:`LAZY_COMMANDS` are imported on first use, and :meth:`main`
    turns every error into one line (and JSON)."""

    _listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        eager = [n for n in super().list_commands(ctx) if n not in LAZY_COMMANDS]
        last = [n for n in eager if n == "doctor"]
        return [*[n for n in eager if n != "doctor"], *LAZY_COMMANDS, *last]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in self.commands or cmd_name not in LAZY_COMMANDS:
            return super().get_command(ctx, cmd_name)
        if self._listing:  # the root --help needs a name and a line, not the module
            return typer.core.TyperCommand(name=cmd_name, help=LAZY_COMMANDS[cmd_name].help)
        self.commands[cmd_name] = load_lazy(cmd_name)
        return self.commands[cmd_name]

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        out.printed = False  # per invocation (a test runner invokes many in one process)
        try:
            rv = super().main(
                args=argv, prog_name=prog_name, complete_var=complete_var, standalone_mode=False, **extra
            )
        except BaseException as exc:  # every way out is decided here, SystemExit included
            code = _handle(exc, argv)
        else:
            code = rv if isinstance(rv, int) else 0
        if code == 130 and terminated():  # Typer turns the interrupt into exit 130 itself
            code = 143
        if not standalone_mode:
            return code
        sys.exit(code)


app = typer.Typer(
    name="devops-agent",
    help="An operations agent that investigates with tools: offline runbooks, or an LLM when configured.",
    no_args_is_help=True,
    cls=AgentGroup,
    pretty_exceptions_enable=False,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        out.print(f"devops-agent {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            help="config file, read in place of ./devops-agent.toml "
            "(on top of ~/.config/devops-agent/devops-agent.toml)",
            envvar="DEVOPS_AGENT_CONFIG",
        ),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="provider:model, e.g. openai:gpt-4o or scripted")
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="show tracebacks and debug logs")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="print the version")
    ] = False,
) -> None:
    overrides = {"model": {"name": model}} if model else {}
    ctx.obj = AppState(config_file=config, debug=debug, overrides=overrides)
    ctx.call_on_close(ctx.obj.close)


app.command(help="Investigate a problem and print a report.")(run.investigate)
app.command(help="Ask one question; the answer streams when a model is configured.")(run.ask)
app.command(help="Triage a Jira incident ticket and its Jenkins builds.")(run.triage)
app.command(help="Interactive chat with /mode, /sessions, /new and /exit.")(run.chat)
app.command(help="Answer the approvals a paused session waits for.")(approve.approve)
app.command(help="Show or decide on the plan a paused session waits for (approve, edit, reject).")(
    plan_cmd.plan
)
app.command(help="The audit log: what ran or was refused, in which mode, on whose decision.")(approve.audit)


@app.command()
def doctor(
    ctx: typer.Context,
    json_out: Annotated[bool, typer.Option("--json", help="print the checks as a JSON list")] = False,
) -> None:
    """Check the config, the store, the model endpoint and the toolsets.

    An invalid config is reported as a failed check (in the --json list too); the other checks
    need the settings, so they are skipped until it is fixed."""
    from devops_agent.agent.doctor import Check, run_checks

    try:
        loaded = state(ctx).loaded
    except ConfigError as exc:
        checks = [Check("config", "fail", exc.message, exc.hint)]
    else:
        checks = run_checks(loaded)
    if json_out:
        import json

        out.print_json(json.dumps([c.to_dict() for c in checks]))
    else:
        marks = {"ok": "[green]ok[/]  ", "warn": "[yellow]warn[/]", "fail": "[red]FAIL[/]"}
        for c in checks:
            hint = f"  [dim]({escape(c.hint)})[/]" if c.hint and c.level != "ok" else ""
            out.print(f"{marks[c.level]} {c.name}: {escape(c.detail)}{hint}", highlight=False)
    if any(c.level == "fail" for c in checks):
        raise typer.Exit(1)


_KEEP_BREAK = re.compile(r"^(?:\s|[-*] |\d+[.)] |\x08)")  # indented, a list item, or click's \\b


def reflow(help_text: str) -> str:
    """``help_text`` with the line breaks inside its paragraphs joined, so that the terminal wraps
    the text (Typer keeps a docstring's source line breaks after the first paragraph); indented
    lines and list items keep their breaks."""
    paragraphs = inspect.cleandoc(help_text).split("\n\n")
    out = []
    for para in paragraphs:
        lines = para.split("\n")
        joined = [lines[0]]
        for line in lines[1:]:
            if _KEEP_BREAK.match(line) or _KEEP_BREAK.match(joined[-1]) and joined[-1][:1].isspace():
                joined.append(line)
            else:
                joined[-1] = f"{joined[-1]} {line.strip()}"
        out.append("\n".join(joined))
    return "\n\n".join(out)


def _reflow_tree(command: Any) -> Any:  # a click command (Typer's own copy of click)
    if command.help:
        command.help = reflow(command.help)
    for sub in getattr(command, "commands", {}).values():
        _reflow_tree(sub)
    return command


def _handle(exc: BaseException, argv: list[str]) -> int:
    """Print ``exc`` the way the CLI reports errors; return the exit code."""
    if isinstance(exc, SystemExit):
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    if isinstance(exc, NoArgsIsHelpError):  # the help was printed when it was raised
        return exc.exit_code
    debug = "--debug" in argv
    stopped = 143 if terminated() else 130  # 128 + the signal: SIGTERM, or SIGINT (Ctrl-C)
    if isinstance(exc, run.RunInterrupted):
        err.print(exc.one_line(), markup=False, highlight=False)
        return stopped
    if isinstance(exc, KeyboardInterrupt | Abort):
        err.print("terminated" if terminated() else "interrupted", markup=False)
        return stopped
    if isinstance(exc, UsageError):
        command = exc.ctx.command_path if exc.ctx is not None else "devops-agent"
        return _report_error(
            "UsageError", exc.format_message(), f"see '{command} --help'", exc.exit_code, argv
        )
    if isinstance(exc, ClickException):  # a file option typer could not open, …
        return _report_error(type(exc).__name__, exc.format_message(), None, exc.exit_code, argv)
    if debug:
        # The traceback without local variables (they can hold secrets and user data).
        traceback.print_exception(exc, file=sys.stderr)
    if isinstance(exc, DevOpsAgentError):
        return _report_error(type(exc).__name__, exc.message, exc.hint, exc.exit_code, argv, exc.fields)
    if not isinstance(exc, Exception):
        raise exc  # GeneratorExit and other interpreter signals are not errors to report
    hint = "this is a bug; rerun with --debug for the traceback" if not debug else "this is a bug"
    return _report_error(type(exc).__name__, f"unexpected {type(exc).__name__}: {exc}", hint, 1, argv)


def _report_error(
    kind: str,
    message: str,
    hint: str | None,
    code: int,
    argv: list[str],
    fields: dict[str, Any] | None = None,
) -> int:
    """One line on stderr; with ``--json`` also ``{"error", "message", "hint", …}`` on stdout."""
    line = f"{message} ({hint})" if hint else message
    err.print(f"[red]error:[/] {escape(line)}", highlight=False)  # a path may hold [x]
    if "--json" in argv and not out.printed:  # stdout holds one JSON document, the result's or this
        payload = {"error": kind, "message": message, "hint": hint, **(fields or {})}
        out.print_json(json.dumps(payload, default=str))
    return code


def main() -> None:
    """Console-script entry point."""
    if not {"--help", "--version"} & set(sys.argv):  # structlog and OpenTelemetry take 0.1 s
        from devops_agent.telemetry import configure_logging

        configure_logging("debug" if "--debug" in sys.argv else "warning")
    install_sigterm_handler()
    try:
        _reflow_tree(typer.main.get_command(app)).main()
    except SystemExit as exc:
        if exc.code in (130, 143):
            _exit_now(exc.code)
        raise


def _exit_now(code: int) -> None:
    """Exit at once after Ctrl-C. The run is already stored as cancelled and the command's
    context closed (the store too); a tool call still blocked in a worker thread (a request
    waiting for its timeout) must not hold the terminal until it ends, nor turn a second Ctrl-C
    into a traceback from the interpreter's shutdown."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
