"""What the server knows besides samples: series, label names and values, metric names with
their help text, scrape targets, alerts and rules."""

from __future__ import annotations

import re
import time as _time
from typing import Any

from devops_agent.results import ToolResult
from devops_agent.tools.base import ToolsetBuilder
from devops_agent.tools.prometheus.client import PromError
from devops_agent.tools.prometheus.params import num, parse_time, rounded
from devops_agent.tools.prometheus.queries import MAX_LIST
from devops_agent.tools.prometheus.server import Server


def _matchers(match: str | list[str] | None) -> list[str]:
    if match is None:
        return []
    return [match] if isinstance(match, str) else [m for m in match if m]


def _capped(items: list[Any], limit: int) -> dict[str, Any]:
    return {"total": len(items), "truncated": len(items) > limit}


def _time_params(start: str | None, end: str | None) -> dict[str, str]:
    params: dict[str, str] = {}
    now = _time.time()
    if start:
        params["start"] = f"{parse_time(start, now):.3f}"
    if end:
        params["end"] = f"{parse_time(end, now):.3f}"
    return params


def add_catalog_tools(ts: ToolsetBuilder, server: Server) -> None:
    """Declare ``prom_series``, ``prom_labels``, ``prom_label_values``, ``prom_metrics``,
    ``prom_targets``, ``prom_alerts`` and ``prom_rules`` on ``ts``."""
    prom, meta = server.prom, server.meta

    @ts.tool(category="metrics", read_only=True)
    def prom_series(
        match: str | list[str], start: str = "1h", end: str | None = None, limit: int = 100
    ) -> ToolResult:
        """List the label sets of the series that match selectors in a time range.

        Use it to see which jobs, instances or pods report a metric before querying it.

        Args:
            match: one or more series selectors, e.g. 'up' or '{job="api", __name__=~"http_.*"}'.
            start: range start: "1h" (ago), an ISO 8601 date-time or unix seconds.
            end: range end, same forms; default now.
            limit: most series to return (1-1000).
        """
        limit = max(1, min(limit, MAX_LIST))
        matchers = _matchers(match)
        if not matchers:
            return ToolResult.fail("match is empty", hint="give a selector such as 'up' or '{job=\"api\"}'")
        try:
            params: dict[str, Any] = {"match[]": matchers, **_time_params(start, end)}
            data, warnings = prom.get("series", params, form=True)
        except PromError as exc:
            return exc.result()
        if not data:
            return ToolResult.empty(f"no series match {matchers} in that range", **meta(warnings))
        return ToolResult.ok({"series": data[:limit], **_capped(data, limit)}, **meta(warnings))

    @ts.tool(category="metrics", read_only=True)
    def prom_labels(
        match: str | list[str] | None = None, start: str | None = None, end: str | None = None
    ) -> ToolResult:
        """List label names (job, instance, pod, ...), optionally only those of matching series.

        Args:
            match: optional series selectors limiting the names to those series, e.g. 'up'.
            start: optional range start: "1h" (ago), an ISO 8601 date-time or unix seconds.
            end: optional range end, same forms.
        """
        try:
            params: dict[str, Any] = {"match[]": _matchers(match), **_time_params(start, end)}
            data, warnings = prom.get("labels", params, form=True)
        except PromError as exc:
            return exc.result()
        if not data:
            return ToolResult.empty("no label names found", **meta(warnings))
        return ToolResult.ok({"labels": data[:MAX_LIST], **_capped(data, MAX_LIST)}, **meta(warnings))

    @ts.tool(category="metrics", read_only=True)
    def prom_label_values(
        label: str,
        match: str | list[str] | None = None,
        start: str | None = None,
        end: str | None = None,
        limit: int = 200,
    ) -> ToolResult:
        """List the values of one label, e.g. every `job` or every `instance`, optionally for matching series.

        Args:
            label: the label name, e.g. "job", "instance", "namespace" or "__name__".
            match: optional series selectors, e.g. 'up{job="node"}'.
            start: optional range start: "1h" (ago), an ISO 8601 date-time or unix seconds.
            end: optional range end, same forms.
            limit: most values to return (1-1000).
        """
        limit = max(1, min(limit, MAX_LIST))
        if not re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_]*", label):
            return ToolResult.fail(
                f"{label!r} is not a valid label name", hint="label names look like job, instance or __name__"
            )
        try:
            params: dict[str, Any] = {"match[]": _matchers(match), **_time_params(start, end)}
            data, warnings = prom.get(f"label/{label}/values", params)
        except PromError as exc:
            return exc.result()
        if not data:
            return ToolResult.empty(
                f"label {label!r} has no values (for these series); prom_labels lists names"
            )
        return ToolResult.ok(
            {"label": label, "values": data[:limit], **_capped(data, limit)}, **meta(warnings)
        )

    @ts.tool(category="metrics", read_only=True)
    def prom_metrics(match: str | None = None, limit: int = 200, with_help: bool = True) -> ToolResult:
        """List metric names, optionally filtered, with their type and help text where known.

        Use it to find the right metric before writing PromQL.

        Args:
            match: optional regular expression searched in metric names, e.g. "node_cpu" or "^http_.*_total$".
            limit: most metrics to return (1-1000).
            with_help: also return each metric's type, unit and help text (from the metadata API).
        """
        limit = max(1, min(limit, MAX_LIST))
        try:
            pattern = re.compile(match) if match else None
        except re.error as exc:
            return ToolResult.fail(
                f"invalid regular expression {match!r}: {exc}", hint="e.g. 'node_cpu' or '^http_'"
            )
        try:
            all_names, warnings = prom.get("label/__name__/values")
            names: list[str] = [n for n in all_names or [] if pattern is None or pattern.search(n)]
            if not names:
                message = f"no metric names match {match!r}" if match else "the server has no metrics yet"
                return ToolResult.empty(message, **meta(warnings))
            metadata: dict[str, list[dict[str, str]]] = prom.get("metadata")[0] if with_help else {}
        except PromError as exc:
            return exc.result()
        metrics: list[dict[str, Any]] = []
        for metric_name in names[:limit]:
            entry: dict[str, Any] = {"name": metric_name}
            info = (metadata or {}).get(metric_name)
            if info:
                entry.update({k: v for k, v in info[0].items() if v})
            metrics.append(entry)
        return ToolResult.ok({"metrics": metrics, **_capped(names, limit)}, **meta(warnings))

    @ts.tool(category="metrics", read_only=True)
    def prom_targets(limit: int = 100) -> ToolResult:
        """List the scrape targets with their health (up/down), last scrape and last error; down first.

        Use it when metrics are missing or `up == 0`: the last error says why a scrape fails.

        Args:
            limit: most targets to return (1-1000).
        """
        limit = max(1, min(limit, MAX_LIST))
        try:
            data, warnings = prom.get("targets", {"state": "active"})
        except PromError as exc:
            return exc.result()
        active = data.get("activeTargets") or []
        targets = [
            {
                "job": t.get("labels", {}).get("job") or t.get("scrapePool"),
                "instance": t.get("labels", {}).get("instance"),
                "health": t.get("health"),
                "last_error": t.get("lastError") or None,
                "last_scrape": t.get("lastScrape"),
                "last_scrape_duration_s": t.get("lastScrapeDuration"),
                "scrape_url": t.get("scrapeUrl"),
                "labels": t.get("labels", {}),
            }
            for t in active
        ]
        order = {"down": 0, "unknown": 1, "up": 2}
        targets.sort(key=lambda t: (order.get(str(t["health"]), 1), str(t["job"]), str(t["instance"])))
        if not targets:
            return ToolResult.empty(
                "Prometheus has no active scrape targets; check its scrape_configs", **meta(warnings)
            )
        counts = {h: sum(1 for t in targets if t["health"] == h) for h in ("up", "down", "unknown")}
        return ToolResult.ok(
            {"targets": targets[:limit], "counts": counts, **_capped(targets, limit)}, **meta(warnings)
        )

    @ts.tool(category="metrics", read_only=True)
    def prom_alerts(limit: int = 100) -> ToolResult:
        """List the alerts firing or pending in Prometheus, with labels, annotations and since when.

        Args:
            limit: most alerts to return (1-1000), firing first.
        """
        limit = max(1, min(limit, MAX_LIST))
        try:
            data, warnings = prom.get("alerts")
        except PromError as exc:
            return exc.result()
        alerts = [
            {
                "name": a.get("labels", {}).get("alertname"),
                "state": a.get("state"),
                "severity": a.get("labels", {}).get("severity"),
                "labels": a.get("labels", {}),
                "annotations": a.get("annotations", {}),
                "active_at": a.get("activeAt"),
                "value": rounded(num(a["value"])) if a.get("value") else None,
            }
            for a in data.get("alerts") or []
        ]
        alerts.sort(key=lambda a: (a["state"] != "firing", str(a["active_at"])))
        if not alerts:
            return ToolResult.empty("no alerts are firing or pending", **meta(warnings))
        counts = {s: sum(1 for a in alerts if a["state"] == s) for s in ("firing", "pending")}
        return ToolResult.ok(
            {"alerts": alerts[:limit], "counts": counts, **_capped(alerts, limit)}, **meta(warnings)
        )

    @ts.tool(category="metrics", read_only=True)
    def prom_rules(kind: str | None = None, limit: int = 200) -> ToolResult:
        """List alerting and recording rules with their expression, health, last error and alert state.

        Use it to read what an alert actually checks (its PromQL and `for` duration).

        Args:
            kind: "alert" or "record" to list only that kind; default both.
            limit: most rules to return (1-1000).
        """
        limit = max(1, min(limit, MAX_LIST))
        if kind not in (None, "alert", "record"):
            return ToolResult.fail(f"kind must be 'alert' or 'record', got {kind!r}", hint="or leave it out")
        try:
            data, warnings = prom.get("rules", {"type": kind} if kind else None)
        except PromError as exc:
            return exc.result()
        rules: list[dict[str, Any]] = []
        for group in data.get("groups") or []:
            for r in group.get("rules") or []:
                rule: dict[str, Any] = {
                    "group": group.get("name"),
                    "file": group.get("file"),
                    "name": r.get("name"),
                    "type": "alert" if r.get("type") == "alerting" else "record",
                    "query": r.get("query"),
                    "health": r.get("health"),
                    "last_error": r.get("lastError") or None,
                    "labels": r.get("labels") or {},
                }
                if rule["type"] == "alert":
                    rule.update(
                        state=r.get("state"),
                        for_s=r.get("duration"),
                        active_alerts=len(r.get("alerts") or []),
                        annotations=r.get("annotations") or {},
                    )
                rules.append(rule)
        if not rules:
            return ToolResult.empty(
                "Prometheus has no rules loaded" + (f" of kind {kind}" if kind else ""), **meta(warnings)
            )
        return ToolResult.ok({"rules": rules[:limit], **_capped(rules, limit)}, **meta(warnings))
