"""Plans at the command line, as a user runs them: a run that pauses on its plan in one process,
the plan shown, changed and approved with ``devops-agent plan`` from other processes (real
subprocesses, the real SQLite store, the package's scripted model from a file, real host tools)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

STEPS = [
    {"title": "Read the host's overview", "tools": ["system_overview"], "intent": "is it loaded?"},
    {"title": "Read its disks", "tools": ["system_disk_usage"]},
]
REVISED = [*STEPS, {"title": "Read its memory", "tools": ["system_memory"]}]


def plan_turn(steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"tool": "propose_plan", "args": {"goal": "how is this host", "steps": steps}}]}


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "devops_agent", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, COLUMNS="200", **(env or {})),
        cwd=cwd,
        timeout=180,
        check=False,
    )


def test_a_plan_paused_in_one_process_is_changed_and_approved_from_others(tmp_path: Path) -> None:
    script = tmp_path / "plan.yaml"
    script.write_text(
        json.dumps(
            {
                "turns": [
                    plan_turn(STEPS),
                    plan_turn(REVISED),
                    {
                        "tool_calls": [
                            {"tool": "system_overview", "args": {}},
                            {"tool": "system_disk_usage", "args": {}},
                            {"tool": "system_memory", "args": {}},
                        ]
                    },
                    {"output": {"summary": "The host was read; nothing stands out.", "next_steps": ["none"]}},
                ]
            }
        )
    )
    model = f"scripted:{script}"
    paused = cli("--model", model, "ask", "how is this host?", "--plan", "always", cwd=tmp_path)
    assert paused.returncode == 0, paused.stderr
    assert "plan (revision 1, waiting for a decision)" in paused.stderr
    assert "devops-agent plan" in paused.stderr, "no terminal: the run waits, it never decides alone"
    [session] = json.loads(cli("sessions", "list", "--json", cwd=tmp_path).stdout)
    assert session["status"] == "paused"
    sid = session["id"][:10]

    shown = cli("plan", sid, "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    pending = json.loads(shown.stdout)
    assert pending["revision"] == 1
    assert [s["tools"] for s in pending["plan"]["steps"]] == [["system_overview"], ["system_disk_usage"]]

    clash = cli("plan", sid, "--approve", "--reject", cwd=tmp_path)
    assert clash.returncode == 2
    assert "contradict" in clash.stderr

    # Another process asks for a change: without --model, the session knows its model.
    edited = cli("plan", sid, "--edit", "also read the memory", "--approver", "carol", cwd=tmp_path)
    assert edited.returncode == 0, edited.stderr
    assert "plan edited by carol: also read the memory" in edited.stderr
    assert "plan (revision 2, waiting for a decision)" in edited.stderr
    assert "3. Read its memory [system_memory]" in edited.stderr

    done = cli("plan", sid, "--approve", "--approver", "carol", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "completed"
    report = result["report"]
    assert report["plan"]["approved_by"] == "carol"
    assert report["plan"]["revision"] == 2
    assert [s["status"] for s in report["plan"]["steps"]] == ["done", "done", "done"]
    assert {c["tool"] for c in report["checks"]} == {"system_overview", "system_disk_usage", "system_memory"}

    again = cli("plan", sid, "--approve", cwd=tmp_path)
    assert again.returncode == 2
    assert "no plan waiting" in again.stderr


def test_plan_and_council_options_are_checked_before_anything_runs(tmp_path: Path) -> None:
    bad = cli("--model", "scripted", "ask", "why?", "--plan", "sometimes", cwd=tmp_path)
    assert bad.returncode == 2
    assert "use auto, always or never" in bad.stderr
    lonely = cli("--model", "scripted", "ask", "why?", "--council", "logs", cwd=tmp_path)
    assert lonely.returncode == 2
    assert "at least two specialists" in lonely.stderr
    assert json.loads(cli("sessions", "list", "--json", cwd=tmp_path).stdout) == []
    offline = cli("ask", "how much disk is free?", "--plan", "always", cwd=tmp_path)
    assert offline.returncode == 0, offline.stderr
    assert "--plan and --council need a model" in offline.stderr, "said, not silently ignored"


def test_specialists_lists_shipped_and_user_definitions_with_their_tools_here(tmp_path: Path) -> None:
    mine = tmp_path / "specialists"
    mine.mkdir()
    (mine / "logs.yaml").write_text(
        "name: logs\ndescription: Only the journal.\ninstructions: Read it.\ntools: [logs_journal]\n"
    )
    env = {"DEVOPS_AGENT_AGENT__SPECIALIST_DIRS": json.dumps([str(mine)])}
    listed = cli("specialists", "--json", cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert set(rows) == {"logs", "metrics", "kubernetes", "changes", "knowledge"}
    assert rows["logs"]["source"] == str(mine / "logs.yaml"), "the user's definition replaces the shipped one"
    assert rows["logs"]["tools"] == ["logs_journal"]
    assert "system_overview" not in rows["knowledge"]["tools"]
    assert all(
        not t.startswith(("k8s_rollout_restart", "k8s_delete", "docker_rm"))
        for r in rows.values()
        for t in r["tools"]
    ), "a toolset gives a specialist its read-only tools only"


def test_the_transcript_in_docs_reasoning_md_is_what_the_demo_does(tmp_path: Path) -> None:
    """docs/reasoning.md's scripted run, with its real log file and git repository: a plan that
    waits, two specialists, a fabricated quotation caught by the critic and fixed by one re-plan."""
    demo = Path(__file__).parents[3] / "docs" / "reasoning-demo.json"
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "api.log").write_text(
        "2026-11-27T14:04:58Z INFO api started, pool size 20\n"
        "2026-11-27T14:05:02Z ERROR connection refused to db:5432\n"
        "2026-11-27T14:05:09Z ERROR connection refused to db:5432\n"
        "2026-11-27T14:05:15Z ERROR connection refused to db:5432\n"
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=dana", "-c", "user.email=dana@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "app.env").write_text("DB_HOST=db-new:5432\n")
    subprocess.run([*git, "add", "app.env"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "point api at the new database host"], check=True)

    asked = cli("--model", f"scripted:{demo}", "ask", "Why does api fail since 14:05?", cwd=tmp_path)
    assert asked.returncode == 0, asked.stderr
    assert "[specialist logs]; 2. Find what changed before 14:05 [specialist changes]" in asked.stderr
    [session] = json.loads(cli("sessions", "list", "--json", cwd=tmp_path).stdout)
    done = cli("plan", session["id"][:12], "--approve", "--approver", "dana", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for line in (
        "→ logs: What do the api logs (the folder logs) say since 14:00?",
        "✓ [logs] logs_errors(",
        "✓ [changes] git_log(",
        "critic (deterministic): 1 unsupported claim(s) → replan",
        "re-plan 1 of 2: the deterministic checks found unsupported claims",
        "critic (deterministic): no unsupported claim → accepted",
    ):
        assert line in done.stderr, done.stderr
    assert "**Verdict:** problems found" in done.stdout
    assert "quotes 'FATAL: out of memory', which no cited call's output contains" in done.stdout
    assert "### [HIGH] api cannot reach its database since 14:05:02" in done.stdout


def test_chat_plan_command_sets_the_plan_mode_of_the_questions_after_it(tmp_path: Path) -> None:
    script = tmp_path / "lookup.yaml"
    overview = {"tool_calls": [{"tool": "system_overview", "args": {}}]}
    script.write_text(
        json.dumps({"turns": [plan_turn(STEPS[:1]), overview, {"output": {"summary": "read"}}]})
    )
    proc = subprocess.run(
        [sys.executable, "-m", "devops_agent", "--model", f"scripted:{script}", "chat"],
        input="/plan\n/plan approve\n/plan sometimes\n/plan always\nhow is this host?\n"
        "/plan\n/plan edit\n/plan approve\n/exit\n",
        capture_output=True,
        text=True,
        env=dict(os.environ, COLUMNS="200"),
        cwd=tmp_path,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "plans: auto (config); use /plan auto, /plan always or /plan never" in proc.stderr
    assert "plans: always" in proc.stderr
    # A one-step read-only plan runs at once in auto; with /plan always it waits for a decision.
    assert "plan (revision 1, waiting for a decision)" in proc.stderr
    assert "devops-agent plan" in proc.stderr
    assert "no plan waits for a decision in this session" in proc.stderr, "/plan approve before any plan"
    assert "1. Read the host's overview [system_overview]" in proc.stderr, "/plan shows the waiting plan"
    assert "say what to change: /plan edit TEXT" in proc.stderr
    assert "plan approved by" in proc.stderr
    assert "step 1 done: Read the host's overview" in proc.stderr


def test_the_terminal_prompt_asks_until_it_gets_a_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    from devops_agent.agent.reasoning.plan import PlanDecision
    from devops_agent.cli.plan_cmd import prompt_plan

    pending = {"revision": 2, "plan": {"goal": "g", "steps": [{"title": "Restart api", "mutating": True}]}}
    answers = iter(["maybe", "e", "", "e", "read the logs first"])
    monkeypatch.setattr("builtins.input", lambda _prompt="": next(answers))
    assert prompt_plan(pending, "erin") == PlanDecision("edit", "read the logs first", "erin")
    answers = iter(["n", "too risky"])
    assert prompt_plan(pending, "erin") == PlanDecision("reject", "too risky", "erin")
    answers = iter(["y"])
    assert prompt_plan(pending, "erin") == PlanDecision("approve", "", "erin")
