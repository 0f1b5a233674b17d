"""Fast/smart model routing: which model does which task, and what each one did and cost.

``model.fast`` (optional) does routing (which runbook or specialist), argument extraction,
summaries and other structured tasks; ``model.smart`` (default: ``model.name``) reasons and takes
what the fast one could not do (escalation, :mod:`.structured`). Either may be absent: every task
then goes to the one there is. :class:`ModelRouter` hands out a :class:`Route` per task and keeps
a ledger of every request it made — task, model, outcome, the response with its usage — so a run
can say which model did what and split the cost (:meth:`ModelRouter.usage`).

This module picks models and keeps accounts; it does not prompt them (:mod:`.structured` does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model

from devops_agent.agent.models import model_profile, provider_of, resolve_model
from devops_agent.agent.usage import usage_of
from devops_agent.config.settings import ModelSettings
from devops_agent.errors import ConfigError
from devops_agent.policies.context.profiles import ModelProfile

Task = Literal["route", "extract", "summarize", "classify", "reason", "critique"]
Role = Literal["fast", "smart"]
FAST_TASKS: frozenset[str] = frozenset({"route", "extract", "summarize", "classify"})


@dataclass(frozen=True)
class Route:
    """One model as the router hands it out."""

    role: Role
    name: str
    model: Model
    profile: ModelProfile


@dataclass
class LedgerEntry:
    """One request a routed model answered."""

    task: str
    role: Role
    model: str
    outcome: str
    """``ok``, ``invalid`` (the answer failed validation), ``error`` (the request failed)."""
    response: ModelResponse | None = None
    profile: ModelProfile | None = None


@dataclass
class ModelRouter:
    """Routes tasks to the fast or the smart model and keeps the ledger."""

    smart: Route | None
    fast: Route | None = None
    ledger: list[LedgerEntry] = field(default_factory=list)

    @classmethod
    def from_settings(
        cls,
        settings: ModelSettings,
        *,
        smart: Model | None = None,
        fast: Model | None = None,
        smart_name: str | None = None,
        fast_name: str | None = None,
    ) -> ModelRouter:
        """The router of ``settings``; a model passed in (a scripted one, in tests) is used instead
        of resolving its name."""
        smart_name = smart_name or settings.smart or settings.name
        fast_name = fast_name or settings.fast
        return cls(
            smart=_route("smart", settings, smart_name, smart),
            fast=_route("fast", settings, fast_name, fast),
        )

    def route(self, task: Task | str) -> Route:
        """The model for ``task``: the fast one for fast tasks when there is one, else the smart one."""
        first, second = (self.fast, self.smart) if task in FAST_TASKS else (self.smart, self.fast)
        chosen = first or second
        if chosen is None:
            raise ConfigError(
                f"no model for the {task} task", hint="set model.name (or model.smart / model.fast)"
            )
        return chosen

    def escalation(self, route: Route) -> Route | None:
        """Where a task goes when ``route``'s model could not do it: from fast to smart, once."""
        if route.role == "fast" and self.smart is not None and self.smart.name != route.name:
            return self.smart
        return None

    def record(self, task: str, route: Route, outcome: str, response: ModelResponse | None) -> None:
        self.ledger.append(LedgerEntry(task, route.role, route.name, outcome, response, route.profile))

    def responses(self) -> list[ModelMessage]:
        """Every response the routed models gave (for the run's usage)."""
        return [e.response for e in self.ledger if e.response is not None]

    def answers(self, role: Role | None = None) -> list[tuple[str, ModelResponse, ModelProfile | None]]:
        """``(model, response, profile)`` of every answer in the ledger (of one role)."""
        return [
            (e.model, e.response, e.profile)
            for e in self.ledger
            if e.response is not None and (role is None or e.role == role)
        ]

    def usage(self) -> dict[str, Any]:
        """Usage and cost of the ledger, split ``by_model`` and ``by_role``, and what each did."""
        out = usage_of(self.answers())
        by_role = {role: usage_of(mine) for role in ("fast", "smart") if (mine := self.answers(role))}
        out["by_role"] = by_role
        out["tasks"] = [
            {"task": e.task, "role": e.role, "model": e.model, "outcome": e.outcome} for e in self.ledger
        ]
        return out


def _route(role: Role, settings: ModelSettings, name: str | None, model: Model | None) -> Route | None:
    if model is None and name is None:
        return None
    if model is None:
        assert name is not None
        # A model of another provider than model.name's does not get its base URL or key.
        own = provider_of(name) == provider_of(settings.name or "")
        resolved = resolve_model(
            settings.model_copy(
                update={"name": name} if own else {"name": name, "base_url": None, "api_key": None}
            )
        )
        if resolved is None:
            return None
        model = resolved
    label = name or model.model_name
    return Route(role, label, model, model_profile(settings, label))
