"""The run's progress as the CLI prints it (``cli/render.py``)."""

from __future__ import annotations

import pytest

from devops_agent.cli.render import ProgressRenderer
from devops_agent.events import PlanProposed


@pytest.mark.parametrize(
    "plan",
    [None, {"goal": "find the cause", "steps": [{"intent": "read logs"}, {"intent": "read metrics"}]}],
    ids=["runbook plan", "model plan"],
)
def test_a_plan_sets_the_step_count_the_progress_line_shows(plan: dict[str, object] | None) -> None:
    renderer = ProgressRenderer(stream_tokens=False, quiet=True)
    renderer.handle(PlanProposed(session_id="s", run_id="r", steps=["read logs", "read metrics"], plan=plan))
    assert renderer.steps_total == 2
