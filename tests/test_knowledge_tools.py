"""The knowledge toolset: indexes inside the roots and returns chunks with path:start-end citations."""

from __future__ import annotations

import json
from pathlib import Path

from devops_agent.config import Settings
from devops_agent.policies.limits import cap_result
from devops_agent.tools import knowledge
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
