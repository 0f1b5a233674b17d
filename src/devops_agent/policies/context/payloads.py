"""Large tool results summarized by type before a model reads them; the raw result is kept.

:func:`digest` turns one result's data into a summary a model can reason over, by what the data
is, not by which tool made it:

* **logs** (text or a list of lines, mostly timestamped or levelled) → line count, time range,
  error groups by message shape (``analysis.loggroup``: count, first/last seen, an example line)
  and the most frequent templates (``analysis.templates``);
* **metrics** (series of ``[time, value]`` points, or a CSV whose columns are a time and numbers)
  → per series: points, min/max/mean/last and the anomalies ``analysis.anomaly`` finds;
* **JSON/YAML lists** (of objects) → count, schema (each key's types and how often it is
  present), distinct values of low-cardinality keys with counts, numeric ranges, samples;
* **tables** (rows of lists, or aligned text such as ``kubectl get``) → shape, header, top rows
  and each column's distinct count;
* anything else → size, head and tail.

Every digest has a ``headline``: one line with the most telling fact (the top error group's
example, the first anomaly, the count and the commonest value), which the budget keeps when even
the digest must go. This module is pure: no I/O, no tools, no model.
"""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import yaml

from devops_agent.analysis.anomaly import detect
from devops_agent.analysis.loggroup import group_lines
from devops_agent.analysis.logline import extract_message
from devops_agent.analysis.templates import TemplateMiner
from devops_agent.analysis.timeparse import extract_timestamp
from devops_agent.policies.limits import size_of

SAMPLE_CHARS = 300
MAX_GROUPS = 8
MAX_TEMPLATES = 8
MAX_DISTINCT = 12
MAX_KEYS = 40
MAX_SERIES = 10


def items_of(data: Any) -> int:
    """How many items the data's biggest list holds (lines for text)."""
    if isinstance(data, str):
        return data.count("\n") + 1
    if isinstance(data, list):
        return len(data)
    if isinstance(data, dict):
        return max((items_of(v) for v in data.values() if isinstance(v, list | dict)), default=0)
    return 0


def _short(value: Any, limit: int = SAMPLE_CHARS) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- detection ---------------------------------------------------------------------------------


def _lines_of(data: Any) -> list[str] | None:
    if isinstance(data, str):
        return data.splitlines()
    if isinstance(data, list) and data and all(isinstance(x, str) for x in data[:50]):
        return [str(x) for x in data]
    return None


def _looks_like_logs(lines: list[str]) -> bool:
    sample = [ln for ln in lines[:400] if ln.strip()]
    if len(sample) < 10:
        return False
    marked = sum(1 for ln in sample if extract_timestamp(ln) is not None or extract_message(ln)[1])
    return marked >= 0.3 * len(sample)


def _parse_text(text: str) -> Any:
    """Structured data inside a text result (JSON, or YAML documents), else ``None``."""
    stripped = text.lstrip()
    if stripped[:1] in "[{":
        try:
            return json.loads(stripped)
        except ValueError:
            pass
    if "\n" in stripped and (": " in stripped[:2000] or stripped.startswith("- ")):
        try:
            docs = [d for d in yaml.safe_load_all(stripped) if d is not None]
        except yaml.YAMLError:
            return None
        if docs and all(isinstance(d, dict | list) for d in docs):
            return docs[0] if len(docs) == 1 else docs
    return None


def _series_of(data: Any) -> list[tuple[str, list[tuple[datetime, float]]]] | None:
    """Time series in common shapes: Prometheus ``{"metric"|"labels", "values"}`` items, or
    ``{"name": [[t, v], …]}``."""
    items = data if isinstance(data, list) else None
    if isinstance(data, dict):
        for key in ("result", "series", "data"):
            if isinstance(data.get(key), list):
                items = data[key]
                break
    if not items or not isinstance(items[0], dict) or "values" not in items[0]:
        return None
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        labels = item.get("metric") or item.get("labels") or item.get("name") or {}
        points = []
        for pair in item.get("values") or []:
            if isinstance(pair, list | tuple) and len(pair) == 2:
                when, value = _time(pair[0]), _number(pair[1])
                if when is not None and value is not None:
                    points.append((when, value))
        if points:
            out.append((_short(labels, 160), points))
    return out or None


def _time(value: Any) -> datetime | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(float(value), UTC) if 0 < value < 1e11 else None
    if isinstance(value, str):
        return extract_timestamp(value)
    return None


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


# -- digests -----------------------------------------------------------------------------------


def digest_logs(lines: list[str]) -> dict[str, Any]:
    summary = group_lines((("result", ln) for ln in lines), errors_only=True)
    miner = TemplateMiner()
    for ln in lines:
        if ln.strip():
            miner.add(extract_message(ln)[0][:2000])
    templates = sorted(miner.templates(), key=lambda t: -t.count)[:MAX_TEMPLATES]
    groups = [
        {
            "shape": _short(g.shape, 200),
            "count": g.count,
            "first_seen": g.first_seen.isoformat() if g.first_seen else None,
            "last_seen": g.last_seen.isoformat() if g.last_seen else None,
            "example": _short(g.examples[0]) if g.examples else None,
            **({"spike": g.spike_description} if g.spike_description else {}),
        }
        for g in summary.top(MAX_GROUPS)
    ]
    time_range = (
        {"start": summary.time_range[0].isoformat(), "end": summary.time_range[1].isoformat()}
        if summary.time_range
        else None
    )
    if groups:
        top = groups[0]
        headline = (
            f"{summary.error_lines} error records in {len(lines)} lines, {len(summary.groups)} kinds; "
            f"top ×{top['count']}: {top['example'] or top['shape']}"
        )
    else:
        headline = f"{len(lines)} log lines, no error records" + (
            f"; commonest: {_short(templates[0].template, 160)} ×{templates[0].count}" if templates else ""
        )
    return {
        "kind": "logs",
        "headline": headline,
        "lines": len(lines),
        "time_range": time_range,
        "error_records": summary.error_lines,
        "error_groups_total": len(summary.groups),
        "error_groups": groups,
        "spikes": summary.spikes[:5],
        "top_templates": [{"template": _short(t.template, 200), "count": t.count} for t in templates],
    }


def digest_series(series: list[tuple[str, list[tuple[datetime, float]]]]) -> dict[str, Any]:
    out: list[dict[str, Any]] = []
    for name, points in series:
        values = [v for _, v in points]
        found = detect([t for t, _ in points], values, name=name).anomalies if len(points) >= 10 else []
        out.append(
            {
                "series": name,
                "points": len(points),
                "start": points[0][0].isoformat(),
                "end": points[-1][0].isoformat(),
                "min": round(min(values), 6),
                "max": round(max(values), 6),
                "mean": round(statistics.fmean(values), 6),
                "last": round(values[-1], 6),
                "anomalies": [
                    {"start": a.start.isoformat(), "kind": a.kind, "explanation": _short(a.explanation, 200)}
                    for a in found[:3]
                ],
            }
        )
    out.sort(key=lambda s: (-len(s["anomalies"]), -abs(s["max"])))
    flagged = next((s for s in out if s["anomalies"]), None)
    headline = (
        f"{len(out)} series; {flagged['series']}: {flagged['anomalies'][0]['explanation']}"
        if flagged
        else f"{len(out)} series, no anomaly; highest max {out[0]['max']} ({out[0]['series']})"
    )
    return {"kind": "metrics", "headline": headline, "series_total": len(out), "series": out[:MAX_SERIES]}


def digest_objects(items: list[Any], context: dict[str, Any] | None = None) -> dict[str, Any]:
    """A list of JSON objects (or scalars): count, schema, distinct values, ranges, samples."""
    dicts = [x for x in items if isinstance(x, dict)]
    if not dicts:
        counts = Counter(_short(x, 120) for x in items)
        common = counts.most_common(MAX_DISTINCT)
        top = f"; commonest: {common[0][0]} ×{common[0][1]}" if common else ""
        return {
            "kind": "list",
            "headline": f"{len(items)} items, {len(counts)} distinct{top}",
            "count": len(items),
            "distinct": len(counts),
            "top_values": [{"value": v, "count": n} for v, n in common],
            "samples": [_short(x) for x in items[:3]],
        }
    presence: Counter[str] = Counter()
    types: dict[str, set[str]] = {}
    values: dict[str, Counter[str]] = {}
    numbers: dict[str, list[float]] = {}
    for obj in dicts:
        for key, value in _flat(obj):
            presence[key] += 1
            types.setdefault(key, set()).add(type(value).__name__)
            if isinstance(value, int | float) and not isinstance(value, bool):
                numbers.setdefault(key, []).append(float(value))
            elif len(values.setdefault(key, Counter())) <= 200:
                values[key][_short(value, 80)] += 1
    schema = {k: {"types": sorted(types[k]), "present": n} for k, n in presence.most_common(MAX_KEYS)}
    distinct = {
        k: [{"value": v, "count": n} for v, n in c.most_common(MAX_DISTINCT)]
        for k, c in values.items()
        if 1 < len(c) <= 50 and k in schema
    }
    ranges = {
        k: {"min": min(v), "max": max(v), "mean": round(statistics.fmean(v), 4)}
        for k, v in numbers.items()
        if k in schema
    }
    headline = f"{len(items)} objects, {len(presence)} keys"
    telling = min(distinct, key=lambda k: len(distinct[k]), default=None)
    if telling is not None:
        commonest = distinct[telling][:4]
        headline += f"; {telling}: " + ", ".join(f"{t['value']} ×{t['count']}" for t in commonest)
    return {
        "kind": "objects",
        "headline": headline,
        **({"context": context} if context else {}),
        "count": len(items),
        "schema": schema,
        "distinct_values": distinct,
        "numeric_ranges": ranges,
        "samples": [_short(x) for x in (dicts[:2] + dicts[-1:] if len(dicts) > 2 else dicts)],
    }


def _flat(obj: dict[str, Any], prefix: str = "", depth: int = 0) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and depth < 2:
            out.extend(_flat(value, name + ".", depth + 1))
        elif isinstance(value, list):
            out.append((name + "[]", len(value)))
        else:
            out.append((name, value))
    return out


def digest_table(rows: list[list[str]], header: list[str] | None) -> dict[str, Any]:
    width = max((len(r) for r in rows), default=0)
    columns = header or [f"col{i + 1}" for i in range(width)]
    distinct = {name: len({r[i] for r in rows if i < len(r)}) for i, name in enumerate(columns[:MAX_KEYS])}
    headline = f"a table of {len(rows)} rows × {width} columns ({', '.join(columns[:6])})"
    return {
        "kind": "table",
        "headline": headline,
        "rows": len(rows),
        "columns": columns,
        "distinct_per_column": distinct,
        "top_rows": [" | ".join(r)[:SAMPLE_CHARS] for r in rows[:10]],
    }


def _table_of(lines: list[str]) -> tuple[list[list[str]], list[str] | None] | None:
    """Rows of aligned or delimited text (``kubectl get``, CSV), with its header."""
    sample = [ln for ln in lines[:50] if ln.strip()]
    if len(sample) < 5:
        return None
    for delimiter in (",", "\t"):
        if all(ln.count(delimiter) == sample[0].count(delimiter) > 0 for ln in sample) and (
            _time(sample[0].split(delimiter)[0]) is None  # a header row, not data
        ):
            parsed = list(
                csv.reader(io.StringIO("\n".join(ln for ln in lines if ln.strip())), delimiter=delimiter)
            )
            return parsed[1:], parsed[0]
    widths = {len(ln.split()) for ln in sample}
    header = sample[0].split()
    if len(widths) == 1 and all(w.strip("-_()%").isalpha() and w.isupper() for w in header):
        split = [ln.split() for ln in lines if ln.strip()]
        return split[1:], split[0]
    return None


def _csv_series(
    rows: list[list[str]], header: list[str]
) -> list[tuple[str, list[tuple[datetime, float]]]] | None:
    if not rows or len(header) < 2 or _time(rows[0][0]) is None:
        return None
    out = []
    for col in range(1, len(header)):
        points = [
            (t, v)
            for r in rows
            if len(r) > col and (t := _time(r[0])) is not None and (v := _number(r[col])) is not None
        ]
        if len(points) >= 0.8 * len(rows):
            out.append((header[col], points))
    return out or None


def digest_text(text: str) -> dict[str, Any]:
    lines = text.splitlines()
    return {
        "kind": "text",
        "headline": f"{len(text):,} characters, {len(lines)} lines; starts: "
        + _short(lines[0] if lines else "", 160),
        "characters": len(text),
        "lines": len(lines),
        "head": "\n".join(lines[:20])[:2000],
        "tail": "\n".join(lines[-10:])[:1000] if len(lines) > 20 else "",
    }


def digest(data: Any) -> dict[str, Any]:
    """The summary of ``data`` by what it is; always has ``kind`` and ``headline``."""
    if isinstance(data, str):
        parsed = _parse_text(data)
        if parsed is not None:
            return digest(parsed)
    if (series := _series_of(data)) is not None:
        return digest_series(series)
    lines = _lines_of(data)
    if lines is not None:
        # A table first: CSV rows are timestamped too, but their columns are the point.
        table = _table_of(lines)
        if table is not None:
            rows, header = table
            if header and (csv_series := _csv_series(rows, header)):
                return digest_series(csv_series)
            return digest_table(rows, header)
        if _looks_like_logs(lines):
            return digest_logs(lines)
        return digest_text(data if isinstance(data, str) else "\n".join(lines))
    if isinstance(data, list):
        if data and all(isinstance(r, list) for r in data[:20]):
            return digest_table([[_short(c, 80) for c in r] for r in data], None)
        return digest_objects(data)
    if isinstance(data, dict):
        big = max(
            ((k, v) for k, v in data.items() if isinstance(v, list | str | dict)),
            key=lambda kv: size_of(kv[1]),
            default=None,
        )
        if big is not None and size_of(big[1]) > 0.5 * size_of(data):
            rest = {k: _short(v, 200) for k, v in data.items() if k != big[0]}
            inner = digest(big[1])
            inner["field"] = big[0]
            if rest:
                inner.setdefault("context", rest)
            return inner
        return digest_objects([data])
    return digest_text(_short(data, 10_000))


def fit(summary: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """``summary`` cut down until its JSON fits ``max_chars``: long lists lose their tails first."""
    out = dict(summary)
    while size_of(out) > max_chars:
        longest = max(
            (k for k, v in out.items() if isinstance(v, list | dict) and len(v) > 1),
            key=lambda k: size_of(out[k]),
            default=None,
        )
        if longest is None:
            for k, v in out.items():
                if isinstance(v, str) and len(v) > 200 and k != "headline":
                    out[k] = v[: len(v) // 2] + "…"
                    break
            else:
                break
            continue
        value = out[longest]
        out[longest] = (
            value[: len(value) // 2]
            if isinstance(value, list)
            else dict(list(value.items())[: len(value) // 2])
        )
    return out
