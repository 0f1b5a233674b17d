"""Jenkins URL parsing and build-link extraction: table tests over the URL forms Jenkins produces."""

from __future__ import annotations

import pytest

from devops_agent.analysis.ci_urls import (
    BuildRef,
    find_build_links,
    job_path,
    parse_build_url,
    parse_job_or_url,
)

CI = "https://ci.example.com/"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # classic
        ("https://ci.example.com/job/deploy/123/", BuildRef(CI, "deploy", 123)),
        ("https://ci.example.com/job/deploy/123", BuildRef(CI, "deploy", 123)),
        ("https://ci.example.com/job/deploy/", BuildRef(CI, "deploy", None)),
        (
            "https://ci.example.com/job/deploy/lastFailedBuild/console",
            BuildRef(CI, "deploy", "lastFailedBuild"),
        ),
        # trailing pages
        ("https://ci.example.com/job/deploy/123/console", BuildRef(CI, "deploy", 123)),
        ("https://ci.example.com/job/deploy/123/consoleFull#footer", BuildRef(CI, "deploy", 123)),
        ("https://ci.example.com/job/deploy/123/testReport/", BuildRef(CI, "deploy", 123)),
        (
            "https://ci.example.com/job/deploy/123/testReport/com.example/FooTest/bar/",
            BuildRef(CI, "deploy", 123),
        ),
        ("https://ci.example.com/job/deploy/123/artifact/target/app.jar", BuildRef(CI, "deploy", 123)),
        ("https://ci.example.com/job/deploy/123/api/json?tree=result", BuildRef(CI, "deploy", 123)),
        ("https://ci.example.com/job/deploy/changes", BuildRef(CI, "deploy", None)),
        # nested folders, views, context path, multibranch branch with an encoded slash
        ("https://ci.example.com/job/a/job/b/123/", BuildRef(CI, "a/b", 123)),
        ("https://ci.example.com/job/a/job/b/job/c/7/console", BuildRef(CI, "a/b/c", 7)),
        ("https://ci.example.com/view/Payments/job/a/job/b/9/", BuildRef(CI, "a/b", 9)),
        ("https://ci.example.com/job/a/view/nightly/job/b/9/", BuildRef(CI, "a/b", 9)),
        (
            "http://ci.example.com:8080/jenkins/job/a/job/b/5/",
            BuildRef("http://ci.example.com:8080/jenkins/", "a/b", 5),
        ),
        ("https://ci.example.com/job/repo/job/feature%252Fx/3/", BuildRef(CI, "repo/feature%2Fx", 3)),
        ("https://ci.example.com/job/my%20job/1/", BuildRef(CI, "my job", 1)),
        # Blue Ocean
        (
            "https://ci.example.com/blue/organizations/jenkins/a%2Fb/detail/b/123/pipeline",
            BuildRef(CI, "a/b", 123),
        ),
        (
            "https://ci.example.com/blue/organizations/jenkins/deploy/detail/deploy/8/tests",
            BuildRef(CI, "deploy", 8),
        ),
        (
            "https://ci.example.com/blue/organizations/jenkins/team%2Frepo/detail/feature%2Fx/4/pipeline/",
            BuildRef(CI, "team/repo/feature%2Fx", 4),
        ),
        (
            "https://ci.example.com/blue/organizations/jenkins/team%2Frepo/detail/main/12/pipeline/45",
            BuildRef(CI, "team/repo/main", 12),
        ),
        (
            "https://ci.example.com/jenkins/blue/organizations/jenkins/a%2Fb/activity",
            BuildRef("https://ci.example.com/jenkins/", "a/b", None),
        ),
        # not Jenkins
        ("https://github.com/org/repo/pull/12", None),
        ("https://ci.example.com/computer/agent-1/", None),
        ("ftp://ci.example.com/job/a/1/", None),
        ("job/a/1", None),
    ],
)
def test_parse_build_url(url: str, expected: BuildRef | None) -> None:
    assert parse_build_url(url) == expected


def test_canonical_url_and_job_path() -> None:
    ref = parse_build_url("https://ci.example.com/blue/organizations/jenkins/a%2Fb/detail/b/123/pipeline")
    assert ref is not None
    assert ref.url == "https://ci.example.com/job/a/job/b/123/"
    assert job_path("repo/feature%2Fx") == "job/repo/job/feature%252Fx/"
    assert job_path("my job") == "job/my%20job/"


@pytest.mark.parametrize(
    ("value", "job"),
    [("deploy", "deploy"), ("a/b", "a/b"), ("/a/b/", "a/b"), ("job/a/job/b/", "a/b"), ("a/job/b", "a/b")],
)
def test_parse_job_names(value: str, job: str) -> None:
    assert parse_job_or_url(value) == BuildRef("", job, None)


def test_parse_job_or_url_rejects_empty() -> None:
    assert parse_job_or_url("  ") is None
    assert parse_job_or_url("https://example.com/") is None


JIRA_DESCRIPTION = """\
h3. What happened
Deploy [#412|https://ci.example.com/job/payments/job/deploy/412/console] failed, and the one before
(https://ci.example.com/job/payments/job/deploy/411/) too. Markdown copy: [run](https://ci.example.com/blue/organizations/jenkins/payments%2Fdeploy/detail/deploy/410/pipeline).
The job itself: https://ci.example.com/job/payments/job/deploy/ - not a build.
Repeated: https://ci.example.com/job/payments/job/deploy/412/testReport/.
Other CI: https://other-ci.example.org/job/payments/5/, and GitHub https://github.com/org/repo/pull/1.
"""


def test_find_build_links_in_a_jira_description() -> None:
    links = find_build_links(JIRA_DESCRIPTION)
    assert [(r.base_url, r.job, r.build) for r in links] == [
        (CI, "payments/deploy", 412),
        (CI, "payments/deploy", 411),
        (CI, "payments/deploy", 410),
        ("https://other-ci.example.org/", "payments", 5),
    ]


def test_find_build_links_on_one_server() -> None:
    links = find_build_links(JIRA_DESCRIPTION, base_url="https://ci.example.com")
    assert [r.build for r in links] == [412, 411, 410]


def test_find_build_links_none() -> None:
    assert find_build_links("no links here, see https://example.com/docs") == []


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
