"""Log files and the log toolset for tests (a plugin module: ``from fixtures_logs import ...``).

* :func:`write_app_log` writes an application log the log runbooks find errors in;
* :func:`log_tools` builds the real log toolset over a root, with an output cap and read limit;
* :func:`zulu` writes a time as log lines and Alertmanager carry it (``2026-11-22T10:41:00Z``);
* :func:`call_entry` calls one of its tools with arguments bound and checked as the model's are.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from devops_agent.config import Settings
from devops_agent.tools import logs
from devops_agent.tools.base import ToolEntry, ToolResult


def write_app_log(root: Path, error: Callable[[int], str]) -> Path:
    """``root/app/app.log``: 40 INFO lines, then 30 ERROR lines whose text is ``error(second)``.
    Returns the ``root/app`` directory (what ``--logs`` takes)."""
    logs = root / "app"
    logs.mkdir()
    lines = [f"2026-11-22T10:{m:02d}:00Z INFO request ok id={m}" for m in range(40)]
    lines += [f"2026-11-22T10:41:{s:02d}Z ERROR {error(s)}" for s in range(30)]
    (logs / "app.log").write_text("\n".join(lines) + "\n")
    return logs


def log_tools(root: Path, cap: int = 16_000, max_read: int = 2_000_000) -> dict[str, ToolEntry]:
    settings = Settings(
        files={"roots": [root], "max_read_bytes": max_read},  # type: ignore[arg-type]
        tools={"output_cap_chars": cap},  # type: ignore[arg-type]
    )
    return logs.build(settings).entries


def call_entry(tools: dict[str, ToolEntry], name: str, **args: Any) -> ToolResult:
    result = tools[name].function(**tools[name].bind_args(args).arguments)
    assert isinstance(result, ToolResult)
    return result


def zulu(t: datetime) -> str:
    """``t`` (UTC) as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")
