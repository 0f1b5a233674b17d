"""The triage runner: a Jira ticket → its CI builds → failure signatures → a report.

Results of a session's earlier triage calls are reused (:class:`TriageCache`, errors never
cached); the caches of the sessions used least recently are dropped beyond ``max_sessions``.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from devops_agent.agent.runners.base import RunOutcome, RunScope
from devops_agent.agent.runners.offline import keep_exchange, offline_caller
from devops_agent.events import RunStarted
from devops_agent.runbooks.triage import NAME as TRIAGE
from devops_agent.runbooks.triage import TriageCache, render_triage_markdown, run_triage


@dataclass
class TriageCaches:
    """One :class:`TriageCache` per session, the least recently used dropped beyond ``max_sessions``."""

    max_sessions: int = 64
    _caches: OrderedDict[str, TriageCache] = field(default_factory=OrderedDict)

    def for_session(self, session_id: str) -> TriageCache:
        cache = self._caches.pop(session_id, None) or TriageCache()
        self._caches[session_id] = cache
        while len(self._caches) > self.max_sessions:
            self._caches.popitem(last=False)
        return cache

    def __len__(self) -> int:
        return len(self._caches)


@dataclass
class TriageRunner:
    """Triages the ticket ``ticket`` (a key, a URL, or text holding one)."""

    ticket: str
    caches: TriageCaches
    name: str = TRIAGE

    async def run(self, scope: RunScope) -> RunOutcome:
        assert scope.prompt is not None, "triage answers a question; it never pauses"
        scope.emit(
            RunStarted(**scope.ids, prompt=scope.prompt, mode=scope.mode, path="runbook", runbooks=[TRIAGE])
        )
        report = await run_triage(
            self.ticket,
            offline_caller(scope),
            scope.notify,
            max_parallel=max(8, scope.settings.runbooks.max_parallel),
            cache=self.caches.for_session(scope.session.id),
            session_id=scope.session.id,
            run_id=scope.run_id,
        )
        markdown = render_triage_markdown(report)
        keep_exchange(scope, scope.prompt, markdown)
        return RunOutcome("completed", output=markdown, report=report.model_dump(mode="json"))
