"""Template mining over files: the logs_patterns tool and `devops-agent logs patterns`."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from devops_agent.config import Settings
from devops_agent.tools import logs


def write_logs(root: Path) -> None:
    root.mkdir()
    lines = [
        f"2026-11-22T10:{i % 60:02d}:00Z INFO user u{i} logged in from 10.0.0.{i % 250}" for i in range(120)
    ]
    lines += [f"2026-11-22T11:{i:02d}:00Z ERROR payment {9000 + i} declined: card expired" for i in range(30)]
    (root / "app.log").write_text("\n".join(lines) + "\n")
    with gzip.open(root / "app.log.1.gz", "wt") as fh:
        fh.write("2026-11-21T09:00:00Z WARN disk /dev/sda1 at 91% used\n" * 7)


def test_logs_patterns_tool_groups_every_kind_of_line(tmp_path: Path) -> None:
    write_logs(tmp_path / "logs")
    tool = logs.build(Settings(files={"roots": [tmp_path]})).entries["logs_patterns"].function
    result = tool(paths=[str(tmp_path / "logs")])
    assert result.status == "success"
    by_count = {t["count"]: t["template"] for t in result.data["templates"]}
    assert by_count[120] == "user <*> logged in from <*>"
    assert "declined: card expired" in by_count[30]
    assert "disk <*> at <*> used" in by_count[7] or "disk" in by_count[7]
    assert result.data["files_scanned"] == 2
    windowed = tool(paths=[str(tmp_path / "logs")], since="2026-11-22T11:00:00Z")
    assert [t["count"] for t in windowed.data["templates"]] == [30]
    outside = tool(paths=["/etc"])
    assert outside.status == "error"


def test_cli_persists_templates_between_runs(tmp_path: Path) -> None:
    write_logs(tmp_path / "logs")
    state = tmp_path / "templates.json"
    cmd = [
        sys.executable,
        "-m",
        "devops_agent",
        "logs",
        "patterns",
        str(tmp_path / "logs"),
        "--state",
        str(state),
        "--json",
    ]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert first.returncode == 0, first.stderr
    assert state.exists()
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    counts = sorted(t["count"] for t in json.loads(second.stdout)["templates"])
    assert counts == [14, 60, 240], "the second run continues from the saved templates"


def test_cli_reads_standard_input() -> None:
    lines = "".join(f"worker {i} finished job {i * 7} in {i}ms\n" for i in range(50)) + "panic: nil map\n"
    proc = subprocess.run(
        [sys.executable, "-m", "devops_agent", "logs", "patterns", "-", "--json"],
        input=lines,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    templates = {t["template"]: t["count"] for t in json.loads(proc.stdout)["templates"]}
    assert templates.get("worker <*> finished job <*> in <*>") == 50
    missing = subprocess.run(
        [sys.executable, "-m", "devops_agent", "logs", "patterns", "/no/such/file"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert missing.returncode == 2
    assert "does not exist" in missing.stderr


def test_error_signatures_rank_new_and_bursting_errors_first(tmp_path: Path) -> None:
    from devops_agent.analysis import TemplateMiner

    old = [("a", f"2026-11-22T09:{i:02d}:00Z ERROR disk quota warning for volume {i}") for i in range(40)]
    miner = TemplateMiner()
    logs.mine_templates(old, miner)
    steady = [("a", f"2026-11-22T10:{i:02d}:00Z ERROR disk quota warning for volume {i}") for i in range(40)]
    burst = [
        ("a", f"2026-11-22T10:30:{i:02d}Z ERROR payment gateway returned 502 for order {i}")
        for i in range(20)
    ]
    info = [("a", f"2026-11-22T10:{i:02d}:30Z INFO served request {i}") for i in range(40)]
    data = logs.mine_templates(sorted(steady + burst + info, key=lambda x: x[1]), miner)
    signatures = data["error_signatures"]
    assert [s["new"] for s in signatures] == [True, False]
    assert "payment gateway returned" in signatures[0]["template"]
    assert signatures[0]["burst"] > signatures[1]["burst"]
    assert all("served request" not in s["template"] for s in signatures)
