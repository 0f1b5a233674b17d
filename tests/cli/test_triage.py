"""``devops-agent triage`` where it cannot triage: no ticket key, Jira not configured, a ticket that
cannot be read, a ticket that links no build. Each is an error or a stated unknown, never the
all-clear "No failing build was found". The real CLI in a subprocess; Jira is the replay server
of ``tests/replay`` (recorded responses), reached over HTTP by the real client library."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from fixtures_cli import assert_one_line_error, cli
from fixtures_replay import ReplayServer
from replay.triage import API, TOKEN, USER, add_ticket

pytest.importorskip("jira")
pytestmark = pytest.mark.slow

ALL_CLEAR = "No failing build was found"


@pytest.fixture(scope="module")
def jira() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        srv.require_basic(USER, TOKEN)
        srv.add("GET", f"{API}/field", fixture="jira/fields.json")
        add_ticket(srv, "OPS-7", description="The checkout is slow since this morning.")
        srv.add("GET", f"{API}/search", body={"issues": [], "total": 0, "startAt": 0, "maxResults": 50})
        yield srv


def _env(url: str) -> dict[str, str]:
    return {
        "DEVOPS_AGENT_JIRA__URL": url,
        "DEVOPS_AGENT_JIRA__USER": USER,
        "DEVOPS_AGENT_JIRA__TOKEN": TOKEN,
        "DEVOPS_AGENT_JIRA__DEPLOYMENT": "server",
    }


def test_text_without_a_ticket_key_is_refused() -> None:
    proc = cli("triage", "the checkout is slow")
    assert_one_line_error(proc, 2, "no Jira issue key or URL in 'the checkout is slow'", "OPS-123")
    assert proc.stdout == ""


def test_triage_without_jira_configured_is_refused() -> None:
    proc = cli("triage", "OPS-7", "--json")
    assert_one_line_error(
        proc, 2, "Jira is not configured, so OPS-7 cannot be read", "DEVOPS_AGENT_JIRA__URL"
    )
    assert ALL_CLEAR not in proc.stdout


def test_a_ticket_that_cannot_be_read_is_a_failure_with_the_report(jira: ReplayServer) -> None:
    proc = cli("triage", "OPS-404", env=_env(jira.url))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("error: could not read OPS-404: ")
    assert ALL_CLEAR not in proc.stdout
    assert "Not known: the ticket could not be read" in proc.stdout
    assert "Its linked builds are not known" in proc.stdout

    as_json = cli("triage", "OPS-404", "--json", env=_env(jira.url))
    assert as_json.returncode == 1
    report = json.loads(as_json.stdout)["report"]
    assert [g["step"] for g in report["gaps"]][:1] == ["triage/ticket"]


def test_a_ticket_that_links_no_build_says_so(jira: ReplayServer) -> None:
    proc = cli("triage", "OPS-7", env=_env(jira.url))
    assert proc.returncode == 0, proc.stderr
    assert ALL_CLEAR not in proc.stdout
    assert "Not known: the ticket links no Jenkins build" in proc.stdout


def test_runbooks_list_and_show_know_triage() -> None:
    listed = json.loads(cli("runbooks", "list", "--json").stdout)
    (triage,) = [r for r in listed if r["name"] == "triage"]
    assert triage["workflow"] is True
    assert triage["steps"] == 4
    shown = cli("runbooks", "show", "triage")
    assert shown.returncode == 0, shown.stderr
    assert "triage/ticket: jira_issue" in shown.stdout
    assert "What could not be gathered" in shown.stdout
    unknown = cli("runbooks", "show", "nope")
    assert_one_line_error(unknown, 2, "unknown runbook 'nope'", "triage")
