"""``devops-agent memory …``: the findings memory (what earlier investigations concluded), per project."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.markup import escape

from devops_agent.cli.context import err, out, state
from devops_agent.config import Settings
from devops_agent.errors import UserError
from devops_agent.knowledge.memory import add_finding, project_name, search_memory
from devops_agent.store.records import FindingRecord
from devops_agent.tools.knowledge import check_finding, finding_data

memory_app = typer.Typer(
    help="Findings memory: remember what an investigation found; recall it in later ones.",
    no_args_is_help=True,
)

ProjectOpt = Annotated[
    str | None,
    typer.Option("--project", "-p", help="default: the `project` setting, else this directory's name"),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON")]


def _print(findings: list[dict[str, Any]]) -> None:
    """Findings as text; what a finding holds is printed literally (a title may say ``[/etc]``)."""
    for f in findings:
        score = f"  [dim]score {f['score']}[/]" if "score" in f else ""
        out.print(f"[bold]#{f['id']}[/] {escape(f['title'])}{score}", highlight=False)
        meta = [f["created_at"]]
        if f["session"]:
            meta.append(f"session {f['session'][:12]}")
        if f["tags"]:
            meta.append("tags: " + ", ".join(f["tags"]))
        out.print("  " + " · ".join(meta), style="dim", markup=False, highlight=False)
        out.print("  " + f["summary"], markup=False, highlight=False)
        for e in f["evidence"]:
            out.print(f"  - {e}", markup=False, highlight=False)
        out.print()


@memory_app.command("add")
def add(
    ctx: typer.Context,
    title: Annotated[str, typer.Argument(help="one line: what was wrong")],
    summary: Annotated[str, typer.Option("--summary", "-s", help="cause, fix, how it was confirmed")],
    evidence: Annotated[
        list[str] | None, typer.Option("--evidence", "-e", help="a citation, URL or excerpt (repeatable)")
    ] = None,
    tags: Annotated[list[str] | None, typer.Option("--tag", "-t", help="a tag (repeatable)")] = None,
    source: Annotated[str | None, typer.Option("--source", help="e.g. 'triage OPS-123'")] = "cli",
    project: ProjectOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Remember a finding for later investigations of the project (secrets in it are cut out)."""
    failed = check_finding(title, summary, evidence, tags)
    if failed is not None:
        raise UserError(failed.error or "invalid finding", hint=failed.hint)
    app = state(ctx)
    saved = add_finding(
        app.store(),
        FindingRecord(
            project=_project(app.settings, project),
            title=title,
            summary=summary,
            evidence=tuple(evidence or ()),
            tags=tuple(tags or ()),
            source=source,
        ),
    )
    if json_out:
        out.print_json(json.dumps(finding_data(saved)))
    else:
        out.print(
            f"remembered finding #{saved.id} for project {saved.project!r}", markup=False, highlight=False
        )


def _project(settings: Settings, given: str | None) -> str:
    """The project a command works on: ``--project`` without its surrounding blanks (``" svc"`` is
    the project ``svc``), else the configured or directory name."""
    if given is None:
        return project_name(settings)
    if not given.strip():
        raise UserError("--project is empty", hint="give a project name, or leave --project out")
    return given.strip()


@memory_app.command("search")
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="a symptom, service or error text")],
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=50)] = 5,
    project: ProjectOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Findings of the project most related to the query (BM25), best first."""
    if not query.strip():
        raise UserError("empty query", hint="describe the symptom, service or error")
    app = state(ctx)
    name = _project(app.settings, project)
    hits = [finding_data(h.finding, h.score) for h in search_memory(app.store(), name, query, limit)]
    if json_out:
        out.print_json(json.dumps({"project": name, "query": query, "findings": hits}))
        return
    if not hits:
        err.print(f"no finding of project {name!r} matched", markup=False, highlight=False)
    _print(hits)


@memory_app.command("list")
def list_(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1)] = 20,
    project: ProjectOpt = None,
    every: Annotated[bool, typer.Option("--all-projects", help="findings of every project")] = False,
    json_out: JsonOpt = False,
) -> None:
    """The most recent findings, newest first."""
    if every and project is not None:
        raise UserError("--all-projects and --project exclude each other", hint="give one of them")
    app = state(ctx)
    name = None if every else _project(app.settings, project)
    found = [finding_data(f) for f in app.store().list_findings(name, limit=limit)]
    if json_out:
        out.print_json(json.dumps({"project": name, "findings": found}))
        return
    if not found:
        err.print(
            "no findings yet" + (f" for project {name!r}" if name else ""), markup=False, highlight=False
        )
    _print(found)


@memory_app.command("delete")
def delete(
    ctx: typer.Context,
    finding_id: Annotated[int, typer.Argument(help="the finding's id (from `memory list`)")],
    project: ProjectOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Forget a finding of the project (a wrong conclusion should not mislead later investigations).

    Only a finding of this project (--project, else the configured or directory name) is deleted:
    an id of another project's finding is refused, naming that project. A deleted id is never
    given to another finding.
    """
    app = state(ctx)
    name = _project(app.settings, project)
    gone = app.store().delete_finding(finding_id, name)
    if json_out:
        out.print_json(json.dumps({"deleted": finding_data(gone)}))
        return
    out.print(
        f"forgot finding #{finding_id} of project {gone.project!r}: {gone.title}",
        markup=False,
        highlight=False,
    )
