"""How safe an MCP tool is: its annotations mapped to our :class:`ToolSpec`, config only safer.

MCP servers describe their tools with hints (``readOnlyHint``, ``destructiveHint``,
``idempotentHint``, ``openWorldHint``). Modes and approvals are decided from the ``ToolSpec``, so
the mapping is the whole of an MCP tool's safety:

* ``readOnlyHint: true`` → read-only (runs in ask mode), unless ``openWorldHint: true`` says it
  reaches outside systems: a tool that sends a query to the open world can send data out, which
  ask mode never allows; it then needs approval like a change;
* anything else changes things; by MCP's own defaults (a hint left out means the worst case) it is
  destructive — approval with CONFIRM — unless ``destructiveHint: false`` says it only adds;
* a tool with no annotations at all is therefore not read-only, and destructive.

The server's config can only make a rating safer (``mutating``, ``destructive`` globs), with one
exception the operator states explicitly: ``read_only`` globs rate tools read-only that are not
annotated so, but never a tool the server itself says writes (``readOnlyHint: false`` or
``destructiveHint: true``).

This module is pure: no I/O, no server.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from devops_agent.config.mcp import McpServerSettings
from devops_agent.tools.base import Risk, ToolSpec

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


@dataclass(frozen=True)
class Rating:
    """A tool's spec and, in words, why it got it (``devops-agent mcp tools`` shows it)."""

    spec: ToolSpec
    why: str

    @property
    def label(self) -> str:
        """``read-only``, ``changes`` or ``destructive``: how the gate treats the tool."""
        if self.spec.read_only:
            return "read-only"
        return "destructive" if self.spec.risk == "destructive" else "changes"


def matches(name: str, globs: Iterable[str]) -> bool:
    """Whether tool ``name`` (the server's own name) matches one of ``globs``."""
    return any(fnmatch.fnmatchcase(name, g) for g in globs)


def hints_of(annotations: Mapping[str, Any] | None) -> dict[str, bool]:
    """The safety hints a tool declares, by their MCP names; hints left out are absent."""
    if not annotations:
        return {}
    return {h: annotations[h] for h in HINTS if isinstance(annotations.get(h), bool)}


def _from_hints(hints: Mapping[str, bool]) -> tuple[bool, Risk, str]:
    if not hints:
        return False, "destructive", "no annotations: by MCP's defaults it may change and delete things"
    if hints.get("readOnlyHint") is True:
        if hints.get("openWorldHint") is True:
            return False, "sensitive", "annotated read-only but open-world: it may send data out"
        return True, "safe", "annotated read-only"
    if hints.get("destructiveHint") is False:
        return False, "sensitive", "annotated as changing things, not destructively"
    said = "annotated destructive" if hints.get("destructiveHint") is True else "annotated as changing things"
    return False, "destructive", said if "destructiveHint" in hints else f"{said} (destructive by default)"


def rate(server: str, config: McpServerSettings, tool: str, annotations: Mapping[str, Any] | None) -> Rating:
    """The rating of ``server``'s tool ``tool`` (its own name) from its annotations and the config."""
    hints = hints_of(annotations)
    read_only, risk, why = _from_hints(hints)
    if matches(tool, config.destructive):
        read_only, risk, why = False, "destructive", "listed destructive in the config"
    elif matches(tool, config.mutating):
        read_only, risk = False, "destructive" if risk == "destructive" else "sensitive"
        why = "listed as changing things in the config"
    elif matches(tool, config.read_only) and not read_only:
        if hints.get("readOnlyHint") is False or hints.get("destructiveHint") is True:
            why += "; the config lists it read-only, but the server says it writes: not read-only"
        else:
            read_only, risk, why = True, "safe", f"listed read-only in the config ({why})"
    return Rating(ToolSpec(category=f"mcp:{server}", read_only=read_only, risk=risk), why)
