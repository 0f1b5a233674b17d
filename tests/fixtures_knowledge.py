"""Files for the knowledge tests: source trees to index (:func:`formatting_tree`,
:func:`one_and_two_copies`, :func:`write_file`), the query they answer (``UNITS_QUERY``), and
:func:`unprivileged`, which runs a probe in a child process that obeys file modes even as root."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from devops_agent.knowledge.index import KnowledgeIndex

# A repr feature request whose words its test repeats, not the code that makes the repr.
UNITS_QUERY = (
    "Feature request: show units in the dataset repr\nThe repr should show the units of each coordinate."
)


def formatting_tree(src: Path) -> None:
    """core/formatting.py makes the repr but says little in UNITS_QUERY's words; its test
    tests/test_formatting.py spells the behaviour out; core/convert.py shares the words too."""
    (src / "core").mkdir(parents=True)
    (src / "tests").mkdir()
    (src / "core" / "formatting.py").write_text(
        "def dataset_repr(obj):\n    lines = [type(obj).__name__]\n    return '\\n'.join(lines)\n"
    )
    (src / "tests" / "test_formatting.py").write_text(
        "def test_repr_shows_units_of_coordinates():\n"
        "    # the repr shows the units of each coordinate and data variable\n"
        "    assert 'units' in dataset_repr(dataset_with_units())  # coordinate units in the repr\n"
    )
    (src / "core" / "convert.py").write_text(
        "def convert(value, units):\n    # show the units of a coordinate in the units of the dataset\n"
        "    return value * FACTORS[units]  # each coordinate shows its units\n"
    )
    for n in range(6):
        (src / "core" / f"misc{n}.py").write_text(f"def helper{n}():\n    return {n}\n")


def one_and_two_copies(
    tmp_path: Path, build: Callable[[Path], None], query: str
) -> tuple[list[str], list[str]]:
    """``search_files`` for ``query`` over a tree made by ``build``, indexed once, and over two
    copies of it indexed as two roots of one collection."""
    from devops_agent.knowledge.search import search_files

    build(tmp_path / "a")
    build(tmp_path / "b")
    with KnowledgeIndex(tmp_path / "one.sqlite") as one, KnowledgeIndex(tmp_path / "two.sqlite") as two:
        one.update(tmp_path / "a")
        two.update(tmp_path / "a")
        two.update(tmp_path / "b")
        return search_files(one, query), search_files(two, query)


def write_file(root: Path, rel: str, data: bytes | str) -> Path:
    """Write ``data`` to ``root/rel``, parent directories created; the file's path."""
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_text(data)
    return p


_DROP = ["--bounding-set", "-dac_override,-dac_read_search", "--inh-caps", "-dac_override,-dac_read_search"]


def unprivileged(code: str) -> dict[str, object]:
    """Run ``code`` (which prints one JSON line) in a child that obeys file modes, even as root."""
    cmd = [sys.executable, "-c", code]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: file modes would not be enforced")
        cmd = ["setpriv", *_DROP, *cmd]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]
