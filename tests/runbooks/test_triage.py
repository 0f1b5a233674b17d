"""Offline incident triage: the real Jira and Jenkins tools, through the tool middleware, against a
replay server serving documented responses (``replay/fixtures/triage``, sources in SOURCES.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from devops_agent.config import Settings
from devops_agent.config.settings import JenkinsSettings, JiraSettings
from devops_agent.events import PlanProposed, RunEvent, ToolCall, ToolResultEvent
from devops_agent.runbooks.triage import (
    SECTIONS,
    TriageCache,
    error_signature,
    find_ticket_ref,
    render_triage_markdown,
    run_triage,
)
from devops_agent.tools.base import ToolResult
from fixtures_replay import FIXTURES, ReplayServer
from replay.triage import (
    API,
    BUILD,
    DEPLOY,
    NIGHTLY,
    TOKEN,
    USER,
    Harness,
    add_build,
    add_ticket,
    fan_out_ticket,
)

pytest.importorskip("jira")
pytest.importorskip("jenkins")


@pytest.fixture(scope="module")
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


@pytest.fixture
def srv(server: ReplayServer) -> ReplayServer:
    server.reset()
    server.delay_s = 0.0
    server.watch("/")
    server.peak["/"] = 0
    server.require_basic(USER, TOKEN)
    add_ticket(server, "OPS-200")
    server.add("GET", f"{API}/field", fixture="jira/fields.json")
    server.add("GET", f"{API}/search", fixture="jira/search_page1.json", query={"startAt": "0"})
    server.add("GET", f"{API}/search", fixture="jira/search_page2.json", query={"startAt": "2"})
    add_build(
        server,
        DEPLOY,
        "jenkins/console_maven_failure.txt",
        "triage/testreport_deploy_412.json",
        "jenkins/build_deploy_412.json",
    )
    add_build(
        server,
        BUILD,
        "triage/console_build_1207.txt",
        "triage/testreport_build_1207.json",
        "jenkins/build_freestyle_87.json",
    )
    # nightly #57 recorded no test report: Jenkins answers 404 there.
    add_build(server, NIGHTLY, "triage/console_nightly_57.txt", None, "triage/build_nightly_57.json")
    return server


def test_finds_the_ticket_in_free_text() -> None:
    assert find_ticket_ref("please triage https://acme.atlassian.net/browse/OPS-200?x=1 asap") == "OPS-200"
    assert find_ticket_ref("https://acme.atlassian.net/jira/boards/1?selectedIssue=OPS-9") == "OPS-9"
    assert find_ticket_ref("the build https://ci/job/APP-2/3/ broke, see OPS-17") == "OPS-17"
    # a lowercase key is one only where it was given as a ticket, or its project is configured
    assert find_ticket_ref("the build https://ci/job/APP-2/3/ broke, see ops-17") is None
    assert find_ticket_ref("see ops-17", any_case=True) == "OPS-17"
    assert find_ticket_ref("db-7 and ops-17 are slow", projects=["OPS"]) == "OPS-17"
    assert find_ticket_ref("nothing here") is None


def test_signature_skips_jenkins_boilerplate() -> None:
    maven = error_signature((FIXTURES / "jenkins/console_maven_failure.txt").read_text())
    assert maven is not None
    # the test's error line with the exception a JVM prints under it, folded into one record
    assert maven.shape == (
        "com.example.payments.GatewayClientTest.refundsWithinTimeout -- Time elapsed: <NUM> s <<< ERROR! "
        "| java.net.SocketTimeoutException: Read timed out after <NUM> ms"
    )
    assert "java.net.SocketTimeoutException: Read timed out after 2000 ms" in maven.lines
    assert not any(line.startswith(("Finished:", "ERROR: script returned")) for line in maven.lines)
    assert error_signature("Started by timer\n[Pipeline] End of Pipeline\nFinished: FAILURE\n") is None


def test_offline_triage_end_to_end(srv: ReplayServer) -> None:
    harness = Harness(srv.url)
    report = harness.run(f"Checkout is down, see {srv.url}/browse/OPS-200 please", backoff_s=0.01)
    md = render_triage_markdown(report)

    for heading in SECTIONS:
        assert f"\n## {heading}\n" in md
    assert report.title == "Triage of OPS-200"
    # The failing Maven build: the failing test, the error signature, and the quoted lines.
    assert "com.example.payments.GatewayClientTest.refundsWithinTimeout" in md
    assert "| java.net.SocketTimeoutException: Read timed out after <NUM> ms`" in md
    assert "\njava.net.SocketTimeoutException: Read timed out after 2000 ms\n" in md
    assert "GatewayClientTest.refundsWithinTimeout:54 » SocketTimeout Read timed out after 2000 ms" in md
    # The green build is not reported as failing.
    failing = md.split("## Failing builds")[1].split("## Root-cause hypotheses")[0]
    assert "payments/deploy #412 FAILURE" in failing
    assert "payments/build #1207" not in failing
    assert [b["result"] for b in report.stats["builds"]] == ["FAILURE", "SUCCESS", "FAILURE"]
    # The hypothesis ties the timeout to the commit that lowered it.
    hypotheses = md.split("## Root-cause hypotheses")[1].split("## Related tickets")[0]
    assert "A timeout talking to a dependency" in hypotheses
    assert "Confidence: high" in hypotheses
    assert "Lower payment gateway timeout to 2s" in hypotheses
    # Related tickets (linked, and found by the signature), owners, and the missing KB as a gap.
    related = md.split("## Related tickets and KB articles")[1].split("## Next steps")[0]
    assert "PR-2" in related
    assert "PR-3" in related
    assert "OPS-101" in related
    owners = md.split("## Next steps and owners")[1]
    assert "Mia Krystof (assignee of OPS-200)" in owners
    assert "Bob Lee" in owners
    assert "Ana Gomez" in owners
    assert "knowledge base not configured" in md.split("## What could not be gathered")[1]
    # Events: the plan first, and each tool_call answered by its tool_result.
    assert isinstance(harness.events[0], PlanProposed)
    calls = {e.tool_call_id: e for e in harness.events if isinstance(e, ToolCall)}
    results = [e for e in harness.events if isinstance(e, ToolResultEvent)]
    assert sorted(calls) == sorted(r.tool_call_id for r in results)
    assert all(harness.events.index(calls[r.tool_call_id]) < harness.events.index(r) for r in results)


def test_a_failing_build_endpoint_still_gives_a_report(srv: ReplayServer) -> None:
    for page in ("logText/progressiveText", "testReport/api/json", "api/json"):
        srv.fail_next("GET", f"{DEPLOY}/{page}", 500, times=100)
    harness = Harness(srv.url)
    report = harness.run("OPS-200", backoff_s=0.01, retry_budget=2)
    md = render_triage_markdown(report)

    for heading in SECTIONS:
        assert f"\n## {heading}\n" in md
    gaps = md.split("## What could not be gathered")[1]
    assert "triage/build payments/deploy #412** (`jenkins_console`): Jenkins server error (500)" in gaps
    assert "(`jenkins_test_report`): Jenkins server error (500)" in gaps
    assert "retries used up" in gaps
    assert report.stats["retries"] == 2
    # What could be gathered is still there: the nightly failure found by the critic.
    assert "FAILED tests/test_checkout.py::TestCheckout::test_checkout_ok - assert 502 == 200" in md
    assert "GatewayClientTest" not in md.split("## Failing builds")[1].split("## Root-cause")[0]


def test_a_transient_failure_is_retried_with_backoff(srv: ReplayServer) -> None:
    srv.fail_next("GET", f"{DEPLOY}/testReport/api/json", 503, times=1)
    harness = Harness(srv.url)
    report = harness.run("OPS-200", backoff_s=0.05)

    assert srv.count(f"{DEPLOY}/testReport/api/json") == 2
    assert report.stats["retries"] == 1
    assert not [g for g in report.gaps if g.tool == "jenkins_test_report"]
    assert "com.example.payments.GatewayClientTest.refundsWithinTimeout" in render_triage_markdown(report)
    retried = [
        e for e in harness.events if isinstance(e, ToolResultEvent) and e.tool == "jenkins_test_report"
    ]
    # deploy #412 failed once then answered; build #1207 answered; nightly #57 recorded no tests.
    assert sorted(e.status for e in retried) == ["error", "no_data", "success", "success"]


def test_fan_out_is_parallel_and_bounded(srv: ReplayServer) -> None:
    # How much faster than one build at a time: benchmarks/triage_fanout.py (a figure, not a test).
    fan_out_ticket(srv, "OPS-310", 10)
    srv.delay_s = 0.2

    ten = Harness(srv.url).run("OPS-310", max_parallel=8, step_budget=40)

    assert len(ten.stats["builds"]) == 10
    assert all(b["failing"] for b in ten.stats["builds"])
    # console, tests, build info each; ticket, related search, kb, memory
    assert ten.stats["tool_calls"] == 3 * 10 + 4
    assert srv.peak["/"] <= 8  # the in-flight cap holds
    assert srv.peak["/"] >= 6  # really in parallel: 30 build calls of 200 ms each overlap


def test_identical_calls_run_once_per_session(srv: ReplayServer) -> None:
    # OPS-100 links the same deploy build as OPS-200 (and one more); the session's cache is shared.
    add_ticket(srv, "OPS-100", description=f"Deploy again: {srv.url}/job/payments/job/deploy/412/console")
    cache = TriageCache()
    first = Harness(srv.url).run("OPS-200", cache=cache)
    second = Harness(srv.url).run("OPS-100", cache=cache)

    for path in (f"{DEPLOY}/logText/progressiveText", f"{DEPLOY}/testReport/api/json", f"{DEPLOY}/api/json"):
        assert srv.count(path) == 1, path
    assert second.stats["memoized"] >= 3
    assert first.stats["memoized"] == 0
    # Memoized evidence is still evidence: the second report names the same failure.
    assert "refundsWithinTimeout" in render_triage_markdown(second)
    assert srv.count(f"{API}/issue/OPS-200") == 1


def test_critic_reads_the_full_console_when_the_tail_has_no_signature(srv: ReplayServer) -> None:
    harness = Harness(srv.url)
    report = harness.run("OPS-200")

    full = [e for e in harness.events if isinstance(e, ToolCall) and e.args.get("full")]
    assert [e.args["url_or_job"] for e in full] == [f"{srv.url}/job/checkout/job/nightly/57/"]
    assert srv.count(f"{NIGHTLY}/logText/progressiveText") == 2  # the tail, then the whole log
    assert srv.count(f"{DEPLOY}/logText/progressiveText") == 1  # its tail was enough
    replans = [e for e in harness.events if isinstance(e, PlanProposed)]
    assert len(replans) == 2
    assert "critic" in replans[1].steps[0]
    nightly = next(f for f in report.findings if f.title.startswith("checkout/nightly #57"))
    assert (
        "FAILED tests/test_checkout.py::TestCheckout::test_checkout_ok - assert 502 == 200"
        in nightly.evidence
    )
    assert "(from the full console)" in nightly.detail
    assert not [g for g in report.gaps if "no error signature" in g.reason]


def test_step_budget_bounds_the_run_and_says_so(srv: ReplayServer) -> None:
    report = Harness(srv.url).run("OPS-200", step_budget=4)
    md = render_triage_markdown(report)

    assert report.stats["tool_calls"] == 4
    assert "step budget of 4 tool calls used up" in md.split("## What could not be gathered")[1]
    for heading in SECTIONS:
        assert f"\n## {heading}\n" in md


def test_no_ticket_key_is_a_gap_not_a_crash() -> None:
    events: list[RunEvent] = []

    async def never(name: str, args: dict[str, Any]) -> ToolResult:
        raise AssertionError("no tool should run")

    report = asyncio.run(run_triage("the checkout is slow", never, events.append))
    md = render_triage_markdown(report)
    assert "no Jira issue key or URL" in md
    assert all(f"## {h}" in md for h in SECTIONS)


def test_the_session_service_runs_triage_for_a_ticket(srv: ReplayServer, tmp_path: Any) -> None:
    """Wired end to end: the default registry's Jira/Jenkins toolsets, the guard, the store."""
    from devops_agent.agent.session import SessionService
    from devops_agent.store import Store

    url = f"sqlite:///{tmp_path / 'store.db'}"
    settings = Settings(
        database_url=url,
        jira=JiraSettings(url=srv.url, user=USER, token=SecretStr(TOKEN), deployment="server"),
        jenkins=JenkinsSettings(url=srv.url, user=USER, token=SecretStr(TOKEN)),
    )
    with Store(url) as store:
        service = SessionService(settings, store)
        events, final = asyncio.run(service.run("Why is OPS-200 failing?"))  # the key alone selects triage
    assert final.status == "completed"
    started = events[0]
    assert getattr(started, "runbooks", None) == ["triage"]
    output = final.output or ""
    for section in SECTIONS:
        assert f"## {section}" in output
    assert "GatewayClientTest" in output
    assert "SocketTimeoutException" in output


# -- the knowledge base, the model path, kept outputs, posting back --------------------------------

KB_ARTICLES = {
    "payment-gateway-timeouts.md": (
        "# Payment gateway timeouts\n\n"
        "Symptom: GatewayClient calls fail with java.net.SocketTimeoutException: Read timed out.\n"
        "The gateway answers in up to 3 s at peak; a client read timeout below that fails refunds.\n\n"
        "## Fix\nRestore payments.gateway.read-timeout to 5s and redeploy.\n"
    ),
    "disk-full.md": "# Disk full on build agents\n\nClean the workspace with the cleanup job.\n",
    "cert-expiry.md": "# Certificate expiry\n\nRenew with cert-manager; check the ingress secret.\n",
}


def kb_settings(tmp_path: Path, **kwargs: Any) -> Settings:
    """Settings whose runbooks collection holds KB_ARTICLES (indexed with the knowledge tools)."""
    from devops_agent.tools import knowledge

    kb = tmp_path / "kb"
    kb.mkdir(exist_ok=True)
    for name, text in KB_ARTICLES.items():
        (kb / name).write_text(text)
    settings = Settings(data_dir=tmp_path / "data", files={"roots": [kb]}, **kwargs)  # type: ignore[arg-type]
    indexed = knowledge.build(settings).entries["index_directory"].function(str(kb), collection="runbooks")
    assert indexed.status == "success", indexed
    return settings


def test_triage_links_the_kb_article_and_the_finding_that_match(srv: ReplayServer, tmp_path: Path) -> None:
    from devops_agent.tools import knowledge

    kb = knowledge.build(kb_settings(tmp_path, project="payments"))
    tools = kb.entries
    harness = Harness(srv.url, more=[kb])
    for title, summary in (
        ("Refunds failing: gateway SocketTimeoutException", "Read timeout was 2s; restoring 5s fixed it."),
        ("Nightly disk full on agent-3", "Workspace cleanup job was disabled."),
    ):
        assert tools["add_finding"].function(title, summary).status == "success"
    report = harness.run("OPS-200")
    md = render_triage_markdown(report)

    related = md.split("## Related tickets and KB articles")[1].split("## Next steps")[0]
    assert "KB: payment-gateway-timeouts.md:" in related
    assert "Seen before: Refunds failing: gateway SocketTimeoutException" in related
    assert "restoring 5s fixed it" in related
    assert "Nightly disk full" not in related
    assert "disk-full.md" not in related
    assert "cert-expiry.md" not in related
    assert "knowledge base not configured" not in md
    kb_calls = [e for e in harness.events if isinstance(e, ToolCall) and e.tool == "search_kb"]
    assert kb_calls
    assert "SocketTimeoutException" in kb_calls[0].args["query"]


BIG_BUILD = "/job/payments/job/deploy/413"
LEAKED = "Hunter2-canary-Secret"


def big_console() -> str:
    """A 900-line console: noise, a leaked password, then a failure near the end."""
    lines = [f"[INFO] Downloading artifact {i} of 880 from the mirror" for i in range(880)]
    lines.insert(40, f"+ export DB_PASSWORD={LEAKED}")
    lines += [
        "[ERROR] Tests run: 12, Failures: 0, Errors: 1, Skipped: 0",
        "[ERROR] com.example.payments.LedgerClientTest.postsEntries  Time elapsed: 2.1 s  <<< ERROR!",
        "java.net.ConnectException: Connection refused (ledger.internal:8443)",
        "BUILD FAILURE",
        "Finished: FAILURE",
    ]
    return "\n".join(lines) + "\n"


def test_model_triage_with_privacy_keeps_evidence_and_full_outputs(srv: ReplayServer, tmp_path: Path) -> None:
    """The same tools with a (scripted) model: the runbook arrives as guidance, the evidence
    reaches the model without the ticket key or secrets, a summarized log is kept whole for the user."""
    from devops_agent.agent.scripted import Script
    from devops_agent.agent.session import SessionService
    from devops_agent.privacy import Anonymizer
    from devops_agent.privacy.ner import installed_model
    from devops_agent.store import Store
    from fixtures_canary import RecordingModel

    text = big_console()
    srv.add(
        "GET",
        f"{BIG_BUILD}/logText/progressiveText",
        body=text.encode(),
        headers={"X-Text-Size": str(len(text))},
    )
    srv.fail_next("GET", f"{NIGHTLY}/testReport/api/json", 500, times=5)
    hmac = "triage-model-key"
    url = f"sqlite:///{tmp_path / 'store.db'}"
    settings = kb_settings(
        tmp_path,
        database_url=url,
        privacy={"enabled": "on", "hmac_key": hmac},
        jira=JiraSettings(url=srv.url, user=USER, token=SecretStr(TOKEN), deployment="server"),
        jenkins=JenkinsSettings(url=srv.url, user=USER, token=SecretStr(TOKEN)),
    )
    jobs = [("payments/deploy", 412), ("payments/build", 1207), ("checkout/nightly", 57)]
    with Store(url) as store:
        session = store.create_session(title="triage", mode="ask", model="scripted")
        key = Anonymizer(hmac.encode(), session.id).placeholder("JIRA_KEY", "OPS-200")
        builds = [{"url_or_job": job, "number": n} for job, n in jobs]
        script = Script.model_validate(
            {
                "turns": [
                    {"tool_calls": [{"tool": "jira_issue", "args": {"key_or_url": key}}]},
                    {
                        "tool_calls": [{"tool": "jenkins_console", "args": b} for b in builds]
                        + [{"tool": "jenkins_test_report", "args": b} for b in builds]
                    },
                    {
                        "tool_calls": [
                            {
                                "tool": "jenkins_console",
                                "args": {"url_or_job": "payments/deploy", "number": 413, "full": True},
                            },
                            {"tool": "search_kb", "args": {"query": "SocketTimeoutException Read timed out"}},
                        ]
                    },
                    {"text": f"Triage of {key}:\n{{results}}"},
                ]
            }
        )
        model = RecordingModel(script)
        service = SessionService(settings, store, model=model)
        _events, final = asyncio.run(service.run("Triage OPS-200 please", session_id=session.id))
        assert final.status == "completed", final
        sent = "\n".join(model.requests)

        # The runbook is the model's guidance; the ticket key and the secrets never reach it.
        assert "Triage it like the offline triage runbook does" in sent
        assert "OPS-200" not in sent
        if installed_model() is not None:  # the privacy-ner extra masks people's names too
            assert "Mia Krystof" not in sent
        assert TOKEN not in sent
        assert LEAKED not in sent
        # The tools got the real key, and the model got the evidence a triage needs.
        assert srv.count(f"{API}/issue/OPS-200") == 1
        # (``com.example`` itself is masked: Maven's "< com.example:payments >" made it a host name,
        # and a value masked once stays masked wherever it turns up, package names included)
        assert "payments.GatewayClientTest" in sent
        assert "com.example" not in sent
        assert "refundsWithinTimeout" in sent
        assert "java.net.SocketTimeoutException: Read timed out after 2000 ms" in sent
        assert "payment-gateway-timeouts.md:" in sent
        assert "Jenkins server error (500)" in sent
        # The 900-line console reached the model as a summary with its error signature ...
        assert '"summarized":true' in sent.replace(" ", "")
        assert "Connection refused" in sent
        assert "Downloading artifact 500 of 880" not in sent
        assert f"`devops-agent sessions output {session.id} " in sent
        # ... and is kept whole for the user, its secret scrubbed.
        # (#412's console is kept too: at 18,700 characters it was capped for the model.)
        kept = {
            call: store.tool_output(session.id, call) or ""
            for call, _tool, _n in store.kept_outputs(session.id)
        }
        assert {tool for _, tool, _ in store.kept_outputs(session.id)} == {"jenkins_console"}
        assert len(kept) == 2
        full = next(text for text in kept.values() if "LedgerClientTest" in text)
        assert "Downloading artifact 500 of 880" in full
        assert "Connection refused" in full
        assert LEAKED not in full
        assert "[REDACTED_SECRET]" in full
        # The user reads the key restored.
        assert (final.output or "").startswith("Triage of OPS-200:")


def test_triage_post_comments_the_report_after_approval(
    srv: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from devops_agent.cli import approve as approve_cli
    from devops_agent.cli import run as run_cli
    from devops_agent.cli.app import app
    from devops_agent.store import Store

    for module in (approve_cli, run_cli):
        monkeypatch.setattr(module, "interactive", lambda: True)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    env = {
        "DEVOPS_AGENT_DATABASE_URL": url,
        "DEVOPS_AGENT_JIRA__URL": srv.url,
        "DEVOPS_AGENT_JIRA__USER": USER,
        "DEVOPS_AGENT_JIRA__TOKEN": TOKEN,
        "DEVOPS_AGENT_JIRA__DEPLOYMENT": "server",
        "DEVOPS_AGENT_JENKINS__URL": srv.url,
        "DEVOPS_AGENT_JENKINS__USER": USER,
        "DEVOPS_AGENT_JENKINS__TOKEN": TOKEN,
    }
    srv.add("POST", f"{API}/issue/OPS-200/comment", fixture="jira/comment_added.json", status=201)
    runner = CliRunner()
    denied = runner.invoke(app, ["triage", "OPS-200", "--post"], input="n\n\n", env=env)
    assert denied.exit_code == 0, denied.output
    assert not srv.requests_to(f"{API}/issue/OPS-200/comment")

    posted = runner.invoke(app, ["triage", "OPS-200", "--post"], input="y\n", env=env)
    assert posted.exit_code == 0, posted.output
    [comment] = srv.requests_to(f"{API}/issue/OPS-200/comment", method="POST")
    body = comment.json()["body"]
    assert "h2. Summary" in body
    assert "h2. What could not be gathered" in body
    assert "GatewayClientTest" in body
    with Store(url) as store:
        [entry] = [a for a in store.list_audit() if a.tool == "jira_add_comment"]
    assert entry.outcome == "executed"
    assert entry.actor not in ("policy", "user")

    no_terminal = runner.invoke(app, ["triage", "OPS-200", "--post", "--json"], env=env)
    assert no_terminal.exit_code == 2
    assert "--post" in no_terminal.output
