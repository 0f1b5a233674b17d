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


@metrics_app.command("slo")
def slo(
    ctx: typer.Context,
    requests: Annotated[
        str, typer.Option("--requests", help='counter of all requests, e.g. http_requests_total{job="api"}')
    ],
    errors: Annotated[
        str,
        typer.Option("--errors", help='counter of failed requests, e.g. x_total{code=~"5.."}'),
    ],
    objective: Annotated[float, typer.Option("--objective", help="the SLO as a fraction: 0.999")] = 0.999,
    window: Annotated[str, typer.Option("--window", help="the SLO window")] = "30d",
    json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Error budget left and multi-window burn-rate alerts (page / ticket) from Prometheus counters.

    Either option may instead be an expression with $window in it, e.g.
    'sum(increase(api_requests_total[$window]))'. Exit 1 when a page alert fires.
    """
    tool = prometheus.build(state(ctx).settings).entries["prom_slo"].function
    result = tool(requests=requests, errors=errors, objective=objective, window=window)
    if result.status == "error":
        raise UserError(result.error or "query failed", hint=result.hint)
    if result.status == "no_data":
        raise UserError(result.hint or "no data", hint="check the selectors with the Prometheus UI")
    data = result.data
    if json_out:
        out.print_json(json.dumps(data))
    else:
        table = Table("window", "requests", "errors", "burn rate")
        for span, rate in data["burn_rates"].items():
            c = data["counts"][span]
            table.add_row(span, f"{c['requests']:g}", f"{c['errors']:g}", f"{rate:.2f}x")
        out.print(table)
        out.print(data["explanation"])
    if any(a["severity"] == "page" for a in data["alerts"]):
        raise typer.Exit(1)
