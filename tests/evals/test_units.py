"""The evaluation harness's parts: case loading, the tool mapping, literal checks, the baseline and
the judge (the scripted one, and a real provider over HTTP against the fake OpenAI server).

Case folders here are written by the tests; the HolmesGPT dev cases (``../shared/benchmarks``) are
read where a property must hold over all of them, and those tests skip when the data is absent.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic_ai.exceptions import UnexpectedModelBehavior

from devops_agent.config import Settings
from devops_agent.config.settings import ModelSettings
from devops_agent.errors import ConfigError, NotFoundError
from devops_agent.evals.baseline import column_for, find_baseline, load_baseline, model_key
from devops_agent.evals.cases import load_cases
from devops_agent.evals.checks import check_literals, check_sections, literals, present
from devops_agent.evals.judge import question, resolve_judge
from devops_agent.evals.mapping import ToolMapping
from devops_agent.evals.recordings import Recording, read_recording, upstream_match
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from fixtures_bench import load
from fixtures_openai import FakeOpenAI, text, tool_calls

DEV = load("bench_data").DEFAULT / "holmesgpt_evals"
needs_dev = pytest.mark.skipif(
    not DEV.is_dir() and os.environ.get("DEVOPS_AGENT_REQUIRE_BENCH_DATA") != "1",
    reason=f"HolmesGPT dev cases not found at {DEV}",
)


def recording_file(
    folder: Path, name: str, tool: str, match: dict[str, Any] | None, output: str, **meta: Any
) -> Path:
    head = {"toolset_name": "kubernetes/core", "tool_name": tool, "match_params": match}
    body = {"schema_version": "robusta:v1.0.0", "status": "success", "error": None, **meta}
    path = folder / name
    path.write_text(json.dumps(head) + "\n" + json.dumps(body) + "\n" + output)
    return path


def case_folder(root: Path, name: str, spec: dict[str, Any], files: dict[str, str] | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "test_case.yaml").write_text(yaml.safe_dump(spec))
    for fname, content in (files or {}).items():
        (folder / fname).write_text(content)
    return folder


# -- cases ---------------------------------------------------------------------------------------


def test_a_list_of_prompts_is_upstreams_variants_and_files_and_history_come_along(tmp_path: Path) -> None:
    history = [
        {"role": "system", "content": "you are holmes"},
        {"role": "user", "content": "the alert fired at 12:47"},
        {"role": "assistant", "content": "which alert?"},
    ]
    case_folder(
        tmp_path,
        "10_variants",
        {
            "user_prompt": [
                'what is wrong with << {"type": "pod", "name": "web-0", "namespace": "shop"} >>',
                "and now?",
            ],
            "expected_output": "the pod is out of memory",
            "include_files": ["runbook.md"],
            "tags": ["easy", "kubernetes"],
            "before_test": "kubectl apply -f x",  # live-cluster keys are read and ignored
        },
        {"runbook.md": "# Check memory first", "conversation_history.json": json.dumps(history)},
    )
    first, second = load_cases(tmp_path)
    assert (first.id, second.id) == ("10_variants[0]", "10_variants[1]")
    assert first.kind == "ask"
    assert first.expected == ["the pod is out of memory"]
    assert '<attached-file path="runbook.md">\n# Check memory first\n</attached-file>' in first.prompt
    assert first.inputs == {"pod": "web-0", "namespace": "shop"}  # from the structured reference
    assert second.inputs == {}
    assert [t["role"] for t in first.history] == ["user", "assistant"]  # the system turn is not ours
    assert "kind:ask" in first.all_tags
    assert "easy" in first.all_tags


def test_an_investigation_is_asked_with_its_alert_and_subject(tmp_path: Path) -> None:
    request = {
        "source": "prometheus",
        "title": "KubePodCrashLooping",
        "description": "Pod web-0 restarts",
        "subject": {"name": "web-0", "subject_type": "pod", "namespace": "shop", "node": "n1"},
        "context": {"issue_id": "abc"},
    }
    case_folder(
        tmp_path,
        "02_crash",
        {"expected_output": ["a crash"], "evaluation": {"correctness": 0}},
        {
            "investigate_request.json": json.dumps(request),
            "resource_instructions.json": json.dumps({"instructions": ["check the logs first"]}),
        },
    )
    (case,) = load_cases(tmp_path)
    assert case.kind == "investigate"
    assert "Investigate this alert: KubePodCrashLooping" in case.prompt
    assert "Subject: pod web-0 (namespace shop, node n1)" in case.prompt
    assert "- check the logs first" in case.prompt
    assert case.inputs == {"pod": "web-0", "namespace": "shop"}
    assert case.correctness.expected_score == 0


def test_our_inputs_and_case_dir_are_resolved_against_the_case_folder(tmp_path: Path) -> None:
    folder = case_folder(
        tmp_path,
        "ours_x",
        {
            "user_prompt": "errors in {case_dir}/files?",
            "expected_output": ["x"],
            "inputs": {"logs": ["files"], "since": "1h"},
        },
    )
    (case,) = load_cases(tmp_path)
    assert case.prompt == f"errors in {folder.resolve()}/files?"
    assert case.inputs == {"logs": [str((folder / "files").resolve())], "since": "1h"}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"expected_output": ["x"]}, "no user_prompt"),
        ({"user_prompt": "q"}, "expected_output: Field required"),
        ({"user_prompt": "q", "expected_output": "x", "include_files": ["gone.md"]}, "include_files names"),
    ],
)
def test_a_broken_case_is_one_error_naming_its_file(
    tmp_path: Path, spec: dict[str, Any], message: str
) -> None:
    case_folder(tmp_path, "bad", spec)
    with pytest.raises(ConfigError, match=message) as err:
        load_cases(tmp_path)
    assert "bad" in err.value.message


def test_a_folder_without_cases_says_what_a_case_is(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError) as err:
        load_cases(tmp_path)
    assert "test_case.yaml" in err.value.message
    assert err.value.hint
    with pytest.raises(NotFoundError):
        load_cases(tmp_path / "missing")


def test_a_recording_with_a_broken_header_is_named(tmp_path: Path) -> None:
    path = tmp_path / "kubectl_describe.txt"
    path.write_text('{"tool_name": "kubectl_describe"}\nnot json\noutput')
    with pytest.raises(ConfigError, match="kubectl_describe.txt: line 2 is not JSON"):
        read_recording(path)


@needs_dev
def test_every_dev_case_loads_with_its_kind_skip_flag_and_recordings() -> None:
    cases = load_cases(DEV)
    kinds = [c.kind for c in cases]
    assert (kinds.count("ask"), kinds.count("investigate"), kinds.count("workload_health")) == (26, 7, 1)
    assert sorted(c.id for c in cases if c.skip) == [
        "08_sock_shop_frontend",
        "42_dns_issues_result_all_tools",
        "46_job_crashing_no_longer_exists",
    ]
    assert sum(len(c.recordings) for c in cases) == 168
    (history_case,) = [c for c in cases if c.history]
    assert history_case.id == "158_slack_chat_correct_date"


# -- matching ------------------------------------------------------------------------------------


def rec(tool: str, match: dict[str, Any] | None, output: str = "out", file: str = "f.txt") -> Recording:
    return Recording(file=file, toolset="", tool=tool, match_params=match, output=output)


def test_upstream_rule_matches_a_superset_of_the_recorded_parameters() -> None:
    r = rec("kubectl_describe", {"kind": "pod", "name": "web-0"})
    assert upstream_match(r, {"kind": "pod", "name": "web-0", "namespace": "x"})
    assert not upstream_match(r, {"kind": "pod"})
    assert not upstream_match(r, {"kind": "pod", "name": "web-1"})
    assert upstream_match(rec("t", {"name": "*"}), {"name": "anything"})
    assert upstream_match(rec("t", None), {})
    assert upstream_match(rec("t", {"limit": 100}), {"limit": "100"})


def test_our_calls_reach_the_recordings_the_mapping_names() -> None:
    mapping = ToolMapping.load()
    settings = Settings()
    recs = [
        rec(
            "kubectl_describe", {"kind": "Pod", "name": "web-0", "namespace": "default"}, file="describe.txt"
        ),
        rec(
            "fetch_pod_logs",
            {"pod_name": "web-0", "namespace": "default", "limit": 100, "filter": "err"},
            file="filtered.txt",
        ),
        rec("fetch_pod_logs", {"pod_name": "web-0", "namespace": "default", "limit": 100}, file="broad.txt"),
        rec("kubectl_previous_logs", {"pod_name": "web-0", "namespace": "default"}, file="previous.txt"),
        rec(
            "kubectl_events",
            {"resource_type": "pod", "pod_name": "web-0", "namespace": "default"},
            file="events.txt",
        ),
    ]

    def answered(tool: str, **args: Any) -> str | None:
        found = mapping.answer(tool, mapping.filled(tool, args, settings), recs)
        return found.recording.file if found else None

    assert (
        answered("k8s_describe", kind="pod", name="web-0") == "describe.txt"
    )  # namespace filled, kind as kubectl
    assert answered("k8s_describe", kind="pod", name="web-0", namespace="other") is None
    assert answered("k8s_logs", pod="web-0") == "broad.txt"  # the broadest recording, not the filtered one
    assert answered("k8s_logs", pod="web-0", previous=True) == "previous.txt"
    assert answered("k8s_events", involved_object="po/web-0") == "events.txt"
    assert answered("k8s_events", involved_object="web-0") == "events.txt"  # no kind given: not compared
    assert answered("k8s_events", involved_object="deploy/web-0") is None
    assert answered("system_memory") is None
    approx = mapping.answer("k8s_logs", {"pod": "web-0", "namespace": "default"}, recs[:2])
    assert approx is not None
    assert approx.approximate


@needs_dev
def test_each_reachable_dev_recording_is_answered_by_the_call_its_inverse_names() -> None:
    mapping = ToolMapping.load()
    settings = Settings()
    checked = 0
    for case in load_cases(DEV):
        for recording in case.recordings:
            found = mapping.inverse(recording)
            if found is None:
                assert recording.tool in mapping.data.unmapped, (
                    f"{recording.tool} is neither mapped nor explained"
                )
                continue
            tool, args = found
            match = mapping.answer(tool, mapping.filled(tool, args, settings), case.recordings)
            assert match is not None, (case.id, recording.file)
            # The same recorded tool answers, or one the mapping prefers (a describe over a get).
            order = [a.recorded for a in mapping.tools[tool].answers]
            assert order.index(match.recording.tool) <= order.index(recording.tool), (case.id, recording.file)
            checked += 1
    assert checked >= 90


def test_a_mapping_with_an_unknown_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(
        "version: 1\ntools:\n  k8s_pods:\n    answers:\n      - recorded: x\n        paramz: {}\n"
    )
    with pytest.raises(ConfigError, match=r"tools\.k8s_pods\.answers\.0\.paramz"):
        ToolMapping.load(path)


def test_a_toolset_builds_its_pydantic_tools_once_and_again_after_a_new_tool() -> None:
    ts = ToolsetBuilder("t")

    @ts.tool(read_only=True)
    def one() -> ToolResult:
        """One."""
        return ToolResult.ok(1)

    first = ts.to_pydantic_ai()
    assert ts.to_pydantic_ai().tools["one"] is first.tools["one"]

    @ts.tool(read_only=True)
    def two() -> ToolResult:
        """Two."""
        return ToolResult.ok(2)

    assert set(ts.to_pydantic_ai().tools) == {"one", "two"}


# -- literal and section checks -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("statement", "found"),
    [
        ("fails to connect to the database at `prod-db:3333`", ["prod-db:3333"]),
        ("Mention `wge` might be a typo of `wget`", ["wge", "wget"]),
        ("This must mention the date 2025-08-23", ["2025-08-23"]),
        (
            "The node `ip-172-31-40-111.us-east-2.compute.internal` is full",
            ["ip-172-31-40-111.us-east-2.compute.internal"],
        ),
        ("see https://example.org/docs/permissions/ for more", ["https://example.org/docs/permissions/"]),
        ("The api logged 30 `db query timeout` errors", ["30", "db query timeout"]),
        ("5 pods are running in test-58", ["test-58"]),  # one digit alone proves nothing
        ("1. due to command 'wget' exiting with code 125 2. a loop", ["wget", "125"]),
        ("The pod was killed for lack of memory", []),
    ],
)
def test_literals_are_what_can_only_be_copied(statement: str, found: list[str]) -> None:
    assert literals(statement) == found


def test_a_number_is_found_whole_and_beside_a_unit() -> None:
    assert present("30", "30× db query timeout")
    assert present("3", "nothing for 3h")
    assert not present("30", "300 requests")
    assert present("DB Query  Timeout", "the db query timeout after 5000ms")


def test_literal_verdicts_and_the_question_proves_nothing() -> None:
    expected = ["The job `java-api-checker` cannot reach `prod-db:3333`", "It keeps retrying"]
    got = check_literals(
        expected, "prod-db:3333 refused the connection", question="what about job java-api-checker?"
    )
    assert got.verdict == "unscored"  # the second statement has nothing to check
    assert [c.literal for c in got.checks] == ["prod-db:3333"]  # the job's name is in the question
    assert check_literals(expected[:1], "prod-db:3333 is down", "java-api-checker?").verdict == "pass"
    assert check_literals(expected[:1], "the database is down", "java-api-checker?").verdict == "fail"


def test_expected_sections_must_be_headings_and_excluded_ones_absent() -> None:
    answer = "# Summary\nall good\n## Related logs\nnone\n"
    got = {s.section: s.ok for s in check_sections({"Summary": True, "Related logs": False}, answer)}
    assert got == {"Summary": True, "Related logs": False}


# -- baseline ------------------------------------------------------------------------------------


def test_model_names_meet_baseline_columns_by_the_models_own_name(tmp_path: Path) -> None:
    columns = [
        "gpt-4o",
        "eu.anthropic.claude-sonnet-4-20250514-v1:0",
        "novita/qwen/qwen3-next-80b-a3b-instruct",
    ]
    assert column_for("openai:gpt-4o", columns) == "gpt-4o"
    assert column_for("openai:gpt-4o-mini", columns) is None  # a prefix is another model
    assert column_for("anthropic:claude-sonnet-4-20250514", columns) == columns[1]
    assert column_for("vllm:qwen/qwen3-next-80b-a3b-instruct", columns) == columns[2]
    assert model_key("eu.anthropic.claude-sonnet-4-20250514-v1:0") == "claude-sonnet-4-20250514"
    csv = tmp_path / "baseline_results_x.csv"
    csv.write_text("eval_id,gpt-4o\n02_pod,1/1\n08_x,-\n")
    assert find_baseline(tmp_path) == csv
    assert load_baseline(csv).for_column("gpt-4o") == {"02_pod": (1, 1)}
    csv.write_text("eval_id,gpt-4o\n02_pod,yes\n")
    with pytest.raises(ConfigError, match=":2: 'yes' is not passes/runs"):
        load_baseline(csv)


# -- the judge -----------------------------------------------------------------------------------


def test_the_judge_question_is_upstreams_with_the_elements_as_a_list() -> None:
    q = question(["pod is OOMKilled", "limit is 50Mi"], "it ran out of memory")
    assert (
        "# EXPECTED ELEMENTS\n\n- pod is OOMKilled\n- limit is 50Mi\n\n# OUTPUT\n\nit ran out of memory" in q
    )
    assert "- A: All elements are presents" in q
    assert "reasonably matches" in question(["x"], "y", "loose")


def test_the_scripted_judge_wants_every_element_word_for_word() -> None:
    judge = resolve_judge("scripted")
    right = asyncio.run(
        judge(["pod is OOMKilled", "limit is 50Mi"], "The pod is   oomkilled; its limit is 50Mi.")
    )
    wrong = asyncio.run(judge(["pod is OOMKilled", "limit is 50Mi"], "The pod is OOMKilled."))
    assert (right.choice, right.score) == ("A", 1.0)
    assert (wrong.choice, wrong.score) == ("B", 0.0)
    assert "limit is 50Mi" in wrong.rationale


@pytest.fixture
def fake_endpoint_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The only endpoint these judge tests reach is the fake server on 127.0.0.1."""
    monkeypatch.setenv("DEVOPS_AGENT_ALLOW_MODEL_REQUESTS", "1")


@pytest.mark.allow_model_requests
@pytest.mark.usefixtures("fake_endpoint_allowed")
def test_a_real_judge_model_answers_over_http_with_its_reasoning_and_usage() -> None:
    verdict = {"reasons": "The output names the OOM kill but not the 50Mi limit.", "choice": "B"}
    with FakeOpenAI([tool_calls(("final_result", verdict))]) as srv:
        judge = resolve_judge("openai-compatible:judge-model", ModelSettings(base_url=srv.url))
        got = asyncio.run(judge(["pod is OOMKilled", "limit is 50Mi"], "The pod was OOMKilled."))
        sent = srv.bodies[0]
    assert (got.choice, got.score, got.model) == ("B", 0.0, "openai-compatible:judge-model")
    assert got.rationale == verdict["reasons"]
    assert got.usage
    assert got.usage["total_tokens"] == 38
    assert "# EXPECTED ELEMENTS" in sent
    assert "limit is 50Mi" in sent


@pytest.mark.allow_model_requests
@pytest.mark.usefixtures("fake_endpoint_allowed")
def test_a_judge_that_answers_in_prose_is_asked_again_then_fails_loudly() -> None:
    with FakeOpenAI([text("A", repeat=True)]) as srv:
        judge = resolve_judge("openai-compatible:judge-model", ModelSettings(base_url=srv.url))
        with pytest.raises(UnexpectedModelBehavior):  # the harness keeps it as the run's judge_error
            asyncio.run(judge(["x"], "y"))


def test_turns_are_one_conversation_whose_last_answer_is_scored(tmp_path: Path) -> None:
    from devops_agent.agent.scripted import Script, ScriptedModel, Turn
    from devops_agent.evals.harness import EvalOptions
    from devops_agent.evals.runner import Target
    from devops_agent.evals.session import run_evaluation

    case_folder(
        tmp_path / "cases",
        "ours_followup",
        {
            "turns": ["Which pod restarts?", "And why does `web-0` restart?"],
            "expected_output": ["exit code 137"],
        },
    )
    (case,) = load_cases(tmp_path / "cases")
    assert case.questions == ["Which pod restarts?", "And why does `web-0` restart?"]
    script = Script(
        runs=[
            [Turn(text="web-0 restarts")],
            [Turn(text="It was killed: exit code 137. Asked: {previous_prompts}")],
        ]
    )
    result = asyncio.run(
        run_evaluation(
            Settings(data_dir=tmp_path / "data"),
            tmp_path / "cases",
            Target("scripted", lambda c: ScriptedModel(script)),
            judge=resolve_judge("scripted"),
            options=EvalOptions(),
        )
    )
    (attempt,) = result.cases[0].attempts
    assert attempt.passed
    assert attempt.answer == "It was killed: exit code 137. Asked: Which pod restarts?"  # same session
    assert [e["type"] for e in attempt.events].count("run_started") == 2
    assert attempt.literals.verdict == "pass"  # 137 was not in any question
    case_folder(tmp_path / "bad", "both", {"turns": ["a"], "user_prompt": "b", "expected_output": ["x"]})
    with pytest.raises(ConfigError, match="user_prompt or turns"):
        load_cases(tmp_path / "bad")


def test_a_kubectl_read_in_the_shell_is_answered_like_the_tool_call_it_is() -> None:
    mapping = ToolMapping.load()
    settings = Settings()
    recs = [
        rec(
            "kubectl_describe",
            {"kind": "PersistentVolumeClaim", "name": "data", "namespace": "db"},
            file="pvc.txt",
        ),
        rec("kubectl_previous_logs", {"pod_name": "web-0", "namespace": "default"}, file="previous.txt"),
        rec("kubectl_get_by_kind_in_cluster", {"kind": "pod"}, file="all-pods.txt"),
    ]

    def answered(command: str) -> str | None:
        args = mapping.filled("shell_run", {"command": command}, settings)
        found = mapping.answer("shell_run", args, recs)
        return found.recording.file if found else None

    assert answered("kubectl describe pvc data -n db") == "pvc.txt"  # a kind k8s_describe cannot read
    assert answered("kubectl -n db describe persistentvolumeclaim/data") == "pvc.txt"  # flags anywhere
    assert answered("kubectl logs web-0 --previous") == "previous.txt"  # the configured namespace
    assert answered("kubectl get po --all-namespaces") == "all-pods.txt"
    assert answered("kubectl get pods -A | grep web") is None  # a pipeline is not one read
    assert answered("cat /etc/hosts") is None
    reachable = [r.file for r in recs if mapping.reachable(r)]
    assert reachable == ["pvc.txt", "previous.txt", "all-pods.txt"]
