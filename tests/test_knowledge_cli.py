"""`devops-agent index` and `devops-agent search` as a user runs them."""

from __future__ import annotations

import json
import os
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
