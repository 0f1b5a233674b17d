"""``devops-agent logs …``: log analysis from the command line, no model involved."""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from devops_agent.analysis import TemplateMiner
from devops_agent.analysis.logsummary import mine_templates
from devops_agent.cli.context import err, is_stream, out, state, with_roots
from devops_agent.errors import PathAccessError, UserError
from devops_agent.privacy import scrub
from devops_agent.tools.logs import nothing_read, read_paths, read_stream, window_args

logs_app = typer.Typer(help="Analyze log files without a model.", no_args_is_help=True)


def _load_state(path: Path) -> TemplateMiner:
    """The miner saved at ``path`` (a fresh one when the file does not exist yet).

    Checked before any log is read, so a bad ``--state`` costs nothing.
    """
    try:
        if path.is_dir():
            raise UserError(
                f"--state {path} is a directory", hint=f"pass a file, e.g. {path / 'templates.json'}"
            )
        if not path.exists():
            return TemplateMiner()
        return TemplateMiner.load(path)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a saved template state"
        raise UserError(
            f"cannot read the template state {path}: {reason}",
            hint="delete the file to start afresh, or pass another --state path",
        ) from exc


def _save_state(miner: TemplateMiner, path: Path) -> None:
    """Write the state, its parent directory created if missing, with secrets cut from the examples."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        miner.save(path, redact=lambda text: scrub(text).text)
    except OSError as exc:
        raise PathAccessError(
            f"the analysis above is complete but the template state could not be saved to {path}: "
            f"{exc.strerror or exc}",
            hint="pass another --state path",
        ) from exc


@logs_app.command("patterns")
def patterns(
    ctx: typer.Context,
    paths: Annotated[list[str], typer.Argument(help="log files or directories; - reads standard input")],
    since: Annotated[str | None, typer.Option("--since", help="2h, 30m, 1d, an ISO time")] = None,
    until: Annotated[str | None, typer.Option("--until")] = None,
    top: Annotated[int, typer.Option("--top", min=1, help="templates to show (at least 1)")] = 30,
    state_file: Annotated[
        Path | None,
        typer.Option("--state", help="load learned templates from this file first, save them back after"),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Mine message templates: every kind of line with its count and first/last seen.

    --json adds examples, time buckets and the error templates ranked by novelty and burst.
    """
    start, end = window_args(since, until)
    miner = _load_state(state_file) if state_file is not None else TemplateMiner()
    # Each reader fills its skipped list while it is consumed: collect them after mining.
    sources: list[tuple[Iterator[tuple[str, str]], list[str], list[str]]] = []
    if "-" in paths:  # standard input first, then pipes and files, as cat - FILE does
        sources.append(read_stream(sys.stdin.buffer))
    files: list[Path] = []
    for p in dict.fromkeys(p for p in paths if p != "-"):
        if is_stream(p, "PATHS"):  # <(kubectl logs …), a named pipe: read once, as a stream
            sources.append(read_stream(open(p, "rb"), source=p))  # noqa: SIM115 - consumed below
        else:
            files.append(Path(p).resolve())
    if files:
        settings = with_roots(state(ctx).settings, files)
        lines, scanned, skipped, _capped = read_paths([str(p) for p in files], settings, start)
        sources.append((lines, scanned, skipped))
    with err.status("mining templates…"):
        data = mine_templates(itertools.chain.from_iterable(s[0] for s in sources), miner, start, end, top)
    scanned = [name for s in sources for name in s[1]]
    skipped = [entry for s in sources for entry in s[2]]
    if not scanned:
        raise nothing_read(paths, skipped)
    data.update(files_scanned=len(scanned), skipped=skipped)
    if json_out:
        out.print_json(json.dumps(data, default=str))
    else:
        for entry in skipped:
            err.print(f"skipped {entry}", markup=False, highlight=False)
        err.print(f"{data['lines']} lines, {data['templates_total']} templates, {len(scanned)} file(s)")
        table = Table("count", "template", "first seen", "last seen")
        for t in data["templates"]:
            table.add_row(
                str(t["count"]), escape(t["template"][:120]), t["first_seen"] or "-", t["last_seen"] or "-"
            )
        out.print(table)
    if state_file is not None:
        _save_state(miner, state_file)
