"""The CLI shows what a run used and cost, and the full result behind any summary."""

from __future__ import annotations

import json
from pathlib import Path

from fixtures_cli import cli


def test_usage_tool_calls_and_cost_in_the_answer_and_sessions_show(tmp_path: Path) -> None:
    config = tmp_path / "devops-agent.toml"
    config.write_text(
        '[model]\nname = "scripted"\n[model.profiles.scripted]\ninput_per_mtok = 2.5\noutput_per_mtok = 10\n'
    )
    asked = cli("--config", str(config), "ask", "How is the host?", "--json", cwd=tmp_path)
    assert asked.returncode == 0, asked.stderr
    usage = json.loads(asked.stdout)["usage"]
    assert usage["requests"] == 3
    assert usage["tool_calls"] == 3
    assert usage["price_source"] == "table"
    assert usage["cost_usd"] > 0
    session = json.loads(cli("sessions", "list", "--json", cwd=tmp_path).stdout)[0]["id"]
    shown = cli("--config", str(config), "sessions", "show", session, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert (
        f"3 model requests · {usage['input_tokens']:,} tokens in, {usage['output_tokens']:,} out · 3 tool calls · ${usage['cost_usd']:.4f}"
        in shown.stdout
    )
    as_json = json.loads(cli("sessions", "show", session, "--json", cwd=tmp_path).stdout)
    assert as_json["usage"]["tool_calls"] == 3


def test_sessions_output_shows_a_result_that_reached_the_model_whole(tmp_path: Path) -> None:
    asked = cli("--model", "scripted", "ask", "How is the host?", "--json", cwd=tmp_path)
    assert asked.returncode == 0, asked.stderr
    session = json.loads(cli("sessions", "list", "--json", cwd=tmp_path).stdout)[0]["id"]
    messages = json.loads(cli("sessions", "show", session, "--json", cwd=tmp_path).stdout)["messages"]
    call = next(
        p
        for m in messages
        for p in m["parts"]
        if p["part_kind"] == "tool-call" and p["tool_name"] == "system_memory"
    )
    out = cli("sessions", "output", session, call["tool_call_id"], "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "total" in json.loads(out.stdout)["output"], "the memory figures as the model read them"
