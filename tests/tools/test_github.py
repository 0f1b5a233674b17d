"""The GitHub toolset: real PyGithub over HTTP against a replay server of documented REST responses.

The replay server stands in for api.github.com and for a GitHub Enterprise Server (``/api/v3``):
``api_url`` points PyGithub at it, and the fixtures' ``https://api.github.com`` /
``https://github.com`` links are rewritten to it, as a real server's own links would be.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import pytest
from pydantic import SecretStr

from devops_agent.config import Settings
from devops_agent.config.settings import GitHubSettings
from devops_agent.tools import github as gh_tools
from devops_agent.tools.base import call_directly, spec_of
from devops_agent.tools.github import (
    build,
    check,
    github_pr,
    github_prs_merged,
    parse_pr_ref,
    register,
    serves,
)
from devops_agent.tools.registry import ToolRegistry
from fixtures_replay import FIXTURES, ReplayServer

pytest.importorskip("github")

TOKEN = "ghp_TestToken0123456789abcdefABCDEF0123"
REPO = "/repos/acme/payments"
PR_PATH = f"{REPO}/pulls/482"
POOL = "src/payments/db/pool.py"
TIMEOUT_SHA = "16b77bc75d01c6ca3cb08aa034f2fe6a0aab7841"
HEAD_SHA = "1e6313afb8be8d43eab8d9b5f61888d75cbd4038"
MERGE_SHA = "19693ca7471fd2727975860349db26e521d3bb08"


def load(name: str, api: str, web: str) -> str:
    """A fixture with its github.com links pointing at the replay server, as a real server's would."""
    text = (FIXTURES / "github" / name).read_text()
    return text.replace("https://api.github.com", api).replace("https://github.com", web)


class GitHub:
    """The replay server dressed as one GitHub server (github.com-style or Enterprise ``/api/v3``)."""

    def __init__(self, srv: ReplayServer, prefix: str = "") -> None:
        self.srv, self.prefix = srv, prefix
        self.api, self.web = srv.url + prefix, srv.url

    def add(self, path: str, fixture: str, *, status: int = 200, **kw: Any) -> None:
        headers = {"Content-Type": "application/json; charset=utf-8", **kw.pop("headers", {})}
        body = load(fixture, self.api, self.web).encode()
        self.srv.add("GET", self.prefix + path, body=body, status=status, headers=headers, **kw)

    def pulls_url(self, page: int) -> str:
        return f"{self.api}{REPO}/pulls?direction=desc&page={page}&per_page=100&sort=updated&state=closed"

    def requests(self, path: str = "") -> list[Any]:
        return self.srv.requests_to(self.prefix + path)

    def tools(self, token: str | None = TOKEN, repo: str | None = "acme/payments") -> dict[str, Any]:
        settings = self.settings(token, repo)
        return {
            name: partial(call_directly, e.function, settings) for name, e in build(settings).entries.items()
        }

    def settings(self, token: str | None = TOKEN, repo: str | None = "acme/payments") -> Settings:
        secret = SecretStr(token) if token else None
        return Settings(github=GitHubSettings(api_url=self.api, token=secret, repo=repo, timeout_s=5))


@pytest.fixture(scope="module")
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


def _routes(g: GitHub) -> GitHub:
    g.srv.reset()
    g.add(PR_PATH, "pull_482.json")
    g.add(f"{PR_PATH}/reviews", "pull_482_reviews.json")
    g.add(f"{PR_PATH}/files", "pull_482_files.json")
    # Pages 2 and 3 are reached only through the Link headers (RFC 8288), as GitHub paginates.
    g.add(
        f"{REPO}/pulls",
        "pulls_closed_page3.json",
        query={"page": "3"},
        headers={"Link": f'<{g.pulls_url(2)}>; rel="prev", <{g.pulls_url(1)}>; rel="first"'},
    )
    g.add(
        f"{REPO}/pulls",
        "pulls_closed_page2.json",
        query={"page": "2"},
        headers={"Link": f'<{g.pulls_url(3)}>; rel="next", <{g.pulls_url(3)}>; rel="last"'},
    )
    g.add(
        f"{REPO}/pulls",
        "pulls_closed_page1.json",
        headers={"Link": f'<{g.pulls_url(2)}>; rel="next", <{g.pulls_url(3)}>; rel="last"'},
    )
    g.add(f"{REPO}/commits", "commits_pool_py.json")
    g.add(f"{REPO}/commits/{TIMEOUT_SHA}", "commit_c_timeout.json")
    g.add(f"{REPO}/compare/v2.13.0...v2.14.0", "compare_v2.13.0...v2.14.0.json")
    reset = str(int(time.time()) + 3600)
    g.add(
        "/user",
        "user.json",
        headers={
            "X-OAuth-Scopes": "repo, read:org",
            "X-RateLimit-Limit": "5000",
            "X-RateLimit-Remaining": "4987",
            "X-RateLimit-Reset": reset,
        },
    )
    g.add("/rate_limit", "rate_limit_anonymous.json")
    return g


@pytest.fixture
def gh(server: ReplayServer) -> GitHub:
    return _routes(GitHub(server))


@pytest.fixture
def ghe(server: ReplayServer) -> GitHub:
    return _routes(GitHub(server, "/api/v3"))


@pytest.mark.parametrize(
    ("ref", "parsed"),
    [
        ("482", (None, "acme/payments", 482)),
        ("#482", (None, "acme/payments", 482)),
        ("octo/hello-world#7", (None, "octo/hello-world", 7)),
        ("https://github.com/acme/payments/pull/482", ("github.com", "acme/payments", 482)),
        ("https://github.com/acme/payments/pull/482/files#diff-1", ("github.com", "acme/payments", 482)),
        ("https://ghe.acme.internal/acme/pay.ments/pull/9", ("ghe.acme.internal", "acme/pay.ments", 9)),
        ("https://api.github.com/repos/acme/payments/pulls/482", ("api.github.com", "acme/payments", 482)),
        ("https://ghe.acme.internal/api/v3/repos/a/b/pulls/3", ("ghe.acme.internal", "a/b", 3)),
        ("https://github.com/acme/payments/issues/482", None),
        ("pull 482", None),
        ("ftp://github.com/acme/payments/pull/482", None),
    ],
)
def test_parse_pr_ref(ref: str, parsed: tuple[str | None, str, int] | None) -> None:
    assert parse_pr_ref(ref, "acme/payments") == parsed


@pytest.mark.parametrize(
    ("api_url", "netloc", "served"),
    [
        ("https://api.github.com", "github.com", True),
        ("https://api.github.com", "www.github.com", True),
        ("https://api.github.com", "api.github.com", True),
        ("https://api.github.com", "ghe.acme.internal", False),
        ("https://ghe.acme.internal/api/v3", "ghe.acme.internal", True),
        ("https://ghe.acme.internal/api/v3", "github.com", False),
        ("https://api.acme.ghe.com", "acme.ghe.com", True),  # GHE.com data residency
    ],
)
def test_which_hosts_belong_to_the_configured_server(api_url: str, netloc: str, served: bool) -> None:
    assert serves(GitHubSettings(api_url=api_url), netloc) is served


def test_pr_by_number_reads_everything(gh: GitHub) -> None:
    result = gh.tools()["github_pr"]("482")
    assert result.status == "success", result
    d = result.data
    assert (d["repo"], d["number"], d["state"], d["merged"]) == ("acme/payments", 482, "closed", True)
    assert d["title"] == "Raise checkout DB pool timeout; retry payment capture once"
    assert d["merged_at"] == "2026-11-21T14:03:11+00:00"
    assert (d["merged_by"], d["author"]) == ("erichards", "mkrystof")
    assert d["base"]["ref"] == "main"
    assert d["head"] == {"ref": "fix/pool-timeout", "sha": HEAD_SHA}
    assert d["merge_commit_sha"] == MERGE_SHA
    assert d["labels"] == ["bug", "payments", "hotfix"]
    assert d["requested_reviewers"] == ["tpatel"]
    assert d["requested_teams"] == ["payments-sre"]
    # jlee requested changes, then approved, then commented: the approval stands.
    assert d["review_summary"] == {
        "approved": ["erichards", "jlee"],
        "changes_requested": [],
        "commented": ["tpatel"],
        "reviews": 5,
    }
    assert [(f["path"], f["status"], f["additions"], f["deletions"]) for f in d["files"]] == [
        ("src/payments/db/pool.py", "modified", 6, 3),
        ("src/payments/capture.py", "modified", 22, 9),
        ("tests/test_capture_retry.py", "added", 13, 0),
        ("src/payments/retry.py", "renamed", 0, 0),
    ]
    assert d["files"][3]["previous_path"] == "src/payments/backoff.py"
    assert (d["changed_files"], d["files_truncated"], d["commits"]) == (4, False, 3)
    assert "OPS-123" in d["body"]
    assert d["body_truncated"] is False
    assert d["html_url"] == f"{gh.web}/acme/payments/pull/482"
    # PyGithub sends the token as `Authorization: token …` on every request; pages of 100.
    assert [r.path for r in gh.requests()] == [PR_PATH, f"{PR_PATH}/reviews", f"{PR_PATH}/files"]
    assert {r.headers["authorization"] for r in gh.requests()} == {f"token {TOKEN}"}
    assert gh.requests()[1].query["per_page"] == ["100"]
    assert TOKEN not in json.dumps(result.model_dump())


def test_pr_by_owner_name_ref_overrides_default_repo(gh: GitHub) -> None:
    gh.srv.add("GET", "/repos/octo/other/pulls/482", body={"message": "Not Found"}, status=404)
    result = gh.tools()["github_pr"]("octo/other#482")
    assert result.status == "error"
    assert result.error == "no such pull request (404)"
    assert [r.path for r in gh.requests()] == ["/repos/octo/other/pulls/482"]


def test_pr_by_url_on_the_configured_server(gh: GitHub) -> None:
    result = gh.tools(repo=None)["github_pr"](f"{gh.web}/acme/payments/pull/482/files")
    assert result.status == "success", result
    assert result.data["repo"] == "acme/payments"
    assert result.metadata["source"] == "github pr acme/payments#482"


def test_pr_by_enterprise_url_goes_to_api_v3(ghe: GitHub) -> None:
    result = ghe.tools(repo=None)["github_pr"](f"{ghe.web}/acme/payments/pull/482")
    assert result.status == "success", result
    assert result.data["merged_by"] == "erichards"
    assert result.data["html_url"] == f"{ghe.web}/acme/payments/pull/482"
    assert [r.path for r in ghe.srv.requests] == [
        f"/api/v3{PR_PATH}",
        f"/api/v3{PR_PATH}/reviews",
        f"/api/v3{PR_PATH}/files",
    ]


def test_github_com_url_is_refused_when_another_server_is_configured(ghe: GitHub) -> None:
    result = ghe.tools()["github_pr"]("https://github.com/acme/payments/pull/482")
    assert result.status == "error"
    assert "not on the configured GitHub" in (result.error or "")
    assert "api/v3" in (result.hint or "")
    assert ghe.srv.requests == []  # nothing asked: the same number there is another PR


def test_pr_caps_files_and_body(gh: GitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gh_tools, "MAX_FILES", 2)
    monkeypatch.setattr(gh_tools, "BODY_MAX_CHARS", 40)
    d = gh.tools()["github_pr"]("482").data
    assert [f["path"] for f in d["files"]] == ["src/payments/db/pool.py", "src/payments/capture.py"]
    assert d["files_truncated"] is True
    assert d["body_truncated"] is True
    assert d["body"].endswith(" …")
    assert len(d["body"]) == 42


def test_merged_window_follows_link_pages_and_stops_early(gh: GitHub) -> None:
    result = gh.tools()["github_prs_merged"]("2026-11-19T00:00:00Z")
    assert result.status == "success", result
    d = result.data
    # #485 was closed unmerged; #470 was updated before `since`, so the scan stops there.
    assert [(p["number"], p["merged_at"]) for p in d["pull_requests"]] == [
        (482, "2026-11-21T14:03:11+00:00"),
        (480, "2026-11-20T09:12:40+00:00"),
        (479, "2026-11-19T16:45:00+00:00"),
    ]
    assert d["pull_requests"][2]["base"] == "release/2.14"
    assert d["pull_requests"][0]["author"] == "mkrystof"
    assert d["pull_requests"][0]["merge_commit_sha"] == MERGE_SHA
    assert d["pull_requests"][0]["html_url"] == f"{gh.web}/acme/payments/pull/482"
    assert (d["scanned"], d["stopped"], d["truncated"]) == (5, "older_than_since", False)
    pages = gh.requests(f"{REPO}/pulls")
    assert [r.query.get("page") for r in pages] == [None, ["2"]]  # page 3 is never read
    first = pages[0].query
    assert (first["state"], first["sort"], first["direction"]) == (["closed"], ["updated"], ["desc"])
    assert first["per_page"] == ["100"]


def test_merged_window_with_until_and_base(gh: GitHub) -> None:
    result = gh.tools()["github_prs_merged"]("2026-11-19", until="2026-11-21T00:00:00Z", base="main")
    assert result.status == "success", result
    # 482 merged after `until`; branch filtering is GitHub's (the replay server ignores `base`).
    assert [p["number"] for p in result.data["pull_requests"]] == [480, 479]
    assert result.data["until"] == "2026-11-21T00:00:00+00:00"
    assert gh.requests(f"{REPO}/pulls")[0].query["base"] == ["main"]


def test_merged_window_limit_stops_on_the_first_page(gh: GitHub) -> None:
    d = gh.tools()["github_prs_merged"]("2026-11-01", limit=1).data
    assert [p["number"] for p in d["pull_requests"]] == [482]
    assert (d["stopped"], d["truncated"]) == ("limit", True)
    assert len(gh.requests(f"{REPO}/pulls")) == 1


def test_merged_window_accepts_shorthand(gh: GitHub) -> None:
    before = datetime.now(UTC)
    result = gh.tools()["github_prs_merged"]("24h")
    # The fixtures' PRs were all updated more than a day before now: the first page ends the scan.
    assert result.status == "no_data", result
    since = datetime.fromisoformat((result.hint or "").split(" since ")[1])
    assert abs(since - (before - timedelta(hours=24))) < timedelta(seconds=30)
    assert len(gh.requests(f"{REPO}/pulls")) == 1
    assert result.metadata["scanned"] == 1


def test_merged_window_rejects_unreadable_times(gh: GitHub) -> None:
    result = gh.tools()["github_prs_merged"]("last full moon")
    assert result.status == "error"
    assert "90s, 15m, 2h" in (result.hint or "")
    result = gh.tools()["github_prs_merged"]("2026-11-20", until="2026-11-19")
    assert result.status == "error"
    assert gh.srv.requests == []


def test_commits_for_a_path(gh: GitHub) -> None:
    result = gh.tools()["github_commits"](path=POOL, since="2026-11-15T00:00:00Z", sha="main", limit=2)
    assert result.status == "success", result
    d = result.data
    assert [c["subject"] for c in d["commits"]] == [
        "Merge pull request #482 from acme/fix/pool-timeout",
        "Raise pool checkout timeout to 30s",
    ]
    assert d["commits"][0]["merge"] is True
    assert d["commits"][0]["sha"] == MERGE_SHA
    assert d["commits"][1] | {"sha": None, "html_url": None} == {
        "sha": None,
        "short_sha": TIMEOUT_SHA[:7],
        "author": "Mia Krystof",
        "author_login": "mkrystof",
        "date": "2026-11-20T15:01:02+00:00",
        "subject": "Raise pool checkout timeout to 30s",
        "merge": False,
        "html_url": None,
    }
    assert d["more_available"] is True  # a third commit came back
    (req,) = gh.requests(f"{REPO}/commits")
    assert req.query["path"] == [POOL]
    assert req.query["since"] == ["2026-11-15T00:00:00Z"]
    assert req.query["sha"] == ["main"]
    assert req.query["per_page"] == ["3"]


def test_commit_without_a_linked_account(gh: GitHub) -> None:
    d = gh.tools()["github_commits"]().data
    assert d["more_available"] is False
    assert (d["commits"][2]["author"], d["commits"][2]["author_login"]) == ("build agent", None)


def test_compare_two_tags(gh: GitHub) -> None:
    result = gh.tools()["github_compare"]("v2.13.0", "v2.14.0")
    assert result.status == "success", result
    d = result.data
    assert (d["status"], d["ahead_by"], d["behind_by"], d["total_commits"]) == ("ahead", 3, 0, 3)
    assert [c["subject"] for c in d["commits"]] == [
        "Export pool wait time histogram",
        "Raise pool checkout timeout to 30s",
        "Merge pull request #482 from acme/fix/pool-timeout",
    ]
    assert [f["path"] for f in d["files"]] == [
        "src/payments/db/pool.py",
        "src/payments/capture.py",
        "tests/test_capture_retry.py",
    ]
    assert (d["files_listed"], d["files_truncated"], d["commits_truncated"]) == (3, False, False)
    assert len(d["merge_base_sha"]) == 40
    (req,) = gh.srv.requests
    assert req.path == f"{REPO}/compare/v2.13.0...v2.14.0"
    assert req.query["per_page"] == ["50"]


def test_commit_patches_are_capped(gh: GitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    d = gh.tools()["github_commit"](TIMEOUT_SHA).data
    assert d["stats"] == {"additions": 6, "deletions": 3, "total": 9}
    assert d["message"].startswith("Raise pool checkout timeout to 30s\n\nUnder load")
    assert d["parents"] == ["77c8400b41d61d0276b0b528184d208ef15222a4"]
    assert (d["sha"], d["author_login"], d["committer"]) == (TIMEOUT_SHA, "mkrystof", "Mia Krystof")
    (f,) = d["files"]
    assert "CHECKOUT_TIMEOUT_S = 30" in f["patch"]
    assert f["patch_truncated"] is False
    monkeypatch.setattr(gh_tools, "PATCH_MAX_CHARS", 30)
    (f,) = gh.tools()["github_commit"](TIMEOUT_SHA).data["files"]
    assert f["patch_truncated"] is True
    assert len(f["patch"]) == 32


@pytest.mark.parametrize(
    ("status", "fixture", "headers", "error", "meta", "hint"),
    [
        (401, "error_401.json", {}, "(401): Bad credentials", {"status": 401}, "expired or revoked"),
        (
            403,
            "error_403_rate_limit.json",
            {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "{reset}"},
            "rate limit hit (403)",
            {"status": 403, "transient": True},
            "retry after",
        ),
        (
            403,
            "error_403_forbidden.json",
            {"X-RateLimit-Remaining": "4990"},
            "refused the request (403): Resource not accessible",
            {"status": 403},
            "fine-grained token",
        ),
        (404, "error_404.json", {}, "no such pull request (404)", {"status": 404}, "private repositories"),
        (
            429,
            "error_429_secondary.json",
            {"Retry-After": "17"},
            "rate limit hit (429): You have exceeded a secondary rate limit",
            {"status": 429, "transient": True, "retry_after_s": 17.0},
            "retry after 17s",
        ),
        (500, "error_404.json", {}, "server error (500)", {"status": 500, "transient": True}, "retry later"),
        (503, "error_404.json", {}, "server error (503)", {"status": 503, "transient": True}, "retry later"),
    ],
)
def test_error_statuses_are_mapped_at_once(
    gh: GitHub,
    status: int,
    fixture: str,
    headers: dict[str, str],
    error: str,
    meta: dict[str, Any],
    hint: str,
) -> None:
    reset = int(time.time()) + 120
    headers = {k: v.format(reset=reset) for k, v in headers.items()}
    gh.add(PR_PATH, fixture, status=status, headers=headers, times=1)
    started = time.monotonic()
    result = gh.tools()["github_pr"]("482")
    elapsed = time.monotonic() - started
    assert result.status == "error"
    assert error in (result.error or "")
    assert hint in (result.hint or "")
    assert meta.items() <= result.metadata.items()
    if status == 403 and "transient" in meta:
        assert 100 <= result.metadata["retry_after_s"] <= 121  # from X-RateLimit-Reset
    # retry=None: PyGithub neither retries nor sleeps until the reset (GithubRetry would).
    assert len(gh.requests(PR_PATH)) == 1
    assert elapsed < 3


def test_token_is_never_in_results(gh: GitHub) -> None:
    gh.srv.add("GET", PR_PATH, body={"message": f"token {TOKEN} is not valid here"}, status=403, times=1)
    result = gh.tools()["github_pr"]("482")
    assert result.status == "error"
    assert TOKEN not in json.dumps(result.model_dump())
    assert "***" in (result.error or "")
    ok = gh.tools()["github_prs_merged"]("2026-11-19")
    assert TOKEN not in json.dumps(ok.model_dump())


def test_without_token_requests_are_anonymous(gh: GitHub) -> None:
    result = gh.tools(token=None)["github_pr"]("482")
    assert result.status == "success", result
    assert all("authorization" not in r.headers for r in gh.srv.requests)
    gh.add("/repos/acme/private/pulls/1", "error_404.json", status=404)
    result = gh.tools(token=None)["github_pr"]("1", repo="acme/private")
    assert result.status == "error"
    assert "DEVOPS_AGENT_GITHUB__TOKEN" in (result.hint or "")


def test_anonymous_rate_limit_suggests_a_token(gh: GitHub) -> None:
    gh.add(
        PR_PATH,
        "error_403_rate_limit.json",
        status=403,
        headers={"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0"},
        times=1,
    )
    result = gh.tools(token=None)["github_pr"]("482")
    assert result.metadata["transient"] is True
    assert result.metadata["retry_after_s"] is None  # no reset header: say "later", not a number
    assert "DEVOPS_AGENT_GITHUB__TOKEN" in (result.hint or "")


def test_no_repository_is_a_hint(gh: GitHub) -> None:
    for call in (
        lambda t: t["github_pr"]("482"),
        lambda t: t["github_prs_merged"]("7d"),
        lambda t: t["github_commits"](),
        lambda t: t["github_compare"]("a", "b"),
    ):
        result = call(gh.tools(repo=None))
        assert result.status == "error"
        assert "DEVOPS_AGENT_GITHUB__REPO" in (result.hint or "")
    result = gh.tools()["github_commits"](repo="not a repo")
    assert result.status == "error"
    assert gh.srv.requests == []


def test_repo_may_be_given_as_url(gh: GitHub) -> None:
    result = gh.tools(repo=None)["github_commits"](repo=f"{gh.web}/acme/payments.git")
    assert result.status == "success", result
    assert gh.srv.requests[0].path == f"{REPO}/commits"


def test_unreachable_server_is_transient() -> None:
    with ReplayServer() as srv:
        url = srv.url
    settings = Settings(github=GitHubSettings(api_url=url, token=SecretStr(TOKEN), repo="acme/payments"))
    result = call_directly(build(settings).entries["github_commits"].function, settings)
    assert result.status == "error"
    assert result.metadata.get("transient") is True
    assert "github.api_url" in (result.hint or "")


def test_specs_are_read_only() -> None:
    entries = build(Settings()).entries
    assert set(entries) == {
        "github_pr",
        "github_prs_merged",
        "github_commits",
        "github_compare",
        "github_commit",
    }
    assert all(e.spec.read_only and e.spec.risk == "safe" for e in entries.values())
    assert {e.spec.category for e in entries.values()} == {"git"}  # with the local git toolset


def test_check_with_token_without_and_with_a_bad_one(gh: GitHub) -> None:
    ok, message = check(gh.settings())
    assert ok, message
    assert "as sre-bot" in message
    assert "4987/5000" in message
    assert "repo, read:org" in message
    assert gh.srv.requests[-1].path == "/user"
    ok, message = check(gh.settings(token=None))
    assert ok, message
    assert "anonymously (57/60" in message
    assert gh.srv.requests[-1].path == "/rate_limit"
    gh.add("/user", "error_401.json", status=401, times=1)
    ok, message = check(gh.settings(token="ghp_revoked"))
    assert not ok
    assert "401" in message
    assert "ghp_revoked" not in message


def test_check_on_enterprise_without_rate_limiting(ghe: GitHub) -> None:
    ghe.srv.add(
        "GET", "/api/v3/rate_limit", body={"message": "Rate limiting is not enabled."}, status=404, times=1
    )
    ok, message = check(ghe.settings(token=None))
    assert ok, message
    assert "rate limiting disabled" in message


def test_missing_client_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "github", None)  # makes `import github` raise ImportError
    with pytest.raises(ImportError, match=r"devops-agent\[github\]"):
        build(Settings())
    registry = ToolRegistry()
    register(registry)
    assert "github" not in registry.build(Settings())
    assert registry.unavailable[0].name == "github"
    assert "devops-agent[github]" in registry.unavailable[0].reason
    ok, message = check(Settings())
    assert not ok
    assert "devops-agent[github]" in message


def test_github_tools_imported_by_name_run_through_the_pipeline(gh: GitHub, through_pipeline: Any) -> None:
    """Module-level tools run through the real pipeline with the run's settings in ``ctx.deps``; a
    limit above the declared range is refused before any request (it used to become 200)."""
    settings = gh.settings()
    pr = through_pipeline("github_pr", github_pr, {"ref": "482"}, settings=settings, spec=spec_of(github_pr))
    assert pr.status == "success", pr
    assert (pr.data["repo"], pr.data["number"], pr.data["merged"]) == ("acme/payments", 482, True)
    sent = len(gh.requests())
    refused = through_pipeline(
        "github_prs_merged", github_prs_merged, {"since": "7d", "limit": 201}, settings=settings
    )
    assert refused.status == "error"
    assert "limit: Input should be less than or equal to 200" in (refused.error or "")
    assert len(gh.requests()) == sent


def test_repo_given_as_a_browser_url_or_ssh_remote(gh: GitHub) -> None:
    commits = gh.tools()["github_commits"]
    host = gh.web.split("://", 1)[1].split(":")[0]
    for repo_ref in (
        f"{gh.web}/acme/payments/tree/main",  # copied from the browser, below the repository
        f"{gh.web}/acme/payments/pull/482",
        f"git@{host}:acme/payments.git",  # `git remote get-url origin`
    ):
        gh.srv.clear_log()
        result = commits(repo=repo_ref, limit=2)
        assert result.status == "success", (repo_ref, result)
        assert result.data["repo"] == "acme/payments"
        assert [r.path for r in gh.requests()] == ["/repos/acme/payments/commits"]


def test_repo_url_on_another_server_is_refused(ghe: GitHub) -> None:
    for repo_ref in ("https://github.com/acme/payments", "git@github.com:acme/payments.git"):
        result = ghe.tools()["github_commits"](repo=repo_ref)
        assert result.status == "error"
        assert "not on the configured GitHub" in (result.error or "")
    assert ghe.srv.requests == []
