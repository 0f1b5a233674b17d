"""The planner: a model run that plans with the user, delegates to specialists and verifies its
answer before returning it.

One run of the orchestrator (a pydantic-ai agent over the run's pipeline, on the shared
:class:`~devops_agent.agent.runners.loop.ModelLoop`):

1. **plan** — with ``--plan auto|always`` the orchestrator proposes a plan
   (:mod:`~devops_agent.agent.reasoning.desk`); one that needs a person pauses the run durably,
   and the decision continues it as a new run (approved, revised after feedback, or rejected);
2. **act** — its tools, the runbooks and analyzers as tools, and ``ask_NAME`` delegations to
   specialists (:mod:`~devops_agent.agent.reasoning.delegation`), each step of the approved plan
   an event; calls that change things still wait for their own approval;
3. **verify** — the answer is structured (:class:`ModelAnswer`); the deterministic critic checks
   every finding against the calls it cites, then a model critic; problems and missing evidence
   send the orchestrator back (a re-plan) within ``agent.max_replans``; what is left unsupported
   is removed or downgraded, and the report says what the critic changed.

With ``council`` in the run's inputs, several specialists answer the question at once and a
synthesizer reconciles them (:mod:`~devops_agent.agent.reasoning.council`), disagreements shown.
The run ends with the same :class:`~devops_agent.report.Report` as the runbooks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import AbstractToolset, Agent, DeferredToolRequests, DeferredToolResults
from pydantic_ai.capabilities import AbstractCapability, ProcessHistory
from pydantic_ai.models import Model
from pydantic_ai.usage import UsageLimits

from devops_agent.agent.approvals import PENDING_KEY, ApprovalDecision
from devops_agent.agent.models import request_settings
from devops_agent.agent.plugins import available_runbooks
from devops_agent.agent.reasoning.answer import ModelAnswer, Synthesis, orchestrator_checks, to_report
from devops_agent.agent.reasoning.council import (
    SYNTHESIZER,
    SYNTHESIZER_INSTRUCTIONS,
    disagreements_of,
    merge_disagreements,
    synthesis_checks,
    synthesis_prompt,
)
from devops_agent.agent.reasoning.critic import Issue, apply_issues, check_answer, describe
from devops_agent.agent.reasoning.delegation import Team
from devops_agent.agent.reasoning.desk import PROPOSE, PlanDesk
from devops_agent.agent.reasoning.instructions import orchestrator_instructions
from devops_agent.agent.reasoning.ledger import Ledger
from devops_agent.agent.reasoning.plan import ACTIVE_PLAN_KEY, PENDING_PLAN_KEY, plan_mode
from devops_agent.agent.reasoning.review import (
    CRITIC,
    CRITIC_INSTRUCTIONS,
    CriticVerdict,
    critic_prompt,
    unsupported,
)
from devops_agent.agent.reasoning.specialists import check_names, load_specialists
from devops_agent.agent.reasoning.structured import structured_agent
from devops_agent.agent.reasoning.worktools import work_tools
from devops_agent.agent.runners.base import RunOutcome, RunScope
from devops_agent.agent.runners.context import partial_report
from devops_agent.agent.runners.loop import ModelLoop, RunLimited, answer_once
from devops_agent.events import CouncilResult, CriticReview, Delegation, Replan, RunStarted
from devops_agent.policies.context.compaction import Pins
from devops_agent.privacy.guard import RESTORE_FAILED_NOTE
from devops_agent.report import CriticChange, CriticNotes, Disagreement, Gap, Report, render_markdown

REASONING_KEY = "reasoning"
"""``session.context_state`` key of a question's reasoning state across its runs (pauses)."""
ANSWERED_PLAN_KEY = "answered_plan"
"""The plan decision a run recorded (its run id, the plan it decided, the calls it denied): a
durable run replaying after a takeover finds the decision here, the pending plan being gone."""
CRITIC_REQUESTS = 3


@dataclass
class PlannerRunner:
    """Plans, delegates and verifies with ``model``."""

    model: Model
    model_name: str | None
    name: str = "planner"

    async def run(self, scope: RunScope) -> RunOutcome:
        scope.emit(
            RunStarted(
                **scope.ids,
                prompt=scope.prompt or "(plan or approvals answered)",
                mode=scope.mode,
                path="model",
                model=self.model_name,
            )
        )
        run = _PlannerRun(self, scope)
        try:
            return await run.go()
        except RunLimited as stop:  # a usage limit: what the run did so far, and which limit
            text, report = partial_report(scope, run.loop.new_messages, stop.limit, run.question)
            run.finish_limited()
            return RunOutcome("completed", output=text, report=report)


class _PlannerRun:
    """The state of one planner run."""

    def __init__(self, runner: PlannerRunner, scope: RunScope) -> None:
        self.runner, self.scope = runner, scope
        settings = scope.settings
        context = scope.store.get_session(scope.session.id).context_state
        if scope.prompt is not None:  # a new question: what an earlier one left is over
            self.state: dict[str, Any] = {
                "question": scope.prompt,
                "mode": plan_mode(scope.inputs.get("plan"), settings.agent.plan),
                "council": list(scope.inputs.get("council") or []),
                "replans": 0,
                "rounds": 0,
            }
            self._save(clear=(ACTIVE_PLAN_KEY, PENDING_PLAN_KEY, ANSWERED_PLAN_KEY))
        else:
            self.state = dict(
                context.get(REASONING_KEY) or {"question": scope.session.title, "mode": "never"}
            )
        self.question = str(self.state.get("question") or scope.session.title)
        self.pins = Pins()  # the approved plan and the findings so far, kept in every request
        self.loop = ModelLoop.open(scope, runner.model, runner.model_name, pins=self.pins)
        registry = scope.toolbox.catalog.registry
        self.tools = work_tools(scope, available_runbooks(settings, registry))
        self.ledger = Ledger()
        self.team = Team(
            scope,
            runner.model,
            runner.model_name,
            load_specialists(settings, registry),
            self.ledger,
            extra_tools=lambda: [self.tools.to_pydantic_ai()],
            extra_names=list(self.tools.entries),
        )
        self.loop.others = self.team.messages
        available = self.team.available()
        delegates = {s.delegate_tool: s.name for s in available.values()}
        self.desk = PlanDesk.open(scope, self.state.get("mode", "never"), self.state, delegates)
        self.team.on_event = lambda ev, agent: self.desk.on_event(ev, agent)
        self.available = available

    # -- the run -----------------------------------------------------------------------------------

    async def go(self) -> RunOutcome:
        scope = self.scope
        if self.state.get("council") and scope.prompt is not None:
            return await self._council(check_names(self.state["council"], self.available))
        deferred: DeferredToolResults | None = None
        if scope.plan_decision is not None:
            deferred = await self._plan_answered()
            if deferred is None:
                return self._rejected()
        elif scope.answers is not None:
            deferred = await answer_once(scope)  # once: a durable run may replay this
        agent = self._orchestrator()
        self._pin()
        output = await self.loop.turn(
            agent,
            scope.prompt,
            deferred=deferred,
            instructions=self.loop.instructions(),
            on_event=self.desk.on_event,
        )
        return await self._conclude(agent, output)

    def _orchestrator(self) -> Agent[Any, Any]:
        pipeline = self.loop.pipeline(extra=[self.tools.to_pydantic_ai()])
        own: list[AbstractToolset[Any]] = []
        if self.desk.mode != "never":
            own.append(self.desk.toolset(pipeline, self.available))
        if self.available:
            own.append(self.team.toolset().filtered(self.desk.offers))
        return structured_agent(
            self.runner.model,
            ModelAnswer,
            role="orchestrator",
            instructions=orchestrator_instructions(self.desk.mode, self.available, self.tools.entries),
            pipeline=pipeline.filtered(self.desk.offers),
            own_tools=own,
            capabilities=self.loop.capabilities(),
            checks=[orchestrator_checks],
            allow_text=True,
            deferred=True,
        )

    async def _conclude(self, agent: Agent[Any, Any], output: Any) -> RunOutcome:
        """Verify the answer (re-planning while the critic asks and the budget lasts), then report."""
        budget = self.scope.settings.agent.max_replans
        while True:
            if isinstance(output, DeferredToolRequests):
                return self._pause(output)
            if not isinstance(output, ModelAnswer):
                return self._finish_text(str(output))
            self.ledger.add_messages(self.loop.history)
            issues = check_answer(output, self.ledger, self.question)
            self._note_fixed(issues)
            self.state["rounds"] = int(self.state.get("rounds", 0)) + 1
            can_replan = int(self.state.get("replans", 0)) < budget
            self._review(
                "deterministic",
                issues,
                [],
                "replan" if issues and can_replan else ("applied" if issues else "accepted"),
            )
            if issues and can_replan:
                self.state["last_issues"] = [
                    [i.title, i.check, line] for i, line in zip(issues, describe(issues), strict=True)
                ]
                self._pin(output)
                output = await self._replan(
                    agent, describe(issues), "the deterministic checks found unsupported claims"
                )
                continue
            answer, changes = apply_issues(output, issues, self.ledger)
            verdict, error = await self._model_critic(answer)
            missing = verdict.missing_evidence if verdict is not None else []
            more = unsupported(verdict, answer) if verdict is not None else []
            if verdict is not None:
                replan = bool(missing) and int(self.state.get("replans", 0)) < budget
                action = "replan" if replan else ("applied" if more else "accepted")
                self._review("model", more, missing, action)
                if replan:
                    lines = [f"missing evidence: {m}" for m in missing] + describe(more)
                    self._pin(answer)
                    output = await self._replan(agent, lines, "the model critic asked for more evidence")
                    continue
            answer, later = apply_issues(answer, more, self.ledger)
            return self._finish(answer, [*changes, *later], missing, verdict is not None, error)

    async def _replan(self, agent: Agent[Any, Any], lines: list[str], reason: str) -> Any:
        number = int(self.state.get("replans", 0)) + 1
        self.state["replans"] = number
        budget = self.scope.settings.agent.max_replans
        self.scope.emit(Replan(**self.scope.ids, number=number, budget=budget, reason=reason))
        if self.desk.tracker is not None:
            self.desk.tracker.replanned(reason)
        self._save()
        feedback = (
            "A critic checked your answer against the tool outputs and found:\n"
            + "\n".join(f"- {line}" for line in lines)
            + "\nGather what is missing with your tools if needed, then fix or drop these findings "
            "(quote the output exactly, give numbers and times as it does, cite only calls that "
            "succeeded) and call final_result again."
        )
        self._pin()
        return await self.loop.turn(agent, feedback, on_event=self.desk.on_event)

    def _pin(self, answer: ModelAnswer | None = None) -> None:
        """What compaction must never drop: the approved plan, and the findings of the last answer."""
        if self.desk.tracker is not None:
            self.pins.plan = self.desk.tracker.plan.lines()
        if answer is not None:
            self.pins.findings = [f.title for f in answer.findings]

    def finish_limited(self) -> None:
        """A usage limit stopped the run: the question's reasoning state is over."""
        self._save(clear=(REASONING_KEY, ACTIVE_PLAN_KEY))

    def _note_fixed(self, issues: list[Issue]) -> None:
        """Issues of the round before a re-plan that this round no longer has were fixed by it."""
        before = self.state.pop("last_issues", None)
        if not before:
            return
        now = {(i.title, i.check) for i in issues}
        fixed = [line for title, check, line in before if (title, check) not in now]
        self.state["fixed"] = [*self.state.get("fixed", []), *fixed]

    def _review(self, stage: Any, issues: list[Issue], missing: list[str], action: Any) -> None:
        self.scope.emit(
            CriticReview(
                **self.scope.ids,
                stage=stage,
                round=int(self.state.get("rounds", 0)),
                issues=[i.as_dict() for i in issues],
                missing_evidence=missing,
                action=action,
            )
        )

    def _guarded(self) -> list[AbstractCapability[Any]]:
        """A tool-less agent's capabilities: every request it sends masked (by the run's guard)."""
        guard = self.loop.guard
        return [ProcessHistory(guard.process_history_async)] if guard is not None else []

    async def _side_agent(
        self, output: type[Any], role: str, instructions: str, prompt: str, checks: list[Any]
    ) -> Any:
        """Run a tool-less agent (critic, synthesizer) once; its usage is the run's."""
        agent = structured_agent(
            self.runner.model,
            output,
            role=role,
            instructions=instructions,
            capabilities=self._guarded(),
            checks=checks,
        )
        settings = self.scope.settings
        async with agent:
            result = await agent.run(
                prompt,
                deps=self.scope.deps,
                usage_limits=UsageLimits(request_limit=CRITIC_REQUESTS),
                model_settings=request_settings(settings.model),
            )
        self.team.messages.extend(result.all_messages())
        return result.output

    async def _model_critic(self, answer: ModelAnswer) -> tuple[CriticVerdict | None, str | None]:
        if not self.scope.settings.agent.model_critic or not answer.findings:
            return None, None
        try:
            verdict = await self._side_agent(
                CriticVerdict,
                CRITIC,
                CRITIC_INSTRUCTIONS,
                critic_prompt(self.question, answer, self.ledger),
                [],
            )
        except Exception as exc:  # the deterministic checks stand; the report says the critic failed
            return None, f"{type(exc).__name__}: {exc}"
        return verdict, None

    # -- council -----------------------------------------------------------------------------------

    async def _council(self, members: list[str]) -> RunOutcome:
        results = await self.team.council(members, self.question)
        ids = {**self.scope.ids, "agent": SYNTHESIZER}
        self.scope.emit(Delegation(**ids, phase="started", specialist=SYNTHESIZER, task=self.question))
        try:
            synthesis: Synthesis = await self._side_agent(
                Synthesis,
                SYNTHESIZER,
                SYNTHESIZER_INSTRUCTIONS,
                synthesis_prompt(self.question, results),
                [synthesis_checks],
            )
            status = "success"
        except Exception as exc:  # each member's findings still stand
            synthesis = Synthesis(
                summary=f"The synthesizer failed ({type(exc).__name__}: {exc}); "
                "the members' findings follow.",
                findings=[f for c in results if c.report for f in c.report.findings],
            )
            status = "error"
        self.scope.emit(
            Delegation(**ids, phase="finished", specialist=SYNTHESIZER, task=self.question, status=status)
        )
        disagreements = merge_disagreements(synthesis, disagreements_of(results))
        self.scope.emit(
            CouncilResult(
                **self.scope.ids, members=members, disagreements=[d.model_dump() for d in disagreements]
            )
        )
        issues = check_answer(synthesis, self.ledger, self.question)
        self.state["rounds"] = 1
        self._review("deterministic", issues, [], "applied" if issues else "accepted")
        answer, changes = apply_issues(synthesis, issues, self.ledger)
        verdict, error = await self._model_critic(answer)
        more = unsupported(verdict, answer) if verdict is not None else []
        if verdict is not None:
            self._review("model", more, verdict.missing_evidence, "applied" if more else "accepted")
        answer, later = apply_issues(answer, more, self.ledger)
        missing = verdict.missing_evidence if verdict is not None else []
        return self._finish(answer, [*changes, *later], missing, verdict is not None, error, disagreements)

    # -- ends ----------------------------------------------------------------------------------------

    async def _plan_answered(self) -> DeferredToolResults | None:
        """Record the decision on the pending plan, once: a durable run replaying after a takeover
        finds what it recorded (``ANSWERED_PLAN_KEY``) and gives the model the same results."""
        scope = self.scope
        assert scope.plan_decision is not None
        session = scope.store.get_session(scope.session.id)
        answered = session.context_state.get(ANSWERED_PLAN_KEY) or {}
        replay = answered.get("run_id") == scope.run_id
        if replay:
            pending, denied = answered["pending"], list(answered["denied"])
        else:
            pending = session.context_state[PENDING_PLAN_KEY]
            denied = list(session.context_state.get(PENDING_KEY) or ())  # made beside the plan
            # Recorded before anything else happens: a takeover from here on finds the decision.
            self._save(answered_plan={"run_id": scope.run_id, "pending": pending, "denied": denied})
        why = "the plan was not decided when this call was made; make it again as a step of the plan"
        answers = {cid: ApprovalDecision(False, why, "policy") for cid in denied}
        denials = await answer_once(scope, answers, "plan.deny_waiting") if answers else None
        results = self.desk.decide(pending, scope.plan_decision)
        self._save(clear=(PENDING_PLAN_KEY,))
        if results is None:
            return None
        return DeferredToolResults(calls=results.calls, approvals=dict(denials.approvals) if denials else {})

    def _pause(self, output: DeferredToolRequests) -> RunOutcome:
        scope = self.scope
        if output.approvals:
            scope.broker.pause(scope.session.id, output)
        pending = None
        for call in output.calls:
            if call.tool_name == PROPOSE:
                pending = self.desk.pause(call.tool_call_id, output.metadata.get(call.tool_call_id, {}))
        self._save(pending_plan=pending)
        scope.usage = self.loop.usage()
        return RunOutcome("paused")

    def _rejected(self) -> RunOutcome:
        decision = self.scope.plan_decision
        assert decision is not None
        why = f"the plan was rejected by {decision.approver}" + (
            f": {decision.feedback}" if decision.feedback else ""
        )
        report = Report(
            title=f"Investigation: {self.question.splitlines()[0][:100]}",
            question=self.question,
            summary=f"Nothing was run: {why}.",
            gaps=[
                Gap(step="plan", tool=PROPOSE, reason=why, hint="ask again, or answer with changes instead")
            ],
        )
        self._save(clear=(REASONING_KEY, ACTIVE_PLAN_KEY))
        return RunOutcome("completed", output=render_markdown(report), report=report.model_dump(mode="json"))

    def _finish_text(self, text: str) -> RunOutcome:
        """A model that answered in prose: the text is the answer, the report records the calls."""
        report = to_report(ModelAnswer(summary=text), question=self.question, ledger=self._full_ledger())
        self.scope.usage = self.loop.usage()
        self._save(clear=(REASONING_KEY, ACTIVE_PLAN_KEY))
        return RunOutcome("completed", output=text, report=report.model_dump(mode="json"))

    def _full_ledger(self) -> Ledger:
        self.ledger.add_messages(self.loop.history)
        return self.ledger

    def _finish(
        self,
        answer: ModelAnswer,
        changes: list[CriticChange],
        missing: list[str],
        model_critic: bool,
        critic_error: str | None,
        disagreements: list[Disagreement] | None = None,
    ) -> RunOutcome:
        tracker = self.desk.tracker
        if tracker is not None:
            tracker.finish()
        notes = CriticNotes(
            rounds=int(self.state.get("rounds", 0)),
            replans=int(self.state.get("replans", 0)),
            max_replans=self.scope.settings.agent.max_replans,
            model_critic=model_critic,
            model_critic_error=critic_error,
            issues_fixed_by_replan=list(self.state.get("fixed", [])),
            changes=changes,
            missing_evidence=missing,
        )
        report = to_report(
            answer,
            question=self.question,
            ledger=self._full_ledger(),
            plan=tracker.outcome() if tracker is not None else None,
            critic=notes,
            disagreements=disagreements,
        )
        report = self.scope.with_timeline(self._restored(report))
        self.scope.usage = self.loop.usage()
        self._save(clear=(REASONING_KEY, ACTIVE_PLAN_KEY))
        return RunOutcome("completed", output=render_markdown(report), report=report.model_dump(mode="json"))

    def _restored(self, report: Report) -> Report:
        """The report with identifiers restored for the user where policy allows (secrets never)."""
        guard = self.loop.guard
        if guard is None or not self.scope.settings.privacy.restore_output:
            return report
        data = guard.restore_value(report.model_dump(mode="json", exclude={"verdict"}))
        restored = Report.model_validate(data)
        if guard.restore_failed:
            restored.summary += RESTORE_FAILED_NOTE
        return restored

    def _save(
        self,
        *,
        clear: tuple[str, ...] = (),
        pending_plan: dict[str, Any] | None = None,
        answered_plan: dict[str, Any] | None = None,
    ) -> None:
        """The question's reasoning state, the active plan and a pending (or just decided) one,
        kept in the session."""
        store, sid = self.scope.store, self.scope.session.id
        context = dict(store.get_session(sid).context_state)
        context[REASONING_KEY] = self.state
        desk = getattr(self, "desk", None)
        active = desk.active_state() if desk is not None else None
        if active is not None:
            context[ACTIVE_PLAN_KEY] = active
        if pending_plan is not None:
            context[PENDING_PLAN_KEY] = pending_plan
        if answered_plan is not None:
            context[ANSWERED_PLAN_KEY] = answered_plan
        for key in clear:
            context.pop(key, None)
        store.update_session(sid, context_state=context)
