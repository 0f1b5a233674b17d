"""Review fixes in ``logs_errors``: tracebacks whose every line carries a timestamp fold into one
error record, and the count of error records in the groups the output cap leaves out is right.
Real files, real tool calls; the cap is the real middleware."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from devops_agent.config import Settings
from devops_agent.report import Finding
from devops_agent.runbooks.analyzers import ANALYZERS
from devops_agent.tools.base import ToolResult
from fixtures_logs import call_entry, log_tools

PY_TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/app/x.py", line 3, in f',
    "    return int(raw)",
    "ValueError: bad",
]
JAVA_TRACE = [
    "ERROR [main] c.a.Svc - request failed",
    "java.lang.IllegalStateException: boom",
    "\tat com.acme.X.run(X.java:42)",
    "\tat com.acme.Y.go(Y.java:7)",
    "Caused by: java.io.IOException: disk full",
    "\tat com.acme.Z.write(Z.java:11)",
    "\t... 5 more",
]


def _stamp(ms: int) -> str:
    return f"2026-03-14T09:40:{ms // 1000:02d}.{ms % 1000:03d}Z"


def _errors(tmp_path: Path, lines: list[str]) -> dict[str, Any]:
    log = tmp_path / "app.log"
    log.write_text("\n".join(lines) + "\n")
    result = call_entry(log_tools(tmp_path), "logs_errors", paths=[str(log)])
    assert result.status == "success", result.hint
    assert isinstance(result.data, dict)
    return result.data


# --- timestamped tracebacks ------------------------------------------------------------------


def test_a_python_traceback_with_a_timestamp_on_every_line_is_one_error(tmp_path: Path) -> None:
    lines = [f"{_stamp(1000)} INFO starting"]
    lines += [f"{_stamp(3123 + i)} {text}" for i, text in enumerate(PY_TRACEBACK)]
    lines += [f"{_stamp(4000)} INFO starting", f"{_stamp(5000)} INFO serving"]
    data = _errors(tmp_path, lines)
    assert data["error_lines"] == 1
    (group,) = data["groups"]
    assert group["count"] == 1
    assert group["shape"] == "Traceback (most recent call last): | ValueError: bad"
    assert "ValueError: bad" in group["examples"][0]  # the traceback's final line
    assert data["matched_lines"] == len(lines)


def test_a_logged_exception_with_timestamped_traceback_lines_is_one_error(tmp_path: Path) -> None:
    records = []
    for n, start in enumerate((3000, 9000)):
        records.append(f"{_stamp(start)} ERROR handler failed for job {n}")
        records += [f"{_stamp(start + 1 + i)} {text}" for i, text in enumerate(PY_TRACEBACK)]
        records.append(f"{_stamp(start + 500)} INFO retrying job {n}")
    data = _errors(tmp_path, records)
    assert data["error_lines"] == 2
    (group,) = data["groups"]
    assert group["count"] == 2
    assert group["shape"] == "handler failed for job <NUM> | ValueError: bad"
    assert group["examples"][0].endswith("\nValueError: bad")


def test_a_timestamped_java_stack_trace_is_one_error_with_its_root_cause(tmp_path: Path) -> None:
    lines = [f"{_stamp(2000 + i)} {text}" for i, text in enumerate(JAVA_TRACE)]
    lines.append(f"{_stamp(3000)} INFO next request")
    data = _errors(tmp_path, lines)
    assert data["error_lines"] == 1
    (group,) = data["groups"]
    assert group["count"] == 1
    assert group["shape"] == "[main] c.a.Svc - request failed | Caused by: java.io.IOException: disk full"


def test_container_lines_with_a_stream_prefix_or_their_own_timestamps_fold(tmp_path: Path) -> None:
    # docker logs --timestamps of a compose service: time, stream, line
    stream = [f"{_stamp(1000 + i)} stderr {text}" for i, text in enumerate(PY_TRACEBACK)]
    # a Kubernetes CRI log whose application stamps every line itself
    cri = [
        f"2026-03-14T09:41:00.{i:06d}Z stderr F {_stamp(2000 + i)} {text}"
        for i, text in enumerate(["ERROR worker crashed", *PY_TRACEBACK])
    ]
    cri.append(f"2026-03-14T09:41:01.000000Z stdout F {_stamp(3000)} INFO worker restarted")
    for name, lines in (("stream", stream), ("cri", cri)):
        data = _errors(tmp_path, lines)
        assert data["error_lines"] == 1, name
        (group,) = data["groups"]
        assert group["count"] == 1, name
        assert group["shape"].endswith("| ValueError: bad"), name


def test_a_timestamped_exception_chain_with_blank_lines_is_one_error(tmp_path: Path) -> None:
    chain = [*PY_TRACEBACK[:3], "KeyError: 'raw'", ""]
    chain += ["During handling of the above exception, another exception occurred:", "", *PY_TRACEBACK]
    lines = [f"{_stamp(1000 + i)} {text}".rstrip() for i, text in enumerate(chain)]
    lines += [f"{_stamp(2000)} INFO next request"]
    data = _errors(tmp_path, lines)
    assert data["error_lines"] == 1
    assert [(g["shape"], g["count"]) for g in data["groups"]] == [
        ("Traceback (most recent call last): | ValueError: bad", 1)
    ]


def test_consecutive_timestamped_tracebacks_are_separate_errors(tmp_path: Path) -> None:
    # a traceback of its own is complete at its exception line: the next stamped Traceback is the
    # next occurrence, not a chained one (no "During handling …" line came between them)
    lines = [f"{_stamp(1000 + 10 * k + i)} {text}" for k in range(3) for i, text in enumerate(PY_TRACEBACK)]
    lines += [f"{_stamp(2000)} INFO next request"]
    data = _errors(tmp_path, lines)
    assert data["error_lines"] == 3
    assert [(g["shape"], g["count"]) for g in data["groups"]] == [
        ("Traceback (most recent call last): | ValueError: bad", 3)
    ]


def test_stack_frames_under_a_timestamped_warning_are_not_errors_of_their_own(tmp_path: Path) -> None:
    lines = [f"{_stamp(1000)} WARN retrying the upload", *(f"{_stamp(1001)} {t}" for t in JAVA_TRACE[2:4])]
    lines += [f"{_stamp(1002)} ERROR upload failed"]
    data = _errors(tmp_path, lines)
    assert data["error_lines"] == 1
    assert [(g["shape"], g["count"]) for g in data["groups"]] == [("upload failed", 1)]


def test_consecutive_timestamped_records_are_not_merged(tmp_path: Path) -> None:
    lines = [
        f"{_stamp(1000)} ERROR payment 7 declined",
        f"{_stamp(1001)} INFO starting",
        f"{_stamp(1002)} ERROR payment 8 declined",
        f"{_stamp(1003)} ERROR payment 9 declined",
        # Rust's tracing right-aligns the level: " INFO" is a record, not an indented frame
        f"{_stamp(1004)}  INFO cache warm",
        f"{_stamp(1005)} ERROR payment 10 declined",
        f"{_stamp(1006)}  WARN disk 91% full",
        f"{_stamp(1007)} ERROR disk write failed",
    ]
    data = _errors(tmp_path, lines)
    assert data["error_lines"] == 5
    assert sorted((g["shape"], g["count"]) for g in data["groups"]) == [
        ("disk write failed", 1),
        ("payment <NUM> declined", 4),
    ]


def test_a_log_indented_the_same_after_every_timestamp_is_not_one_record(tmp_path: Path) -> None:
    lines = [f"{_stamp(1000 + i)}  upload {i} failed" for i in range(1, 5)]
    data = _errors(tmp_path, lines)
    assert data["error_lines"] == 4
    assert [(g["shape"], g["count"]) for g in data["groups"]] == [("upload <NUM> failed", 4)]


def test_a_cut_short_timestamped_traceback_does_not_swallow_the_next_record(tmp_path: Path) -> None:
    lines = [f"{_stamp(1000 + i)} {text}" for i, text in enumerate(PY_TRACEBACK[:2])]
    lines += [f"{_stamp(2000)} INFO next request", f"{_stamp(2001)} ERROR db connection refused"]
    data = _errors(tmp_path, lines)
    assert data["error_lines"] == 2
    assert sorted(g["shape"] for g in data["groups"]) == [
        "Traceback (most recent call last):",
        "db connection refused",
    ]


def test_logs_patterns_counts_timestamped_traceback_lines_as_continuations(tmp_path: Path) -> None:
    lines = [f"{_stamp(1000)} INFO starting"]
    lines += [f"{_stamp(2000 + i)} {text}" for i, text in enumerate(JAVA_TRACE)]
    lines.append(f"{_stamp(3000)} INFO stopping")
    log = tmp_path / "app.log"
    log.write_text("\n".join(lines) + "\n")
    data = call_entry(log_tools(tmp_path), "logs_patterns", paths=[str(log)]).data
    assert data["lines"] == 3
    assert data["continuation_lines"] == len(JAVA_TRACE) - 1


# --- the count of records in groups the output cap leaves out ----------------------------------


def _ranked_errors_log(path: Path) -> None:
    """Twelve error kinds with 30, 29, … records, each with a long message, among info lines;
    spread evenly over an hour, so no group spikes (a spiking group is shown beyond max_groups)."""
    t0 = datetime(2026, 3, 14, 9, 0, tzinfo=UTC)
    lines = []
    for k in range(12):
        word = f"queue{chr(ord('a') + k)}"
        for j in range(30 - k):
            t = (t0 + timedelta(seconds=120 * j + k)).isoformat().replace("+00:00", "Z")
            lines.append(
                f"{t} ERROR {word} worker lost its lease while draining the {word} backlog; restarting"
            )
            lines.append(f"{t} INFO {word} heartbeat ok")
    lines.sort()
    path.write_text("\n".join(lines) + "\n")


def test_records_in_hidden_groups_counts_the_groups_the_output_cap_drops(
    tmp_path: Path, through_pipeline: Any
) -> None:
    _ranked_errors_log(tmp_path / "app.log")
    tools = log_tools(tmp_path)
    full = call_entry(tools, "logs_errors", paths=[str(tmp_path)], max_groups=10).data
    counts = {g["shape"]: g["count"] for g in full["groups"]}
    assert len(counts) == 10
    assert full["groups_total"] == 12
    assert full["records_in_hidden_groups"] == 19 + 20  # the two groups past max_groups

    settings = Settings(tools={"output_cap_chars": 9_000})  # type: ignore[arg-type]
    args = {"paths": [str(tmp_path)], "max_groups": 10}
    res = through_pipeline("logs_errors", tools["logs_errors"].function, args, settings=settings)
    assert isinstance(res.data, dict)
    shown = res.data["groups"]
    assert 1 <= len(shown) < 10  # the cap did drop groups
    assert res.metadata["omitted"] == {"groups": 10 - len(shown)}
    true_hidden = full["error_lines"] - sum(g["count"] for g in shown)
    assert res.data["records_in_hidden_groups"] == true_hidden
    assert res.data["groups_shown"] == len(shown)
    assert res.data["groups_total"] == 12
    assert res.data["error_lines"] == full["error_lines"]

    # the runbook analyzer's line on what was not returned carries the true count
    # (as the runbook engine hands it over: the result stamped with its tool)
    evidence = ToolResult(status=res.status, data=res.data, metadata=res.metadata | {"tool": "logs_errors"})
    found = ANALYZERS["log_error_groups"]({"errors": evidence}, {"max_findings": 1}, {})
    hidden_groups = 12 - len(shown)
    lines = [
        line
        for f in found
        if isinstance(f, Finding)
        for line in f.evidence
        if "not returned by the tool" in line
    ]
    assert lines == [f"{hidden_groups} more groups not returned by the tool ({true_hidden} errors)"]


def test_without_a_cut_the_counts_are_unchanged(tmp_path: Path, through_pipeline: Any) -> None:
    _ranked_errors_log(tmp_path / "app.log")
    tools = log_tools(tmp_path)
    direct = call_entry(tools, "logs_errors", paths=[str(tmp_path)], max_groups=5).data
    settings = Settings(tools={"output_cap_chars": 2_000_000})  # type: ignore[arg-type]
    args = {"paths": [str(tmp_path)], "max_groups": 5}
    res = through_pipeline("logs_errors", tools["logs_errors"].function, args, settings=settings)
    assert res.data == direct
    assert direct["records_in_hidden_groups"] == sum(30 - k for k in range(5, 12))


def test_the_cap_recounts_hidden_records_also_for_a_copied_result() -> None:
    # privacy masking rebuilds the result from its dump before the cap: the tally travels in metadata
    from devops_agent.policies.limits import cap_result
    from devops_agent.tools.base import ToolResult

    groups = [{"shape": f"error {i} " + "x" * 200, "count": 100 - i} for i in range(20)]
    data = {"groups": groups, "groups_shown": 20, "records_in_hidden_groups": 7, "error_lines": 1817}
    tally = {"groups": {"count": "count", "shown": "groups_shown", "hidden": "records_in_hidden_groups"}}
    result = ToolResult.ok(data, ranked=["groups"], ranked_tally=tally)
    copied = ToolResult.model_validate(result.model_dump())
    capped = cap_result(copied, 2_000)
    kept = capped.data["groups"]
    assert 1 <= len(kept) < 20
    assert capped.data["groups_shown"] == len(kept)
    assert capped.data["records_in_hidden_groups"] == 7 + sum(g["count"] for g in groups[len(kept) :])
    assert capped.data["error_lines"] == 1817
