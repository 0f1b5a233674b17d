"""What travels with a queued run besides the run itself: who asked, why, and where to report."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Literal

Source = Literal["user", "alert", "schedule"]


@dataclass(frozen=True)
class QueueMeta:
    """A queued run's origin and routing."""

    user: str = "local"
    source: Source = "user"
    priority: int = 50
    """Lower runs first: a paging alert is 1, a scheduled check 10, a person's question 50."""
    dedupe_key: str | None = None
    notify: list[str] = field(default_factory=list)
    """Names of ``[[notify]]`` sinks the result goes to."""
    label: str | None = None
    """What started it, for people: the alert group, the schedule's name."""

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> QueueMeta:
        return cls(**json.loads(text))
