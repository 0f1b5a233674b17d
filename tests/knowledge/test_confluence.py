"""Confluence as a knowledge source: the real atlassian-python-api client against recorded-shape
REST v1 responses on 127.0.0.1 (fixtures: tests/replay/fixtures/confluence/SOURCES.md)."""

from __future__ import annotations

import base64
import copy
import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug import Response

from devops_agent.config import Settings
from devops_agent.errors import ConfigError, NotFoundError, RuntimeFailure, UserError
from devops_agent.knowledge import confluence
from devops_agent.knowledge.chunking import chunk_text
from devops_agent.knowledge.confluence import ConfluenceSource, confluence_conf, connect
from devops_agent.knowledge.index import KnowledgeIndex
from devops_agent.knowledge.storage_format import storage_to_markdown
from devops_agent.tools import knowledge
from fixtures_cli import cli as run_cli
from fixtures_replay import FIXTURES, ReplayServer

USER, TOKEN = "sre@acme.example", "api-token-123"
CONTENT = "/wiki/rest/api/content"
SITE = "https://acme.atlassian.net/wiki"
FAILOVER_URL = f"{SITE}/spaces/OPS/pages/393219/Database+failover"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / "confluence" / name).read_text())


@pytest.fixture
def srv() -> Iterator[ReplayServer]:
    with ReplayServer() as server:
        yield server


def serve(srv: ReplayServer, page1: Any = None, page2: Any = None) -> None:
    """The OPS space as two result pages (start=0 and start=2), behind HTTP Basic."""
    srv.reset()
    srv.require_basic(USER, TOKEN)
    srv.add("GET", "/wiki/rest/api/space/OPS", fixture="confluence/space_OPS.json")
    srv.add("GET", "/wiki/rest/api/space/NOPE", fixture="confluence/error_404_space.json", status=404)
    for start, body, name in (("0", page1, "page1"), ("2", page2, "page2")):
        query = {"spaceKey": "OPS", "type": "page", "start": start}
        if body is None:
            srv.add("GET", CONTENT, fixture=f"confluence/content_OPS_{name}.json", query=query)
        else:
            srv.add("GET", CONTENT, body=body, query=query)


def settings_for(tmp_path: Path, srv: ReplayServer, user: str | None = USER) -> Settings:
    conf = {"url": srv.url + "/wiki", "user": user, "token": TOKEN, "timeout_s": 5}
    return Settings(data_dir=tmp_path / "data", confluence=conf)


def index_space(settings: Settings, space: str = "OPS") -> Any:
    from devops_agent.tools.knowledge import index_dir

    with (
        KnowledgeIndex.for_collection(index_dir(settings), "runbooks") as idx,
        ConfluenceSource.from_settings(settings, space, page_size=2) as source,
    ):
        return idx.update_from(source)


def runbooks(settings: Settings) -> KnowledgeIndex:
    from devops_agent.tools.knowledge import index_dir

    return KnowledgeIndex.for_collection(index_dir(settings), "runbooks")


# -- indexing -------------------------------------------------------------------------------


def test_space_is_paged_converted_and_cited_by_page_url(tmp_path: Path, srv: ReplayServer) -> None:
    serve(srv)
    settings = settings_for(tmp_path, srv)
    stats = index_space(settings)
    assert (stats.files_seen, stats.files_indexed, stats.files_removed) == (3, 3, 0)

    pages = srv.requests_to(CONTENT)
    assert [r.query["start"] for r in pages] == [["0"], ["2"]]
    for r in pages:
        assert r.query["limit"] == ["2"]
        assert r.query["expand"] == ["body.storage,version"]
        assert r.query["type"] == ["page"]
    expected = "Basic " + base64.b64encode(f"{USER}:{TOKEN}".encode()).decode()
    assert {r.headers["authorization"] for r in srv.requests} == {expected}

    tools = {name: e.function for name, e in knowledge.build(settings).entries.items()}
    res = tools["search_kb"]("how do I promote a replica with patronictl failover", collection="runbooks")
    assert res.status == "success"
    top = res.data[0]
    assert top["url"] == FAILOVER_URL
    assert top["title"] == "Database failover"
    assert top["symbol"] == "Database failover > Steps"
    assert top["citation"].startswith(f"{FAILOVER_URL} § Database failover > Steps (lines ")
    assert "patronictl failover --candidate payments-db-2" in top["text"]
    assert "ac:parameter" not in top["text"]
    assert "CDATA" not in top["text"]

    res = tools["search_kb"]("kafka retention.ms clickstream disk full", collection="runbooks")
    assert res.data[0]["url"] == f"{SITE}/spaces/OPS/pages/425986/Kafka+broker+disk+full"


def test_reindex_rechunks_only_the_edited_page_and_drops_removed_ones(
    tmp_path: Path, srv: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    converted: list[str] = []

    def counting(storage: str, title: str | None = None) -> str:
        converted.append(title or "")
        return storage_to_markdown(storage, title)

    monkeypatch.setattr(confluence, "storage_to_markdown", counting)
    serve(srv)
    settings = settings_for(tmp_path, srv)
    index_space(settings)
    with runbooks(settings) as idx:
        before = idx.counts()

    assert len(converted) == 3
    again = index_space(settings)
    assert (again.files_indexed, again.chunks_added, again.chunks_removed) == (0, 0, 0)
    assert len(converted) == 3, "unchanged versions: no page body is even converted"

    page1 = fixture("content_OPS_page1.json")
    bumped = copy.deepcopy(page1)
    bumped["results"][1]["version"]["number"] = 2  # a new version with the same body: hash says same
    serve(srv, page1=bumped)
    assert index_space(settings).files_indexed == 0
    assert converted[3:] == ["Pager storm"]

    edited = copy.deepcopy(page1)
    pager = edited["results"][1]
    pager["version"]["number"] = 3
    pager["body"]["storage"]["value"] += (
        "<h1>Escalation</h1><p>Call the incident commander on the bridge.</p>"
    )
    serve(srv, page1=edited)
    changed = index_space(settings)
    assert changed.files_seen == 3
    assert changed.files_indexed == 1, "only the edited page is re-chunked"
    # The page's three sections and its outline go; they come back with the new fourth section.
    assert (changed.chunks_removed, changed.chunks_added) == (4, 5)
    with runbooks(settings) as idx:
        assert idx.counts()["chunks"] == before["chunks"] + 1
        hit = idx.lexical("incident commander bridge escalation", 1)[0]
        assert hit.chunk.symbol == "Pager storm > Escalation"
        assert hit.url == f"{SITE}/spaces/OPS/pages/393220/Pager+storm"

    emptied = fixture("content_OPS_page2.json")
    emptied["results"], emptied["size"] = [], 0
    serve(srv, page1=edited, page2=emptied)
    gone = index_space(settings)
    assert (gone.files_removed, gone.files_indexed) == (1, 0)
    with runbooks(settings) as idx:
        assert all(h.chunk.path != "OPS/Kafka broker disk full" for h in idx.lexical("kafka broker disk", 20))
        assert sorted(idx.paths()) == ["OPS/Database failover", "OPS/Pager storm"]


def test_bearer_token_without_user(tmp_path: Path, srv: ReplayServer) -> None:
    serve(srv)
    srv.basic_auth = None
    settings = settings_for(tmp_path, srv, user=None)
    assert index_space(settings).files_indexed == 3
    assert {r.headers["authorization"] for r in srv.requests} == {f"Bearer {TOKEN}"}


# -- errors -----------------------------------------------------------------------------------


def test_wrong_credentials_are_a_user_error_with_the_fix(tmp_path: Path, srv: ReplayServer) -> None:
    serve(srv)
    srv.unauthorized = Response(
        (FIXTURES / "confluence" / "error_401.json").read_bytes(), 401, content_type="application/json"
    )
    srv.require_basic(USER, "another-token")
    with pytest.raises(UserError) as info:
        index_space(settings_for(tmp_path, srv))
    assert "401" in info.value.message
    assert "Client must be authenticated" in info.value.message
    assert "confluence.token" in (info.value.hint or "")


def test_unknown_space_is_not_found(tmp_path: Path, srv: ReplayServer) -> None:
    serve(srv)
    with pytest.raises(NotFoundError) as info:
        index_space(settings_for(tmp_path, srv), space="NOPE")
    assert "NOPE" in info.value.message
    assert not srv.requests_to(CONTENT), "no content query for a space that does not exist"


def test_server_error_mid_way_leaves_the_index_as_it_was(tmp_path: Path, srv: ReplayServer) -> None:
    serve(srv)
    settings = settings_for(tmp_path, srv)
    index_space(settings)
    with runbooks(settings) as idx:
        before = idx.counts()

    edited = fixture("content_OPS_page1.json")
    edited["results"][0]["version"]["number"] = 4
    edited["results"][0]["body"]["storage"]["value"] = "<p>rewritten</p>"
    serve(srv, page1=edited)
    srv.add("GET", CONTENT, fixture="confluence/error_500.json", status=500, query={"start": "2"}, times=1)
    with pytest.raises(RuntimeFailure) as info:
        index_space(settings)
    assert "500" in info.value.message
    assert "Search index is being rebuilt" in info.value.message
    assert info.value.fields["transient"] is True
    with runbooks(settings) as idx:
        assert idx.counts() == before
        assert idx.lexical("patronictl failover", 1)[0].chunk.path == "OPS/Database failover"
        assert not idx.lexical("rewritten", 5), "the half-done update was rolled back"


def test_unreachable_server_and_missing_settings(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        confluence_conf(Settings(data_dir=tmp_path))
    settings = Settings(
        data_dir=tmp_path,
        confluence={"url": "http://127.0.0.1:9/wiki", "token": "x", "timeout_s": 2},
    )
    source = ConfluenceSource(connect(confluence_conf(settings)), "http://127.0.0.1:9/wiki", "OPS")
    with source, pytest.raises(RuntimeFailure) as info:
        list(source.documents())
    assert "cannot connect" in info.value.message


def test_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "atlassian", None)
    settings = Settings(data_dir=tmp_path, confluence={"url": "https://x.example/wiki", "token": "t"})
    with pytest.raises(ImportError, match=r"devops-agent\[confluence\]"):
        ConfluenceSource.from_settings(settings, "OPS")


# -- storage format ---------------------------------------------------------------------------


def test_storage_format_keeps_structure_for_the_chunker() -> None:
    xhtml = (
        "<p>Intro&nbsp;text.</p><h1>Steps</h1><ol><li><p>Drain</p><ul><li>node <code>w-2</code></li></ul></li>"
        "<li>Cordon</li></ol>"
        '<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">sh</ac:parameter>'
        "<ac:plain-text-body><![CDATA[kubectl drain w-2\n# not a heading]]></ac:plain-text-body>"
        "</ac:structured-macro>"
        "<h2>Check</h2><table><tbody><tr><th>a</th><th>b</th></tr><tr><td><p>1</p></td><td>x|y</td></tr>"
        "</tbody></table>"
        '<ac:structured-macro ac:name="note"><ac:parameter ac:name="title">T</ac:parameter>'
        "<ac:rich-text-body><p>Careful.</p></ac:rich-text-body></ac:structured-macro>"
        '<p>See <ac:link><ri:page ri:content-title="Node drain" /></ac:link>, '
        '<ac:structured-macro ac:name="status"><ac:parameter ac:name="title">DONE</ac:parameter>'
        "</ac:structured-macro>.</p>"
        "<ac:task-list><ac:task><ac:task-id>7</ac:task-id><ac:task-status>complete</ac:task-status>"
        "<ac:task-body>Uncordon</ac:task-body></ac:task></ac:task-list>"
    )
    text = storage_to_markdown(xhtml, "Node maintenance")
    assert text.splitlines() == [
        "# Node maintenance",
        "",
        "Intro text.",
        "",
        "## Steps",
        "",
        "1. Drain",
        "  - node `w-2`",
        "2. Cordon",
        "",
        "```sh",
        "kubectl drain w-2",
        "# not a heading",
        "```",
        "",
        "### Check",
        "",
        "| a | b |",
        "| 1 | x\\|y |",
        "",
        "> **Note**",
        "> Careful.",
        "",
        "See Node drain, DONE.",
        "",
        "- [x] Uncordon",
    ]
    sections = [c.symbol for c in chunk_text("OPS/Node maintenance", text, "markdown")]
    assert sections == ["Node maintenance", "Node maintenance > Steps", "Node maintenance > Steps > Check"]


# -- index upgrade and CLI --------------------------------------------------------------------


def test_index_written_before_documents_upgrades_and_rechunks_once(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text("# Alpha\nrestart the alpha service\n")
    db = tmp_path / "old.sqlite"
    with KnowledgeIndex(db) as idx:
        idx.update(root)
    # Rebuild the files table as the first release wrote it (no stamp/url/title columns).
    conn = sqlite3.connect(db)
    with conn:
        conn.executescript(
            "CREATE TABLE f_old (id INTEGER PRIMARY KEY, root TEXT NOT NULL, path TEXT NOT NULL, "
            "sha256 TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, UNIQUE (root, path));"
            "INSERT INTO f_old SELECT id, root, path, sha256, size, mtime_ns FROM files;"
            "PRAGMA foreign_keys = OFF; DROP TABLE files; ALTER TABLE f_old RENAME TO files;"
        )
    conn.close()
    with KnowledgeIndex(db) as idx:
        # the first update re-chunks the file once: which chunker cut it is not recorded
        stats = idx.update(root)
        assert (stats.files_seen, stats.files_indexed) == (1, 1)
        stats = idx.update(root)
        assert (stats.files_seen, stats.files_indexed) == (1, 0)
        assert idx.lexical("restart alpha", 1)[0].citation == "a.md:1-2"


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env=env)


@pytest.mark.slow
def test_cli_indexes_a_space_and_search_cites_urls(srv: ReplayServer) -> None:
    serve(srv)
    env = {
        "DEVOPS_AGENT_CONFLUENCE__URL": srv.url + "/wiki",
        "DEVOPS_AGENT_CONFLUENCE__USER": USER,
        "DEVOPS_AGENT_CONFLUENCE__TOKEN": TOKEN,
    }
    run = cli("index", "--confluence", "OPS", "--json", env=env)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert summary["collection"] == "runbooks"
    assert summary["confluence"][0]["files_indexed"] == 3
    assert summary["confluence"][0]["source"] == srv.url + "/wiki/spaces/OPS"

    hits = json.loads(
        cli("search", "pager storm alertmanager silence", "-c", "runbooks", "--json", env=env).stdout
    )
    assert hits["hits"][0]["url"] == f"{SITE}/spaces/OPS/pages/393220/Pager+storm"

    refused = cli("index", "--confluence", "OPS", env={**env, "DEVOPS_AGENT_CONFLUENCE__TOKEN": "wrong"})
    assert refused.returncode == 2
    assert "401" in refused.stderr
    missing = cli("index", "--confluence", "OPS", env={"DEVOPS_AGENT_CONFLUENCE__URL": ""})
    assert missing.returncode == 2
    assert "not configured" in missing.stderr
