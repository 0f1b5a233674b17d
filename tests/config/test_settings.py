"""Layered configuration: files, environment, arguments, provenance, secrets, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from devops_agent.config import describe, load_settings
from devops_agent.errors import ConfigError
from devops_agent.events import RunFinished, ToolCall, event_from_json


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_defaults_without_any_file(tmp_path: Path) -> None:
    loaded = load_settings(cwd=tmp_path)
    assert loaded.files == []
    assert loaded.settings.model.name is None
    assert loaded.settings.mode == "ask"
    assert loaded.settings.resolved_database_url().startswith("sqlite:///")


def test_project_file_overrides_user_file_and_env_overrides_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    user = write(
        isolated_home / "config" / "devops-agent" / "devops-agent.toml",
        'mode = "agent"\n[tools]\noutput_cap_chars = 1000\ntimeout_s = 5\n',
    )
    project = write(tmp_path / "devops-agent.toml", "[tools]\noutput_cap_chars = 2000\n")
    monkeypatch.setenv("DEVOPS_AGENT_TOOLS__TIMEOUT_S", "7")
    loaded = load_settings(cwd=tmp_path)
    s = loaded.settings
    assert s.mode == "agent"
    assert s.tools.output_cap_chars == 2000
    assert s.tools.timeout_s == 7
    origins = {k: src for k, _, src in describe(loaded)}
    assert origins["mode"] == str(user)
    assert origins["tools.output_cap_chars"] == str(project)
    assert origins["tools.timeout_s"] == "env:DEVOPS_AGENT_TOOLS__TIMEOUT_S"
    assert origins["tools.breaker.failure_threshold"] == "default"


def test_arguments_win_and_secrets_are_masked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEVOPS_AGENT_MODEL__API_KEY", "sk-live-abcdef123456")
    monkeypatch.setenv("DEVOPS_AGENT_MODEL__NAME", "openai:gpt-4o")
    loaded = load_settings(cwd=tmp_path, model={"name": "scripted"})
    assert loaded.settings.model.name == "scripted"
    rows = {k: (v, src) for k, v, src in describe(loaded)}
    assert rows["model.name"] == ("scripted", "argument")
    assert rows["model.api_key"] == ("********", "env:DEVOPS_AGENT_MODEL__API_KEY")
    assert "sk-live" not in repr(loaded.settings)


def test_invalid_values_name_the_key_and_its_source(tmp_path: Path) -> None:
    write(tmp_path / "devops-agent.toml", 'mode = "yolo"\n')
    with pytest.raises(ConfigError) as exc:
        load_settings(cwd=tmp_path)
    assert "mode" in exc.value.message
    assert str(tmp_path / "devops-agent.toml") in exc.value.message


def test_unknown_keys_and_bad_toml_are_errors(tmp_path: Path) -> None:
    write(tmp_path / "devops-agent.toml", "colour = 'blue'\n")
    with pytest.raises(ConfigError, match="colour"):
        load_settings(cwd=tmp_path)
    write(tmp_path / "devops-agent.toml", "mode = \n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_settings(cwd=tmp_path)


@pytest.mark.parametrize(
    ("toml", "key", "known"),
    [
        ('[privacy]\nenabeld = "on"\n', "privacy.enabeld", "enabled"),
        ('[tools]\ndisable = ["shell"]\n', "tools.disable", "disabled"),
        ("[tools.breaker]\nfailure_treshold = 2\n", "tools.breaker.failure_treshold", "failure_threshold"),
        ('[prometheus]\nurll = "http://prom:9090"\n', "prometheus.urll", "url"),
    ],
)
def test_a_typo_inside_a_section_is_an_error_that_lists_the_keys(
    tmp_path: Path, toml: str, key: str, known: str
) -> None:
    config = write(tmp_path / "devops-agent.toml", toml)
    with pytest.raises(ConfigError) as exc:
        load_settings(cwd=tmp_path)
    assert exc.value.message == f"unknown setting {key} (from {config})"
    assert known in (exc.value.hint or "")


def test_a_partial_ttl_table_keeps_the_other_namespaces(tmp_path: Path) -> None:
    config = write(tmp_path / "devops-agent.toml", "[privacy.ttl_hours]\nuser_in = 48\n")
    loaded = load_settings(cwd=tmp_path)
    assert loaded.settings.privacy.ttl_hours == {
        "user_in": 48.0,
        "tool_args": 24.0,
        "tool_out": 24.0,
        "final_out": 168.0,
    }
    assert {k: src for k, _, src in describe(loaded)}["privacy.ttl_hours"] == str(config)
    for bad, needle in (
        ("user_in = -1", "above 0"),
        ("user_in = 1e12", "at most"),
        ("tool_in = 5", "tool_in"),
    ):
        write(tmp_path / "devops-agent.toml", f"[privacy.ttl_hours]\n{bad}\n")
        with pytest.raises(ConfigError, match=needle):
            load_settings(cwd=tmp_path)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DEVOPS_AGENT_TOOLS__DISABLED", "shell"),
        ("DEVOPS_AGENT_PRIVACY__TTL_HOURS", "abc"),
        ("DEVOPS_AGENT_PROMETHEUS", "abc"),
    ],
)
def test_an_environment_value_that_is_not_json_names_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as exc:
        load_settings(cwd=tmp_path)
    assert f"{name}='{value}'" in exc.value.message
    assert "must be JSON" in exc.value.message
    monkeypatch.delenv(name)
    monkeypatch.setenv("DEVOPS_AGENT_TOOLS__DISABLED", '["shell"]')  # the JSON form works
    assert load_settings(cwd=tmp_path).settings.tools.disabled == ["shell"]


def test_explicit_config_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(config_file=tmp_path / "nope.toml")


def test_events_round_trip_as_json() -> None:
    call = ToolCall(session_id="s", run_id="r", seq=3, tool_call_id="c1", tool="git_log", args={"limit": 5})
    back = event_from_json(call.model_dump_json())
    assert back == call
    assert back.v == 1
    fin = event_from_json(
        RunFinished(session_id="s", run_id="r", status="completed", output="x").model_dump_json()
    )
    assert isinstance(fin, RunFinished)
    assert fin.output == "x"
