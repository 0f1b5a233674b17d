"""The skeleton the five client integrations share (``tools/integration.py``) and the error table
over the shared HTTP status mapping (``tools/http_status.py``)."""

from __future__ import annotations

import re
import sys
from typing import Any

import pytest
from pydantic import SecretStr
from pydantic_ai import Tool

from devops_agent.config import Settings
from devops_agent.config.settings import GitHubSettings, JenkinsSettings, JiraSettings
from devops_agent.tools import docker, github, jenkins, jira, kubernetes
from devops_agent.tools import github as github_tools
from devops_agent.tools import jenkins as jenkins_tools
from devops_agent.tools import jira as jira_tools
from devops_agent.tools.base import ToolResult, call_directly
from devops_agent.tools.http_status import ErrorTable, Rule
from devops_agent.tools.integration import Integration, ToolFailure
from devops_agent.tools.registry import ToolRegistry

INTEGRATIONS = [docker.DOCKER, github.GITHUB, jenkins.JENKINS, jira.JIRA, kubernetes.KUBERNETES]
_RANGE = re.compile(r"^\s+(\w+): .*\((\d+)-(\d+)[;)]", re.M)


@pytest.mark.parametrize("integration", INTEGRATIONS, ids=lambda i: i.name)
def test_every_documented_range_is_declared_in_the_schema(integration: Integration[Any]) -> None:
    """What a docstring promises the model ("(1-200)") is what the schema declares and pydantic
    enforces; a range written only in prose would let any value through."""
    checked = 0
    for fn in integration.tools:
        properties = Tool(fn).function_schema.json_schema["properties"]
        for name, low, high in _RANGE.findall(fn.__doc__ or ""):
            assert (properties[name].get("minimum"), properties[name].get("maximum")) == (
                int(low),
                int(high),
            ), (
                fn.__name__,
                name,
            )
            checked += 1
    assert checked >= 1


@pytest.mark.parametrize("integration", INTEGRATIONS, ids=lambda i: i.name)
def test_registration_adds_the_toolset_and_its_check(integration: Integration[Any]) -> None:
    registry = ToolRegistry()
    integration.register(registry)
    assert registry.toolsets[integration.name].extra == integration.extra
    assert registry.checks[integration.name].run == integration.check
    built = registry.build(Settings())[integration.name]
    assert [e.function for e in built.entries.values()] == integration.tools
    assert all(e.description for e in built.entries.values())


def test_error_table_words_each_status_and_falls_back_to_the_shared_mapping() -> None:
    table = ErrorTable(
        "Acme",
        timeout_hint="raise acme.timeout_s",
        unreachable_hint="check acme.url",
        rules={404: Rule("no such {what} (404){said}", "check the {what}")},
    )
    missing = table.result(404, what="widget", detail="gone")
    assert (missing.error, missing.hint, missing.metadata) == (
        "no such widget (404): gone",
        "check the widget",
        {"status": 404},
    )
    limited = table.result(429, retry_after=12.0)
    assert limited.error == "Acme rate limit hit (429)"
    assert limited.metadata == {"status": 429, "transient": True, "retry_after_s": 12.0}
    assert table.result(503, detail="down").metadata["transient"] is True
    assert table.result(418).error == "Acme request failed (418)"
    slow = table.timeout()
    assert (slow.error, slow.hint, slow.metadata) == (
        "Acme did not answer in time",
        "raise acme.timeout_s",
        {"transient": True},
    )
    refused = table.unreachable("Acme at x:1", "Connection refused")
    assert (refused.error, refused.hint) == (
        "cannot connect to Acme at x:1: Connection refused",
        "check acme.url",
    )


class _Closing:
    closed = 0

    def close(self) -> None:
        _Closing.closed += 1


class Acme(Integration[JiraSettings]):
    """A stand-in service over the stdlib's ``json`` as its "client library"."""

    name = "acme"
    description = "Acme"
    extra = "acme"
    package = "acme-client"
    modules = ("json",)

    def section(self, settings: Settings) -> JiraSettings:
        return settings.jira

    def unusable(self, section: JiraSettings) -> ToolResult | None:
        return None if section.url else ToolResult.fail("Acme is not configured", "set jira.url")

    def connect(self, section: JiraSettings, **options: Any) -> Any:
        return _Closing()

    def client_errors(self) -> tuple[type[Exception], ...]:
        return (ValueError,)

    def map_error(
        self, exc: Exception, what: str, section: JiraSettings, client: Any = None, **context: Any
    ) -> ToolResult:
        return ToolResult.fail(f"{what}: {exc}", context.get("verb"))

    def probe(self, client: Any, section: JiraSettings) -> str:
        raise ValueError("probe refused")


def test_call_closes_the_client_and_returns_failures_as_results() -> None:
    acme, configured = Acme(), Settings(jira=JiraSettings(url="https://acme.example"))
    assert acme.call(Settings(), "x", lambda c, s: ToolResult.ok(1)).error == "Acme is not configured"
    before = _Closing.closed
    assert acme.call(configured, "x", lambda c, s: ToolResult.ok(s.url)).data == "https://acme.example"

    def fails(_client: Any, _section: JiraSettings) -> ToolResult:
        raise ToolFailure(ToolResult.fail("not this one"))

    assert acme.call(configured, "x", fails).error == "not this one"

    def raises(_client: Any, _section: JiraSettings) -> ToolResult:
        raise ValueError("bad value")

    mapped = acme.call(configured, "widget", raises, verb="get")
    assert (mapped.error, mapped.hint) == ("widget: bad value", "get")
    assert _Closing.closed == before + 3
    assert acme.check(configured) == (False, "acme: server: probe refused")


def test_a_missing_client_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "json", None)
    acme = Acme()
    with pytest.raises(
        ImportError,
        match=r"^the acme toolset needs the `acme-client` package: pip install 'devops-agent\[acme\]'$",
    ):
        acme.build(Settings())
    ok, message = acme.check(Settings())
    assert not ok
    assert "devops-agent[acme]" in message


def test_call_directly_validates_like_the_pipeline_and_passes_the_settings() -> None:
    refused = call_directly(jira.jira_issue, Settings(), "OPS-1", max_comments=51)
    assert refused.status == "error"
    assert (
        refused.error
        == "invalid arguments for jira_issue: max_comments: Input should be less than or equal to 50"
    )
    unknown = call_directly(jira.jira_issue, Settings(), "OPS-1", nope=1)
    assert "unexpected keyword argument 'nope'" in (unknown.error or "")
    # The settings reach the tool: not configured in these, so it says what to set.
    result = call_directly(jira.jira_issue, Settings(), "OPS-1")
    assert "DEVOPS_AGENT_JIRA__URL" in (result.hint or "")


SCHEMELESS: list[tuple[Any, Settings, str, dict[str, Any]]] = [
    (
        jira_tools,
        Settings(jira=JiraSettings(url="jira.acme.internal", user="sre@acme.com", token=SecretStr("t0k"))),
        "jira_issue",
        {"key_or_url": "OPS-1"},
    ),
    (
        jenkins_tools,
        Settings(jenkins=JenkinsSettings(url="ci.acme.internal", user="sre", token=SecretStr("t0k"))),
        "jenkins_build",
        {"url_or_job": "payments/deploy"},
    ),
    (
        github_tools,
        Settings(github=GitHubSettings(api_url="ghe.acme.internal/api/v3", token=SecretStr("ghp_t0k"))),
        "github_commits",
        {"repo": "acme/payments"},
    ),
]


@pytest.mark.parametrize(("module", "conf", "tool", "args"), SCHEMELESS, ids=["jira", "jenkins", "github"])
def test_server_url_without_scheme_names_the_setting_instead_of_crashing(
    module: Any, conf: Settings, tool: str, args: dict[str, Any]
) -> None:
    result = call_directly(module.build(conf).entries[tool].function, conf, **args)
    assert result.status == "error"
    assert "is not an http(s) URL" in (result.error or "")
    assert "https://" in (result.hint or "")
    ok, message = module.check(conf)  # `devops-agent doctor` must not get a traceback
    assert not ok
    assert "is not an http(s) URL" in message
    assert "t0k" not in message + (result.error or "") + (result.hint or "")
