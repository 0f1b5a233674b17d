"""A published per-case baseline (HolmesGPT's results table) and which of its columns a model is.

The table is a CSV: ``eval_id`` and one column per model, each cell ``passes/runs`` (``1/1``) or
``-`` (not run). A baseline file next to the cases (``baseline_results*.csv`` in the cases folder
or its parent) is found on its own; ``--baseline FILE`` names another.

Column names are the upstream run's model ids (``gpt-4.1``,
``eu.anthropic.claude-sonnet-4-20250514-v1:0``, ``novita/deepseek/deepseek-v3.1-terminus``);
:func:`column_for` matches ours (``openai:gpt-4.1``, ``anthropic:claude-sonnet-4-20250514``) by
the model's own name: provider, region and version suffix aside, equal, or equal but for a date
suffix — never a prefix (``gpt-4o-mini`` is not ``gpt-4o``). This module reads a table; it runs
nothing.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from devops_agent.errors import ConfigError

_VERSION = re.compile(r"-v\d+(?::\d+)?$")
_DATE = re.compile(r"^(\d{8}|\d{4}-\d{2}-\d{2})$")


@dataclass(frozen=True)
class Baseline:
    """Per-case results of one published run: ``cells[case][column]`` = ``(passes, runs)``."""

    source: str
    columns: list[str]
    cells: dict[str, dict[str, tuple[int, int]]]

    def for_column(self, column: str) -> dict[str, tuple[int, int]]:
        return {case: cols[column] for case, cols in self.cells.items() if column in cols}


def load_baseline(path: Path) -> Baseline:
    """Read a baseline CSV; a malformed one is a :class:`ConfigError` naming the row."""
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
    except OSError as exc:
        raise ConfigError(f"cannot read baseline {path}: {exc.strerror}") from exc
    if not rows or not rows[0] or rows[0][0] != "eval_id":
        raise ConfigError(f"{path}: a baseline starts with a header row: eval_id,<model>,…")
    columns = rows[0][1:]
    cells: dict[str, dict[str, tuple[int, int]]] = {}
    for n, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        case = row[0]
        for column, cell in zip(columns, row[1:], strict=False):
            cell = cell.strip()
            if cell in ("", "-"):
                continue
            passes, sep, runs = cell.partition("/")
            if not sep or not passes.isdigit() or not runs.isdigit():
                raise ConfigError(f"{path}:{n}: {cell!r} is not passes/runs (e.g. 1/1) or -")
            cells.setdefault(case, {})[column] = (int(passes), int(runs))
    return Baseline(str(path), columns, cells)


def find_baseline(cases_dir: Path) -> Path | None:
    """A ``baseline_results*.csv`` in the cases folder or its parent, if there is exactly one."""
    for folder in (cases_dir, cases_dir.parent):
        found = sorted(folder.glob("baseline_results*.csv"))
        if len(found) == 1:
            return found[0]
    return None


def model_key(name: str) -> str:
    """The model's own name: ``openai:gpt-4.1`` → ``gpt-4.1``; ``eu.anthropic.claude-sonnet-4-2025
    0514-v1:0`` → ``claude-sonnet-4-20250514``; ``novita/qwen/qwen3-x`` → ``qwen3-x``."""
    key = name.strip().lower()
    key = _VERSION.sub("", key)
    if ":" in key:
        key = key.split(":", 1)[1]
    key = key.rsplit("/", 1)[-1]
    for vendor in ("anthropic.", "meta.", "mistral.", "amazon.", "cohere."):
        if vendor in key:
            key = key.split(vendor, 1)[1]
    return key


def column_for(model: str, columns: list[str]) -> str | None:
    """The baseline column that is ``model``, or ``None``."""
    ours = model_key(model)
    for column in columns:
        theirs = model_key(column)
        if ours == theirs:
            return column
        longer, shorter = (ours, theirs) if len(ours) > len(theirs) else (theirs, ours)
        if longer.startswith(shorter + "-") and _DATE.match(longer[len(shorter) + 1 :]):
            return column
    return None
