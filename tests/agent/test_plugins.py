"""A third-party plugin, installed for real (a distribution's metadata with its entry point on
``sys.path``), adds through the one hook a toolset, a health check, an analyzer and a folder of
runbooks; doctor, the runbook list and an offline run all see them, as they see built-in ones."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from devops_agent.agent.doctor import check_integrations, run_checks
from devops_agent.agent.plugins import available_runbooks
from devops_agent.agent.session import SessionService
from devops_agent.config import LoadedSettings, Settings
from devops_agent.runbooks import ANALYZERS
from devops_agent.store import Store
from devops_agent.tools.registry import default_registry

PLUGIN = '''
from pathlib import Path

from devops_agent.report import Finding
from devops_agent.tools.base import ToolResult, ToolsetBuilder, tool


@tool(category="inventory", read_only=True)
def inventory_host(name: str) -> ToolResult:
    """Look up a host in the CMDB: owner and role.

    Args:
        name: the host name.
    """
    return ToolResult.ok({"name": name, "owner": "team-payments", "role": "db"})


def build(settings):
    return ToolsetBuilder("inventory", "CMDB lookups").add(inventory_host)


def check(settings):
    return False, "inventory: the CMDB at https://cmdb.invalid did not answer"


def owner(evidence, params, inputs):
    host = next(iter(evidence.values())).data
    return [Finding(severity="info", title=f"{host['name']} belongs to {host['owner']}")]


def register(registry):
    registry.add_toolset("inventory", build, "CMDB lookups")
    registry.add_check("inventory", check)
    registry.add_analyzer("inventory_owner", owner)
    registry.add_runbook_dir(Path(__file__).parent / "inventory_runbooks")
'''

RUNBOOK = """
name: host-owner
title: Who owns the host
description: The host's owner from the CMDB.
keywords: [owner, cmdb]
inputs:
  host:
    description: the host name
    default: db-1
steps:
  - id: lookup
    tool: inventory_host
    args: {name: "{{ host }}"}
analyzers:
  - use: inventory_owner
    on: [lookup]
"""


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``inventory_plugin`` installed the way pip leaves a package: its module and a dist-info
    folder whose entry_points.txt names ``register`` in the ``devops_agent.toolsets`` group."""
    site = tmp_path / "site"
    (site / "inventory_runbooks").mkdir(parents=True)
    (site / "inventory_plugin.py").write_text(PLUGIN)
    (site / "inventory_runbooks" / "host-owner.yaml").write_text(RUNBOOK)
    info = site / "inventory_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: inventory-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[devops_agent.toolsets]\ninventory = inventory_plugin:register\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "inventory_plugin", raising=False)
    yield site
    ANALYZERS.pop("inventory_owner", None)  # the engine's table outlives the test


def test_the_plugin_registers_through_the_same_hook_as_built_ins(plugin: Path) -> None:
    registry = default_registry()
    assert {"inventory", "jira", "kubernetes"} <= set(registry.toolsets)
    assert {"inventory", "jira", "kubernetes", "prometheus"} <= set(registry.checks)
    assert set(registry.analyzers) == {"inventory_owner"}
    assert registry.runbook_dirs == [plugin / "inventory_runbooks"]


def test_doctor_runs_the_plugins_check_and_lists_its_toolset(plugin: Path) -> None:
    checks = {c.name: c for c in run_checks(LoadedSettings(Settings()))}
    assert checks["toolset inventory"].level == "ok"
    assert checks["toolset inventory"].detail == "1 tools"
    assert checks["inventory"].level == "fail"
    assert checks["inventory"].detail == "inventory: the CMDB at https://cmdb.invalid did not answer"


def test_a_check_that_raises_is_reported_not_propagated(plugin: Path) -> None:
    registry = default_registry()

    def broken(_settings: Settings) -> tuple[bool, str]:
        raise RuntimeError("boom")

    registry.add_check("broken", broken)
    checks = {c.name: c for c in check_integrations(LoadedSettings(Settings()), registry)}
    assert checks["broken"].level == "fail"
    assert "RuntimeError: boom" in checks["broken"].detail


def test_the_plugins_runbook_and_analyzer_run_offline(plugin: Path, tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    assert "host-owner" in [r.name for r in available_runbooks(settings)]
    with Store.from_settings(settings) as store:
        service = SessionService(settings, store, use_configured_model=False)
        _events, final = asyncio.run(
            service.run("who owns db-7?", inputs={"runbooks": ["host-owner"], "host": "db-7"})
        )
    assert final.report is not None
    assert [f["title"] for f in final.report["findings"]] == ["db-7 belongs to team-payments"]


def test_a_users_runbook_overrides_the_plugins(plugin: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "host-owner.yaml").write_text(textwrap.dedent(RUNBOOK).replace("Who owns the host", "Mine"))
    settings = Settings(runbooks={"extra_dirs": [mine]})
    (book,) = [r for r in available_runbooks(settings) if r.name == "host-owner"]
    assert book.title == "Mine"
