"""`devops-agent index` and `devops-agent search` as a user runs them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "devops_agent", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
        check=False,
    )


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
