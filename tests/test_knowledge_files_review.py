"""Review of the file search (``search --files``, ``locate_code_files``): which file a test names
as its subject, and what two roots' copies of a tree do to the ranking."""

from __future__ import annotations

from pathlib import Path

from devops_agent.knowledge import search
from devops_agent.knowledge.index import KnowledgeIndex
from devops_agent.knowledge.search import module_map, search_files
from fixtures_knowledge import one_and_two_copies


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
