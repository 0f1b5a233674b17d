"""The analyzer contract, its registry, and helpers for reading tool output defensively.

An analyzer is a pure function ``(evidence, params, inputs) -> list[Finding]``. ``evidence`` maps
runbook step ids to the :class:`ToolResult` of that step; the engine copies each result and adds
``metadata["tool"]``, ``metadata["args"]`` and ``metadata["step"]`` (``runbook/step``) so an
analyzer can pick what it understands by tool name instead of by step id. Only results whose
status is ``success`` or ``no_data`` reach an analyzer. Among its findings an analyzer may return a
:class:`Gap` for evidence that came back empty because its source is not there at all (no journald
on the host), so that the report does not claim every step succeeded.

An analyzer also says what it read, one :class:`Checked` per source (:func:`checked`): how many
log lines, series, commits or entries lay in the window. The report's verdict is derived from
these: an analyzer that reads nothing, or does not say what it read, can never make an all-clear
(the engine turns its silence into a gap).

Tool output shapes are owned by the tools and may change or arrive truncated to a string by the
size cap: helpers here accept the documented variants (a bare list, or a dict holding the list)
and raise :class:`CannotAnalyze` when the data is not structured, which the engine reports as a
gap. Analyzers must not call tools, do I/O, or invent findings without evidence.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from devops_agent.report import Checked, Finding, Gap
from devops_agent.results import ToolResult

Evidence = dict[str, ToolResult]
Item = Finding | Gap | Checked
"""What an analyzer returns: findings, gaps, and what it read."""
Analyzer = Callable[[Evidence, dict[str, Any], dict[str, Any]], Sequence[Item]]

ANALYZERS: dict[str, Analyzer] = {}
"""Every registered analyzer by name; runbooks name them under ``analyzers: - use:``."""


class CannotAnalyze(Exception):
    """The evidence exists but is not in a shape this analyzer can read; becomes a report gap."""

    def __init__(self, reason: str, hint: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.hint = hint


def register_analyzer(name: str) -> Callable[[Analyzer], Analyzer]:
    """Decorator adding an analyzer to :data:`ANALYZERS` under ``name``."""

    def decorator(fn: Analyzer) -> Analyzer:
        if name in ANALYZERS:
            raise ValueError(f"analyzer {name!r} is registered twice")
        ANALYZERS[name] = fn
        return fn

    return decorator


def results_for(evidence: Evidence, tool: str) -> Iterator[ToolResult]:
    """The results in ``evidence`` produced by ``tool``, in step order."""
    for result in evidence.values():
        if result.metadata.get("tool") == tool:
            yield result


def first_result(evidence: Evidence, tool: str) -> ToolResult | None:
    """The first result produced by ``tool``, or ``None``."""
    return next(results_for(evidence, tool), None)


def source_of(result: ToolResult) -> str:
    """``tool (runbook/step)`` for a finding's ``source``."""
    tool = str(result.metadata.get("tool", "?"))
    step = result.metadata.get("step")
    return f"{tool} ({step})" if step else tool


def checked(
    result: ToolResult, read: int, unit: str, *, detail: str = "", empty_is_answer: bool = False
) -> Checked:
    """What ``result``'s step read in the window (``read`` of ``unit``), for the report's verdict."""
    return Checked(
        step=str(result.metadata.get("step") or result.metadata.get("tool") or "?"),
        tool=str(result.metadata.get("tool") or "?"),
        read=max(0, int(read)),
        unit=unit,
        detail=detail,
        empty_is_answer=empty_is_answer,
    )


def structured(result: ToolResult) -> Any:
    """The result's data, parsed if it is a JSON string; :class:`CannotAnalyze` if it is plain text."""
    data = result.data
    if isinstance(data, str | bytes):
        try:
            return json.loads(data)
        except ValueError:
            tool = result.metadata.get("tool", "the tool")
            cut = " (it was truncated by the size cap)" if result.metadata.get("truncated") else ""
            raise CannotAnalyze(
                f"output of {tool} is text, not structured data{cut}; {len(data)} characters",
                hint="rerun the tool with narrower arguments, or read its raw output",
            ) from None
    return data


def as_records(data: Any, *keys: str) -> list[dict[str, Any]]:
    """A list of dict records from ``data``: a bare list, or a list under one of ``keys``."""
    if data is None:
        return []
    if isinstance(data, dict):
        for key in keys:
            if isinstance(data.get(key), list):
                return [r for r in data[key] if isinstance(r, dict)]
        raise CannotAnalyze(f"expected a list under one of {', '.join(keys)}; got keys {sorted(data)[:8]}")
    if isinstance(data, list):
        return [r for r in data if isinstance(r, dict)]
    raise CannotAnalyze(f"expected a list of records, got {type(data).__name__}")


def as_mapping(data: Any) -> dict[str, Any]:
    """``data`` if it is a dict; :class:`CannotAnalyze` otherwise."""
    if isinstance(data, dict):
        return data
    raise CannotAnalyze(f"expected an object, got {type(data).__name__}")


def list_field(record: dict[str, Any], key: str) -> list[Any]:
    """``record[key]`` if it is a list, else an empty list."""
    value = record.get(key)
    return value if isinstance(value, list) else []


def dict_field(record: dict[str, Any], key: str) -> dict[str, Any]:
    """``record[key]`` if it is a dict, else an empty dict."""
    value = record.get(key)
    return value if isinstance(value, dict) else {}


def number(value: Any) -> float | None:
    """``value`` as a float, or ``None`` when it is missing or not numeric."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def fmt_bytes(value: Any) -> str:
    """Bytes in binary units with one decimal (``46.5 GiB``); ``?`` when unknown."""
    n = number(value)
    if n is None:
        return "?"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"  # pragma: no cover - loop always returns


def fmt_duration(seconds: float) -> str:
    """A compact duration: ``45s``, ``12m``, ``3h 5m``, ``4d 2h``."""
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h {s % 3600 // 60}m"
    return f"{s // 86400}d {s % 86400 // 3600}h"


def shorten(text: Any, limit: int = 160) -> str:
    """One line of at most ``limit`` characters, ellipsized."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def describe_item(item: Any) -> str:
    """A short label for a process/unit record whose exact keys vary between tools."""
    if not isinstance(item, dict):
        return shorten(item, 120)
    if item.get("line"):  # a record quoting its source line (e.g. a kernel log OOM message)
        return shorten(item["line"], 200)
    name = item.get("unit") or item.get("name") or item.get("comm") or item.get("process") or "?"
    parts = [str(name)]
    if item.get("pid") is not None:
        parts.insert(0, f"pid {item['pid']}")
    for key in ("ppid", "parent_name", "state", "status", "active", "sub", "description", "message", "time"):
        if item.get(key) not in (None, ""):
            parts.append(f"{key}={shorten(item[key], 60)}")
    cmd = item.get("cmdline")
    if isinstance(cmd, list):
        cmd = " ".join(str(c) for c in cmd)
    if cmd:
        parts.append(f"cmd={shorten(cmd, 80)}")
    return " ".join(parts)
