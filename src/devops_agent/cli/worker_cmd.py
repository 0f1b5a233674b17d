"""``devops-agent worker`` (take runs from the queue) and ``devops-agent queue list|cancel|retry|alert``.

Both need ``execution = "queue"`` with the store on PostgreSQL ([workers] in the config; see
docs/workers.md). The worker runs until SIGTERM or Ctrl-C; a second signal stops it at once.
"""

from __future__ import annotations

import asyncio
import json
import signal
from datetime import UTC, datetime
from typing import Annotated

import typer

from devops_agent.cli.context import err, out, state
from devops_agent.errors import UserError

queue_app = typer.Typer(
    help="The run queue of durable workers: list, cancel, retry, alert.", no_args_is_help=True
)
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON")]


def _require_queue(ctx: typer.Context) -> None:
    settings = state(ctx).settings
    if settings.workers.execution != "queue":
        raise UserError(
            'the run queue is off: runs execute in the process that starts them (execution = "inprocess")',
            hint='set [workers] execution = "queue" and database_url to PostgreSQL (docs/workers.md)',
        )


def worker(
    ctx: typer.Context,
    worker_id: Annotated[
        str | None, typer.Option("--id", help="worker id (default: host-pid-random)")
    ] = None,
    no_schedules: Annotated[bool, typer.Option("--no-schedules", help="do not fire [[schedules]]")] = False,
    drain_s: Annotated[float, typer.Option("--drain", help="seconds to let runs finish on SIGTERM")] = 30.0,
) -> None:
    """Take investigations from the queue and carry them out (runs until SIGTERM)."""
    _require_queue(ctx)
    from devops_agent.workers.app import system_url
    from devops_agent.workers.worker import WorkerOptions, run_worker

    app = state(ctx)
    system_url(app.settings)  # a store that is not PostgreSQL fails here, before anything starts
    options = WorkerOptions(worker_id=worker_id, schedules=not no_schedules, drain_s=drain_s)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await run_worker(app.settings, app.store(), stop, options)

    err.print("[dim]worker started; SIGTERM or Ctrl-C stops it[/]")
    asyncio.run(main())


@queue_app.command("list")
def list_cmd(
    ctx: typer.Context,
    all_runs: Annotated[bool, typer.Option("--all", help="include finished runs")] = False,
    limit: Annotated[int, typer.Option("--limit", min=1, max=10_000)] = 100,
    json_out: JsonOpt = False,
) -> None:
    """Runs waiting for a worker or executing, highest priority first."""
    _require_queue(ctx)
    from devops_agent.workers.submit import QueueExecutor, list_queue

    entries = list_queue(QueueExecutor(state(ctx).settings), include_done=all_runs, limit=limit)
    if json_out:
        out.print_json(json.dumps([e.as_json() for e in entries]))
        return
    if not entries:
        out.print("the queue is empty")
        return
    now = datetime.now(UTC)
    for e in sorted(entries, key=lambda e: (e.status != "PENDING", e.priority or 0)):
        age = f"{(now - e.created_at).total_seconds():.0f}s" if e.created_at else "?"
        out.print(
            f"{e.run_id[:12]}  {e.status:<9} prio {e.priority or 0:<4} age {age:<7} "
            f"user {e.user or '-'}  {('on ' + e.worker) if e.worker else ''}",
            markup=False,
            highlight=False,
        )


@queue_app.command("cancel")
def cancel_cmd(ctx: typer.Context, run_id: str, json_out: JsonOpt = False) -> None:
    """Cancel a queued run, or stop one a worker executes."""
    _require_queue(ctx)
    from devops_agent.workers.submit import QueueExecutor, cancel

    app = state(ctx)
    done = cancel(QueueExecutor(app.settings), app.store(), run_id)
    if json_out:
        out.print_json(json.dumps({"run_id": run_id, "cancelled": done}))
    elif not done:
        raise UserError(
            f"run {run_id[:12]} has already finished", hint="`devops-agent queue retry` queues it again"
        )
    else:
        out.print(f"cancel requested for {run_id[:12]}", markup=False)


@queue_app.command("retry")
def retry_cmd(ctx: typer.Context, run_id: str, json_out: JsonOpt = False) -> None:
    """Queue a failed or cancelled run again (a new run of the same session)."""
    _require_queue(ctx)
    from devops_agent.workers.submit import QueueExecutor, queue_service, retry

    app = state(ctx)
    executor = QueueExecutor(app.settings)
    new = retry(queue_service(app.settings, app.store()), executor, run_id)
    if json_out:
        out.print_json(json.dumps({"run_id": new, "retry_of": run_id}))
    else:
        out.print(f"queued {new[:12]} (retry of {run_id[:12]})", markup=False)


@queue_app.command("alert")
def alert_cmd(
    ctx: typer.Context,
    payload: Annotated[str, typer.Argument(help="Alertmanager webhook payload: a JSON file, or - (stdin)")],
    json_out: JsonOpt = False,
) -> None:
    """Queue an investigation for an Alertmanager notification; a repeat of its alert group joins
    the run already queued (or run within [workers] dedupe_window_s) instead of starting another."""
    _require_queue(ctx)
    import sys
    from pathlib import Path

    from devops_agent.workers.submit import QueueExecutor, queue_service, submit_alert

    try:
        text = sys.stdin.read() if payload == "-" else Path(payload).read_text()
        data = json.loads(text)
    except OSError as exc:
        raise UserError(f"cannot read {payload}: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise UserError(f"{payload} is not JSON: {exc}", hint="pass the body Alertmanager POSTs") from exc
    app = state(ctx)
    service = queue_service(app.settings, app.store())
    executor = service.supervisor.executor
    try:
        done = asyncio.run(submit_alert(service, data))
    finally:
        if isinstance(executor, QueueExecutor):
            executor.close()
    result = (
        {"run_id": done.run_id, "session_id": done.session_id, "deduplicated": done.deduplicated}
        if done is not None
        else {"run_id": None, "reason": "no firing alert in the notification"}
    )
    if json_out:
        out.print_json(json.dumps(result))
    elif done is None:
        out.print("nothing queued: no alert in it is firing")
    else:
        joined = " (joined the run of its alert group)" if done.deduplicated else ""
        out.print(f"queued {done.run_id[:12]}{joined}", markup=False)
