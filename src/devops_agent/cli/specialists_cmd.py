"""``devops-agent specialists``: the specialist agents a model run can delegate to.

Lists each definition as it resolves here: what it is for, the tools it would get among those
installed and enabled (a specialist with none is not offered to the orchestrator), its MCP
profiles and where it was defined (shipped, a plugin, ``agent.specialist_dirs``). It runs no model.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.text import Text

from devops_agent.cli.context import out, state
from devops_agent.cli.render import folding_table


def specialists(
    ctx: typer.Context, json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False
) -> None:
    """The specialist agents a model run can delegate to, with the tools each gets here.

    Add one with a YAML file in a folder of agent.specialist_dirs, or from a plugin's register
    function (registry.add_specialist_dir / add_specialist); see docs/reasoning.md.
    """
    from devops_agent.agent.reasoning.specialists import load_specialists
    from devops_agent.agent.reasoning.worktools import WORK_TOOLS
    from devops_agent.tools.registry import build_catalog, default_registry

    settings = state(ctx).settings
    registry = default_registry()
    catalog = build_catalog(settings, registry)
    rows: list[dict[str, Any]] = [
        {
            "name": s.name,
            "description": s.description.strip(),
            "tools": s.tool_names(catalog, WORK_TOOLS),
            "mcp_profiles": s.mcp_profiles,
            "source": s.source,
        }
        for s in load_specialists(settings, registry).values()
    ]
    if json_out:
        out.print_json(json.dumps(rows))
        return
    table = folding_table("specialist", "for", "tools here", "MCP profiles", "defined in")
    for r in rows:
        tools = ", ".join(r["tools"]) or "none (not offered)"
        profiles = ", ".join(r["mcp_profiles"])
        table.add_row(r["name"], Text(r["description"]), Text(tools), profiles, Text(r["source"]))
    out.print(table)
