"""The pod-crashloop runbook gets its inputs from ``investigate``: options (--pod, --namespace/-n,
--selector/-l, --deployment) or, conservatively, a pod or deployment named in the question, which
the report then says it took from there. Run through the CLI over the real ``kubernetes`` client
against the replay server of ``fixtures_kubernetes``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from devops_agent.cli.app import app
from devops_agent.runbooks import load_runbooks
from devops_agent.runbooks.question_inputs import inputs_from_question

pytest.importorskip("kubernetes")

from fixtures_kubernetes import kubeconfig  # noqa: E402
from fixtures_replay import ReplayServer  # noqa: E402

POD = "api-7d9f8c6b5-x2kqp"  # OOMKilled in the payments namespace of the recorded cluster


def investigate(tmp_path: Path, url: str, *args: str) -> tuple[int, str, str]:
    env = {
        "DEVOPS_AGENT_KUBERNETES__KUBECONFIG": str(kubeconfig(tmp_path, url)),
        "DEVOPS_AGENT_KUBERNETES__CONTEXT": "replay",
    }
    result = CliRunner().invoke(app, ["investigate", *args], env=env)
    return result.exit_code, result.stdout, result.stderr


def oom_finding(report: dict[str, object]) -> dict[str, object]:
    findings = report["findings"]
    assert isinstance(findings, list)
    (finding,) = [f for f in findings if "OOMKilled" in f["title"]]
    assert isinstance(finding, dict)
    return finding


def test_a_pod_named_in_the_question_is_investigated_and_the_report_says_so(
    cluster: ReplayServer, tmp_path: Path
) -> None:
    code, stdout, stderr = investigate(
        tmp_path, cluster.url, f"why does pod {POD} keep restarting?", "-n", "payments", "--json"
    )
    assert code == 0, stderr
    report = json.loads(stdout)["report"]
    assert report["runbooks"] == ["pod-crashloop"]
    assert report["inputs_from_question"] == {"pod": POD}
    assert "256Mi" in oom_finding(report)["title"]
    assert [g for g in report["gaps"] if not g["reason"].startswith("skipped")] == []

    code, stdout, stderr = investigate(
        tmp_path, cluster.url, f"why does pod {POD} keep restarting?", "-n", "payments"
    )
    assert code == 0, stderr
    assert f"**Taken from the question:** pod `{POD}`" in stdout
    assert f"Crashing pod {POD} in payments" in stdout


def test_options_give_the_runbook_its_inputs_and_win_over_the_question(
    cluster: ReplayServer, tmp_path: Path
) -> None:
    code, stdout, stderr = investigate(
        tmp_path,
        cluster.url,
        "why is it crashing? pod web-0",
        "--pod",
        POD,
        "--namespace",
        "payments",
        "--json",
    )
    assert code == 0, stderr
    report = json.loads(stdout)["report"]
    assert report["inputs_from_question"] == {}  # --pod was given: the question's web-0 is not used
    assert "OOMKilled" in oom_finding(report)["title"]

    # A deployment alone selects the runbook, whatever the question says.
    code, stdout, stderr = investigate(
        tmp_path, cluster.url, "what is wrong?", "--deployment", "api", "-n", "payments", "--json"
    )
    assert code == 0, stderr
    report = json.loads(stdout)["report"]
    assert report["runbooks"] == ["pod-crashloop"]
    assert any("deployment api" in line for f in report["findings"] for line in f["evidence"])


def test_a_selector_finds_the_crashing_pod(cluster: ReplayServer, tmp_path: Path) -> None:
    code, stdout, stderr = investigate(
        tmp_path, cluster.url, "pods crashing", "-l", "app=api", "-n", "payments", "--json"
    )
    assert code == 0, stderr
    report = json.loads(stdout)["report"]
    assert "OOMKilled" in oom_finding(report)["title"]
    assert report["inputs_from_question"] == {}


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--pod", "API_7"], "'API_7' is not a Kubernetes name"),
        (["-n", "Payments"], "'Payments' is not a Kubernetes name"),
        (["-l", "/var/log/app"], "give log files with --logs"),
    ],
)
def test_a_bad_name_or_a_path_for_a_selector_is_a_usage_error(args: list[str], needle: str) -> None:
    result = CliRunner().invoke(app, ["investigate", "pod crashing", *args])
    assert result.exit_code == 2
    assert needle in result.stderr


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (f"why does pod {POD} keep restarting?", {"pod": POD}),
        (f"{POD} is in CrashLoopBackOff", {"pod": POD}),  # a generated name needs no cue
        ("Why is the web-0 pod restarting.", {"pod": "web-0"}),
        ("kubectl logs pod/web -n payments", {"pod": "web", "namespace": "payments"}),
        ("why is deploy/checkout crashlooping", {"deployment": "checkout"}),
        ('deployment "api" keeps failing', {"deployment": "api"}),
        ("the checkout-v2 deployment crashes", {"deployment": "checkout-v2"}),
        # Prose is never a name: no digit, hyphen, quote or kind/ prefix; keywords; two names.
        ("pod is crash-looping", {}),
        ("the pod keeps restarting after the deployment", {}),
        ("deployment api is failing", {}),
        ("pod web-0 and pod web-1 crash", {}),
        ("Pod API-7 crashes", {}),
        ("see /var/log/pods/web-0.log", {}),
    ],
)
def test_names_are_taken_from_the_question_only_when_they_cannot_be_prose(
    question: str, expected: dict[str, str]
) -> None:
    (crashloop,) = [r for r in load_runbooks([]) if r.name == "pod-crashloop"]
    assert inputs_from_question(question, [crashloop], {}) == expected


def test_only_a_runbook_that_declares_the_input_gets_it() -> None:
    (host,) = [r for r in load_runbooks([]) if r.name == "host-health"]
    assert inputs_from_question(f"is node of pod {POD} healthy?", [host], {}) == {}
