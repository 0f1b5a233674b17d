"""``devops-agent metrics …``: metric anomalies from Prometheus or a CSV file, no model involved."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from devops_agent.analysis import detect
from devops_agent.cli.context import err, out, state
from devops_agent.errors import UserError
from devops_agent.tools import prometheus

metrics_app = typer.Typer(help="Find anomalies in metrics without a model.", no_args_is_help=True)


def _read_csv(path: Path) -> tuple[list[datetime], list[float]]:
    """``timestamp,value`` rows (ISO 8601 or unix seconds); a header row is skipped."""
    times: list[datetime] = []
    values: list[float] = []
    with path.open(newline="") as fh:
        for n, row in enumerate(csv.reader(fh), start=1):
            if len(row) < 2:
                continue
            try:
                raw = row[0].strip()
                ts = (
                    datetime.fromtimestamp(float(raw), UTC)
                    if raw.replace(".", "", 1).isdigit()
                    else datetime.fromisoformat(raw.replace("Z", "+00:00"))
                )
                value = float(row[1])
            except ValueError:
                if n == 1:
                    continue  # header
                raise UserError(f"{path}:{n}: expected 'timestamp,value', got {row[:2]}") from None
            times.append(ts if ts.tzinfo else ts.replace(tzinfo=UTC))
            values.append(value)
    if len(values) < 10:
        raise UserError(f"{path}: {len(values)} points is too few to judge", hint="give at least a few dozen")
    return times, values


@metrics_app.command("anomalies")
def anomalies(
    ctx: typer.Context,
    query: Annotated[str | None, typer.Argument(help="PromQL; omit with --file")] = None,
    since: Annotated[str, typer.Option("--since", help="range start for PromQL: 6h, 1d, an ISO time")] = "6h",
    step: Annotated[str | None, typer.Option("--step", help="PromQL resolution, e.g. 1m")] = None,
    file: Annotated[
        Path | None,
        typer.Option("--file", exists=True, dir_okay=False, help="CSV of timestamp,value instead"),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Spikes, level shifts, trends and seasonal deviations, each explained in words."""
    if (query is None) == (file is None):
        raise UserError("give a PromQL query or --file CSV (one of them)")
    rows: list[dict[str, Any]] = []
    if file is not None:
        times, values = _read_csv(file)
        for a in detect(times, values, name=file.stem).anomalies:
            rows.append(
                {
                    "series": file.stem,
                    "start": a.start.isoformat(),
                    "kind": a.kind,
                    "score": round(a.score, 3),
                    "explanation": a.explanation,
                }
            )
    else:
        tool = prometheus.build(state(ctx).settings).entries["prom_anomalies"].function
        result = tool(query=query, start=since, step=step)
        if result.status == "error":
            raise UserError(result.error or "query failed", hint=result.hint)
        for s in (result.data or {}).get("anomalous", []) if result.status == "success" else []:
            rows += [
                {"series": s["series"], **{k: a[k] for k in ("start", "kind", "score", "explanation")}}
                for a in s["anomalies"]
            ]
    if json_out:
        out.print_json(json.dumps({"anomalies": rows}))
        return
    if not rows:
        err.print("no anomalies found")
        return
    table = Table("series", "start", "kind", "score", "explanation")
    for r in rows:
        table.add_row(str(r["series"])[:40], r["start"], r["kind"], f"{r['score']:.2f}", r["explanation"])
    out.print(table)
