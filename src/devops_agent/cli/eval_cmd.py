"""``devops-agent eval …``: run the agent on recorded incident cases and score it; compare runs.

``run`` evaluates a model (``--model``, else ``model.name``; none: the offline runbooks) on a
folder of cases, scores each answer with the judge (``--judge``, else ``evals.judge.name``) and
the literal checks, prints a Markdown table (``--json``: the whole result), and keeps the result
in the store. ``list``, ``show`` and ``compare`` read stored results; ``cases`` and ``mapping``
show what a folder holds and which recordings our tools can reach.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.text import Text

from devops_agent.cli.context import err, out, state
from devops_agent.cli.render import folding_table, print_markdown
from devops_agent.errors import UserError

eval_app = typer.Typer(
    help="Evaluate the agent on recorded incident cases (HolmesGPT's format and ours).", no_args_is_help=True
)
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON")]


def _emit_json(data: Any) -> None:
    out.print_json(json.dumps(data, default=str))


@eval_app.command("run")
def run_cmd(
    ctx: typer.Context,
    cases_dir: Annotated[
        Path | None,
        typer.Argument(help="a folder of case folders (or one case); default: evals.cases_dir"),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model", "-m", help="provider:model to evaluate (default: model.name; none: offline runbooks)"
        ),
    ] = None,
    offline: Annotated[
        bool, typer.Option("--offline", help="evaluate the offline runbooks (no model)")
    ] = False,
    judge: Annotated[
        str | None,
        typer.Option("--judge", "-j", help="provider:model that scores answers (default: evals.judge.name)"),
    ] = None,
    tags: Annotated[
        list[str] | None,
        typer.Option("--filter", "-f", help="only cases with this tag (repeatable; kind:investigate works)"),
    ] = None,
    repeat: Annotated[int, typer.Option(min=1, max=100, help="runs per case (spread, flaky cases)")] = 1,
    parallel: Annotated[int, typer.Option(min=1, max=64, help="cases run at once")] = 1,
    include_skipped: Annotated[
        bool, typer.Option("--include-skipped", help="also run cases marked skip upstream")
    ] = False,
    label: Annotated[str | None, typer.Option("--label", help="a name to find this evaluation by")] = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            help="published per-case results (CSV); default: baseline_results*.csv beside the cases",
        ),
    ] = None,
    baseline_model: Annotated[
        str | None, typer.Option("--baseline-model", help="the baseline column that is this model")
    ] = None,
    mapping: Annotated[
        Path | None, typer.Option("--mapping", help="tool mapping YAML (default: the shipped one)")
    ] = None,
    save: Annotated[bool, typer.Option("--save/--no-save", help="keep the result in the store")] = True,
    min_pass_rate: Annotated[
        float | None,
        typer.Option(
            "--min-pass-rate", min=0.0, max=1.0, help="exit 1 when the pass rate is lower (CI gate)"
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Run every case on the model (or the offline runbooks) and score the answers.

    Tools answer from each case's recordings through the real tool pipeline; a call no recording
    matches gets no data and is counted. Without a judge only the literal checks score (a case
    they cannot decide is counted as unscored). Progress goes to stderr, one line per run."""
    from devops_agent.evals import session as ev
    from devops_agent.evals.harness import EvalOptions
    from devops_agent.evals.mapping import ToolMapping
    from devops_agent.evals.tables import render
    from devops_agent.telemetry import configure_logging

    app = state(ctx)
    settings = app.settings
    if model and offline:
        raise UserError("--model and --offline exclude each other", hint="name a model, or run offline")
    if offline:
        settings = settings.model_copy(update={"model": settings.model.model_copy(update={"name": None})})
    elif model:
        settings = settings.model_copy(update={"model": settings.model.model_copy(update={"name": model})})
    folder = cases_dir or settings.evals.cases_dir
    if folder is None:
        raise UserError(
            "no cases folder given", hint="`devops-agent eval run CASES_DIR`, or set evals.cases_dir"
        )
    if not app.debug:
        configure_logging("error")  # a line per tool call would bury the progress
    target = ev.model_target(settings)
    the_judge = ev.judge_for(settings, judge)
    from devops_agent.evals.baseline import load_baseline

    options = EvalOptions(
        repeat=repeat,
        parallel=parallel,
        tags=tags or [],
        include_skipped=include_skipped,
        label=label,
        baseline=load_baseline(baseline) if baseline else None,
        baseline_column=baseline_model,
    )
    done = 0

    def progress(case: Any, attempt: Any) -> None:
        nonlocal done
        done += 1
        mark = {True: "pass", False: "FAIL", None: "unscored"}[attempt.passed]
        extra = f" · {attempt.unmatched} unmatched" if attempt.unmatched else ""
        err.print(
            f"[{done}] {escape(case.id)} #{attempt.repeat + 1}: {mark} ({attempt.latency_s:.1f} s{extra})",
            highlight=False,
        )

    result = asyncio.run(
        ev.run_evaluation(
            settings,
            folder,
            target,
            judge=the_judge,
            options=options,
            mapping=ToolMapping.load(mapping),
            on_attempt=progress,
        )
    )
    if save:
        ev.save(app.store(), result)
        err.print(f"stored as evaluation {result.id[:12]} (`devops-agent eval show {result.id[:12]}`)")
    if json_out:
        _emit_json(result.model_dump(mode="json"))
    else:
        print_markdown(render(result))
    if min_pass_rate is not None and result.summary.pass_rate < min_pass_rate:
        err.print(f"pass rate {result.summary.pass_rate:.1%} is below --min-pass-rate {min_pass_rate:.1%}")
        raise typer.Exit(1)


@eval_app.command("list")
def list_cmd(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option(min=1, help="how many to list")] = 20,
    json_out: JsonOpt = False,
) -> None:
    """Stored evaluations, newest first."""
    records = state(ctx).store().list_eval_runs(limit)
    if json_out:
        _emit_json([{k: v for k, v in r.__dict__.items() if k != "result"} for r in records])
        return
    if not records:
        out.print("No evaluation is stored yet (`devops-agent eval run CASES_DIR`).")
        return
    table = folding_table("id", "when", "target", "judge", "cases", "pass rate", "label")
    for r in records:
        table.add_row(
            r.id[:12],
            f"{r.created_at:%Y-%m-%d %H:%M}",
            Text(r.target),
            Text(r.judge or "–"),
            str(r.cases),
            f"{r.pass_rate:.1%} ({r.passes}/{r.runs})",
            Text(r.label or ""),
        )
    out.print(table)


@eval_app.command("show")
def show_cmd(
    ctx: typer.Context,
    ref: Annotated[str, typer.Argument(help="evaluation id, a unique prefix, latest or latest~N")] = "latest",
    json_out: JsonOpt = False,
) -> None:
    """One stored evaluation as its Markdown table (or JSON)."""
    from devops_agent.evals import session as ev
    from devops_agent.evals.tables import render

    result = ev.load(state(ctx).store(), ref)
    if json_out:
        _emit_json(result.model_dump(mode="json"))
    else:
        print_markdown(render(result))


@eval_app.command("compare")
def compare_cmd(
    ctx: typer.Context,
    a: Annotated[str, typer.Argument(help="the earlier evaluation (id, prefix, latest~1)")],
    b: Annotated[str, typer.Argument(help="the later evaluation (id, prefix, latest)")],
    json_out: JsonOpt = False,
) -> None:
    """What changed between two stored evaluations: pass rates and the cases that moved."""
    from devops_agent.evals import session as ev
    from devops_agent.evals.tables import compare, render_compare

    store = state(ctx).store()
    diff = compare(ev.load(store, a), ev.load(store, b))
    if json_out:
        _emit_json(diff)
    else:
        print_markdown(render_compare(diff))


@eval_app.command("cases")
def cases_cmd(
    cases_dir: Annotated[Path, typer.Argument(help="a folder of case folders")],
    mapping: Annotated[Path | None, typer.Option("--mapping", help="tool mapping YAML")] = None,
    json_out: JsonOpt = False,
) -> None:
    """The cases of a folder: kind, tags, skip flag, and how many recordings our tools can reach."""
    from devops_agent.evals.cases import load_cases
    from devops_agent.evals.mapping import ToolMapping

    tools = ToolMapping.load(mapping)
    rows: list[dict[str, Any]] = [
        {
            "id": c.id,
            "kind": c.kind,
            "tags": c.tags,
            "skip": c.skip,
            "expected": len(c.expected),
            "recordings": len(c.recordings),
            "reachable": sum(1 for r in c.recordings if tools.reachable(r)),
        }
        for c in load_cases(cases_dir)
    ]
    if json_out:
        _emit_json(rows)
        return
    table = folding_table("case", "kind", "tags", "skip", "expected", "recordings reachable")
    for r in rows:
        table.add_row(
            Text(r["id"]),
            r["kind"],
            Text(", ".join(r["tags"])),
            "skip" if r["skip"] else "",
            str(r["expected"]),
            f"{r['reachable']}/{r['recordings']}",
        )
    out.print(table)


@eval_app.command("mapping")
def mapping_cmd(
    mapping: Annotated[Path | None, typer.Option("--mapping", help="tool mapping YAML")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Which recorded tools answer which of our tools, and those none of ours can ask for."""
    from devops_agent.evals.mapping import ToolMapping

    tools = ToolMapping.load(mapping)
    if json_out:
        _emit_json(tools.data.model_dump(mode="json"))
        return
    table = folding_table("our tool", "answered by (recorded)", "when", "shape")
    for ours, spec in tools.tools.items():
        for answer in spec.answers:
            when = ", ".join(f"{k}={v}" for k, v in answer.when.items())
            table.add_row(ours, answer.recorded, when, answer.shape)
    out.print(table)
    for recorded, why in tools.data.unmapped.items():
        out.print(f"[dim]{escape(recorded)}[/]: {escape(why)}", highlight=False)
    sys.stdout.flush()
