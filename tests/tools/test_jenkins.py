"""The Jenkins toolset: real ``python-jenkins`` over HTTP against a replay server of documented responses."""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
from pydantic import SecretStr

from devops_agent.config import Settings
from devops_agent.config.settings import JenkinsSettings
from devops_agent.tools.base import call_directly, spec_of
from devops_agent.tools.jenkins import build, check, jenkins_console, register
from devops_agent.tools.registry import ToolRegistry
from fixtures_replay import FIXTURES, ReplayServer

pytest.importorskip("jenkins")

USER, TOKEN = "mia", "11e5f0d1c2b3a4958677f0e1d2c3b4a5a6"
DEPLOY = "/job/payments/job/deploy"
MAVEN_LOG = (FIXTURES / "jenkins" / "console_maven_failure.txt").read_bytes()


@pytest.fixture(scope="module")
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


@pytest.fixture
def ci(server: ReplayServer) -> ReplayServer:
    server.reset()
    server.require_basic(USER, TOKEN)
    server.add("GET", "/api/json", fixture="jenkins/root.json", headers={"X-Jenkins": "2.452.1"})
    server.add("GET", f"{DEPLOY}/412/api/json", fixture="jenkins/build_deploy_412.json")
    server.add("GET", f"{DEPLOY}/87/api/json", fixture="jenkins/build_freestyle_87.json")
    server.add("GET", f"{DEPLOY}/api/json", fixture="jenkins/job_deploy.json")
    server.add(
        "GET",
        f"{DEPLOY}/412/logText/progressiveText",
        fixture="jenkins/console_maven_failure.txt",
        headers={"X-Text-Size": str(len(MAVEN_LOG))},
    )
    server.add(
        "GET",
        "/job/payments/job/integration-tests/88/testReport/api/json",
        fixture="jenkins/testreport_88.json",
    )
    server.add("GET", "/crumbIssuer/api/json", fixture="jenkins/crumb.json")
    return server


def toolset(settings: Settings) -> dict[str, Any]:
    """The toolset's tools by name, each called as a CLI command would call it (``call_directly``)."""
    return {name: partial(call_directly, e.function, settings) for name, e in build(settings).entries.items()}


def tools(url: str, token: str = TOKEN, **conf: Any) -> dict[str, Any]:
    return toolset(Settings(jenkins=JenkinsSettings(url=url, user=USER, token=SecretStr(token), **conf)))


def basic(user: str, token: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{token}".encode()).decode()


@pytest.mark.parametrize(
    "target",
    [
        "{url}/job/payments/job/deploy/412/",
        "{url}/job/payments/job/deploy/412/console",
        "{url}/blue/organizations/jenkins/payments%2Fdeploy/detail/deploy/412/pipeline",
        "payments/deploy#412",
    ],
)
def test_build_summary_from_any_url_form(ci: ReplayServer, target: str) -> None:
    args: dict[str, Any] = {}
    if target.endswith("#412"):
        target, args = target.removesuffix("#412"), {"number": 412}
    result = tools(ci.url)["jenkins_build"](target.format(url=ci.url), **args)
    assert result.status == "success", result
    d = result.data
    assert (d["number"], d["result"], d["duration_s"]) == (412, "FAILURE", 754.3)
    assert d["timestamp"] == "2024-05-02T09:05:00+00:00"
    assert d["causes"][1] == "Started by user Mia Krystof"
    assert d["parameters"] == {"VERSION": "2.14.0", "CANARY": False, "DEPLOY_KEY": None}
    assert d["commits"] == [
        {
            "commit": "9f2c1e0d4b7a8c3e5f6a7b8c9d0e1f2a3b4c5d6e",
            "author": "Bob Lee",
            "message": "Lower payment gateway timeout to 2s",
            "timestamp": "2024-05-02T08:36:40+00:00",
            "paths": ["src/main/resources/application.yaml"],
        }
    ]
    assert d["culprits"] == ["Bob Lee"]
    (req,) = ci.requests
    assert req.path == f"{DEPLOY}/412/api/json"
    assert req.headers["authorization"] == basic(USER, TOKEN)


def test_freestyle_changeset_from_python_jenkins_docs(ci: ReplayServer) -> None:
    d = tools(ci.url)["jenkins_build"]("payments/deploy", number=87).data
    assert d["result"] == "SUCCESS"
    assert d["parameters"] == {"SERVICE_NAME": "eaas", "PROJECT_NAME": "demo"}
    assert d["commits"][0]["message"] == "test"
    assert d["causes"] == ["Started by user anonymous"]


def test_console_tail_holds_the_failure(ci: ReplayServer) -> None:
    result = tools(ci.url)["jenkins_console"](f"{ci.url}{DEPLOY}/412/console", tail_lines=25)
    assert result.status == "success", result
    d = result.data
    assert d["lines"] == 25
    assert d["truncated"] is True
    assert d["total_lines"] == MAVEN_LOG.count(b"\n")
    assert d["total_bytes"] == len(MAVEN_LOG)
    assert "[INFO] BUILD FAILURE" in d["text"]
    assert d["text"].endswith("Finished: FAILURE")
    assert "Scanning for projects" not in d["text"]
    (req,) = ci.requests
    assert req.query == {"start": ["0"]}


def test_console_tail_of_a_long_log_reads_only_the_last_window(ci: ReplayServer) -> None:
    window = 4096
    offset = len(MAVEN_LOG) - window
    ci.add(
        "GET",
        f"{DEPLOY}/412/logText/progressiveText",
        body=MAVEN_LOG[offset:],
        query={"start": str(offset)},
        first=True,
    )
    windowed = tools(ci.url, console_max_bytes=window)["jenkins_console"](
        "payments/deploy", number=412, tail_lines=25
    )
    whole = tools(ci.url)["jenkins_console"]("payments/deploy", number=412, tail_lines=25)
    assert windowed.data["text"] == whole.data["text"]
    assert windowed.data["truncated"] is True
    assert windowed.data["next_start"] == len(MAVEN_LOG)
    assert [r.query["start"] for r in ci.requests] == [["0"], [str(offset)], ["0"]]
    # A window holding fewer lines than asked for returns what it has, without the cut first line.
    few = tools(ci.url, console_max_bytes=window)["jenkins_console"](
        "payments/deploy", number=412, tail_lines=4000
    )
    first = few.data["text"].splitlines()[0]
    assert MAVEN_LOG.decode().splitlines().count(first) >= 1
    assert not MAVEN_LOG[offset:].startswith(first.encode())


def test_console_full_is_capped_and_continues(ci: ReplayServer) -> None:
    cap = 16_384  # the rest (about 1.9 kB) fits in one more call
    ci.add(
        "GET",
        f"{DEPLOY}/412/logText/progressiveText",
        body=MAVEN_LOG[cap:],
        query={"start": str(cap)},
        first=True,
    )
    console = tools(ci.url, console_max_bytes=cap)["jenkins_console"]
    first = console("payments/deploy", number=412, full=True)
    assert first.data["truncated"] is True
    assert first.data["next_start"] == cap
    assert first.data["text"].encode() == MAVEN_LOG[:cap]
    rest = console("payments/deploy", number=412, full=True, start=first.data["next_start"])
    assert rest.data["truncated"] is False
    assert rest.data["text"].endswith("Finished: FAILURE\n")
    assert rest.data["next_start"] == len(MAVEN_LOG)


def test_console_of_running_build_says_building(ci: ReplayServer) -> None:
    ci.add(
        "GET",
        f"{DEPLOY}/413/logText/progressiveText",
        body="Started by user Mia Krystof\n[Pipeline] Start of Pipeline\n",
        headers={"X-More-Data": "true", "X-Text-Size": "57"},
    )
    d = tools(ci.url)["jenkins_console"]("payments/deploy", number=413).data
    assert d["building"] is True
    assert d["truncated"] is False
    assert d["next_start"] == 57


def test_empty_console_is_no_data(ci: ReplayServer) -> None:
    ci.add("GET", f"{DEPLOY}/414/logText/progressiveText", body="", headers={"X-More-Data": "true"})
    assert tools(ci.url)["jenkins_console"]("payments/deploy", number=414).status == "no_data"


def test_test_report_lists_failed_cases(ci: ReplayServer) -> None:
    url = f"{ci.url}/job/payments/job/integration-tests/88/testReport/"
    result = tools(ci.url)["jenkins_test_report"](url)
    assert result.status == "success", result
    d = result.data
    assert (d["failed"], d["passed"], d["skipped"]) == (2, 131, 3)
    assert [(c["class"], c["name"], c["status"]) for c in d["failed_cases"]] == [
        ("com.example.payments.GatewayClientTest", "refundsWithinTimeout", "REGRESSION"),
        ("tests.test_checkout.TestCheckout", "test_checkout_ok", "FAILED"),
    ]
    first = d["failed_cases"][0]
    assert first["error"] == "java.net.SocketTimeoutException: Read timed out after 2000 ms"
    assert "GatewayClient.java:77" in first["stack_trace"]


def test_no_test_report_is_no_data_but_missing_build_is_an_error(ci: ReplayServer) -> None:
    report = tools(ci.url)["jenkins_test_report"]
    assert report("payments/deploy", number=412).status == "no_data"
    missing = report("payments/deploy", number=999)
    assert missing.status == "error"
    assert "no such" in (missing.error or "")


@pytest.mark.parametrize(("which", "number"), [("failed", 412), ("successful", 87), ("completed", 412)])
def test_last_build(ci: ReplayServer, which: str, number: int) -> None:
    result = tools(ci.url)["jenkins_last_build"](f"{ci.url}{DEPLOY}/", which=which)
    assert result.status == "success", result
    assert result.data["number"] == number
    assert ci.requests[0].query["tree"] == [f"fullName,last{which.capitalize()}Build[number,url]"]


def test_last_failed_build_of_a_job_that_never_failed(ci: ReplayServer) -> None:
    ci.add("GET", "/job/tools/job/lint/api/json", fixture="jenkins/job_never_failed.json")
    assert tools(ci.url)["jenkins_last_build"]("tools/lint").status == "no_data"


def test_trigger_build_with_parameters_sends_crumb(ci: ReplayServer) -> None:
    location = {"Location": f"{ci.url}/queue/item/20312/"}
    ci.add("POST", f"{DEPLOY}/buildWithParameters", status=201, headers=location)
    result = tools(ci.url)["jenkins_trigger_build"]("payments/deploy", {"VERSION": "2.13.4"})
    assert result.status == "success", result
    assert result.data["queue_item"] == 20312
    (post,) = ci.requests_to(DEPLOY, "POST")
    assert post.query == {"VERSION": ["2.13.4"]}
    assert post.headers["jenkins-crumb"] == "f4b2c3d1e0a9b8c7d6e5f4a3b2c1d0e9"
    assert post.headers["authorization"] == basic(USER, TOKEN)


def test_trigger_build_without_parameters(ci: ReplayServer) -> None:
    ci.add("POST", f"{DEPLOY}/build", status=201, headers={"Location": f"{ci.url}/queue/item/7/"})
    assert tools(ci.url)["jenkins_trigger_build"]("payments/deploy").data["queue_item"] == 7


def test_specs() -> None:
    entries = build(Settings(jenkins=JenkinsSettings())).entries
    assert all(entries[n].spec.read_only for n in entries if n != "jenkins_trigger_build")
    assert {e.spec.category for e in entries.values()} == {"ci"}
    trigger = entries["jenkins_trigger_build"].spec
    assert (trigger.read_only, trigger.risk) == (False, "sensitive")


def test_not_configured_fails_with_hint() -> None:
    result = toolset(Settings())["jenkins_build"]("payments/deploy")
    assert result.status == "error"
    assert "DEVOPS_AGENT_JENKINS__TOKEN" in (result.hint or "")


def test_url_on_another_server_is_refused_without_a_request(ci: ReplayServer) -> None:
    result = tools(ci.url)["jenkins_build"]("https://evil.example.net/job/payments/job/deploy/412/")
    assert result.status == "error"
    assert "not the configured Jenkins" in (result.error or "")
    assert ci.requests == []


def test_wrong_token_is_an_auth_failure(ci: ReplayServer) -> None:
    result = tools(ci.url, token="nope")["jenkins_build"]("payments/deploy", number=412)
    assert result.status == "error"
    assert "(401)" in (result.error or "")
    assert "API token" in (result.hint or "")
    assert ci.requests[0].headers["authorization"] == basic(USER, "nope")


@pytest.mark.parametrize(
    ("status", "headers", "error", "meta"),
    [
        (403, {}, "refused the request (403)", {"status": 403}),
        (404, {}, "no such job or build (404)", {"status": 404}),
        (429, {"Retry-After": "30"}, "rate limit", {"status": 429, "transient": True, "retry_after_s": 30.0}),
        (500, {}, "server error (500)", {"status": 500, "transient": True}),
        (502, {}, "server error (502)", {"status": 502, "transient": True}),
    ],
)
def test_error_statuses_are_mapped(
    ci: ReplayServer, status: int, headers: dict[str, str], error: str, meta: dict[str, Any]
) -> None:
    ci.fail_next("GET", f"{DEPLOY}/412/api/json", status, headers=headers)
    result = tools(ci.url)["jenkins_build"]("payments/deploy", number=412)
    assert result.status == "error"
    assert error in (result.error or "")
    assert result.hint
    assert meta.items() <= result.metadata.items()


def test_unreachable_server_is_transient() -> None:
    with ReplayServer() as srv:
        url = srv.url
    result = tools(url)["jenkins_build"]("payments/deploy", number=412)
    assert result.status == "error"
    assert result.metadata.get("transient") is True


def test_check(ci: ReplayServer) -> None:
    ok, message = check(Settings(jenkins=JenkinsSettings(url=ci.url, user=USER, token=SecretStr(TOKEN))))
    assert ok, message
    assert "2.452.1" in message
    ok, message = check(Settings(jenkins=JenkinsSettings(url=ci.url, user=USER, token=SecretStr("x"))))
    assert not ok
    assert "401" in message
    assert check(Settings())[0] is False


def test_missing_client_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jenkins", None)  # makes `import jenkins` raise ImportError
    with pytest.raises(ImportError, match=r"devops-agent\[jenkins\]"):
        build(Settings())
    registry = ToolRegistry()
    register(registry)
    assert "jenkins" not in registry.build(Settings())
    assert "devops-agent[jenkins]" in registry.unavailable[0].reason


def test_console_tail_of_a_pytest_job(ci: ReplayServer) -> None:
    log = (FIXTURES / "jenkins" / "console_pytest_failure.txt").read_bytes()
    ci.add(
        "GET",
        "/job/checkout-tests/31/logText/progressiveText",
        fixture="jenkins/console_pytest_failure.txt",
        headers={"X-Text-Size": str(len(log))},
    )
    result = tools(ci.url)["jenkins_console"](f"{ci.url}/job/checkout-tests/31/consoleFull", tail_lines=6)
    assert result.status == "success", result
    assert result.data["text"].splitlines()[1:3] == [
        "FAILED tests/test_checkout.py::TestCheckout::test_checkout_ok - assert 502 == 200",
        "1 failed, 131 passed, 1 skipped in 3.52s",
    ]
    assert result.data["url"] == f"{ci.url}/job/checkout-tests/31/"


def test_jenkins_console_imported_by_name_runs_through_the_pipeline(
    ci: ReplayServer, through_pipeline: Any
) -> None:
    """A module-level tool run through the real pipeline with the run's settings in ``ctx.deps``;
    a tail of 0 lines is refused by its declared range (it used to become 1)."""
    settings = Settings(jenkins=JenkinsSettings(url=ci.url, user=USER, token=SecretStr(TOKEN)))
    args = {"url_or_job": "payments/deploy", "number": 412, "tail_lines": 25, "summarize": False}
    tail = through_pipeline(
        "jenkins_console", jenkins_console, args, settings=settings, spec=spec_of(jenkins_console)
    )
    assert tail.status == "success", tail
    assert tail.data["lines"] == 25
    assert tail.data["text"].endswith("Finished: FAILURE")
    none = through_pipeline("jenkins_console", jenkins_console, {**args, "tail_lines": 0}, settings=settings)
    assert none.status == "error"
    assert "tail_lines: Input should be greater than or equal to 1" in (none.error or "")
    assert len(ci.requests) == 1


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
    console = tools(ci.url)["jenkins_console"]
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
    cut = tools(ci.url, console_max_bytes=1024)["jenkins_console"](
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
    ci.add("GET", path, body=line[offset:], query={"start": str(offset)}, first=True)
    result = tools(ci.url, console_max_bytes=window)["jenkins_console"](
        "payments/deploy", number=416, summarize=False
    )
    assert result.status == "success", result
    assert result.data["text"].encode() == line[offset:]
    assert result.data["truncated"] is True


def test_build_of_a_job_named_blue_is_read(ci: ReplayServer) -> None:
    ci.add("GET", "/job/deploy/job/blue/412/api/json", fixture="jenkins/build_deploy_412.json")
    result = tools(ci.url)["jenkins_build"](f"{ci.url}/job/deploy/job/blue/412/")
    assert result.status == "success", result
    assert result.data["number"] == 412
    assert [r.path for r in ci.requests] == ["/job/deploy/job/blue/412/api/json"]
