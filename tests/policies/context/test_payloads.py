"""Large tool results summarized by type before a model reads them, the raw result kept."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic_ai import FunctionToolset, RunContext, Tool
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

from devops_agent.config import Settings
from devops_agent.config.context import PayloadSettings
from devops_agent.policies.breaker import BreakerBoard
from devops_agent.policies.context.payloads import digest, fit
from devops_agent.policies.limits import size_of
from devops_agent.policies.pipeline import RunPolicy, build_pipeline
from devops_agent.policies.toolsets.record import ToolCallInfo
from devops_agent.tools.base import SPEC_KEY, ToolResult, ToolSpec


def log_text(lines: int = 3000, incident_every: int = 150) -> str:
    rng = random.Random(1)
    out = []
    start = datetime(2024, 5, 1, 10, tzinfo=UTC)
    for i in range(lines):
        t = (start + timedelta(seconds=i)).isoformat().replace("+00:00", "Z")
        out.append(f"{t} INFO api request {rng.randrange(10**6)} served in {rng.randint(1, 90)}ms")
        if i % incident_every == 7:
            out.append(
                f"{t} ERROR payments: connection to ledger-db-7:5432 refused tx={rng.randrange(10**6)}"
            )
    return "\n".join(out)


def test_logs_become_error_groups_and_templates() -> None:
    d = digest(log_text())
    assert d["kind"] == "logs"
    assert d["error_records"] == 20
    group = d["error_groups"][0]
    assert group["count"] == 20
    assert "ledger-db-7:5432 refused" in group["example"]
    assert "ledger-db-7:5432 refused" in d["headline"]
    assert d["top_templates"][0]["count"] == 3000
    assert d["time_range"]["start"].startswith("2024-05-01T10:00:00")


def test_metrics_become_statistics_and_anomalies() -> None:
    base = 1714557600
    series = []
    for pod in range(4):
        values = [
            [base + 60 * i, str(0.5 + 0.01 * (i % 7) + (6.0 if pod == 2 and i > 150 else 0))]
            for i in range(200)
        ]
        series.append({"metric": {"__name__": "cpu", "pod": f"api-{pod}"}, "values": values})
    d = digest({"resultType": "matrix", "result": series})
    assert d["kind"] == "metrics"
    assert d["series_total"] == 4
    flagged = d["series"][0]
    assert "api-2" in flagged["series"]
    assert flagged["anomalies"]
    assert flagged["max"] > 6
    assert "api-2" in d["headline"]


def test_csv_metrics_are_series_too() -> None:
    rows = ["timestamp,latency_ms,errors"] + [
        f"2024-05-01T10:{i // 60:02d}:{i % 60:02d}Z,{100 + (400 if i > 100 else 0)},{i % 3}"
        for i in range(150)
    ]
    d = digest("\n".join(rows))
    assert d["kind"] == "metrics"
    assert {s["series"] for s in d["series"]} == {"latency_ms", "errors"}


def test_json_lists_become_schema_counts_distinct_values_and_samples() -> None:
    pods = [
        {
            "name": f"api-{i}",
            "status": {"phase": ["Running", "CrashLoopBackOff", "Pending"][i % 3]},
            "restarts": i % 5,
        }
        for i in range(900)
    ]
    d = digest({"kind": "PodList", "items": pods})
    assert d["kind"] == "objects"
    assert d["count"] == 900
    assert d["field"] == "items"
    assert d["context"] == {"kind": "PodList"}
    assert d["schema"]["status.phase"] == {"types": ["str"], "present": 900}
    phases = {v["value"]: v["count"] for v in d["distinct_values"]["status.phase"]}
    assert phases == {"Running": 300, "CrashLoopBackOff": 300, "Pending": 300}
    assert d["numeric_ranges"]["restarts"] == {"min": 0, "max": 4, "mean": 2.0}
    assert len(d["samples"]) == 3


def test_yaml_text_is_parsed_like_json() -> None:
    doc = "items:\n" + "".join(
        f"- name: job-{i}\n  state: {'failed' if i % 4 == 0 else 'ok'}\n" for i in range(300)
    )
    d = digest(doc)
    assert d["kind"] == "objects"
    assert {v["value"] for v in d["distinct_values"]["state"]} == {"failed", "ok"}


def test_tables_become_shape_header_and_top_rows() -> None:
    table = "NAME READY STATUS RESTARTS AGE\n" + "\n".join(
        f"api-{i} 1/1 Running {i % 3} 5d" for i in range(400)
    )
    d = digest(table)
    assert d["kind"] == "table"
    assert d["rows"] == 400
    assert d["columns"] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert d["distinct_per_column"]["RESTARTS"] == 3
    assert d["top_rows"][0] == "api-0 | 1/1 | Running | 0 | 5d"


def test_fit_bounds_any_summary() -> None:
    d = digest([{"k": f"v{i}", "text": "x" * 300} for i in range(2000)])
    assert size_of(fit(d, 1500)) <= 1500
    assert fit(d, 1500)["headline"] == d["headline"]


def _pipeline(fn: Any, payloads: PayloadSettings | None, seen: list[ToolCallInfo]) -> Any:
    spec = ToolSpec(category="test", read_only=True)
    inner = FunctionToolset([Tool(fn, name="dump", metadata={SPEC_KEY: spec.model_dump()})])
    policy = RunPolicy(
        mode="ask",
        approvals="deny",
        breakers=BreakerBoard(Settings().tools.breaker),
        recorder=seen.append,
        session_id="s1",
        digest=payloads,
    )
    return build_pipeline([inner], Settings(), policy)


def _call(pipeline: Any) -> ToolResult:
    async def go() -> ToolResult:
        ctx = RunContext(
            deps=None, model=TestModel(), usage=RunUsage(), tool_call_id="call-9", tool_name="dump"
        )
        tools = await pipeline.get_tools(ctx)
        result: ToolResult = await pipeline.call_tool("dump", {}, ctx, tools["dump"])
        return result

    return asyncio.run(go())


def test_the_model_path_reads_a_digest_and_the_raw_result_is_kept() -> None:
    text = log_text()
    seen: list[ToolCallInfo] = []
    result = _call(_pipeline(lambda: text, PayloadSettings(), seen))
    assert result.data["kind"] == "logs"
    assert size_of(result.data) <= PayloadSettings().summary_chars
    assert result.metadata["digest"] == "logs"
    assert result.metadata["truncated"] is True
    assert result.metadata["original_chars"] == len(text)
    assert "query_result(call_id='call-9'" in (result.hint or "")
    assert seen[0].raw == text, "the recorder gets the whole result to keep"


def test_without_thresholds_the_digest_wrapper_passes_results_through() -> None:
    small = {"a": 1}
    seen: list[ToolCallInfo] = []
    assert _call(_pipeline(lambda: small, PayloadSettings(), seen)).data == small
    capped = _call(_pipeline(lambda: log_text(), None, seen))
    assert "digest" not in capped.metadata, "runbooks (no thresholds) get the cap, not a digest"
    assert "characters dropped" in capped.data
