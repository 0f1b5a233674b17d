"""``devops-agent audit`` filters: a filter that cannot match anything is an error, not an empty
table that reads as "nothing ran". The real CLI in a subprocess, on a real SQLite store."""

from __future__ import annotations

from pathlib import Path

import pytest

from devops_agent.config import Settings
from devops_agent.store import AuditRecord, Store
from fixtures_cli import assert_one_line_error, cli

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("--outcome", "bogus"), ("--outcome 'bogus' is not an outcome", "use one of: executed, failed")),
        (("--since", "-2h"), ("--since -2h: give how far back without a sign", "--since 2h")),
        (("--since", "2030-01-01"), ("--since 2030-01-01 is in the future", "a time in the past")),
    ],
    ids=["unknown-outcome", "negative-since", "future-since"],
)
def test_a_filter_that_cannot_match_is_refused_in_one_line(
    args: tuple[str, ...], needles: tuple[str, ...], isolated_home: Path
) -> None:
    with Store.from_settings(Settings()) as store:
        store.record_audit(AuditRecord("shell", "ask", "allow", "executed", command="ls"))
    assert_one_line_error(cli("audit", *args), 2, *needles)
    assert_one_line_error(cli("audit", "--json", *args), 2, needles[0])
    listed = cli("audit", "--since", "2h", "--outcome", "executed", "--json")
    assert listed.returncode == 0, listed.stderr
    assert '"tool": "shell"' in listed.stdout
