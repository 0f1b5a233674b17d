"""The knowledge toolset: indexes inside the roots and returns chunks with path:start-end citations.

And the tools as a model calls them: what an empty index or memory says, the size of what comes
back through the real output cap, argument schemas, a second concurrent index run, and the roots
policy. Real SQLite indexes and stores, real files."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from devops_agent.config import Settings
from devops_agent.knowledge.index import KnowledgeIndex
from devops_agent.policies.limits import cap_result
from devops_agent.tools import knowledge
from devops_agent.tools.base import ToolResult
from devops_agent.tools.registry import ToolRegistry
from fixtures_knowledge import UNITS_QUERY, formatting_tree


def _settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", files={"roots": [tmp_path / "work"]})  # type: ignore[arg-type]


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "work" / "svc"
    (root / "ops").mkdir(parents=True)
    (root / "app.py").write_text(
        "def healthcheck():\n    return 'ok'\n\n\ndef migrate_schema(db):\n    db.run()\n"
    )
    (root / "ops" / "oncall.md").write_text(
        "# Pager storm\nSilence duplicates.\n\n# Schema migration failed\nRoll back.\n"
    )
    return root


def test_tools_index_and_retrieve_with_citations(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    root = _tree(tmp_path)
    ts = knowledge.build(settings)
    assert all(e.spec.read_only and e.spec.risk == "safe" for e in ts.entries.values())
    tools = {name: e.function for name, e in ts.entries.items()}

    res = tools["index_directory"](str(root))
    assert res.status == "success"
    assert res.data["files_indexed"] == 2
    assert (settings.data_dir / "knowledge" / "code.sqlite").is_file()

    res = tools["retrieve_code_context"]("where is migrate_schema defined", limit=3)
    assert res.status == "success"
    first = res.data[0]
    assert first["citation"] == "app.py:5-6"
    assert first["symbol"] == "migrate_schema"

    assert tools["index_directory"](str(root / "ops"), collection="runbooks").status == "success"
    res = tools["search_kb"]("pager storm duplicates")
    assert res.data[0]["citation"] == "oncall.md:1-3"


def test_tools_errors_are_data(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    _tree(tmp_path)
    tools = {name: e.function for name, e in knowledge.build(settings).entries.items()}
    assert tools["index_directory"]("/etc").status == "error"
    assert tools["index_directory"](str(tmp_path / "work"), collection="nope").status == "error"
    assert tools["search_kb"]("anything", collection="postmortems").status == "no_data"
    assert tools["retrieve_code_context"]("  ").status == "error"


def test_register_adds_toolset() -> None:
    reg = ToolRegistry()
    knowledge.register(reg)
    assert "knowledge" in reg.toolsets


def test_locate_code_files_ranks_files_with_their_best_chunk(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    tools = {name: e.function for name, e in knowledge.build(settings).entries.items()}
    assert tools["locate_code_files"]("repr units").status == "no_data"  # nothing indexed yet
    formatting_tree(tmp_path / "work" / "svc")
    assert tools["index_directory"](str(tmp_path / "work" / "svc")).status == "success"
    res = tools["locate_code_files"](UNITS_QUERY, limit=3)
    assert res.status == "success"
    assert [f["path"] for f in res.data][:1] == ["core/formatting.py"]
    assert len(res.data) == 3
    assert res.data[0]["best_chunk"] == "core/formatting.py:1-3"
    assert res.data[0]["roots"] == [str((tmp_path / "work" / "svc").resolve())]
    assert res.metadata["ranked"] == "files"
    assert tools["locate_code_files"]("  ").status == "error"
    # over the output cap the lowest-ranked files go, and the hint says so in those words
    capped = cap_result(res, len(json.dumps(res.data)) - 10)
    assert [f["path"] for f in capped.data] == [f["path"] for f in res.data[:2]]
    assert "1 lower-ranked files left out" in (capped.hint or "")


def _tools(settings: Settings) -> dict[str, Any]:
    return {name: e.function for name, e in knowledge.build(settings).entries.items()}


def test_search_of_a_collection_with_nothing_indexed_says_index_first(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    root = _tree(tmp_path)
    tools = _tools(settings)
    assert tools["index_directory"](str(root)).status == "success"
    with KnowledgeIndex(knowledge.collection_db(settings, "code")) as idx:
        idx.forget(str(root.resolve()))  # the file exists, every root is gone

    res = tools["retrieve_code_context"]("migrate_schema")
    assert res.status == "no_data"
    assert "index_directory" in (res.hint or "")
    assert "try other words" not in (res.hint or "")
    # a collection never indexed names the collection to index into
    res = tools["search_kb"]("pager storm", collection="postmortems")
    assert res.status == "no_data"
    assert "collection='postmortems'" in (res.hint or "")


def test_search_memory_tells_an_empty_project_from_no_match(tmp_path: Path) -> None:
    data = tmp_path / "data"
    alpha = _tools(Settings(data_dir=data, project="alpha"))
    beta = _tools(Settings(data_dir=data, project="beta"))

    res = alpha["search_memory"]("checkout 502")
    assert res.status == "no_data"
    assert "no findings yet" in (res.hint or "")

    assert beta["add_finding"]("Checkout 502", "beta: pool lowered to 5").status == "success"
    res = alpha["search_memory"]("checkout 502")  # same title elsewhere: nothing leaks across
    assert res.status == "no_data"
    assert "no findings yet" in (res.hint or "")

    assert alpha["add_finding"]("Checkout 502", "alpha: DNS TTL").status == "success"
    assert [h["summary"] for h in alpha["search_memory"]("checkout 502").data] == ["alpha: DNS TTL"]
    res = alpha["search_memory"]("zookeeper quorum")
    assert res.status == "no_data"
    assert "try other words" in (res.hint or "")


def test_add_finding_bounds_the_number_of_tags(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", project="p")
    tools = _tools(settings)
    res = tools["add_finding"]("t", "s", tags=[f"tag{i}" for i in range(31)])
    assert res.status == "error"
    assert "tags" in (res.error or "")
    assert tools["search_memory"]("tag1").status == "no_data"  # nothing was stored
    ok = tools["add_finding"]("t", "s", tags=[f"tag{i}" for i in range(30)])  # the documented maximum
    assert ok.status == "success"


def _many_matches(tmp_path: Path, n: int = 30) -> Path:
    root = tmp_path / "work" / "big"
    root.mkdir(parents=True)
    for i in range(n):
        body = "".join(f"    retry_webhook_delivery(step{j}, attempt={i})\n" for j in range(12 + i))
        (root / f"mod{i:02}.py").write_text(f"def deliver_{i}():\n{body}")
    return root


def test_ranked_code_hits_are_cut_from_the_end_to_fit_the_output_cap(
    tmp_path: Path, through_pipeline: Any
) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        files={"roots": [tmp_path / "work"]},  # type: ignore[arg-type]
        tools={"output_cap_chars": 4_000},  # type: ignore[arg-type]
    )
    root = _many_matches(tmp_path)
    tools = _tools(settings)
    assert tools["index_directory"](str(root)).status == "success"
    ranked = knowledge.search_collection(settings, "retry_webhook_delivery attempt", "code", 50).data
    assert len(json.dumps(ranked)) > 4_000  # the test needs a ranking that does not fit

    res = through_pipeline(
        "retrieve_code_context",
        tools["retrieve_code_context"],
        {"query": "retry_webhook_delivery attempt", "limit": 50},
        settings=settings,
    )
    assert res.status == "success"
    assert not res.metadata.get("truncated")  # nothing cut by the cap, so no middle dropped
    assert all(isinstance(h, dict) for h in res.data)
    # the best hits, in rank order: a prefix of the full ranking
    assert [h["citation"] for h in res.data] == [h["citation"] for h in ranked[: len(res.data)]]
    assert res.metadata["omitted"] == len(ranked) - len(res.data) > 0
    assert "left out" in (res.hint or "")


def test_ranked_findings_are_cut_from_the_end_to_fit_the_output_cap(
    tmp_path: Path, through_pipeline: Any
) -> None:
    settings = Settings(data_dir=tmp_path / "data", project="p", tools={"output_cap_chars": 3_000})  # type: ignore[arg-type]
    tools = _tools(settings)
    for i in range(12):
        summary = f"pool exhausted on node {i}; " + "connection wait timed out. " * (10 + 5 * i)
        assert tools["add_finding"](f"Checkout 502 #{i}", summary, tags=["checkout"]).status == "success"

    res = through_pipeline(
        "search_memory",
        tools["search_memory"],
        {"query": "checkout 502 pool", "limit": 12},
        settings=settings,
    )
    assert res.status == "success"
    assert not res.metadata.get("truncated")
    assert all(isinstance(h, dict) for h in res.data)
    assert 0 < len(res.data) < 12
    assert res.metadata["omitted"] == 12 - len(res.data)
    scores = [h["score"] for h in res.data]
    assert scores == sorted(scores, reverse=True)


def test_schemas_name_the_collections_limits_and_roots() -> None:
    ts = knowledge.build(Settings()).to_pydantic_ai()
    params = {name: t.tool_def.parameters_json_schema["properties"] for name, t in ts.tools.items()}
    assert params["index_directory"]["collection"]["enum"] == ["code", "runbooks", "postmortems"]
    assert params["search_kb"]["collection"]["enum"] == ["runbooks", "postmortems"]
    assert "files.roots" in params["index_directory"]["path"]["description"]
    for name in ("retrieve_code_context", "search_kb", "search_memory"):
        assert "50" in params[name]["limit"]["description"]
    assert "30" in params["add_finding"]["tags"]["description"]


def test_a_second_index_run_fails_fast_while_searches_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _settings(tmp_path)
    root = _tree(tmp_path)
    tools = _tools(settings)
    assert tools["index_directory"](str(root)).status == "success"
    monkeypatch.setattr(knowledge, "INDEX_BUSY_TIMEOUT_S", 0.5, raising=False)

    writer = sqlite3.connect(knowledge.collection_db(settings, "code"), isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another index run holds the collection's write lock
    try:
        assert tools["retrieve_code_context"]("migrate_schema").status == "success"
        out: list[ToolResult] = []
        worker = threading.Thread(target=lambda: out.append(tools["index_directory"](str(root))), daemon=True)
        worker.start()
        worker.join(20)  # without the short busy timeout it waits ten minutes for the lock
        assert not worker.is_alive()
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    (res,) = out
    assert res.status == "error"
    assert "in progress" in (res.hint or "")


def test_index_directory_says_what_it_did_not_index(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    root = _tree(tmp_path)
    (root / "dump.txt").write_text("x" * 1_100_000)  # over the walker's size limit
    tools = _tools(settings)

    res = tools["index_directory"](str(root))
    assert res.status == "success"
    assert res.data["skipped_count"] == 1
    assert res.data["skipped"][0].startswith("dump.txt")

    res = tools["index_directory"](str(tmp_path / "work" / "nope"))
    assert res.status == "error"
    assert "no such directory" in (res.error or "")

    empty = tmp_path / "work" / "empty"
    empty.mkdir()
    res = tools["index_directory"](str(empty))
    assert res.status == "success"
    assert "no indexable" in (res.hint or "")


def test_symlinks_out_of_the_roots_are_neither_indexed_nor_searched(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    root = _tree(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "vault.py").write_text("def leaked_credentials_loader():\n    return 'x'\n")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / "vault_link.py").symlink_to(outside / "vault.py")
    (tmp_path / "work" / "escape").symlink_to(outside, target_is_directory=True)
    tools = _tools(settings)

    assert tools["index_directory"](str(tmp_path / "work" / "escape")).status == "error"
    assert tools["index_directory"](str(root)).status == "success"
    res = tools["retrieve_code_context"]("leaked_credentials_loader", limit=50)
    hits = res.data or []
    assert all("leaked_credentials_loader" not in h["text"] for h in hits)
    assert all(not h["path"].startswith(("linked", "vault_link")) for h in hits)
