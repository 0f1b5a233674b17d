"""The test suite's own layout rules (docs/contributing.md, "Tests"), checked so that they hold.

* ``tests/<package>/test_<module>.py`` mirrors ``src/devops_agent/<package>/<module>.py``; tests of
  the benchmark scripts sit in ``tests/benchmarks/``, tests of a top-level module in ``tests/``.
* A test module imports no other test module: what tests share lives in the support modules that
  ``tests/conftest.py`` loads as plugins (``pytest_plugins``), as fixtures or plain helpers.
* No file is named after a review round: a test sits with its subject.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src" / "devops_agent"


def _test_files() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def _plugins() -> set[str]:
    tree = ast.parse((TESTS / "conftest.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in node.targets
        ):
            return set(ast.literal_eval(node.value))
    raise AssertionError("tests/conftest.py lists no pytest_plugins")


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_the_suite_is_found() -> None:
    assert len(_test_files()) > 50  # the checks below must not pass by reading nothing


def test_test_modules_import_only_support_plugins_from_the_suite() -> None:
    plugins = _plugins()
    local = {p.stem for p in TESTS.glob("*.py")} | {p.name for p in TESTS.iterdir() if p.is_dir()}
    offenders = {}
    for path in _test_files():
        bad = sorted(
            name
            for name in _imported(path)
            if (name.split(".")[0] in local or name.split(".")[0].startswith("test_")) and name not in plugins
        )
        if bad:
            offenders[str(path.relative_to(TESTS))] = bad
    assert offenders == {}


def test_test_folders_mirror_the_source_packages() -> None:
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").exists()} | {"benchmarks"}
    misplaced = [
        str(path.relative_to(TESTS))
        for path in _test_files()
        if path.parent != TESTS and path.relative_to(TESTS).parts[0] not in packages
    ]
    assert misplaced == []


def test_no_file_is_named_after_a_review_round() -> None:
    assert [p.name for p in _test_files() if "review" in p.stem] == []
