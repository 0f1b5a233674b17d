"""The Jira toolset: the real ``jira`` client talks HTTP to a replay server serving documented examples."""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
from pydantic import SecretStr
from pydantic_ai import Tool

from devops_agent.config import Settings
from devops_agent.config.settings import JiraSettings
from devops_agent.tools import jira as jira_tools
from devops_agent.tools.base import ToolResult, call_directly, spec_of
from devops_agent.tools.jira import build, check, is_cloud, jira_search, parse_issue_key, register
from devops_agent.tools.registry import ToolRegistry
from fixtures_replay import ReplayServer

pytest.importorskip("jira")

USER, TOKEN = "mia@example.com", "ATATT3xFfGF0-test-token"
API = "/rest/api/2"


@pytest.fixture(scope="module")
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


@pytest.fixture
def jira_srv(server: ReplayServer) -> ReplayServer:
    server.reset()
    server.require_basic(USER, TOKEN)
    server.add("GET", f"{API}/issue/OPS-123", fixture="jira/issue_OPS-123.json")
    server.add("GET", f"{API}/issue/OPS-123/remotelink", fixture="jira/remotelink_OPS-123.json")
    server.add("GET", f"{API}/search", fixture="jira/search_page1.json", query={"startAt": "0"})
    server.add("GET", f"{API}/search", fixture="jira/search_page2.json", query={"startAt": "2"})
    server.add("POST", f"{API}/issue/OPS-123/comment", fixture="jira/comment_added.json", status=201)
    server.add("GET", f"{API}/myself", fixture="jira/myself.json")
    server.add("GET", f"{API}/field", fixture="jira/fields.json")
    return server


def toolset(settings: Settings) -> dict[str, Any]:
    """The toolset's tools by name, each called as a CLI command would call it (``call_directly``)."""
    return {name: partial(call_directly, e.function, settings) for name, e in build(settings).entries.items()}


def tools(url: str, token: str = TOKEN) -> dict[str, Any]:
    return toolset(Settings(jira=JiraSettings(url=url, user=USER, token=SecretStr(token))))


def basic(user: str, token: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{token}".encode()).decode()


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ("OPS-123", "OPS-123"),
        ("ops-7", "OPS-7"),
        ("https://x.atlassian.net/browse/OPS-123", "OPS-123"),
        ("https://x.atlassian.net/browse/OPS-123?focusedCommentId=1", "OPS-123"),
        ("https://x.atlassian.net/jira/software/projects/OPS/boards/1?selectedIssue=OPS-9", "OPS-9"),
        ("https://jira.corp/jira/browse/AB_C-1", "AB_C-1"),
        ("not a key", None),
        ("https://x.atlassian.net/wiki/spaces/OPS", None),
    ],
)
def test_parse_issue_key(value: str, key: str | None) -> None:
    assert parse_issue_key(value) == key


def test_issue_reads_fields_comments_links_and_build_links(jira_srv: ReplayServer) -> None:
    result: ToolResult = tools(jira_srv.url)["jira_issue"](f"{jira_srv.url}/browse/OPS-123", max_comments=1)
    assert result.status == "success", result
    d = result.data
    assert d["key"] == "OPS-123"
    assert d["status"] == "In Progress"
    assert d["priority"] == "High"
    assert d["assignee"] == "Mia Krystof"
    assert d["reporter"] == "Emma Richards"
    assert d["labels"] == ["payments", "sev2"]
    assert d["components"] == ["checkout"]
    assert "502" in d["description"]
    assert d["comment_total"] == 2
    assert [c["author"] for c in d["comments"]] == ["Emma Richards"]  # only the latest one
    assert d["issue_links"] == [
        {"relation": "is depended by", "key": "PR-2", "summary": "Roll back payments 2.14", "status": "Open"},
        {
            "relation": "depends on",
            "key": "PR-3",
            "summary": "Payments DB connection pool exhausted",
            "status": "Done",
        },
    ]
    assert [r["title"] for r in d["remote_links"]] == ["TSTSUP-111", "payments/deploy #410"]
    assert d["jenkins_builds"] == [
        "https://ci.example.com/job/payments/job/deploy/412/",
        "https://ci.example.com/job/payments/job/deploy/409/",
        "https://ci.example.com/job/payments/job/integration-tests/88/",
        "https://ci.example.com/job/payments/job/deploy/410/",
    ]
    # Token auth on Jira is HTTP Basic with the account e-mail and the API token.
    assert {r.headers["authorization"] for r in jira_srv.requests} == {basic(USER, TOKEN)}
    assert [r.path for r in jira_srv.requests] == [f"{API}/issue/OPS-123", f"{API}/issue/OPS-123/remotelink"]
    # Only the fields the tool reports are asked for (custom fields can be huge).
    assert "description" in jira_srv.requests[0].query["fields"][0].split(",")


def test_issue_long_description_is_truncated(jira_srv: ReplayServer) -> None:
    long = {
        "key": "OPS-5",
        "fields": {"summary": "s", "description": "x" * 10_000, "comment": {"comments": []}},
    }
    jira_srv.add("GET", f"{API}/issue/OPS-5", body=long)
    jira_srv.add("GET", f"{API}/issue/OPS-5/remotelink", body=[])
    d = tools(jira_srv.url)["jira_issue"]("OPS-5").data
    assert d["description_truncated"] is True
    assert len(d["description"]) < 4100


def test_issue_survives_forbidden_remote_links(jira_srv: ReplayServer) -> None:
    jira_srv.fail_next("GET", f"{API}/issue/OPS-123/remotelink", 403)
    result = tools(jira_srv.url)["jira_issue"]("OPS-123")
    assert result.status == "success"
    assert result.data["remote_links"] == []
    assert result.data["remote_links_error"] == "remote links unavailable (403)"


def test_search_paginates_across_two_pages(jira_srv: ReplayServer) -> None:
    result = tools(jira_srv.url)["jira_search"]("project = OPS ORDER BY created DESC", limit=20)
    assert result.status == "success", result
    assert [i["key"] for i in result.data["issues"]] == ["OPS-123", "OPS-101", "OPS-88"]
    assert result.data["total"] == 3
    assert result.data["more_available"] is False
    assert result.metadata["pages"] == 2
    searches = jira_srv.requests_to(f"{API}/search")
    assert [r.query["startAt"] for r in searches] == [["0"], ["2"]]
    assert searches[0].query["jql"] == ["project = OPS ORDER BY created DESC"]
    assert searches[0].query["maxResults"] == ["20"]
    assert searches[1].query["maxResults"] == ["18"]


def test_cloud_search_pages_with_next_page_token(jira_srv: ReplayServer) -> None:
    jira_srv.add(
        "GET", f"{API}/search/jql", fixture="jira/search_jql_page2.json", query={"nextPageToken": "CAEaAggD"}
    )
    jira_srv.add("GET", f"{API}/search/jql", fixture="jira/search_jql_page1.json")
    settings = Settings(
        jira=JiraSettings(url=jira_srv.url, user=USER, token=SecretStr(TOKEN), deployment="cloud")
    )
    result = toolset(settings)["jira_search"]("project = OPS", limit=10)
    assert result.status == "success", result
    assert [i["key"] for i in result.data["issues"]] == ["OPS-123", "OPS-101", "OPS-88"]
    assert result.data["total"] is None  # the Cloud API does not count
    assert result.data["more_available"] is False
    pages = jira_srv.requests_to(f"{API}/search/jql")
    assert [r.query.get("nextPageToken") for r in pages] == [None, ["CAEaAggD"]]
    assert [r.query["maxResults"] for r in pages] == [["10"], ["8"]]
    assert [r for r in jira_srv.requests if r.path == f"{API}/search"] == []  # the retired endpoint


@pytest.mark.parametrize(
    ("url", "deployment", "cloud"),
    [
        ("https://acme.atlassian.net", "auto", True),
        ("https://jira.acme.internal", "auto", False),
        ("https://jira.acme.internal", "cloud", True),
        ("https://acme.atlassian.net", "server", False),
    ],
)
def test_cloud_detection(url: str, deployment: Any, cloud: bool) -> None:
    assert is_cloud(JiraSettings(url=url, user=USER, token=SecretStr(TOKEN), deployment=deployment)) is cloud


def test_search_stops_at_limit(jira_srv: ReplayServer) -> None:
    result = tools(jira_srv.url)["jira_search"]("project = OPS", limit=2)
    assert [i["key"] for i in result.data["issues"]] == ["OPS-123", "OPS-101"]
    assert result.data["more_available"] is True
    assert len(jira_srv.requests_to(f"{API}/search")) == 1


def test_search_with_no_results_is_no_data(jira_srv: ReplayServer) -> None:
    jira_srv.add(  # the specific route first
        "GET", f"{API}/search", fixture="jira/search_empty.json", query={"jql": "project = NONE"}, first=True
    )
    result = tools(jira_srv.url)["jira_search"]("project = NONE")
    assert result.status == "no_data"


def test_add_comment_posts_body(jira_srv: ReplayServer) -> None:
    result = tools(jira_srv.url)["jira_add_comment"]("OPS-123", "Rolled back to 2.13; errors stopped.")
    assert result.status == "success", result
    assert result.data["comment_id"] == "10000"
    (post,) = jira_srv.requests_to(f"{API}/issue/OPS-123/comment", "POST")
    assert post.json() == {"body": "Rolled back to 2.13; errors stopped."}
    assert post.headers["authorization"] == basic(USER, TOKEN)


def test_specs_mark_comment_as_sensitive_write() -> None:
    entries = build(Settings(jira=JiraSettings())).entries
    assert entries["jira_issue"].spec.read_only is True
    assert entries["jira_search"].spec.category == "tickets"
    spec = entries["jira_add_comment"].spec
    assert (spec.read_only, spec.risk) == (False, "sensitive")


def test_not_configured_fails_with_hint() -> None:
    for settings in (Settings(), Settings(jira=JiraSettings(url="https://x.atlassian.net"))):
        result = toolset(settings)["jira_issue"]("OPS-1")
        assert result.status == "error"
        assert "DEVOPS_AGENT_JIRA__URL" in (result.hint or "")


def test_wrong_token_is_an_auth_failure(jira_srv: ReplayServer) -> None:
    result = tools(jira_srv.url, token="wrong")["jira_issue"]("OPS-123")
    assert result.status == "error"
    assert "401" in (result.error or "")
    assert "api token" in (result.hint or "").lower()
    assert "wrong" not in (result.error or "") + (result.hint or "")
    assert jira_srv.requests[0].headers["authorization"] == basic(USER, "wrong")


@pytest.mark.parametrize(
    ("status", "headers", "error", "meta"),
    [
        (403, {}, "(403)", {"status": 403}),
        (404, {}, "no such issue (404)", {"status": 404}),
        (429, {"Retry-After": "17"}, "rate limit", {"status": 429, "transient": True, "retry_after_s": 17.0}),
        (500, {}, "server error (500)", {"status": 500, "transient": True}),
        (503, {}, "server error (503)", {"status": 503, "transient": True}),
    ],
)
def test_error_statuses_are_mapped(
    jira_srv: ReplayServer, status: int, headers: dict[str, str], error: str, meta: dict[str, Any]
) -> None:
    jira_srv.fail_next("GET", f"{API}/issue/OPS-123", status, headers=headers)
    result = tools(jira_srv.url)["jira_issue"]("OPS-123")
    assert result.status == "error"
    assert error in (result.error or "")
    assert result.hint
    assert meta.items() <= result.metadata.items()
    # max_retries=0: the client does not retry on its own (the breaker and the model decide).
    assert len(jira_srv.requests_to(f"{API}/issue/OPS-123")) == 1


def test_unreachable_server_is_transient() -> None:
    with ReplayServer() as srv:
        url = srv.url
    result = tools(url)["jira_search"]("project = OPS")
    assert result.status == "error"
    assert result.metadata.get("transient") is True


def test_check_reports_user_and_auth_failures(jira_srv: ReplayServer) -> None:
    ok, message = check(Settings(jira=JiraSettings(url=jira_srv.url, user=USER, token=SecretStr(TOKEN))))
    assert ok, message
    assert "Mia Krystof" in message
    ok, message = check(Settings(jira=JiraSettings(url=jira_srv.url, user=USER, token=SecretStr("bad"))))
    assert not ok
    assert "401" in message
    ok, message = check(Settings())
    assert not ok
    assert "not configured" in message


def test_missing_client_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jira", None)  # makes `import jira` raise ImportError
    with pytest.raises(ImportError, match=r"devops-agent\[jira\]"):
        build(Settings())
    registry = ToolRegistry()
    register(registry)
    assert "jira" not in registry.build(Settings())
    assert registry.unavailable[0].name == "jira"
    assert "devops-agent[jira]" in registry.unavailable[0].reason
    ok, message = check(Settings())
    assert not ok
    assert "devops-agent[jira]" in message


def test_missing_issue_reports_jiras_message(jira_srv: ReplayServer) -> None:
    jira_srv.add("GET", f"{API}/issue/OPS-404", fixture="jira/error_404.json", status=404)
    result = tools(jira_srv.url)["jira_issue"]("OPS-404")
    assert result.status == "error"
    assert result.error == (
        "no such issue (404): Issue does not exist or you do not have permission to see it."
    )
    assert jira_srv.requests_to(f"{API}/issue/OPS-404/remotelink") == []


def test_without_user_the_token_is_sent_as_bearer(jira_srv: ReplayServer) -> None:
    jira_srv.basic_auth = None  # Data Center checks the personal access token itself
    settings = Settings(jira=JiraSettings(url=jira_srv.url, token=SecretStr("dc-pat-123")))
    result = toolset(settings)["jira_issue"]("OPS-123")
    assert result.status == "success", result
    assert {r.headers["authorization"] for r in jira_srv.requests} == {"Bearer dc-pat-123"}


def test_jira_search_imported_by_name_runs_through_the_pipeline(
    jira_srv: ReplayServer, through_pipeline: Any
) -> None:
    """A module-level tool: the pipeline hands it the run's settings (``ctx.deps``); its limit range
    is in the schema the model reads, and an out-of-range limit is refused before any request (the
    hand clamp used to turn 500 into 200 silently)."""
    settings = Settings(jira=JiraSettings(url=jira_srv.url, user=USER, token=SecretStr(TOKEN)))
    spec = spec_of(jira_search)
    assert spec is not None
    assert (spec.category, spec.read_only) == ("tickets", True)
    found = through_pipeline(
        "jira_search", jira_search, {"jql": "project = OPS", "limit": 2}, settings=settings, spec=spec
    )
    assert found.status == "success", found
    assert [i["key"] for i in found.data["issues"]] == ["OPS-123", "OPS-101"]
    refused = through_pipeline(
        "jira_search", jira_search, {"jql": "project = OPS", "limit": 500}, settings=settings, spec=spec
    )
    assert refused.status == "error"
    assert "limit: Input should be less than or equal to 200" in (refused.error or "")
    assert len(jira_srv.requests_to(f"{API}/search")) == 1
    limit = Tool(jira_search).function_schema.json_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 200, 20)


def test_jira_issue_url_on_another_site_is_refused(jira_srv: ReplayServer) -> None:
    other = "https://other-company.atlassian.net/browse/OPS-123"
    issue = tools(jira_srv.url)["jira_issue"](other)
    comment = tools(jira_srv.url)["jira_add_comment"](other, "rolled back")
    for result in (issue, comment):
        assert result.status == "error"
        assert "not on the configured Jira" in (result.error or "")
        assert "OPS-123" in (result.hint or "")
    assert jira_srv.requests == []  # not read, and above all not commented on, in the wrong Jira
    # The same URL on the configured site (and the bare key) still work.
    assert tools(jira_srv.url)["jira_issue"](f"{jira_srv.url}/browse/OPS-123").status == "success"


@pytest.mark.parametrize(
    "url",
    [
        "https://acme.atlassian.net/projects/OPS/issues/OPS-123",
        "https://acme.atlassian.net/projects/OPS/issues/OPS-123?filter=allopenissues",
        "https://acme.atlassian.net/servicedesk/customer/portal/2/OPS-123",
        "https://acme.atlassian.net/jira/servicedesk/projects/OPS/queues/custom/1/OPS-123",
    ],
)
def test_issue_key_from_issue_navigator_and_service_desk_urls(url: str) -> None:
    assert jira_tools.parse_issue_key(url) == "OPS-123"
