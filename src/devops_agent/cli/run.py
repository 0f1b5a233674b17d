"""The commands that run investigations: ``investigate``, ``ask`` and ``chat``."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from devops_agent.agent.approvals import PENDING_KEY, POLICY_KEY, ApprovalDecision
from devops_agent.cli.approve import OnApproval, answers_for, interactive
from devops_agent.cli.context import AppState, err, is_stream, out, state, with_roots
from devops_agent.cli.plan_cmd import CouncilOpt, PlanOpt, chat_plan, plan_hint, plan_inputs, prompt_plan
from devops_agent.cli.render import ProgressRenderer, print_final
from devops_agent.cli.signals import terminated
from devops_agent.errors import ConfigError, PathAccessError, RuntimeFailure, UserError

ModeOpt = Annotated[
    str | None, typer.Option("--mode", help="ask (read-only tools only) or agent; default from config")
]
SessionOpt = Annotated[
    str | None, typer.Option("--session", "-s", help="continue this session (id or prefix)")
]
if TYPE_CHECKING:
    from devops_agent.agent.reasoning.plan import PlanDecision
    from devops_agent.agent.session import SessionService
    from devops_agent.config import Settings
    from devops_agent.events import RunEvent, RunFinished
    from devops_agent.policies.modes import Mode

ApprovalsOpt = Annotated[
    str,
    typer.Option(
        "--approvals",
        help="when a call needs approval: ask (prompt in a terminal, deny otherwise), deny, or pause "
        "(answer later with `devops-agent approve`)",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="print one JSON object instead of the rendered report")]


def _check_mode(mode: str | None) -> Mode | None:
    if mode is None:
        return None
    from devops_agent.policies.modes import MODES

    if mode not in MODES:
        raise typer.BadParameter(
            f"{mode!r} is not a mode; use one of: {', '.join(MODES)}", param_hint="--mode"
        )
    return mode


class RunInterrupted(Exception):
    """Ctrl-C stopped a run; the session service has stored it with status ``cancelled``."""

    def __init__(self, session_id: str | None) -> None:
        super().__init__("interrupted")
        self.session_id = session_id

    def one_line(self) -> str:
        """What the user is told: which session keeps what the run did, and how to see it."""
        if self.session_id is None:
            return "interrupted"
        short = self.session_id[:12]
        return (
            f"interrupted: session {short} is kept with status cancelled "
            f"(`devops-agent sessions show {short}` shows what it did)"
        )


def _drive(events: AsyncIterator[RunEvent], renderer: ProgressRenderer) -> RunFinished:
    """Consume one run's events, rendering them; return its final event.

    Ctrl-C cancels the run (asyncio.run cancels it, and the service stores it as cancelled) and
    raises :class:`RunInterrupted` naming the session."""
    import asyncio

    from devops_agent.events import RunFinished

    final: RunFinished | None = None

    async def go() -> None:
        nonlocal final
        async for event in events:
            renderer.handle(event)
            if isinstance(event, RunFinished):
                final = event

    try:
        with renderer:
            asyncio.run(go())
    except KeyboardInterrupt:
        raise RunInterrupted(renderer.session_id) from None
    assert final is not None
    return final


def _run_until_answered(
    app: AppState,
    service: SessionService,
    first: Callable[[], AsyncIterator[RunEvent]],
    *,
    json_out: bool,
    stream_tokens: bool,
    on_approval: OnApproval,
) -> tuple[RunFinished, ProgressRenderer]:
    """Run, and while the run pauses for approvals or a plan, get answers and resume it.

    A plan is decided only by a person at a terminal (``--approvals ask``); otherwise the run
    stays paused and says how to answer it (``devops-agent plan``).

    With the privacy guard on, the model's tokens hold placeholders (only the final answer is
    restored, or carries the note that it could not be), so they are not streamed to stdout:
    progress shows on stderr and the restored answer is printed at the end.
    """
    stream_tokens = stream_tokens and not json_out and not service.privacy
    renderer = ProgressRenderer(stream_tokens=stream_tokens, quiet=json_out)
    final = _drive(first(), renderer)
    from devops_agent.agent.reasoning.plan import PENDING_PLAN_KEY

    while final.status == "paused":
        record = app.store().get_session(final.session_id)
        pending_plan = record.context_state.get(PENDING_PLAN_KEY)
        if pending_plan:
            if json_out or on_approval != "ask" or not interactive():
                err.print(plan_hint(final.session_id))
                break
            import getpass

            decision = prompt_plan(pending_plan, getpass.getuser())
            renderer = ProgressRenderer(stream_tokens=stream_tokens, quiet=json_out)
            final = _drive(service.stream(None, session_id=final.session_id, plan=decision), renderer)
            continue
        if record.context_state.get(POLICY_KEY) != on_approval:
            # `devops-agent approve`, in another process, resumes the run with the same policy
            state = dict(record.context_state, **{POLICY_KEY: on_approval})
            record = app.store().update_session(record.id, context_state=state)
        pending = record.context_state.get(PENDING_KEY, {})
        answers = answers_for(pending, "deny" if json_out and on_approval == "ask" else on_approval)
        if answers is None:
            err.print(f"paused; answer with `devops-agent approve {final.session_id[:12]}`")
            break
        renderer = ProgressRenderer(stream_tokens=stream_tokens, quiet=json_out)
        final = _drive(service.stream(None, session_id=final.session_id, approvals=answers), renderer)
    return final, renderer


def _report(final: RunFinished, renderer: ProgressRenderer, json_out: bool) -> None:
    if json_out:
        payload: dict[str, Any] = {
            "session_id": final.session_id,
            "run_id": final.run_id,
            "status": final.status,
            "output": final.output,
            "report": final.report,
            "usage": final.usage,
        }
        if renderer.errors:  # why a run failed, for the script that reads this
            last = renderer.errors[-1]
            payload["error"] = {"type": last.error_type, "message": last.message, "hint": last.hint}
        out.print_json(json.dumps(payload, default=str))
    else:
        print_final(final, renderer)


def execute(
    app: AppState,
    prompt: str,
    *,
    session_id: str | None,
    mode: Mode | None,
    inputs: dict[str, Any],
    json_out: bool,
    stream_tokens: bool,
    extra_roots: list[Path] | None = None,
    on_approval: OnApproval = "ask",
) -> RunFinished:
    """Run one prompt through the session service, rendering progress; return the final event."""

    service = _service(with_roots(app.settings, extra_roots or []), app)
    if service.model is None and not json_out:
        err.print("[dim]No model configured: running the offline runbooks (set model.name to use an LLM).[/]")
        if inputs.get("plan") or inputs.get("council"):
            err.print("[yellow]--plan and --council need a model: the runbooks' own plan runs instead.[/]")
    final, renderer = _run_until_answered(
        app,
        service,
        lambda: service.stream(prompt, session_id=session_id, mode=mode, inputs=inputs),
        json_out=json_out,
        stream_tokens=stream_tokens,
        on_approval=on_approval,
    )
    _report(final, renderer, json_out)
    return final


def _service(settings: Settings, app: AppState) -> Any:
    """The session service: runs execute here, or are queued for workers (execution = "queue")."""
    from devops_agent.agent.session import SessionService

    if settings.workers.execution == "queue":
        from devops_agent.workers.submit import queue_service

        return queue_service(settings, app.store())
    return SessionService(settings, app.store(), mcp=app.mcp_pool())


def execute_resume(
    app: AppState,
    session_id: str,
    answers: dict[str, ApprovalDecision],
    *,
    json_out: bool,
    settings: Settings | None = None,
) -> RunFinished:
    """Resume a paused session with ``answers`` (used by ``devops-agent approve``); ``settings``
    replace the app's (the session's own model)."""
    return _continue(app, session_id, json_out, settings, approvals=answers)


def execute_plan_decision(
    app: AppState,
    session_id: str,
    decision: PlanDecision,
    *,
    json_out: bool,
    settings: Settings | None = None,
) -> RunFinished:
    """Continue a session whose plan waits with ``decision`` (``devops-agent plan``)."""
    return _continue(app, session_id, json_out, settings, plan=decision)


def _continue(
    app: AppState, session_id: str, json_out: bool, settings: Settings | None, **answer: Any
) -> RunFinished:
    """Continue a paused session with ``answer`` (approvals or a plan decision), here or through
    the queue as the settings say; calls that need approval later are answered as the run that
    paused said (``--approvals``)."""
    service = _service(settings or app.settings, app)
    policy = app.store().get_session(session_id).context_state.get(POLICY_KEY, "ask")
    final, renderer = _run_until_answered(
        app,
        service,
        lambda: service.stream(None, session_id=session_id, **answer),
        json_out=json_out,
        stream_tokens=True,
        on_approval=policy if policy in ("ask", "deny", "pause") else "ask",
    )
    _report(final, renderer, json_out)
    return final


def _check_approvals(value: str) -> OnApproval:
    if value not in ("ask", "deny", "pause"):
        raise typer.BadParameter(f"{value!r}: use ask, deny or pause", param_hint="--approvals")
    return value  # type: ignore[return-value]


def _from_alert(
    source: Path, question: str | None, since: str | None, query: str | None, index: int | None
) -> tuple[str, dict[str, Any]]:
    """The question and the runbook inputs for one alert of a webhook payload (a file, or ``-``
    for stdin): the alert numbered ``index`` (from 1), else the first firing one, else the first.

    The inputs are :meth:`AlertRequest.investigation_inputs`: the series without the alert's
    threshold, history before ``startsAt`` for the detector (``since`` overrides), the end of a
    resolved alert (``until``). The question names every alert the payload held.
    """
    from devops_agent.analysis.alert_intake import describe_payload, investigation_order, parse_webhook

    where = "stdin" if str(source) == "-" else str(source)
    try:
        payload = json.loads(sys.stdin.read() if where == "stdin" else source.read_text())
    except (OSError, ValueError) as exc:
        raise UserError(
            f"cannot read the alert payload from {where}: {exc}", hint="pass the webhook JSON body"
        ) from exc
    alerts = parse_webhook(payload)
    if not alerts:
        raise UserError(f"the alert payload from {where} holds no alerts")
    if index is not None and not 1 <= index <= len(alerts):
        raise UserError(
            f"--alert-index {index}: the payload holds {len(alerts)} alert(s)",
            hint=f"number them from 1 to {len(alerts)}, in the payload's order",
        )
    chosen = alerts[index - 1] if index is not None else investigation_order(alerts)[0]
    if chosen.future_start is not None:
        err.print(f"warning: {chosen.alertname}: {chosen.future_start}", markup=False, highlight=False)
    number = index - 1 if index is not None else alerts.index(chosen)
    inputs: dict[str, Any] = chosen.investigation_inputs(query)
    if since:
        inputs["since"] = since
    listing = describe_payload(alerts, number)
    if listing:
        listing += " Investigate another one with --alert-index N."
    generated = inputs.pop("question")
    if not inputs.get("query"):
        err.print(
            f"[yellow]{escape(chosen.alertname)} carries no PromQL expression (no generatorURL): its metric "
            "cannot be analysed; give one with --query 'PROMQL'.[/]"
        )
    return " ".join(p for p in (question or generated, listing) if p), inputs


_SPOOL_SUFFIX = ((b"\x1f\x8b", ".log.gz"), (b"\xfd7zXZ\x00", ".log.xz"), (b"BZh", ".log.bz2"))


def _spool(src: IO[bytes], target: Path) -> Path:
    """Copy a stream to ``target``, named for what it holds (``.log.gz`` for a gzip stream, as
    ``cat app.log.gz | …`` gives), so the log tools read it as they would the file."""
    head = src.read(8)
    suffix = next((sfx for magic, sfx in _SPOOL_SUFFIX if head.startswith(magic)), ".log")
    target = target.with_name(target.name + suffix)
    with target.open("wb") as dst:
        dst.write(head)
        shutil.copyfileobj(src, dst)
    return target


def _log_paths(ctx: typer.Context, values: list[Path] | None) -> list[Path] | None:
    """``--logs`` checked and resolved; standard input (``-``) or a pipe or FIFO
    (``<(kubectl logs …)``) is read once into a temporary file, removed when the command ends,
    because the log tools read files by path."""
    if not values:
        return values
    paths: list[Path] = []
    spool: Path | None = None
    for value in values:
        stdin = str(value) == "-"
        if stdin or is_stream(value, "'--logs'"):
            if spool is None:
                spool = Path(tempfile.mkdtemp(prefix="devops-agent-logs-"))
                ctx.call_on_close(lambda where=spool: shutil.rmtree(where, ignore_errors=True))
            name = "stdin" if stdin else value.name.replace(":", "_") or "pipe"
            target = spool / f"{name}-{len(paths) + 1}"
            if stdin:
                paths.append(_spool(sys.stdin.buffer, target))
            else:
                with open(value, "rb") as src:
                    paths.append(_spool(src, target))
            continue
        if not os.access(value, os.R_OK):
            raise PathAccessError(f"cannot read {value}: permission denied", hint="check its permissions")
        paths.append(value.resolve())
    return paths


def _repo_path(value: Path | None) -> Path | None:
    """``--repo`` must be a git checkout: a plain directory would only give an empty change list."""
    from devops_agent.tools.git import is_work_tree

    if value is not None and not is_work_tree(value):
        raise UserError(
            f"--repo {value}: not a git repository (nor inside one)",
            hint="give the directory of a git checkout, where `git status` works, or leave --repo out",
        )
    return value


def _k8s_inputs(**given: str | None) -> dict[str, str]:
    """The Kubernetes options that were given, checked: names must be Kubernetes names, and a
    selector must not be a path (``-l`` meant ``--logs`` before it meant ``--selector``, as in kubectl)."""
    from devops_agent.runbooks.question_inputs import looks_like_k8s_name

    inputs: dict[str, str] = {}
    for key, value in given.items():
        if value is None:
            continue
        value = value.strip()
        if key == "selector":
            if not value or value.startswith(("/", "./", "~")) or os.path.exists(value):
                raise typer.BadParameter(
                    f"{value!r} is not a label selector (e.g. app=api,tier!=cache); "
                    "-l is --selector, as in kubectl: give log files with --logs",
                    param_hint="'--selector' / '-l'",
                )
        elif not looks_like_k8s_name(value):
            raise typer.BadParameter(
                f"{value!r} is not a Kubernetes name (lower-case letters, digits, '-' and '.')",
                param_hint=f"--{key}",
            )
        inputs[key] = value
    return inputs


def investigate(
    ctx: typer.Context,
    question: Annotated[
        str | None, typer.Argument(help="what to investigate, in plain words (optional with --alert)")
    ] = None,
    logs: Annotated[
        list[Path] | None,
        typer.Option(
            "--logs",
            callback=_log_paths,
            help="log file or directory (repeatable); - reads standard input, and a pipe such as "
            "<(kubectl logs deploy/web) works too",
        ),
    ] = None,
    repo: Annotated[
        Path | None,
        typer.Option(
            "--repo",
            "-r",
            exists=True,
            file_okay=False,
            resolve_path=True,
            callback=_repo_path,
            help="git repository (a checkout) to check for recent changes",
        ),
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="start of the window: 2h, 30m, 1d, an ISO time")
    ] = None,
    query: Annotated[
        str | None,
        typer.Option("--query", "-q", help="PromQL of the metric that looks wrong (metric-alert runbook)"),
    ] = None,
    alert: Annotated[
        Path | None,
        typer.Option(
            "--alert",
            dir_okay=False,  # not exists=True: typer then refuses "-"; a missing file fails on reading
            help="an Alertmanager webhook payload (JSON) to investigate; - reads it from stdin",
        ),
    ] = None,
    alert_index: Annotated[
        int | None,
        typer.Option(
            "--alert-index",
            min=1,
            help="which alert of the --alert payload to investigate, from 1 (default: the first firing one)",
        ),
    ] = None,
    pod: Annotated[
        str | None, typer.Option("--pod", help="the failing Kubernetes pod (pod-crashloop runbook)")
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option(
            "--namespace", "-n", help="its namespace (default: kubernetes.namespace or the context's)"
        ),
    ] = None,
    selector: Annotated[
        str | None,
        typer.Option(
            "--selector", "-l", help="label selector of the failing pods, e.g. app=api (as kubectl -l)"
        ),
    ] = None,
    deployment: Annotated[
        str | None, typer.Option("--deployment", help="the deployment that owns the failing pods")
    ] = None,
    runbook: Annotated[
        list[str] | None, typer.Option("--runbook", help="run these runbooks instead of choosing")
    ] = None,
    session: SessionOpt = None,
    mode: ModeOpt = None,
    approvals: ApprovalsOpt = "ask",
    plan: PlanOpt = None,
    council: CouncilOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Investigate a problem and print a report (offline runbooks, or the model loop when configured).

    A crashing pod is investigated with --pod, --selector or --deployment (and --namespace); a pod
    or deployment named in the question (pod/web-0, api-7d9f8b6c5d-x2x9z) is used when no option
    gives one, and the report says so.
    """
    app = state(ctx)
    k8s = _k8s_inputs(pod=pod, namespace=namespace, selector=selector, deployment=deployment)
    alert_inputs: dict[str, Any] = {}
    if alert is not None and str(alert) == "-" and any(p.name.startswith("stdin-") for p in logs or []):
        raise typer.BadParameter(
            "standard input can hold the alert or the logs, not both", param_hint="'--alert' / '--logs'"
        )
    if alert is not None:
        question, alert_inputs = _from_alert(alert, question, since, query, alert_index)
        since, query = alert_inputs.get("since"), alert_inputs.get("query")
    elif alert_index is not None:
        raise typer.BadParameter(
            "--alert-index picks an alert of the --alert payload", param_hint="--alert-index"
        )
    if not question or not question.strip():
        raise typer.BadParameter("say what to investigate (or give --alert FILE)", param_hint="QUESTION")
    if since is not None:
        from devops_agent.analysis.timeparse import parse_since

        parse_since(since)  # fail early with a clear message
    inputs: dict[str, Any] = {**alert_inputs, "question": question, **plan_inputs(plan, council)}
    if query:
        inputs["query"] = query
    if logs:
        inputs["logs"] = [str(p) for p in logs]
    if repo:
        inputs["repo"] = str(repo)
    if since:
        inputs["since"] = since
    inputs.update(k8s)
    if runbook:
        from devops_agent.agent.plugins import available_runbooks
        from devops_agent.agent.runners.runbooks import named_runbooks

        # Before the session exists: a misspelt name is the caller's mistake, not a failed run.
        named_runbooks(runbook, available_runbooks(app.settings))
        inputs["runbooks"] = runbook
    roots = [*(logs or []), *([repo] if repo else [])]
    prompt = question
    if app.settings.model.name and (logs or repo or since or k8s):
        context = [
            f"logs: {', '.join(inputs['logs'])}" if logs else "",
            f"repository: {repo}" if repo else "",
            f"since: {since}" if since else "",
            *(f"kubernetes {key}: {value}" for key, value in k8s.items()),
        ]
        prompt = question + "\n\n" + "\n".join(c for c in context if c)
    final = execute(
        app,
        prompt,
        session_id=session,
        mode=_check_mode(mode),
        inputs=inputs,
        json_out=json_out,
        stream_tokens=False,
        extra_roots=roots,
        on_approval=_check_approvals(approvals),
    )
    if final.status not in ("completed", "paused"):
        raise typer.Exit(1)


def ask(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="the question")],
    session: SessionOpt = None,
    mode: ModeOpt = None,
    approvals: ApprovalsOpt = "ask",
    plan: PlanOpt = None,
    council: CouncilOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Ask one question and print the answer (streamed when a model is configured).

    With a model, the agent may first propose a plan for you to approve, change or reject
    (--plan), delegates to specialists, and checks its answer against the evidence before
    returning it; --council puts the question to several specialists at once.
    """
    if not question.strip():
        raise typer.BadParameter("ask something: the question is empty", param_hint="QUESTION")
    final = execute(
        state(ctx),
        question,
        session_id=session,
        mode=_check_mode(mode),
        inputs=plan_inputs(plan, council),
        json_out=json_out,
        stream_tokens=True,
        on_approval=_check_approvals(approvals),
    )
    if final.status not in ("completed", "paused"):
        raise typer.Exit(1)


def triage(
    ctx: typer.Context,
    ticket: Annotated[str, typer.Argument(help="Jira key (OPS-123), issue URL, or text containing one")],
    post: Annotated[
        bool,
        typer.Option(
            "--post", help="post the report as a comment on the ticket once you approve it at the prompt"
        ),
    ] = False,
    session: SessionOpt = None,
    approvals: ApprovalsOpt = "ask",
    json_out: JsonOpt = False,
) -> None:
    """Triage a Jira incident: linked Jenkins builds, error signatures, failing tests, owners.

    Text without a Jira key or issue URL, and Jira not configured, are errors (exit 2) before
    anything runs; a ticket that could not be read prints the report with the reason and exits 1:
    an empty "Failing builds" section is then not an all-clear.
    """
    from devops_agent.runbooks.triage import find_ticket_ref
    from devops_agent.tools.jira import configured

    app = state(ctx)
    on_approval = _check_approvals(approvals)
    key = find_ticket_ref(ticket, any_case=True)  # the argument is given as a ticket reference
    if key is None:
        raise UserError(
            f"no Jira issue key or URL in {ticket!r}",
            hint="give a key such as OPS-123 or the issue's /browse/ URL",
        )
    if (missing := configured(app.settings)) is not None:
        raise ConfigError(f"Jira is not configured, so {key} cannot be read", hint=missing)
    if post and (json_out or on_approval != "ask" or not interactive()):
        raise typer.BadParameter(
            "posting needs a person to approve it at a terminal prompt: run without --json and "
            "--approvals in a terminal, or post the report yourself",
            param_hint="--post",
        )
    final = execute(
        app,
        f"Triage {ticket}",
        session_id=session,
        mode="ask",
        inputs={"ticket": ticket, "runbooks": ["triage"]},
        json_out=json_out,
        stream_tokens=False,
        on_approval=on_approval,
    )
    if final.status not in ("completed", "paused"):
        raise typer.Exit(1)
    unread = _ticket_gap(final.report)
    if unread is not None:
        raise RuntimeFailure(f"could not read {key}: {unread.get('reason')}", hint=unread.get("hint"))
    if post and final.status == "completed" and final.output:
        _post_report(app, final, ticket)


def _ticket_gap(report: dict[str, Any] | None) -> dict[str, Any] | None:
    """The gap saying the triage could not read its ticket, when the (offline) report has one."""
    for gap in (report or {}).get("gaps") or []:
        if isinstance(gap, dict) and gap.get("step") == "triage/ticket":
            return gap
    return None


def _post_report(app: AppState, final: RunFinished, ticket: str) -> None:
    """Ask for approval, then add the report as a comment on the ticket (``jira_add_comment``)."""
    from devops_agent.agent.session import SessionService
    from devops_agent.runbooks.triage import find_ticket_ref
    from devops_agent.tools.jira import markdown_to_wiki

    key = find_ticket_ref(ticket, any_case=True) or ticket
    body = markdown_to_wiki(final.output or "")
    pending = {
        "post-report": {
            "tool": "jira_add_comment",
            "args": {"key": key, "body": f"<the report above, {len(body)} characters of Jira markup>"},
            "decision": "approve",
            "reason": f"adds a comment to {key}, visible to everyone who can see the ticket",
        }
    }
    answers = answers_for(pending, "ask")
    decision = (answers or {}).get("post-report")
    if decision is None or not decision.approved:
        reason = decision.reason if decision else "no answer"
        err.print(f"[yellow]not posted to {escape(key)}[/] ({escape(str(reason))})")
        return
    service = SessionService(app.settings, app.store())
    import asyncio

    result = asyncio.run(
        service.call_approved(
            final.session_id,
            "jira_add_comment",
            {"key": key, "body": body},
            approver=decision.approver,
        )
    )
    if result.status != "success":
        raise UserError(f"could not post the report to {key}: {result.error}", hint=result.hint)
    url = result.data.get("url") if isinstance(result.data, dict) else None
    err.print(f"[green]posted the report to {key}[/]" + (f": {url}" if url else ""))


CHAT_HELP = (
    "Commands: /mode [ask|agent]  /plan [auto|always|never|approve|edit TEXT|reject]  /sessions  /new  "
    "/help  /exit"
)


def chat(
    ctx: typer.Context,
    session: SessionOpt = None,
    mode: ModeOpt = None,
) -> None:
    """Talk with the agent interactively; each answer streams as it is produced."""
    from devops_agent.policies.modes import MODES

    app = state(ctx)
    chosen = _check_mode(mode)
    record = app.store().get_session(session) if session else None
    session_id = record.id if record else None
    # A resumed session keeps its own mode unless --mode says otherwise: an agent-mode session
    # must not quietly become read-only (nor an ask-mode one start changing things).
    current_mode: Mode = chosen or (_check_mode(record.mode) if record else None) or app.settings.mode
    if record is not None:
        how = "switched to" if chosen and chosen != record.mode else "in"
        err.print(
            f"resuming session {record.id[:12]} {how} {current_mode} mode: {record.title}", markup=False
        )
    err.print(f"[bold]DevOps Agent[/] chat · {current_mode} mode · {escape(CHAT_HELP)}")
    _preload_mcp(app)
    chat_inputs: dict[str, Any] = {}  # /plan's choice, for every question after it
    while True:
        try:
            line = input(f"{current_mode}> ").strip()
        except (EOFError, KeyboardInterrupt):  # Ctrl-D or Ctrl-C at the prompt: leave the chat
            err.print()
            break
        if not line:
            continue
        if line.startswith("/"):
            cmd, _, arg = line.partition(" ")
            if cmd in ("/exit", "/quit"):
                break
            if cmd == "/help":
                err.print(CHAT_HELP, markup=False)
            elif cmd == "/new":
                session_id = None
                err.print("new session")
            elif cmd == "/sessions":
                for rec in app.store().list_sessions(limit=10):
                    err.print(f"{rec.id[:12]}  {rec.mode:5}  {rec.title[:60]}", markup=False, highlight=False)
            elif cmd == "/plan":
                chat_inputs = chat_plan(app, session_id, arg, chat_inputs)
            elif cmd == "/mode":
                if arg.strip() in MODES:
                    current_mode = arg.strip()  # type: ignore[assignment]
                    if session_id:
                        app.store().update_session(session_id, mode=current_mode)
                    err.print(f"mode is now {current_mode}")
                else:
                    err.print(f"mode is {current_mode}; use /mode ask or /mode agent")
            else:
                err.print(f"unknown command {cmd}; {CHAT_HELP}", markup=False)
            continue
        try:
            final = execute(
                app,
                line,
                session_id=session_id,
                mode=current_mode,
                inputs=dict(chat_inputs),
                json_out=False,
                stream_tokens=True,
            )
        except RunInterrupted as exc:  # Ctrl-C during an answer stops that run, not the chat
            if terminated():  # SIGTERM: the run is stored; now the chat ends too
                raise
            err.print(exc.one_line(), markup=False, highlight=False)
            session_id = exc.session_id or session_id
            continue
        session_id = final.session_id
    if session_id:
        err.print(f"[dim]session {session_id} saved; resume with --session {session_id[:12]}[/]")
    if terminated():
        raise typer.Exit(143)


def _preload_mcp(app: AppState) -> None:
    """Start the configured MCP servers before the first question (``mcp.preload``), in parallel,
    and say in one line each which could not start: the chat goes on without them."""
    pool = app.mcp_pool()
    if pool is None or not app.settings.mcp.preload:
        return
    statuses = pool.preload_sync()
    ready = [s.name for s in statuses.values() if s.state == "ready"]
    if ready:
        err.print(f"[dim]MCP servers ready: {escape(', '.join(ready))}[/]")
    for s in statuses.values():
        if s.enabled and s.state != "ready":
            err.print(f"[yellow]MCP server {escape(s.name)} unavailable:[/] {escape(s.error or s.state)}")
