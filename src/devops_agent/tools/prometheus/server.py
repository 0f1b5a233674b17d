"""One configured Prometheus server as the tools use it: the client, the result metadata every
tool attaches, and range queries whose step keeps within the server's points limit.
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass, field
from typing import Any

import httpx

from devops_agent.tools.prometheus.client import NAME, PromClient, PromConfig, PromError
from devops_agent.tools.prometheus.params import choose_step, iso, parse_duration, parse_time


@dataclass
class Server:
    """What every prometheus tool of one toolset shares."""

    config: PromConfig
    transport: httpx.BaseTransport | None = None
    prom: PromClient = field(init=False)

    def __post_init__(self) -> None:
        self.prom = PromClient(self.config, self.transport)

    def meta(self, warnings: list[str] | None = None, **extra: Any) -> dict[str, Any]:
        """The metadata of a tool's result: the server, up to five of its warnings, and ``extra``."""
        out: dict[str, Any] = {"source": NAME, "url": self.config.url}
        if warnings:
            out["warnings"] = warnings[:5]
        out.update(extra)
        return out

    def fetch_range(
        self, query: str, start: str, end: str | None, step: str | None
    ) -> tuple[dict[str, Any], list[str], dict[str, Any]]:
        """Run a range query: (data, warnings, range facts); the step keeps within max_points."""
        now = _time.time()
        start_ts, end_ts = parse_time(start, now), parse_time(end, now)
        if end_ts <= start_ts:
            raise PromError(
                f"the range is empty: end ({iso(end_ts)}) is not after start ({iso(start_ts)})",
                "start is the earlier bound, e.g. start='2h', end='1h'",
            )
        asked = parse_duration(step) if step is not None else None
        step_s = choose_step(end_ts - start_ts, asked, self.config.max_points)
        params = {"query": query, "start": f"{start_ts:.3f}", "end": f"{end_ts:.3f}", "step": f"{step_s:g}"}
        data, warnings = self.prom.get("query_range", params, form=True)
        adjusted = asked is not None and step_s != asked
        range_info = {
            "start": iso(start_ts),
            "end": iso(end_ts),
            "step_s": step_s,
            "step_adjusted": adjusted,
        }
        if adjusted:  # said, not silently done: a coarser step can hide a short spike
            warnings = [
                *warnings,
                f"step raised from {asked:g}s to {step_s:g}s to stay within {self.config.max_points} points "
                "per series; narrow the range to keep the finer step",
            ]
        return data, warnings, range_info
