"""Helpers of the web page's browser tests: a service with the scripted model, and the page's
common steps (sign in, ask, wait for a run) done the way a person does them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from api_harness import Service, registry, running_service, scripted
from devops_agent.config import Settings
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.registry import ToolRegistry
from fixtures_db import sqlite_url

ROOT = Path(__file__).resolve().parent.parent.parent
SCREENSHOTS = Path(os.environ.get("DEVOPS_AGENT_WEB_SCREENSHOTS") or ROOT / "build" / "web-screenshots")
"""Where screenshots of the main states go: the folder CI keeps as an artifact
(``docs/images/web-*.png`` are copies of them)."""
VIEWPORT = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

HOSTILE_LINE = (
    'ERROR upstream said <script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
    " \x1b[31mRED\x1b[0m \x1b]0;owned\x07 \u202eevil"
)
"""A log line a hostile upstream could write: markup that would run if inserted as HTML, colour
and title escapes a terminal would act on, a bidi override that reorders what is shown."""


def web_registry() -> ToolRegistry:
    """The service tests' tools plus one that returns :data:`HOSTILE_LINE` as a log line."""
    reg = registry()

    def build(settings: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("weblogs", "a log source for the web page tests")

        @ts.tool(read_only=True)
        def tail_log(name: str) -> ToolResult:
            """The tail of a log: more than the model may see (so it is capped), ending in the hostile line."""
            filler = [f"INFO request {i} served in {i % 97} ms" for i in range(600)]
            return ToolResult.ok({"log": name, "lines": [*filler, HOSTILE_LINE]})

        return ts

    reg.add_toolset("weblogs", build)
    return reg


@contextmanager
def web_service(
    tmp_path: Path,
    *,
    turns: list[dict[str, Any]] | None = None,
    runs: list[list[dict[str, Any]]] | None = None,
    roots: list[Path] | None = None,
    server: dict[str, Any] | None = None,
    registry_: ToolRegistry | None = None,
    extra: dict[str, Any] | None = None,
) -> Iterator[Service]:
    """The service on SQLite with the scripted model playing ``turns`` (or ``runs``; neither: no
    model, runs take the offline runbook path); ``roots``:
    the directories its files and logs tools may read; ``server``: ``[server]`` settings;
    ``extra``: other settings sections (``prometheus``, say)."""
    url = sqlite_url(tmp_path)
    fields: dict[str, Any] = {"database_url": url}
    if roots is not None:
        fields["files"] = {"roots": roots}
    if server is not None:
        fields["server"] = server
    fields.update(extra or {})
    settings = Settings(**fields)
    with running_service(
        url,
        model=None if turns is None and runs is None else scripted(runs=runs, turns=turns),
        settings=settings,
        registry_=registry_ or web_registry(),
    ) as svc:
        yield svc


def sign_in(pg: Any, svc: Service, user: str) -> None:
    """Open the page and sign in with ``user``'s token; wait until the WebSocket is ready."""
    pg.goto(svc.url + "/")
    pg.fill("#token", svc.tokens[user])
    pg.click("#signin-form button[type=submit]")
    pg.wait_for_selector("#app:not([hidden])")
    wait_connected(pg)


def wait_connected(pg: Any) -> None:
    pg.wait_for_selector('#conn[data-state="connected"]')


def ask(pg: Any, question: str, mode: str | None = None) -> None:
    if mode is not None:
        pg.select_option("#mode", mode)
    pg.fill("#question", question)
    pg.press("#question", "Enter")


def wait_run(pg: Any, status: str, nth: int = 1, timeout: float = 30) -> Any:
    """The ``nth`` run of the conversation once it has ``status``."""
    locator = pg.locator(f'article.run[data-status="{status}"]').nth(nth - 1)
    locator.wait_for(timeout=timeout * 1000)
    return locator


def session_id(pg: Any) -> str:
    sid: str = pg.evaluate("window.__devopsAgent.state.sessionId")
    return sid


def screenshot(pg: Any, name: str) -> Path:
    """Save a screenshot of the page as ``NAME.png`` in :data:`SCREENSHOTS`."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    pg.screenshot(path=str(path))
    return path


AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
BLOCKING = {"serious", "critical"}


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """Run axe-core on the page as it is; the violations rated serious or critical."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        # Evaluated through the DevTools protocol: the page's CSP (no inline script) stays on.
        page.evaluate(AXE.read_text() + "\n;undefined")
    result = page.evaluate(
        """async () => {
             const r = await axe.run(document, {resultTypes: ['violations']});
             return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                             nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)}));
           }"""
    )
    return [v for v in result if v["impact"] in BLOCKING]
