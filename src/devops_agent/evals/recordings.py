"""Recorded tool outputs of an evaluation case, in HolmesGPT's mock-file format, and its match rule.

A recording is a ``.txt`` file in the case folder:

- line 1: JSON ``{"toolset_name", "tool_name", "match_params"}`` — which call it answers;
- line 2: JSON metadata of the recorded result (``status`` success|error|no_data, ``error``,
  ``invocation`` = the command that produced it, ``params``);
- line 3 on: the raw output (kubectl text, a log, Prometheus JSON, …).

:func:`upstream_match` is HolmesGPT's own rule (a call to the tool matches the first recording
whose ``match_params`` are all present in the call with equal values, ``"*"`` matching anything
and ``null`` matching every call). How a call to one of *our* tools is answered from these is the
mapping's business (:mod:`devops_agent.evals.mapping`). This module reads files; it runs nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devops_agent.errors import ConfigError

WILDCARD = "*"


@dataclass(frozen=True)
class Recording:
    """One recorded tool result."""

    file: str
    """The file's name in its case folder."""
    toolset: str
    tool: str
    match_params: dict[str, Any] | None
    status: str = "success"
    error: str | None = None
    command: str | None = None
    output: str = ""
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def keys(self) -> set[str]:
        return set(self.match_params or {})


def _json_line(line: str, path: Path, what: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: line {1 if what == 'header' else 2} is not JSON ({exc.msg})",
            hint="a recording starts with a JSON header line, then a JSON metadata line, then the output",
        ) from None
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: the {what} line must be a JSON object")
    return value


def is_recording(path: Path) -> bool:
    """Whether ``path`` looks like a recording: a ``.txt`` file whose first line is a JSON object
    naming a ``tool_name`` (other ``.txt`` files of a case folder are left alone)."""
    if path.suffix != ".txt" or not path.is_file():
        return False
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            first = fh.readline()
    except OSError:
        return False
    try:
        head = json.loads(first)
    except json.JSONDecodeError:
        return False
    return isinstance(head, dict) and isinstance(head.get("tool_name"), str)


def read_recording(path: Path) -> Recording:
    """Parse one recording file; a malformed one is a :class:`ConfigError` naming the file."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"cannot read recording {path}: {exc.strerror}") from exc
    head, _, rest = text.partition("\n")
    meta_line, _, output = rest.partition("\n")
    header = _json_line(head, path, "header")
    meta = _json_line(meta_line, path, "metadata") if meta_line.strip() else {}
    tool = header.get("tool_name")
    if not isinstance(tool, str) or not tool:
        raise ConfigError(f"{path}: the header names no tool_name")
    match = header.get("match_params")
    if match is not None and not isinstance(match, dict):
        raise ConfigError(f"{path}: match_params must be an object or null")
    status = str(meta.get("status") or "success")
    if status not in ("success", "error", "no_data"):
        raise ConfigError(f"{path}: unknown status {status!r}", hint="success, error or no_data")
    # Some recordings keep the output in the metadata's ``data`` instead of after it.
    data = meta.get("data")
    if not output.strip() and isinstance(data, str):
        output = data
    params = meta.get("params")
    return Recording(
        file=path.name,
        toolset=str(header.get("toolset_name") or ""),
        tool=tool,
        match_params=match,
        status=status,
        error=meta.get("error") if isinstance(meta.get("error"), str) else None,
        command=meta.get("invocation") if isinstance(meta.get("invocation"), str) else None,
        output=output,
        params=params if isinstance(params, dict) else {},
    )


def read_recordings(folder: Path) -> list[Recording]:
    """Every recording in ``folder`` (not its subfolders), in file-name order: the order decides
    which of two recordings with the same ``match_params`` answers, as upstream."""
    return [read_recording(p) for p in sorted(folder.iterdir()) if is_recording(p)]


def same_value(recorded: Any, given: Any) -> bool:
    """Equal values, ``"*"`` matching anything; ``100`` and ``"100"`` are the same (a value that
    went through a template or a command line is a string)."""
    if recorded in (WILDCARD, given):
        return True
    if isinstance(recorded, bool) or isinstance(given, bool):
        return False
    return str(recorded) == str(given)


def upstream_match(recording: Recording, params: Mapping[str, Any]) -> bool:
    """HolmesGPT's rule: every ``match_params`` key present in ``params`` with an equal value."""
    if not recording.match_params:
        return True
    return all(k in params and same_value(v, params[k]) for k, v in recording.match_params.items())
