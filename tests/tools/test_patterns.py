"""Template mining over files: the logs_patterns tool and `devops-agent logs patterns`."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

from devops_agent.analysis import logsummary
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
    logsummary.mine_templates(old, miner)
    steady = [("a", f"2026-11-22T10:{i:02d}:00Z ERROR disk quota warning for volume {i}") for i in range(40)]
    burst = [
        ("a", f"2026-11-22T10:30:{i:02d}Z ERROR payment gateway returned 502 for order {i}")
        for i in range(20)
    ]
    info = [("a", f"2026-11-22T10:{i:02d}:30Z INFO served request {i}") for i in range(40)]
    data = logsummary.mine_templates(sorted(steady + burst + info, key=lambda x: x[1]), miner)
    signatures = data["error_signatures"]
    assert [s["new"] for s in signatures] == [True, False]
    assert "payment gateway returned" in signatures[0]["template"]
    assert signatures[0]["burst"] > signatures[1]["burst"]
    assert all("served request" not in s["template"] for s in signatures)


def patterns(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """``devops-agent logs patterns ARGS`` as a user runs it (stdin as raw bytes)."""
    proc = subprocess.run(
        [sys.executable, "-m", "devops_agent", "logs", "patterns", *args],
        input=stdin,
        capture_output=True,
        env=dict(os.environ, COLUMNS="200"),
        timeout=120,
        check=False,
    )
    return subprocess.CompletedProcess(
        proc.args,
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def first_seen(proc: subprocess.CompletedProcess[str]) -> dict[str, str | None]:
    assert proc.returncode == 0, proc.stderr
    return {t["template"]: t["first_seen"] for t in json.loads(proc.stdout)["templates"]}


def test_undated_lines_do_not_inherit_the_time_of_the_previous_file(tmp_path: Path) -> None:
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_text("2026-01-01T10:00:00Z api started\n2026-01-01T10:00:05Z api ready\n")
    b.write_text("worker started\nworker crashed code 3\n")
    for order in ((a, b), (b, a)):
        seen = first_seen(patterns("--json", *map(str, order)))
        assert seen["api ready"] == "2026-01-01T10:00:05Z"
        assert seen["worker started"] is None, order
        late = first_seen(patterns("--json", "--since", "2026-01-01T11:00:00Z", *map(str, order)))
        assert "worker started" in late, "--since treats b.log's lines alike in either order"
        assert "api ready" not in late


def test_state_file_errors_are_user_errors_and_the_state_is_scrubbed(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text(
        "".join(f"2026-01-01T10:00:{i:02d}Z DB_PASSWORD=hunter2hunter2 login {i} ok\n" for i in range(5))
    )
    corrupt = tmp_path / "st.json"
    corrupt.write_text("garbage\n")
    bad = patterns(str(log), "--state", str(corrupt))
    assert (bad.returncode, bad.stdout) == (2, ""), bad.stderr
    assert str(corrupt) in bad.stderr
    assert "delete" in bad.stderr
    assert "Traceback" not in bad.stderr
    assert corrupt.read_text() == "garbage\n", "a state that cannot be read is left as it was"
    folder = patterns(str(log), "--state", str(tmp_path))
    assert (folder.returncode, folder.stdout) == (2, ""), folder.stderr
    assert "is a directory" in folder.stderr

    nested = tmp_path / "new" / "dir" / "st.json"
    ok = patterns(str(log), "--json", "--state", str(nested))
    assert ok.returncode == 0, ok.stderr
    stored = nested.read_text()
    assert "hunter2hunter2" not in stored
    assert "DB_PASSWORD=[REDACTED_SECRET] login" in stored
    assert not nested.with_name("st.json.tmp").exists()

    unwritable = tmp_path / "app.log" / "st.json"  # its "directory" is a file
    late = patterns(str(log), "--json", "--state", str(unwritable))
    assert late.returncode == 2
    assert json.loads(late.stdout)["lines"] == 5, "the analysis is printed before the write fails"
    assert "could not be saved" in late.stderr
    assert "Traceback" not in late.stderr


def test_gzip_on_standard_input_is_decompressed(tmp_path: Path) -> None:
    write_logs(tmp_path / "logs")
    plain = (tmp_path / "logs" / "app.log").read_bytes()
    from_gzip = patterns("-", "--json", stdin=gzip.compress(plain))
    assert from_gzip.returncode == 0, from_gzip.stderr
    data = json.loads(from_gzip.stdout)
    assert data["lines"] == 150
    assert {t["template"]: t["count"] for t in data["templates"]}["user <*> logged in from <*>"] == 120
    assert json.loads(patterns("-", "--json", stdin=plain).stdout)["templates"] == data["templates"]


def test_skipped_inputs_are_named_and_no_readable_input_fails(tmp_path: Path) -> None:
    binary = tmp_path / "bin.dat"
    binary.write_bytes(b"\x00\x01\x02\xff" * 64)
    only_binary = patterns(str(binary))
    assert (only_binary.returncode, only_binary.stdout) == (2, "")
    assert "no log file could be read" in only_binary.stderr
    assert f"{binary} (binary)" in only_binary.stderr
    (tmp_path / "empty").mkdir()
    empty_dir = patterns(str(tmp_path / "empty"))
    assert empty_dir.returncode == 2
    assert "no files found" in empty_dir.stderr
    empty_file = tmp_path / "empty.log"
    empty_file.write_text("")
    fine = patterns(str(empty_file), str(binary))
    assert fine.returncode == 0, fine.stderr
    assert f"skipped {binary} (binary)" in fine.stderr
    assert "0 lines, 0 templates, 1 file(s)" in fine.stderr


def test_standard_input_beside_files_and_binary_standard_input(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text("2026-01-01T10:00:00Z api ready\n")
    both = patterns("--json", "-", str(log), stdin=b"worker crashed code 3\n")
    assert both.returncode == 0, both.stderr
    data = json.loads(both.stdout)
    assert data["files_scanned"] == 2
    assert {t["template"] for t in data["templates"]} == {"api ready", "worker crashed code <*>"}
    binary = patterns("-", stdin=b"\x7fELF\x02\x01\x00\x00" + bytes(range(256)))
    assert (binary.returncode, binary.stdout) == (2, "")
    assert "stdin (binary)" in binary.stderr


def test_top_must_be_positive_and_the_help_promises_what_the_table_shows() -> None:
    for value in ("0", "-3"):
        proc = patterns("-", "--top", value, stdin=b"x\n")
        assert proc.returncode == 2
        assert "--top" in proc.stderr
    shown = patterns("-", "--top", "1", stdin=b"a 1\nb c\nd e f\n")
    assert shown.returncode == 0
    assert "--json adds examples" in patterns("--help").stdout


def test_apache_error_log_times_are_read_and_cut_from_the_template(tmp_path: Path) -> None:
    log = tmp_path / "error_log"
    log.write_text(
        "[Sun Dec 04 04:47:44 2005] [notice] workerEnv.init() ok /etc/httpd/conf/workers2.properties\n"
        "[Sun Dec 04 04:51:08 2005] [notice] workerEnv.init() ok /etc/httpd/conf/workers2.properties\n"
        "[Sun Dec 04 04:52:15.250000 2005] [error] mod_jk child workerEnv in error state 6\n"
    )
    data = json.loads(patterns(str(log), "--json").stdout)
    by_template = {t["template"]: t for t in data["templates"]}
    init = by_template["workerEnv.init() ok <*>"]
    assert init["count"] == 2
    assert init["first_seen"] is not None
    assert init["first_seen"] < init["last_seen"]
    assert [s["template"] for s in data["error_signatures"]] == ["mod_jk child workerEnv in error state <*>"]
