"""`devops-agent index` and `devops-agent search` as a user runs them."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from devops_agent.cli import knowledge_cmd
from devops_agent.cli.context import AppState
from devops_agent.knowledge.index import IndexStats, KnowledgeIndex
from fixtures_cli import cli
from fixtures_knowledge import UNITS_QUERY, formatting_tree


def test_index_is_incremental_and_search_cites_lines(tmp_path: Path) -> None:
    tree = tmp_path / "svc"
    tree.mkdir()
    (tree / "payments.py").write_text(
        'import time\n\n\ndef retry_payment(client, attempts=3):\n    """Retry the payment client."""\n'
        "    for n in range(attempts):\n        time.sleep(2 ** n)\n    return client.charge()\n"
    )
    (tree / "users.py").write_text("def load_user(uid):\n    return {'id': uid}\n")
    first = json.loads(cli("index", str(tree), "--json").stdout)
    assert first["paths"][0]["files_indexed"] == 2
    again = json.loads(cli("index", str(tree), "--json").stdout)
    assert again["paths"][0]["files_indexed"] == 0, "nothing changed, nothing re-chunked"
    (tree / "users.py").unlink()
    removed = json.loads(cli("index", str(tree), "--json").stdout)
    assert removed["paths"][0]["files_removed"] == 1
    hits = json.loads(cli("search", "payment retry backoff", "--json").stdout)["hits"]
    assert hits[0]["citation"] == "payments.py:4-8"
    assert hits[0]["symbol"] == "retry_payment"
    bad = cli("search", "x", "--collection", "nope")
    assert bad.returncode == 2


def test_two_trees_are_told_apart_and_a_deleted_one_can_be_forgotten(tmp_path: Path) -> None:
    empty = cli("search", "refund")
    assert empty.returncode == 2
    assert "nothing is indexed in 'code' yet" in empty.stderr
    assert "devops-agent index PATH" in empty.stderr
    odd = cli("index", str(tmp_path / "build[b]" / "gone"))  # brackets are not console markup
    assert odd.returncode == 2
    assert f"{tmp_path}/build[b]/gone does not exist" in odd.stderr
    a, b = tmp_path / "a", tmp_path / "b"
    for tree in (a, b):  # the same relative path in two trees
        (tree / "src").mkdir(parents=True)
        (tree / "src" / "payment.py").write_text(f"def refund_payment(order):\n    return '{tree.name}'\n")
    done = cli("index", str(a), str(b))
    assert done.returncode == 0, done.stderr
    # each file: its function and its outline
    assert done.stdout.strip().endswith("index code: 2 files, 4 chunks"), done.stdout
    text = cli("search", "refund_payment").stdout
    assert f"{a}/src/payment.py:1-2" in text
    assert f"{b}/src/payment.py:1-2" in text

    shutil.rmtree(b)
    gone = cli("index", str(b))
    assert gone.returncode == 2
    assert "still in the 'code' index" in gone.stderr
    assert f"devops-agent index --forget {b}" in gone.stderr
    forgot = json.loads(cli("index", "--forget", str(b), "--json").stdout)
    assert forgot["forgotten"][0]["files_removed"] == 1
    assert forgot["index"]["files"] == 1
    hits = json.loads(cli("search", "refund_payment", "--json").stdout)["hits"]
    assert {h["root"] for h in hits} == {str(a)}
    again = cli("index", "--forget", str(b))
    assert again.returncode == 2
    assert f"indexed there: {a}" in again.stderr
    assert cli("search", "refund", "-n", "0").returncode == 2


def test_paths_with_brackets_are_printed_literally(tmp_path: Path) -> None:
    bold, closing = tmp_path / "svc[bold]", tmp_path / "build[/x]"
    for tree, name in ((bold, "g"), (closing, "f")):
        tree.mkdir(parents=True)  # build[/x] is build[ holding x]
        (tree / "a.py").write_text(f"def handler_{name}():\n    return '[red]not markup[/red]'\n")
    done = cli("index", str(bold))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{bold}: 1 files seen"), done.stdout
    done = cli("index", str(closing))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{closing}: 1 files seen"), done.stdout
    found = cli("search", "handler_f")
    assert f"{closing}/a.py:1-2  handler_f" in found.stdout, found.stdout
    assert "'[red]not markup[/red]'" in found.stdout
    forgot = cli("index", "--forget", str(closing))
    assert forgot.returncode == 0, forgot.stderr
    assert forgot.stdout.startswith(f"{closing}: forgotten, 1 files"), forgot.stdout


def test_search_limit_is_checked_not_silently_capped(tmp_path: Path) -> None:
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "a.py").write_text("def f():\n    pass\n")
    assert cli("index", str(tree)).returncode == 0
    too_many = cli("search", "f", "-n", "100")
    assert too_many.returncode == 2
    assert "less than or equal to 50" in too_many.stderr
    assert cli("search", "f", "-n", "50").returncode == 0
    assert "at most 50" in cli("search", "--help").stdout


def test_an_emptied_collection_is_an_error(tmp_path: Path) -> None:
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "a.py").write_text("def f():\n    pass\n")
    assert cli("index", str(tree)).returncode == 0
    assert cli("index", "--forget", str(tree)).returncode == 0
    empty = cli("search", "f")
    assert empty.returncode == 2
    assert "nothing is indexed in 'code'" in empty.stderr
    assert "devops-agent index PATH -c code" in empty.stderr


def test_a_file_outline_is_labelled_not_cited_as_lines(tmp_path: Path) -> None:
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "mod.py").write_text(
        "import os\n\n\ndef helper():\n    return os.sep\n\n\ndef other():\n    pass\n"
    )
    assert cli("index", str(tree)).returncode == 0
    text = cli("search", "mod.py").stdout
    assert f"{tree}/mod.py  (file outline)\nhelper, other\n" in text, text
    assert f"{tree}/mod.py:1-10" not in text  # a 9-line file: the outline spans no lines


def test_index_reports_what_the_source_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A source may report unreadable paths as ``skipped``; text mode lists them on stderr."""

    @dataclasses.dataclass
    class Stats(IndexStats):
        skipped: list[str] = dataclasses.field(default_factory=list)

    def update_from(self: KnowledgeIndex, source: object, on_file: object = None) -> IndexStats:
        return Stats(files_seen=1, skipped=["sub[x] (permission denied)"])

    monkeypatch.setattr(KnowledgeIndex, "update_from", update_from)
    app = typer.Typer()
    app.command()(knowledge_cmd.index)
    runner = CliRunner()
    text = runner.invoke(app, [str(tmp_path)], obj=AppState())
    assert text.exit_code == 0, text.output
    assert "skipped sub[x] (permission denied)\n" in text.stderr
    assert "skipped" not in text.stdout
    data = runner.invoke(app, [str(tmp_path), "--json"], obj=AppState())
    assert json.loads(data.stdout)["paths"][0]["skipped"] == ["sub[x] (permission denied)"]


def test_search_files_ranks_whole_files_under_their_roots(tmp_path: Path) -> None:
    tree = tmp_path / "svc"
    formatting_tree(tree)
    assert cli("index", str(tree)).returncode == 0
    found = json.loads(cli("search", "--files", UNITS_QUERY, "--json").stdout)["files"]
    assert found[0] == {
        "rank": 1,
        "path": "core/formatting.py",
        "roots": [str(tree.resolve())],
        "best_chunk": "core/formatting.py:1-3",
        "symbol": "dataset_repr",
    }
    assert [f["rank"] for f in found] == list(range(1, len(found) + 1))
    plain = cli("search", "--files", UNITS_QUERY, "-n", "2")
    assert plain.returncode == 0, plain.stderr
    lines = plain.stdout.splitlines()
    assert lines[0] == f"  1. {tree.resolve()}/core/formatting.py  best: 1-3 dataset_repr"
    assert len(lines) == 2
    # The same relative path under a second root: cited by path, with both roots named.
    other = tmp_path / "copy"
    shutil.copytree(tree, other)
    assert cli("index", str(other)).returncode == 0
    both = cli("search", "--files", UNITS_QUERY, "-n", "3").stdout.splitlines()
    assert f". core/formatting.py  (under {other.resolve()}, {tree.resolve()})  best: 1-3 dataset_repr" in [
        line[3:] for line in both
    ]
    wrong = cli("search", "--files", "-c", "runbooks", "repr")
    assert wrong.returncode == 2
    assert "--files ranks the files of the code collection" in wrong.stderr
