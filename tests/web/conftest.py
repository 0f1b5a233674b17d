"""A real headless Chromium for the web page's tests, driven by Playwright's Python API.

The browser is Debian's ``chromium`` (``scripts/chromium.sh`` installs it when missing; Playwright's
own browser download is never used), launched once for all the tests of this folder (``package``
scope: Playwright's sync API marks its event loop as running in the main thread between calls,
which would break ``asyncio.run`` in any test that ran while it is up, so it stops when this
folder's tests are done). Each test gets a fresh
browser context (its own sessionStorage and cookies) at 1280×800. Without a browser the tests
skip with the reason, unless ``DEVOPS_AGENT_REQUIRE_BROWSER=1`` (CI), where they fail.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from .web_helpers import ROOT, VIEWPORT

REQUIRE_BROWSER_ENV = "DEVOPS_AGENT_REQUIRE_BROWSER"


def _unavailable(reason: str) -> None:
    if os.environ.get(REQUIRE_BROWSER_ENV) == "1":
        pytest.fail(f"a browser is required ({REQUIRE_BROWSER_ENV}=1) but {reason}")
    pytest.skip(f"no browser for the web page tests: {reason}")


@pytest.fixture(scope="package")
def chromium_path() -> str:
    """The path of a working chromium (installed by scripts/chromium.sh when missing)."""
    try:
        done = subprocess.run(
            ["bash", str(ROOT / "scripts" / "chromium.sh")],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        _unavailable(f"scripts/chromium.sh did not run: {exc}")
    if done.returncode != 0 or not done.stdout.strip():
        _unavailable(f"scripts/chromium.sh failed: {done.stderr.strip()[-500:]}")
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="package")
def browser(chromium_path: str) -> Iterator[Any]:
    """One headless Chromium for all the tests of this folder."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (scripts/setup.sh --dev installs it)")
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=chromium_path, args=["--no-sandbox", "--disable-gpu"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A page in a fresh context (own sessionStorage) at 1280×800; console errors are collected
    in ``page.console_errors`` and page errors (uncaught exceptions) fail the test."""
    context = browser.new_context(viewport=VIEWPORT)
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    errors: list[str] = []
    crashes: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: crashes.append(str(e)))
    pg.console_errors = errors
    try:
        yield pg
        assert not crashes, f"uncaught errors in the page: {crashes}"
    finally:
        context.close()
