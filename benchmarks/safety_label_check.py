"""Check a safety corpus's labels by running every command in a throw-away bubblewrap sandbox.

Each command runs once, with ``timeout 3``, inside ``bwrap`` with the root filesystem read-only,
a private ``/tmp`` holding a scratch working directory with small fixtures (a git repository,
``data.txt``, ``a.tar``, ``app.db`` …), no network, no capabilities and new PID/IPC/UTS namespaces; the
files of ``/tmp`` are listed before and after. The script prints every item labelled
``read_only`` that changed a file (a wrong label, or a program writing its own cache) and how
many other items were seen writing or running their payload (``touch /tmp/x``); the LAST line
is a JSON object with ``n``, ``read_only_writers`` and ``others_observed``. It refuses to run
unless a canary shows the sandbox holds (a write to ``/etc`` and a clock change both fail).

    sudo apt-get install -y bubblewrap
    .venv/bin/python benchmarks/safety_label_check.py [--corpus FILE] [--limit N]

Takes ~10 minutes for the 1,183 adversarial commands on a 2-core machine. Never runs a command
outside the sandbox.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "benchmarks" / "data" / "safety_adversarial.yaml"

_INNER = r"""
cd /tmp/w
export HOME=/tmp/w/home; mkdir -p "$HOME"
printf 'b 2\na 1\nc 3\n' > data.txt; for f in x.txt users.txt notes.txt a.txt b.txt; do cp data.txt $f; done
printf 'a,b,c,d\n1,2,3,4\n' > data.csv; printf 'ERROR x\nINFO y\n' > app.log; echo 'debug=1' > app.conf
tar -cf a.tar data.txt 2>/dev/null; tar -czf app.tgz data.txt 2>/dev/null; echo '{"a":1}' > data.json
sqlite3 app.db 'create table t(x); create table users(id)' 2>/dev/null
git init -q . 2>/dev/null; git config user.email a@b; git config user.name n; git add -A; git commit -qm i
echo z >> data.txt
snap() { find /tmp \( -path /tmp/w/.git -prune \) -o -printf '%p %s %T@\n' 2>/dev/null | sort; }
snap > /tmp/.before
timeout -s KILL 3 bash -c "$1" </dev/null >/dev/null 2>&1
snap > /tmp/.after
diff /tmp/.before /tmp/.after | grep '^>' | awk '{print $2}' \
  | grep -v '^/tmp/\.\(before\|after\)$' | tr '\n' ' '
"""
_CANARY = (
    "touch /etc/.label-check-canary 2>/dev/null && echo WROTE; date -s @0 >/dev/null 2>&1 && echo CLOCK; true"
)


def _bwrap(work: Path, script: Path, command: str) -> list[str]:
    return [
        "bwrap",
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        "--dir", "/tmp/w",
        "--bind", str(work), "/tmp/w",
        "--ro-bind", str(script), "/tmp/inner.sh",
        "--chdir", "/tmp/w",
        "--unshare-all",
        "--cap-drop", "ALL",
        "--new-session",
        "--die-with-parent",
        "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
        "bash", "/tmp/inner.sh", command,
    ]  # fmt: skip


def _ignored(path: str) -> bool:
    """Directories whose timestamps change with any write, and programs' own caches under HOME."""
    return path in ("/tmp", "/tmp/w", "/tmp/w/home") or path.startswith(
        ("/tmp/w/.git", "/tmp/w/home/.npm", "/tmp/w/home/.config", "/tmp/w/home/.cache")
    )


def run(items: list[dict[str, Any]]) -> dict[str, Any]:
    """Run every item in the sandbox; return what changed per item."""
    if shutil.which("bwrap") is None:
        sys.exit("safety_label_check.py: bwrap is missing: install Debian's bubblewrap package")
    with tempfile.TemporaryDirectory(prefix="label-check-") as tmp:
        script = Path(tmp) / "inner.sh"
        script.write_text(_INNER, encoding="utf-8")
        work = Path(tmp) / "w"
        work.mkdir()
        canary = subprocess.run(_bwrap(work, script, _CANARY), capture_output=True, text=True, timeout=60)
        if "WROTE" in canary.stdout or "CLOCK" in canary.stdout or canary.returncode not in (0, 1):
            sys.exit(f"safety_label_check.py: the sandbox does not hold ({canary.stdout!r}); refusing to run")
        ro_writers: list[dict[str, str]] = []
        observed = 0
        for item in items:
            shutil.rmtree(work)
            work.mkdir()
            try:
                proc = subprocess.run(
                    _bwrap(work, script, item["cmd"]), capture_output=True, text=True, timeout=30
                )
                changed = [p for p in proc.stdout.split() if not _ignored(p)]
            except subprocess.TimeoutExpired:
                changed = ["(timed out)"]
            if item["label"] == "read_only" and changed:
                ro_writers.append({"cmd": item["cmd"], "changed": " ".join(changed[:5])})
            elif item["label"] != "read_only" and changed:
                observed += 1
    return {"n": len(items), "read_only_writers": ro_writers, "others_observed": observed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT, help="corpus YAML (cmd, label, note)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N items (0: all)")
    args = parser.parse_args()
    if not args.corpus.is_file():
        sys.exit(f"safety_label_check.py: --corpus {args.corpus}: no such file")
    items = [i for i in yaml.safe_load(args.corpus.read_text(encoding="utf-8")) if isinstance(i, dict)]
    if args.limit:
        items = items[: args.limit]
    result = run(items)
    for w in result["read_only_writers"]:
        print(f"read_only item changed files: {w['cmd']!r} -> {w['changed']}")
    others = sum(1 for i in items if i["label"] != "read_only")
    writers = len(result["read_only_writers"])
    print(f"n={result['n']} read_only_writers={writers} others_observed={result['others_observed']}/{others}")
    print(json.dumps({**result, "read_only_writers": len(result["read_only_writers"])}, sort_keys=True))


if __name__ == "__main__":
    main()
