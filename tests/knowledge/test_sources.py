"""Review of the prose knowledge sources and the findings memory, as a new SRE uses them: runbooks
with front matter, rules, setext titles and code fences; AsciiDoc and reStructuredText titles;
Confluence pages (the real client against tests/replay on 127.0.0.1); findings whose titles hold
brackets. Real files, real SQLite, real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from devops_agent.cli.app import app
from devops_agent.cli.context import AppState
from devops_agent.cli.memory_cmd import memory_app
from devops_agent.knowledge.chunking import chunk_text
from devops_agent.knowledge.storage_format import storage_to_markdown
from fixtures_replay import FIXTURES, ReplayServer

# -- prose chunking: citations land on the section that holds the words -----------------------

FAILOVER = """\
---
title: Database failover
# owner: sre (a YAML comment, not a heading)
---

# Database failover

Intro about patroni.

## Detect

```bash
# check lag
psql -c "select now() - pg_last_xact_replay_timestamp();"
```

## Promote

Run patronictl failover.

----

## Rollback

Demote the old primary.
"""


def sections(path: str, text: str, language: str | None = None) -> list[tuple[int, int, str]]:
    return [(c.start_line, c.end_line, c.symbol) for c in chunk_text(path, text, language)]


def test_markdown_rule_and_front_matter_do_not_hide_or_invent_sections() -> None:
    assert sections("db/failover.md", FAILOVER) == [
        (1, 5, "failover.md"),
        (6, 9, "Database failover"),
        (10, 16, "Database failover > Detect"),
        (17, 22, "Database failover > Promote"),
        (23, 25, "Database failover > Rollback"),
    ]


def test_markdown_setext_headings_are_sections() -> None:
    md = "Redis runbook\n=============\n\nOverview.\n\nEvictions\n---------\n\nRaise maxmemory.\n\n- a list\n---\n"
    assert sections("redis.md", md) == [
        (1, 5, "Redis runbook"),
        (6, 12, "Redis runbook > Evictions"),  # `- a list` over `---` is a list and a rule
    ]


def test_markdown_fence_closes_only_with_its_own_marker() -> None:
    tilde = "# A\n~~~\n```\n# shell comment\n~~~\n# B\nb\n"
    assert sections("t.md", tilde) == [(1, 5, "A"), (6, 7, "B")]
    nested = "# A\n````md\n```\n# in the example\n```\n````\n# B\nb\n"
    assert sections("n.md", nested) == [(1, 6, "A"), (7, 8, "B")]


def test_markdown_heading_keeps_a_hash_that_is_part_of_its_text() -> None:
    assert [s for *_, s in sections("c.md", "# Use C#\nx\n## Step 2 ##\ny\n")] == [
        "Use C#",
        "Use C# > Step 2",
    ]


def test_asciidoc_verbatim_blocks_hold_no_titles() -> None:
    adoc = "= Node\n....\n== literal\n....\n////\n== comment\n////\n----\n== listing\n----\n== Real\nx\n"
    assert sections("n.adoc", adoc) == [(1, 10, "Node"), (11, 12, "Node > Real")]


def test_rst_dash_underlines_and_levels_by_first_use() -> None:
    rst = "=====\nGuide\n=====\nintro\nInstall\n-------\na\nUpgrade\n-------\nb\nRollback\n~~~~~~~~\nc\n"
    assert sections("g.rst", rst) == [
        (1, 4, "Guide"),
        (5, 7, "Guide > Install"),
        (8, 10, "Guide > Upgrade"),
        (11, 13, "Guide > Upgrade > Rollback"),
    ]


def test_cli_cites_the_rollback_section_of_a_runbook(tmp_path: Path) -> None:
    runbooks = tmp_path / "runbooks"
    (runbooks / "db").mkdir(parents=True)
    (runbooks / "db" / "failover.md").write_text(FAILOVER)
    runner = CliRunner()
    done = runner.invoke(app, ["index", str(runbooks), "-c", "runbooks", "--json"])
    assert done.exit_code == 0, done.output
    found = runner.invoke(app, ["search", "demote the old primary", "-c", "runbooks", "-n", "1", "--json"])
    assert found.exit_code == 0, found.output
    hit = json.loads(found.stdout)["hits"][0]
    assert (hit["citation"], hit["symbol"]) == ("db/failover.md:23-25", "Database failover > Rollback")
    lines = FAILOVER.splitlines()[hit["start_line"] - 1 : hit["end_line"]]
    assert lines[0] == "## Rollback"
    assert "Demote the old primary." in lines


# -- Confluence ---------------------------------------------------------------------------------

CONTENT = "/wiki/rest/api/content"
USER, TOKEN = "sre@acme.example", "api-token-123"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / "confluence" / name).read_text())


@pytest.fixture
def srv() -> Iterator[ReplayServer]:
    with ReplayServer() as server:
        server.require_basic(USER, TOKEN)
        server.add("GET", "/wiki/rest/api/space/OPS", fixture="confluence/space_OPS.json")
        yield server


def confluence_env(srv: ReplayServer) -> dict[str, str]:
    return {
        "DEVOPS_AGENT_CONFLUENCE__URL": srv.url + "/wiki",
        "DEVOPS_AGENT_CONFLUENCE__USER": USER,
        "DEVOPS_AGENT_CONFLUENCE__TOKEN": TOKEN,
    }


def one_page_listing(srv: ReplayServer, body: Any) -> None:
    body.setdefault("_links", {}).pop("next", None)
    srv.add("GET", CONTENT, body=body, query={"spaceKey": "OPS", "start": "0"})


def test_pages_whose_titles_meet_after_slash_replacement_are_both_indexed(srv: ReplayServer) -> None:
    listing = fixture("content_OPS_page1.json")
    first, second = listing["results"]
    first["title"], second["title"] = "Payments/DB failover", "Payments-DB failover"
    one_page_listing(srv, listing)
    runner = CliRunner()
    done = runner.invoke(app, ["index", "--confluence", "OPS", "--json"], env=confluence_env(srv))
    assert done.exit_code == 0, done.output
    stats = json.loads(done.stdout)["confluence"][0]
    assert (stats["files_seen"], stats["files_indexed"]) == (2, 2)
    # the second page's own words are found, under its own URL
    words = "alertmanager silence pager storm"
    found = runner.invoke(app, ["search", words, "-c", "runbooks", "--json"], env=confluence_env(srv))
    urls = {h["url"] for h in json.loads(found.stdout)["hits"]}
    assert any(u.endswith("/pages/393220/Pager+storm") for u in urls), urls
    paths = {h["path"] for h in json.loads(found.stdout)["hits"]}
    assert f"OPS/Payments-DB failover ({second['id']})" in paths


def test_a_confluence_space_can_be_forgotten_by_key(srv: ReplayServer) -> None:
    one_page_listing(srv, fixture("content_OPS_page1.json"))
    env = confluence_env(srv)
    runner = CliRunner()
    assert runner.invoke(app, ["index", "--confluence", "OPS"], env=env).exit_code == 0
    forgot = runner.invoke(app, ["index", "--forget", "OPS", "-c", "runbooks", "--json"], env=env)
    assert forgot.exit_code == 0, forgot.output
    done = json.loads(forgot.stdout)
    assert done["forgotten"][0]["path"] == f"{srv.url}/wiki/spaces/OPS"
    assert (done["forgotten"][0]["files_removed"], done["index"]["files"]) == (2, 0)
    unknown = runner.invoke(app, ["index", "--forget", "NOPE", "-c", "runbooks"], env=env)
    assert unknown.exit_code == 2  # a UserError: one line on stderr
    assert "not indexed in 'runbooks': NOPE" in unknown.stderr


def test_code_macro_showing_a_markdown_fence_stays_code() -> None:
    body = (
        "<h1>Steps</h1>"
        '<ac:structured-macro ac:name="code"><ac:plain-text-body><![CDATA['
        "# README\n```bash\n# install\nmake\n```\n# Usage\n"
        "]]></ac:plain-text-body></ac:structured-macro>"
        "<h1>After</h1><p>done</p>"
    )
    text = storage_to_markdown(body, "Build")
    assert [s for *_, s in sections("OPS/Build", text, "markdown")] == [
        "Build",
        "Build > Steps",
        "Build > After",
    ]


# -- findings memory ----------------------------------------------------------------------------

BRACKETS = "nginx [/etc/nginx] reload fails on [red] upstream"


def test_memory_prints_titles_and_projects_literally(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def run(*args: str) -> str:
        result = runner.invoke(memory_app, list(args), obj=AppState())
        assert result.exit_code == 0, repr(result.exception)
        return result.stdout

    added = run("add", BRACKETS, "-s", "upstream block had a typo", "-p", "[bold]edge")
    assert "for project '[bold]edge'" in added
    assert BRACKETS in run("list", "-p", "[bold]edge")
    assert BRACKETS in run("search", "nginx reload upstream", "-p", "[bold]edge")
    assert (
        "no finding of project '[/x]' matched"
        in runner.invoke(memory_app, ["search", "nginx", "-p", "[/x]"], obj=AppState()).stderr
    )


def test_memory_delete_says_what_it_forgot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    added = runner.invoke(
        memory_app, ["add", "Disk full", "-s", "logs", "-p", "other", "--json"], obj=AppState()
    )
    finding = json.loads(added.stdout)
    text = runner.invoke(memory_app, ["delete", str(finding["id"]), "-p", "other"], obj=AppState())
    assert text.exit_code == 0, text.output
    assert f"forgot finding #{finding['id']} of project 'other': Disk full" in text.stdout
    again = runner.invoke(
        memory_app, ["add", "Disk full", "-s", "logs", "-p", "other", "--json"], obj=AppState()
    )
    second = json.loads(again.stdout)["id"]
    deleted = runner.invoke(memory_app, ["delete", str(second), "-p", "other", "--json"], obj=AppState())
    assert json.loads(deleted.stdout)["deleted"]["project"] == "other"
    listed = runner.invoke(memory_app, ["list", "-p", "other", "--json"], obj=AppState())
    assert json.loads(listed.stdout)["findings"] == []


def test_memory_project_is_trimmed_and_flags_do_not_silently_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    added = runner.invoke(
        memory_app, ["add", "Disk full", "-s", "logs", "-p", " svc ", "--json"], obj=AppState()
    )
    assert json.loads(added.stdout)["project"] == "svc"  # not a second project " svc "
    listed = runner.invoke(memory_app, ["list", "-p", "svc", "--json"], obj=AppState())
    assert [f["title"] for f in json.loads(listed.stdout)["findings"]] == ["Disk full"]
    both = runner.invoke(memory_app, ["list", "-p", "svc", "--all-projects"], obj=AppState())
    assert both.exit_code != 0
    assert "exclude each other" in str(both.exception or both.output)
    blank = runner.invoke(memory_app, ["search", "disk", "-p", "  "], obj=AppState())
    assert blank.exit_code != 0
    assert "--project is empty" in str(blank.exception or blank.output)
