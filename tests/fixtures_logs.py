"""Log files for tests that run the log runbooks (``from fixtures_logs import write_app_log``; ``tests/``
is on ``sys.path``, see fixtures_bench.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def write_app_log(root: Path, error: Callable[[int], str]) -> Path:
    """``root/app/app.log``: 40 INFO lines, then 30 ERROR lines whose text is ``error(second)``.
    Returns the ``root/app`` directory (what ``--logs`` takes)."""
    logs = root / "app"
    logs.mkdir()
    lines = [f"2026-11-22T10:{m:02d}:00Z INFO request ok id={m}" for m in range(40)]
    lines += [f"2026-11-22T10:41:{s:02d}Z ERROR {error(s)}" for s in range(30)]
    (logs / "app.log").write_text("\n".join(lines) + "\n")
    return logs
