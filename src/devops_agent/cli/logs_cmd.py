"""``devops-agent logs …``: log analysis from the command line, no model involved."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from devops_agent.analysis import TemplateMiner, parse_since
from devops_agent.cli.context import err, out, state, with_roots
from devops_agent.tools.logs import mine_templates, read_paths

logs_app = typer.Typer(help="Analyze log files without a model.", no_args_is_help=True)


@logs_app.command("patterns")
def patterns(
    ctx: typer.Context,
    paths: Annotated[list[str], typer.Argument(help="log files or directories; - reads standard input")],
    since: Annotated[str | None, typer.Option("--since", help="2h, 30m, 1d, an ISO time")] = None,
    until: Annotated[str | None, typer.Option("--until")] = None,
    top: Annotated[int, typer.Option("--top", help="templates to show")] = 30,
    state_file: Annotated[
        Path | None,
        typer.Option("--state", help="load learned templates from this file first, save them back after"),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Mine message templates: every kind of line with its count, first/last seen and an example."""
    start = parse_since(since) if since else None
    end = parse_since(until) if until else None
    miner = TemplateMiner.load(state_file) if state_file and state_file.exists() else TemplateMiner()
    if paths == ["-"]:
        lines: Iterator[tuple[str, str]] = (("stdin", line.rstrip("\n")) for line in sys.stdin)
        scanned, skipped = ["stdin"], list[str]()
    else:
        files = [Path(p).resolve() for p in paths]
        missing = [str(p) for p in files if not p.exists()]
        if missing:
            raise typer.BadParameter(f"{missing[0]} does not exist", param_hint="PATHS")
        settings = with_roots(state(ctx).settings, files)
        lines, scanned, skipped, _capped = read_paths([str(p) for p in files], settings, start)
    with err.status("mining templates…"):
        data = mine_templates(lines, miner, start, end, top)
    if state_file is not None:
        miner.save(state_file)
    data.update(files_scanned=len(scanned), skipped=skipped)
    if json_out:
        out.print_json(json.dumps(data, default=str))
        return
    err.print(f"{data['lines']} lines, {data['templates_total']} templates, {len(scanned)} file(s)")
    table = Table("count", "template", "first seen", "last seen")
    for t in data["templates"]:
        table.add_row(str(t["count"]), t["template"][:120], t["first_seen"] or "-", t["last_seen"] or "-")
    out.print(table)
