"""The harness end to end, with no model: every dev case and every case of ours through the real
session service and tool pipeline (privacy guard on), answered by a scripted model that answers
right from the recorded evidence and by one that answers wrong, judged by the scripted judge; the
offline runbooks scored by the literal checks; results stored and compared; the CLI.

What must hold: the recorded outputs reach the model through the policies (the canary's password
and e-mail never do), right answers pass, wrong ones are rejected, the probe call that no
recording answers is counted on every run and nothing else is, repeats mark a case that flips.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from devops_agent.agent.scripted import ScriptedModel
from devops_agent.cli.app import app
from devops_agent.config import Settings
from devops_agent.evals.cases import Case, load_cases
from devops_agent.evals.harness import EvalOptions
from devops_agent.evals.judge import resolve_judge
from devops_agent.evals.mapping import ToolMapping
from devops_agent.evals.results import EvalResult
from devops_agent.evals.runner import Target, offline_target
from devops_agent.evals.scripted import PROBE, right_model, wrong_model
from devops_agent.evals.session import load as load_result
from devops_agent.evals.session import run_evaluation, save
from devops_agent.evals.tables import compare, render
from devops_agent.store import Store
from fixtures_bench import load
from fixtures_openai import FakeOpenAI, text, tool_calls

agent_eval = load("agent_eval")
eval_cases = load("eval_cases")
DEV = load("bench_data").DEFAULT / "holmesgpt_evals"
HAVE_DEV = DEV.is_dir() or os.environ.get("DEVOPS_AGENT_REQUIRE_BENCH_DATA") == "1"
MAPPING = ToolMapping.load()


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cases") / "ours"
    eval_cases.build(root)
    return root


@pytest.fixture(scope="module")
def cases(own: Path) -> list[Case]:
    """Every dev case (when the data is here) and every case of ours."""
    return [*(load_cases(DEV) if HAVE_DEV else []), *load_cases(own)]


@pytest.fixture(scope="module")
def scripted_runs(
    cases: list[Case], own: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[dict[str, EvalResult], list[str]]]:
    """The three runs CI makes, once for the module; and every text the models were sent."""
    seen: list[str] = []
    settings = Settings(data_dir=tmp_path_factory.mktemp("data"))
    targets = (
        Target("scripted-right", lambda c: agent_eval.Watched(right_model(c, MAPPING), seen)),
        Target("scripted-wrong", lambda c: agent_eval.Watched(wrong_model(c, MAPPING), seen)),
        offline_target(),
    )

    async def run_all() -> dict[str, EvalResult]:
        out = {}
        for target in targets:
            out[target.name] = await run_evaluation(
                settings,
                own,
                target,
                judge=None if target.offline else resolve_judge("scripted"),
                options=EvalOptions(parallel=4, include_skipped=True),
                mapping=MAPPING,
                cases=cases,
                privacy=True,
            )
        return out

    return asyncio.run(run_all()), seen


def attempts(result: EvalResult) -> dict[str, Any]:
    return {c.id: c.attempts[0] for c in result.cases}


def test_every_case_runs_and_right_answers_pass(scripted_runs: Any, cases: list[Case]) -> None:
    runs, _ = scripted_runs
    right = runs["scripted-right"]
    assert right.summary.cases == len(cases) >= 15
    if HAVE_DEV:
        assert len(cases) == 34 + 15
    failed = {
        cid: a.judge.rationale if a.judge else a.error for cid, a in attempts(right).items() if not a.passed
    }
    assert failed == {}
    assert all(a.literals.verdict != "fail" for a in attempts(right).values())


def test_wrong_answers_are_rejected_by_the_judge_and_the_literals(scripted_runs: Any) -> None:
    runs, _ = scripted_runs
    by_case = attempts(runs["scripted-wrong"])
    assert {cid: a.judge.choice for cid, a in by_case.items() if a.judge} == dict.fromkeys(by_case, "B")
    # A wrong answer still passes only where upstream asserts no score (investigations with correctness 0).
    passing = {cid for cid, a in by_case.items() if a.passed}
    assert passing <= {"08_memory_pressure"}
    assert all(a.literals.verdict in ("fail", "unscored") for a in by_case.values())


def test_only_the_probe_goes_unmatched_and_it_is_counted_every_run(scripted_runs: Any) -> None:
    runs, _ = scripted_runs
    for cid, a in attempts(runs["scripted-right"]).items():
        unmatched = [c for c in a.calls if not c["matched"]]
        assert [(c["tool"], c["args"]) for c in unmatched] == [(PROBE.tool, PROBE.args)], cid
        assert a.unmatched == 1
        probe = next(c for c in a.calls if not c["matched"])
        assert probe["status"] == "no_data"
    assert runs["scripted-right"].summary.unmatched_calls == runs["scripted-right"].summary.cases


@pytest.mark.skipif(not HAVE_DEV, reason="HolmesGPT dev cases not found")
def test_recorded_outputs_reach_the_model_through_the_pipeline(scripted_runs: Any) -> None:
    runs, seen = scripted_runs
    a = attempts(runs["scripted-right"])["02_what_is_wrong_with_pod"]
    served = {c["recording"] for c in a.calls if c["matched"]}
    assert "kubectl_describepod_giant-narwhal-6958c5bdd8-69gtn_app-02.txt" in served
    # The describe text the model read: its kubectl output, through the pipeline (as JSON).
    received = "\n".join(seen)
    assert "Last State:     Terminated\\n      Reason:       OOMKilled" in received
    # The pipeline recorded the calls as the run's events, the same way for every runner.
    tools = [e["tool"] for e in a.events if e["type"] == "tool_result"]
    assert tools.count("k8s_describe") >= 2


def test_the_canary_never_reaches_the_model_but_its_evidence_does(scripted_runs: Any) -> None:
    runs, seen = scripted_runs
    received = "\n".join(seen)
    assert eval_cases.CANARY_SECRET not in received
    assert eval_cases.CANARY_EMAIL not in received
    assert "db login failed for user svc-billing" in received  # the log itself got through
    answer = attempts(runs["scripted-right"])["ours_pod-log-privacy-canary"].answer
    assert eval_cases.CANARY_SECRET not in answer  # nor does the user see the secret again


def test_the_model_free_score_is_the_offline_runbooks_scored_by_literals(scripted_runs: Any) -> None:
    runs, _ = scripted_runs
    offline = runs["offline"]
    by_case = attempts(offline)
    assert all(a.path == "runbook" for a in by_case.values())
    assert all(a.judge is None and a.steps == len(a.tools_called) for a in by_case.values())
    assert all(a.passed is None for a in by_case.values() if a.literals.verdict == "unscored")
    # The runbooks read our log files for real: these scenarios are what they are built for.
    for cid in ("ours_python-logging-errors", "ours_json-errors", "ours_rotated-xz"):
        assert by_case[cid].passed, (cid, by_case[cid].literals.missing)
    # A pod's log through the replay is not grouped by the crash-loop runbook: honest failures.
    assert by_case["ours_pod-log-db-timeouts"].passed is False


def test_results_are_stored_listed_and_compared(scripted_runs: Any, tmp_path: Path) -> None:
    runs, _ = scripted_runs
    with Store(f"sqlite:///{tmp_path / 'store.db'}") as store:
        save(store, runs["scripted-right"])
        save(store, runs["scripted-wrong"])
        listed = store.list_eval_runs()
        assert [r.target for r in listed] == ["scripted-wrong", "scripted-right"]
        assert listed[0].result == {}  # a listing does not load the results
        back = load_result(store, "latest~1")
        assert back == runs["scripted-right"]
        diff = compare(back, load_result(store, runs["scripted-wrong"].id[:8]))
    assert diff["delta_pass_rate"] < -0.9
    assert len(diff["changed"]) >= runs["scripted-right"].summary.cases - 1
    table = render(runs["scripted-right"])
    assert "| ours_json-errors | ask | 1/1 |" in table
    assert "**pass rate: 100.0%**" in table


def test_repeats_give_the_spread_and_mark_a_case_that_flips(own: Path, tmp_path: Path) -> None:
    cases = [c for c in load_cases(own) if c.id in ("ours_json-errors", "ours_nginx-5xx")]
    turns = iter(range(100))

    def alternating(case: Case) -> ScriptedModel:
        # json-errors: right, then wrong; nginx-5xx: right every time
        flip = case.id == "ours_json-errors" and next(turns) % 2 == 1
        return (wrong_model if flip else right_model)(case, MAPPING)

    result = asyncio.run(
        run_evaluation(
            Settings(data_dir=tmp_path),
            own,
            Target("alternating", alternating),
            judge=resolve_judge("scripted"),
            options=EvalOptions(repeat=2, parallel=1),
            mapping=MAPPING,
            cases=cases,
        )
    )
    s = result.summary
    assert s.flaky == ["ours_json-errors"]
    assert (s.spread.min, s.spread.max, s.pass_rate) == (0.5, 1.0, 0.75)
    assert s.spread.stdev == 0.25


@pytest.mark.skipif(not HAVE_DEV, reason="HolmesGPT dev cases not found")
def test_a_model_is_compared_with_its_published_baseline_on_the_cases_both_ran(tmp_path: Path) -> None:
    cases = [
        c
        for c in load_cases(DEV)
        if c.id in ("02_what_is_wrong_with_pod", "12_job_crashing", "06_explain_issue")
    ]
    result = asyncio.run(
        run_evaluation(
            Settings(data_dir=tmp_path),
            DEV,
            Target("openai:gpt-4o", lambda c: right_model(c, MAPPING)),  # named as the model it stands for
            judge=resolve_judge("scripted"),
            options=EvalOptions(tags=["kind:ask"]),
            mapping=MAPPING,
            cases=cases,
        )
    )
    b = result.summary.baseline
    assert b is not None
    assert (b.column, sorted(b.cases)) == ("gpt-4o", ["02_what_is_wrong_with_pod", "12_job_crashing"])
    assert (b.ours, b.theirs) == (1.0, 0.5)  # gpt-4o failed 02 and passed 12 in the published run
    assert {c.id: c.baseline for c in result.cases}["06_explain_issue"] is None


def test_the_cli_runs_lists_shows_and_compares(own: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    env = {"DEVOPS_AGENT_HOME": str(tmp_path / "home")}
    argv = ["eval", "run", str(own), "--offline", "--filter", "json", "-f", "all-clear"]
    first = runner.invoke(app, [*argv, "--json"], env=env)
    assert first.exit_code == 0, first.output
    result = json.loads(first.stdout)
    assert sorted(c["id"] for c in result["cases"]) == ["ours_healthy-json", "ours_json-errors"]
    assert result["summary"]["literal_runs"] == {"pass": 1, "fail": 0, "unscored": 1}
    gate = runner.invoke(app, [*argv, "--min-pass-rate", "0.9"], env=env)  # 1 of 2 pass
    assert gate.exit_code == 1
    listed = runner.invoke(app, ["eval", "list", "--json"], env=env)
    assert [r["target"] for r in json.loads(listed.stdout)] == ["offline", "offline"]
    shown = runner.invoke(app, ["eval", "compare", "latest~1", "latest"], env=env)
    assert shown.exit_code == 0
    assert "No case changed." in shown.stdout
    missing = runner.invoke(app, ["eval", "run", str(tmp_path / "nowhere"), "--offline"], env=env)
    assert missing.exit_code == 2
    assert "no such cases folder" in missing.stderr
    unknown = runner.invoke(app, ["eval", "show", "abc"], env=env)
    assert unknown.exit_code == 2
    assert "eval list" in unknown.stderr


@pytest.mark.allow_model_requests
def test_a_real_model_is_evaluated_over_http_with_its_tokens(own: Path, tmp_path: Path) -> None:
    """The model path as a session with an endpoint runs it: the real OpenAI provider against the
    fake server, the recorded log in its second request, tokens and steps in the result."""
    reply = "The pod's database queries time out: `db query timeout`, 30 of them"
    script = [
        tool_calls(("k8s_logs", {"pod": "api-7d9f8c6b5d-x2x9z", "namespace": "shop"})),
        text(reply),
    ]
    with FakeOpenAI(script) as srv:
        env = {
            "DEVOPS_AGENT_HOME": str(tmp_path / "home"),
            "DEVOPS_AGENT_ALLOW_MODEL_REQUESTS": "1",
            "DEVOPS_AGENT_MODEL__BASE_URL": srv.url,
        }
        argv = ["eval", "run", str(own / "ours_pod-log-db-timeouts"), "-m", "openai-compatible:fake-model"]
        got = CliRunner().invoke(app, [*argv, "--judge", "scripted", "--json"], env=env)
        sent = srv.bodies
    assert got.exit_code == 0, got.output
    (case,) = json.loads(got.stdout)["cases"]
    (attempt,) = case["attempts"]
    assert attempt["passed"] is True
    assert attempt["judge"]["choice"] == "A"
    assert (attempt["steps"], attempt["usage"]["total_tokens"]) == (2, 76)
    assert [c["recording"] for c in attempt["calls"]] == ["fetch_pod_logs_shop_api-7d9f8c6b5d-x2x9z.txt"]
    assert "db query timeout after 5000ms" in sent[1]  # the replayed log, as the model received it
