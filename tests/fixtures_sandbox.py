"""The read-only sandbox (bubblewrap) for tests that run real confined processes.

* ``sandbox_ready``: skips the test when bwrap cannot start a sandbox here (not installed, not
  Linux, user namespaces refused), with the reason; with ``DEVOPS_AGENT_REQUIRE_SANDBOX=1`` (CI,
  where ``scripts/test.sh`` installs it through ``scripts/sandbox.sh``) it fails instead.
"""

from __future__ import annotations

import os

import pytest

from devops_agent.tools.sandbox import Availability, availability

REQUIRE_SANDBOX_ENV = "DEVOPS_AGENT_REQUIRE_SANDBOX"


@pytest.fixture
def sandbox_ready() -> Availability:
    found = availability("auto")
    if not found.active:
        if os.environ.get(REQUIRE_SANDBOX_ENV) == "1":
            pytest.fail(f"the sandbox is required ({REQUIRE_SANDBOX_ENV}=1) but inactive: {found.detail}")
        pytest.skip(f"the read-only sandbox cannot run here: {found.detail}")
    return found
