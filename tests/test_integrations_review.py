"""Review of the Jira, Jenkins, GitHub and git tools as a platform engineer wiring them up would
use them: each test pins a defect found in that review (it failed before the fix).

The servers are the replay servers of the existing integration tests (their fixtures are
imported, not copied); the git tests build throwaway repositories under ``tmp_path``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from devops_agent.analysis.ci_urls import find_build_links, parse_build_url
from devops_agent.config import Settings
from devops_agent.config.settings import GitHubSettings, JenkinsSettings, JiraSettings
from devops_agent.tools import github as github_tools
from devops_agent.tools import jenkins as jenkins_tools
from devops_agent.tools import jira as jira_tools
from devops_agent.tools.base import call_directly
from replay.server import ReplayServer
from test_tools_git import DATES, call, commit, git, repo, settings
from test_tools_github import GitHub, gh, ghe
from test_tools_jenkins import DEPLOY, ci, server
from test_tools_jenkins import tools as jenkins
from test_tools_jira import jira_srv
from test_tools_jira import tools as jira

__all__ = ["ci", "gh", "ghe", "jira_srv", "repo", "server", "settings"]  # fixtures used by name


# -- configuration: a server URL without its scheme ------------------------------------------


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


# -- Jira --------------------------------------------------------------------------------------


def test_jira_issue_url_on_another_site_is_refused(jira_srv: ReplayServer) -> None:
    other = "https://other-company.atlassian.net/browse/OPS-123"
    issue = jira(jira_srv.url)["jira_issue"](other)
    comment = jira(jira_srv.url)["jira_add_comment"](other, "rolled back")
    for result in (issue, comment):
        assert result.status == "error"
        assert "not on the configured Jira" in (result.error or "")
        assert "OPS-123" in (result.hint or "")
    assert jira_srv.requests == []  # not read, and above all not commented on, in the wrong Jira
    # The same URL on the configured site (and the bare key) still work.
    assert jira(jira_srv.url)["jira_issue"](f"{jira_srv.url}/browse/OPS-123").status == "success"


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


# -- Jenkins -----------------------------------------------------------------------------------

# Jenkins leaves its console notes (Pipeline step markers, hyperlinks: hundreds of bytes each in
# the log file) out of progressiveText; X-Text-Size is the *file* offset the text ends at.
PIPELINE_TEXT = "[Pipeline] Start of Pipeline\n[Pipeline] node\nRunning on agent-7\n"
PIPELINE_FILE_SIZE = 1900


def test_console_next_start_is_the_file_offset_jenkins_reports(ci: ReplayServer) -> None:
    path = f"{DEPLOY}/415/logText/progressiveText"
    ci.add(
        "GET",
        path,
        body=PIPELINE_TEXT,
        headers={"X-Text-Size": str(PIPELINE_FILE_SIZE), "X-More-Data": "true"},
    )
    console = jenkins(ci.url)["jenkins_console"]
    full = console("payments/deploy", number=415, full=True, summarize=False)
    assert full.status == "success", full
    assert full.data["text"] == PIPELINE_TEXT
    assert full.data["next_start"] == PIPELINE_FILE_SIZE  # not len(text): that re-reads old lines
    tail = console("payments/deploy", number=415, summarize=False)
    assert tail.data["next_start"] == PIPELINE_FILE_SIZE
    # Cut short by the cap, the cut's file offset is unknown: continue where no text is skipped.
    long_text = PIPELINE_TEXT * 40  # over the smallest cap the settings allow (1024 bytes)
    ci.add(
        "GET",
        f"{DEPLOY}/417/logText/progressiveText",
        body=long_text,
        headers={"X-Text-Size": str(len(long_text) + 900), "X-More-Data": "true"},
    )
    cut = jenkins(ci.url, console_max_bytes=1024)["jenkins_console"](
        "payments/deploy", number=417, full=True, summarize=False
    )
    assert cut.data["truncated"] is True
    assert cut.data["next_start"] == 1024


def test_console_tail_of_a_single_line_longer_than_the_window_is_not_empty(ci: ReplayServer) -> None:
    window = 4096
    line = b"x" * (3 * window)  # e.g. a minified bundle or JSON dump printed without a newline
    path = f"{DEPLOY}/416/logText/progressiveText"
    ci.add("GET", path, body=line, headers={"X-Text-Size": str(len(line))}, query={"start": "0"})
    offset = len(line) - window
    ci.add("GET", path, body=line[offset:], query={"start": str(offset)})
    ci.routes[("GET", path)].reverse()
    result = jenkins(ci.url, console_max_bytes=window)["jenkins_console"](
        "payments/deploy", number=416, summarize=False
    )
    assert result.status == "success", result
    assert result.data["text"].encode() == line[offset:]
    assert result.data["truncated"] is True


@pytest.mark.parametrize(
    ("url", "job", "build"),
    [
        ("https://ci.acme.internal/job/deploy/job/blue/412/", "deploy/blue", 412),
        ("https://ci.acme.internal/job/blue/7/console", "blue", 7),
        (
            "https://ci.acme.internal/jenkins/job/green/job/blue/lastFailedBuild/",
            "green/blue",
            "lastFailedBuild",
        ),
        ("https://ci.acme.internal/blue/organizations/jenkins/blue/detail/blue/3/pipeline", "blue", 3),
    ],
)
def test_job_or_folder_named_blue_is_not_taken_for_blue_ocean(url: str, job: str, build: int | str) -> None:
    ref = parse_build_url(url)
    assert ref is not None
    assert (ref.job, ref.build) == (job, build)
    assert [r.job for r in find_build_links(f"deploy failed: {url}")] == [job]


def test_build_of_a_job_named_blue_is_read(ci: ReplayServer) -> None:
    ci.add("GET", "/job/deploy/job/blue/412/api/json", fixture="jenkins/build_deploy_412.json")
    result = jenkins(ci.url)["jenkins_build"](f"{ci.url}/job/deploy/job/blue/412/")
    assert result.status == "success", result
    assert result.data["number"] == 412
    assert [r.path for r in ci.requests] == ["/job/deploy/job/blue/412/api/json"]


# -- GitHub ------------------------------------------------------------------------------------


def test_repo_given_as_a_browser_url_or_ssh_remote(gh: GitHub) -> None:
    commits = gh.tools()["github_commits"]
    host = gh.web.split("://", 1)[1].split(":")[0]
    for repo_ref in (
        f"{gh.web}/acme/payments/tree/main",  # copied from the browser, below the repository
        f"{gh.web}/acme/payments/pull/482",
        f"git@{host}:acme/payments.git",  # `git remote get-url origin`
    ):
        gh.srv.requests.clear()
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


# -- git ---------------------------------------------------------------------------------------


def test_shallow_clone_boundary_is_not_reported_as_a_first_commit(
    repo: Path, settings: Settings, tmp_path: Path
) -> None:
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", "shallow")
    shallow = tmp_path / "shallow"
    diff = call(settings, "git_diff", repo=str(shallow))  # HEAD~1..HEAD: the parent was not fetched
    assert diff.status == "error"
    assert "shallow" in (diff.error or "")
    assert "--deepen" in (diff.hint or "")
    log = call(settings, "git_log", repo=str(shallow))
    (head,) = log.data["commits"]
    assert head["shallow_boundary"] is True
    assert head["files_changed"] is None  # not "added every file in the tree"
    assert "shallow" in log.data["note"]
    # A full clone's real first commit is still compared with the empty tree.
    full = call(settings, "git_diff", repo=str(repo), rev_range="HEAD~2^!")
    assert full.status == "success"
    assert "shallow_boundary" not in call(settings, "git_log", repo=str(repo)).data["commits"][-1]


def test_blame_in_a_sha256_repository(tmp_path: Path, settings: Settings) -> None:
    r = tmp_path / "s256"
    r.mkdir()
    try:
        git(r, "init", "-q", "-b", "main", "--object-format=sha256")
    except subprocess.CalledProcessError:
        pytest.skip("this git cannot create sha256 repositories")
    (r / "app.py").write_text("TIMEOUT = 5\n")
    sha = commit(r, "lower timeout", DATES[1], "Bob", "bob@example.com")
    result = call(settings, "git_blame", repo=str(r), path="app.py", start_line=1, end_line=1)
    assert result.status == "success", result
    (line,) = result.data["lines"]
    assert (line["line_no"], line["sha"], line["author"]) == (1, sha, "Bob")
