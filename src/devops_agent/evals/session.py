"""One evaluation from start to stored result: what ``devops-agent eval run`` and
``benchmarks/agent_eval.py`` call.

:func:`model_target` turns a model name into a :class:`~devops_agent.evals.runner.Target` (no
name: the offline runbooks); :func:`scripted_targets` gives CI's right and wrong scripted models;
:func:`run_evaluation` loads the cases, opens a scratch environment, evaluates, and cleans up;
:func:`save` and :func:`load` keep results in the user's store and read them back. Nothing is
printed here.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from devops_agent.agent.models import resolve_model
from devops_agent.config import Settings
from devops_agent.errors import UserError
from devops_agent.evals.baseline import find_baseline, load_baseline
from devops_agent.evals.cases import Case, load_cases
from devops_agent.evals.harness import EvalOptions, evaluate
from devops_agent.evals.judge import Judge, resolve_judge
from devops_agent.evals.mapping import ToolMapping
from devops_agent.evals.results import Attempt, EvalResult
from devops_agent.evals.runner import EvalEnv, Target, offline_target
from devops_agent.evals.scripted import right_model, wrong_model
from devops_agent.store import EvalRunRecord, Store
from devops_agent.tools.registry import ToolRegistry


def model_target(settings: Settings) -> Target:
    """The configured model (``model.name``), a fresh instance per case run (a provider's HTTP
    client belongs to the run that opened it); the offline runbooks when no model is named."""
    if not settings.model.name:
        return offline_target()
    resolve_model(settings.model)  # a bad name or a missing key fails now, not once per case
    model_settings = settings.model
    return Target(model_settings.name or "", lambda _case: resolve_model(model_settings))


def scripted_targets(mapping: ToolMapping) -> tuple[Target, Target]:
    """CI's scripted models: one answering right from the evidence, one answering wrong."""
    return (
        Target("scripted-right", lambda case: right_model(case, mapping)),
        Target("scripted-wrong", lambda case: wrong_model(case, mapping)),
    )


def judge_for(settings: Settings, name: str | None) -> Judge | None:
    """The judge named (or configured in ``evals.judge.name``), or ``None``."""
    chosen = name or settings.evals.judge.name
    return resolve_judge(chosen, settings.evals.judge) if chosen else None


async def run_evaluation(
    settings: Settings,
    cases_dir: Path,
    target: Target,
    *,
    judge: Judge | None = None,
    options: EvalOptions | None = None,
    mapping: ToolMapping | None = None,
    cases: list[Case] | None = None,
    registry: ToolRegistry | None = None,
    privacy: bool | None = None,
    baseline: Path | None = None,
    on_attempt: Callable[[Case, Attempt], None] | None = None,
) -> EvalResult:
    """Evaluate ``target`` on the cases under ``cases_dir``; the runs' sessions live in a scratch
    store that is deleted afterwards."""
    mapping = mapping or ToolMapping.load()
    cases = cases if cases is not None else load_cases(cases_dir)
    options = options or EvalOptions()
    if options.repeat < 1 or options.parallel < 1:
        raise UserError("--repeat and --parallel must be at least 1")
    found = baseline or find_baseline(cases_dir)
    if found is not None and options.baseline is None:
        options.baseline = load_baseline(found)
    with tempfile.TemporaryDirectory(prefix="devops-agent-eval-") as workdir:
        env = EvalEnv.open(settings, Path(workdir), mapping, source=registry, privacy=privacy)
        try:
            return await evaluate(
                cases,
                target,
                env,
                mapping,
                cases_dir=cases_dir,
                judge=judge,
                options=options,
                on_attempt=on_attempt,
            )
        finally:
            env.close()


def save(store: Store, result: EvalResult) -> EvalRunRecord:
    """Keep ``result`` in ``store`` for ``eval list`` and ``eval compare``."""
    s = result.summary
    return store.save_eval_run(
        EvalRunRecord(
            id=result.id,
            created_at=result.created_at,
            label=result.label,
            target=result.target,
            judge=result.judge,
            cases_dir=result.cases_dir,
            cases=s.cases,
            runs=s.runs,
            passes=s.passes,
            pass_rate=s.pass_rate,
            result=result.model_dump(mode="json"),
        )
    )


def load(store: Store, ref: str) -> EvalResult:
    """A stored evaluation (id, prefix, ``latest`` or ``latest~N``) as an :class:`EvalResult`."""
    return EvalResult.model_validate(store.get_eval_run(ref).result)
