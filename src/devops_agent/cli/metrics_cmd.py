"""``devops-agent metrics …``: metric anomalies from Prometheus or a CSV file, no model involved."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from devops_agent.analysis import detect
from devops_agent.analysis.anomaly import ANOMALY_MIN_POINTS
from devops_agent.analysis.slo import FULL_COVERAGE, covered_text
from devops_agent.cli.context import err, out, state
from devops_agent.errors import DevOpsAgentError, RuntimeFailure, UserError
from devops_agent.tools import prometheus
from devops_agent.tools.base import ToolResult

metrics_app = typer.Typer(help="Find anomalies in metrics without a model.", no_args_is_help=True)


PAGE_EXIT = 3
"""``metrics slo``'s exit code when a page alert fires: apart from 1 (runtime failure) and 2 (bad request)."""


def _print_warnings(result: ToolResult) -> None:
    """The tool's warnings (Prometheus's own, a raised step, an error selector matching nothing),
    on stderr so --json output stays clean."""
    for warning in result.metadata.get("warnings", []):
        err.print(f"warning: {warning}", markup=False, highlight=False)


def _query_failed(result: ToolResult) -> DevOpsAgentError:
    """A failed Prometheus tool result as an error: a runtime failure (exit 1) when Prometheus
    could not be reached or failed, else the request's fault (exit 2)."""
    kind = RuntimeFailure if result.metadata.get("runtime") else UserError
    return kind(result.error or "query failed", hint=result.hint)


_DELIMITERS = (";", "\t", ",")  # on a tie ";" or tab wins: in "t;104,68" the comma is a decimal one
_EPOCH_UNITS = (1, 1_000, 1_000_000, 1_000_000_000)  # s, ms, µs, ns
_EPOCH_MAX_S = 1e11  # year 5138: a larger epoch number is in a finer unit
_ROW_HINT = "times are ISO 8601 or unix epoch; ',', ';' or a tab separates the columns"


@dataclass
class _CsvSeries:
    """A CSV series in time order and what the reader left out or changed."""

    times: list[datetime] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    non_finite: int = 0  # rows whose value is NaN or ±Inf (Prometheus exports them)
    missing: int = 0  # rows with a timestamp but no value (empty or absent column)
    duplicate: int = 0  # rows repeating an earlier row's timestamp and value (overlapping exports)
    conflicting: int = 0  # rows with an earlier row's timestamp but another value (kept)
    reordered: bool = False  # rows were not in time order and were sorted


def _delimiter(text: str) -> str:
    first = next((line for line in text.splitlines() if line.strip()), "")
    best = max(_DELIMITERS, key=first.count)
    return best if best in first else ","


def _timestamp(raw: str) -> datetime:
    """ISO 8601 (naive means UTC) or unix epoch seconds, ms, µs or ns, told apart by size."""
    if raw.replace(".", "", 1).isdigit():
        epoch = float(raw)
        for unit in _EPOCH_UNITS:
            if epoch / unit < _EPOCH_MAX_S:
                return datetime.fromtimestamp(epoch / unit, UTC)
        raise ValueError(f"epoch {raw} is out of range")
    ts = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    return ts if ts.tzinfo else ts.replace(tzinfo=UTC)


def _read_csv(path: Path) -> _CsvSeries:
    """``timestamp,value`` rows, sorted by time; the first row is skipped if it is a header."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UserError(
            f"{path}: not UTF-8 text (byte {exc.start}); expected a CSV of timestamp,value rows",
            hint="convert it first, e.g. iconv -f latin1 -t utf-8",
        ) from None
    if text.lstrip()[:1] in ("[", "{"):
        raise UserError(
            f"{path}: looks like JSON; expected a CSV of timestamp,value rows",
            hint="convert it first, e.g. jq -r '.[] | [.timestamp, .value] | @csv'; "
            "or query Prometheus directly: devops-agent metrics anomalies 'PROMQL'",
        )
    sep = _delimiter(text)
    series = _CsvSeries()
    rows = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    first = True
    try:
        for row in rows:
            if not any(cell.strip() for cell in row):
                continue
            is_first, first = first, False
            try:
                ts = _timestamp(row[0].strip())
                raw = row[1].strip() if len(row) > 1 else ""
                value = float(raw) if raw else None
            except ValueError:
                if is_first:
                    continue  # header
                shown = "timestamp<tab>value" if sep == "\t" else f"timestamp{sep}value"
                raise UserError(
                    f"{path}:{rows.line_num}: expected '{shown}', got {row[:2]}", hint=_ROW_HINT
                ) from None
            if value is None:
                series.missing += 1
            elif not math.isfinite(value):
                series.non_finite += 1
            else:
                series.times.append(ts)
                series.values.append(value)
    except csv.Error as exc:
        raise UserError(f"{path}:{rows.line_num}: {exc}", hint=_ROW_HINT) from None
    _sort(series)
    _drop_duplicates(series)
    if len(series.values) < ANOMALY_MIN_POINTS:
        # the detector scores nothing before its history is full: fewer points would read as
        # "no anomalies" although nothing was judged
        skipped = series.missing + series.non_finite
        note = f"; {skipped} row(s) without a finite value were skipped" if skipped else ""
        raise UserError(
            f"{path}: {len(series.values)} points is too few to judge{note}; "
            f"the detector needs at least {ANOMALY_MIN_POINTS}",
            hint=f"give at least {ANOMALY_MIN_POINTS} rows; a few hundred give the detector a "
            "history before the time of interest",
        )
    return series


def _sort(series: _CsvSeries) -> None:
    """Time order for the causal detector; equal timestamps keep their file order (stable)."""
    times = series.times
    if all(a <= b for a, b in zip(times, times[1:], strict=False)):
        return
    order = sorted(range(len(times)), key=times.__getitem__)
    series.times = [times[i] for i in order]
    series.values = [series.values[i] for i in order]
    series.reordered = True


def _drop_duplicates(series: _CsvSeries) -> None:
    """Drop a row that repeats the timestamp and value of the row before it (in time order), as
    overlapping or concatenated exports do: the same sample twice would look to the detector like
    two points with no change between them, which shrinks its rate-of-change baseline to nothing.
    Rows with the same timestamp but another value are kept (in file order) and counted."""
    times: list[datetime] = []
    values: list[float] = []
    for t, v in zip(series.times, series.values, strict=True):
        if times and t == times[-1]:
            if v == values[-1]:
                series.duplicate += 1
                continue
            series.conflicting += 1
        times.append(t)
        values.append(v)
    series.times, series.values = times, values


def _report_reading(path: Path, series: _CsvSeries) -> None:
    """What the reader skipped or reordered, on stderr so --json output stays clean."""
    notes: list[str] = []
    if series.non_finite:
        notes.append(f"skipped {series.non_finite} row(s) with a non-finite value (NaN, Inf)")
    if series.missing:
        notes.append(f"skipped {series.missing} row(s) with no value")
    if series.duplicate:
        notes.append(f"skipped {series.duplicate} row(s) repeating an earlier row (same timestamp and value)")
    if series.conflicting:
        notes.append(
            f"{series.conflicting} row(s) share a timestamp with another row but not its value; kept in "
            "file order (is the file more than one series?)"
        )
    if series.reordered:
        notes.append("rows were not in time order; sorted by timestamp")
    for note in notes:
        err.print(f"{path}: {note}", markup=False, highlight=False)


def _from_prometheus(
    ctx: typer.Context, query: str, since: str, step: str | None, max_series: int
) -> tuple[list[dict[str, Any]], dict[str, Any], str, int]:
    """``prom_anomalies`` as rows, the --json summary, the tool's message, and how many series it judged.

    Raises:
        UserError: the query failed (the tool's message and hint).
    """
    tool = prometheus.build(state(ctx).settings).entries["prom_anomalies"].function
    result = tool(query=query, start=since, step=step, max_series=max_series)
    if result.status == "error":
        raise _query_failed(result)
    _print_warnings(result)  # e.g. a --step raised to fit max_points
    # The counts sit in data on success and in metadata when nothing was found.
    facts = result.data if result.status == "success" else result.metadata
    summary: dict[str, Any] = {k: facts.get(k, 0) for k in ("series_total", "series_analyzed")}
    summary.update({k: facts[k] for k in ("step_s", "step_adjusted") if k in facts})
    if facts.get("note"):
        summary["note"] = facts["note"]
    rows = [
        {"series": s["series"], **{k: a[k] for k in ("start", "kind", "score", "explanation")}}
        for s in facts.get("anomalous", [])
        for a in s["anomalies"]
    ]
    judged = summary["series_analyzed"] - facts.get("series_too_short", 0)
    return rows, summary, result.hint or "", judged


@metrics_app.command("anomalies")
def anomalies(
    ctx: typer.Context,
    query: Annotated[str | None, typer.Argument(help="PromQL; omit with --file")] = None,
    since: Annotated[str, typer.Option("--since", help="range start for PromQL: 6h, 1d, an ISO time")] = "6h",
    step: Annotated[str | None, typer.Option("--step", help="PromQL resolution, e.g. 1m")] = None,
    max_series: Annotated[
        int,
        typer.Option("--max-series", min=1, max=50, help="PromQL: most series analyzed, highest peaks first"),
    ] = 10,
    file: Annotated[
        Path | None,
        typer.Option("--file", exists=True, dir_okay=False, help="CSV of timestamp,value instead"),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Spikes, level shifts, trends and seasonal deviations, each explained in words.

    --file reads UTF-8 timestamp,value rows (comma, semicolon or tab separated; a header row is
    skipped; extra columns are ignored). Timestamps are ISO 8601 (UTC unless an offset is given)
    or unix epoch seconds, milliseconds, µs or ns, told apart by size. Rows are sorted by
    timestamp; rows with the same timestamp keep their file order, except that a row repeating
    the timestamp and value of the one before it is dropped (overlapping exports). Rows with an
    empty or missing value, or a non-finite one (NaN, Inf), and repeated rows are skipped and
    counted on stderr (and under "skipped" with --json). The detector needs at least
    49 points (it scores nothing before 48 points of history); fewer is an error (exit 2).

    For PromQL, --json also carries series_total, series_analyzed, step_s, step_adjusted (a --step
    raised to stay within the point limit, also warned on stderr) and a note (series left out, or
    with too few points to judge). Exit 1 when no series match or none has enough points.
    """
    if (query is None) == (file is None):
        raise UserError("give a PromQL query or --file CSV (one of them)")
    rows: list[dict[str, Any]] = []
    summary: dict[str, Any] = {}
    message = ""
    if file is not None:
        series = _read_csv(file)
        summary["skipped"] = {
            "non_finite": series.non_finite,
            "missing_value": series.missing,
            "duplicate": series.duplicate,
        }
        _report_reading(file, series)
        for a in detect(series.times, series.values, name=file.stem).anomalies:
            rows.append(
                {
                    "series": file.stem,
                    "start": a.start.isoformat(),
                    "kind": a.kind,
                    "score": round(a.score, 3),
                    "explanation": a.explanation,
                }
            )
    elif query is not None:  # one of the two is given, checked above
        rows, summary, message, judged = _from_prometheus(ctx, query, since, step, max_series)
        if judged == 0:  # no series, or none with enough points: nothing was judged
            summary["note"] = message
            if json_out:
                out.print_json(json.dumps({"anomalies": rows, **summary}))
            err.print(message, markup=False, highlight=False)
            raise typer.Exit(1)
    if json_out:
        out.print_json(json.dumps({"anomalies": rows, **summary}))
        return
    if summary.get("note"):
        err.print(summary["note"], markup=False, highlight=False)
    if not rows:
        err.print(message or "no anomalies found", markup=False, highlight=False)
        return
    table = Table("series", "start", "kind", "score", "explanation")
    for r in rows:
        # A series is named by its labels, its query or its file ({handler="/[id]"}): printed literally.
        name, explanation = Text(str(r["series"])[:40]), Text(r["explanation"])
        table.add_row(name, r["start"], r["kind"], f"{r['score']:.2f}", explanation)
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
    objective: Annotated[
        float, typer.Option("--objective", help="the SLO as a fraction between 0 and 1: 0.999")
    ] = 0.999,
    window: Annotated[str, typer.Option("--window", help="the SLO window, 3d to 366d")] = "30d",
    json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Error budget left and multi-window burn-rate alerts (page / ticket) from Prometheus counters.

    Either option may instead be an expression with $window in it, e.g.
    'sum(increase(api_requests_total[$window]))'. How much of each window the request data covers
    is measured and shown (the "data" column: all, or how much; "coverage" in --json): under 90%
    of the SLO window the budget left is not known and is not given (null in --json), since the
    errors of the part without data are unknown. Exit 3 when a page alert fires; exit 2 for an
    objective or window that does not make sense, a query Prometheus rejects, and counts that
    cannot be (NaN or Inf, negative, more errors than requests); exit 1 when Prometheus cannot
    be reached or fails.
    """
    prometheus.check_slo_args(objective, window, names=("--objective", "--window"))
    tool = prometheus.build(state(ctx).settings).entries["prom_slo"].function
    result = tool(requests=requests, errors=errors, objective=objective, window=window)
    if result.status == "error":
        raise _query_failed(result)
    if result.status == "no_data":
        raise UserError(result.hint or "no data")
    _print_warnings(result)
    data = result.data
    if json_out:
        out.print_json(json.dumps(data))
    else:
        coverage = data.get("coverage") or {}
        shares = coverage.get("windows") or {}
        covered = covered_text(timedelta(seconds=coverage.get("covered_s") or 0))
        table = Table("window", "requests", "errors", "burn rate", "data")
        for span, rate in data["burn_rates"].items():
            c = data["counts"][span]
            share = shares.get(span)
            held = "all" if share is None or share >= FULL_COVERAGE else covered
            table.add_row(span, f"{c['requests']:g}", f"{c['errors']:g}", f"{rate:.2f}x", held)
        out.print(table)
        out.print(data["explanation"])
    if any(a["severity"] == "page" for a in data["alerts"]):
        raise typer.Exit(PAGE_EXIT)
