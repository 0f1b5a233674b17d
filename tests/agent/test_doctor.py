"""doctor's integration checks reach what is configured and skip what is not."""

from __future__ import annotations

import pytest

from devops_agent.agent.doctor import check_integrations
from devops_agent.config import LoadedSettings, Settings


def test_unconfigured_integrations_are_not_checked() -> None:
    assert check_integrations(LoadedSettings(Settings())) == []


def test_unreachable_jira_and_jenkins_fail_with_a_message() -> None:
    settings = Settings(
        jira={"url": "http://127.0.0.1:9", "user": "u", "token": "t"},
        jenkins={"url": "http://127.0.0.1:9", "user": "u", "token": "t"},
    )
    checks = {c.name: c for c in check_integrations(LoadedSettings(settings))}
    assert checks["jira"].level == "fail"
    assert checks["jenkins"].level == "fail"
    assert checks["jira"].detail


def test_unreachable_github_and_docker_fail_with_a_message() -> None:
    settings = Settings(
        github={"api_url": "http://127.0.0.1:9", "token": "t"},
        docker={"base_url": "tcp://127.0.0.1:9", "timeout_s": 2},
    )
    checks = {c.name: c for c in check_integrations(LoadedSettings(settings))}
    assert checks["github"].level == "fail"
    assert checks["docker"].level == "fail"
    assert "127.0.0.1:9" in checks["docker"].detail
    assert checks["github"].detail


def test_privacy_check_reports_the_guard_and_the_ner_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from devops_agent.agent import doctor

    hosted = {"model": {"name": "openai:gpt-4o"}, "privacy": {"ner": "auto"}}
    monkeypatch.setattr(doctor.ner, "installed_model", lambda preferred=None: None)
    check = doctor.check_privacy(LoadedSettings(Settings(**hosted)))
    assert check.level == "warn"
    assert check.detail.startswith("on")
    assert "privacy-ner" in (check.hint or "")

    required = Settings(privacy={"ner": "on"})
    assert doctor.check_privacy(LoadedSettings(required)).level == "fail"

    offline = doctor.check_privacy(LoadedSettings(Settings()))
    assert offline.level == "ok"
    assert offline.detail.startswith("off (secrets still cut out)")
    readable = doctor.check_privacy(LoadedSettings(Settings(privacy={"scrub_secrets": False})))
    assert readable.detail.startswith("off (secrets readable)")

    monkeypatch.setattr(doctor.ner, "installed_model", lambda preferred=None: "en_core_web_sm")
    masked = doctor.check_privacy(LoadedSettings(Settings(**hosted)))
    assert masked.level == "ok"
    assert "en_core_web_sm" in masked.detail
