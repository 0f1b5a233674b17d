"""Evaluation cases in HolmesGPT's format (and ours, which is the same with two optional keys).

A case is a folder with ``test_case.yaml`` and the recordings its tools answer from
(:mod:`devops_agent.evals.recordings`). Three kinds, told apart by their files as upstream tells
them apart by their parent folder:

- **ask** — ``user_prompt``: a question. A list of prompts is upstream's *variants*: one case each,
  ``ID[0]``, ``ID[1]`` …; ``include_files`` are appended to the prompt as attached files; earlier
  turns (``conversation_history.json`` or ``conversation_history/NN_role.md``) become the session's
  history, so the question is asked as the next turn of that conversation;
- **investigate** — ``investigate_request.json``: an alert (title, description, subject, context),
  plus ``issue_data.json`` and ``resource_instructions.json``; asked as an investigation of it;
- **workload_health** — ``workload_health_request.json``: a workload to check, answered with a
  ``workload_healthy`` line.

Common keys: ``expected_output`` (statements a correct answer must all contain), ``tags``,
``evaluation.correctness`` (a number, or ``{expected_score, type: strict|loose}``),
``expected_sections``, ``skip``/``skip_reason``. Keys for live clusters (``before_test``,
``after_test``, ``port_forwards``, ``mock_policy`` …) are read and ignored: the recordings stand in.

Our additions: ``turns`` — questions asked one after the other in one session (a conversation
that goes on; the last answer is scored); ``inputs`` — what the offline runbooks get, as the
CLI's options would give them (``pod``, ``namespace``, ``logs``: paths relative to the case
folder); and ``{case_dir}`` in a
prompt, replaced by the case folder's absolute path (our cases ship log files for the real log
tools under ``files/``). Structured references in upstream prompts (``<< {"type": "pod", "name":
…} >>``) and an alert's subject give the offline inputs of upstream cases.

This module reads case folders; it runs nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from devops_agent.errors import ConfigError, NotFoundError
from devops_agent.evals.recordings import Recording, read_recordings

CASE_FILE = "test_case.yaml"
Kind = Literal["ask", "investigate", "workload_health"]
_REFERENCE = re.compile(r"<<\s*(\{.*?\})\s*>>", re.DOTALL)
_INPUT_KINDS = {"pod": "pod", "deployment": "deployment"}
"""Reference/subject types that name an offline input (the namespace comes along)."""


class Correctness(BaseModel):
    model_config = ConfigDict(extra="ignore")
    expected_score: float = 1
    type: Literal["strict", "loose"] = "strict"


class CaseFile(BaseModel):
    """``test_case.yaml`` as read; unknown keys (live-cluster set-up) are ignored."""

    model_config = ConfigDict(extra="ignore")

    user_prompt: str | list[str] | None = None
    turns: list[str] | None = None
    expected_output: str | list[str]
    tags: list[str] | None = None
    skip: bool | None = None
    skip_reason: str | None = None
    evaluation: dict[str, Any] | None = None
    expected_sections: dict[str, bool | list[str]] | None = None
    include_files: list[str] | None = None
    inputs: dict[str, Any] | None = None


@dataclass
class Case:
    """One case, ready to run."""

    id: str
    kind: Kind
    folder: Path
    prompt: str
    expected: list[str]
    correctness: Correctness
    tags: list[str] = field(default_factory=list)
    skip: bool = False
    skip_reason: str | None = None
    expected_sections: dict[str, bool | list[str]] | None = None
    inputs: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, str]] = field(default_factory=list)
    followups: list[str] = field(default_factory=list)
    """Questions asked after :attr:`prompt` in the same session (ours: ``turns``); the last
    answer is the one scored."""
    recordings: list[Recording] = field(default_factory=list)

    @property
    def questions(self) -> list[str]:
        """Every question the case asks, in order."""
        return [self.prompt, *self.followups]

    @property
    def expected_text(self) -> str:
        return "\n- ".join(self.expected)

    @property
    def all_tags(self) -> list[str]:
        """The case's tags and its kind (``kind:ask``), for aggregates."""
        return [*self.tags, f"kind:{self.kind}"]


def find_case_dirs(root: Path) -> list[Path]:
    """Every folder at or under ``root`` (three levels) holding a ``test_case.yaml``, sorted."""
    if not root.exists():
        raise NotFoundError(f"no such cases folder: {root}", hint="give a folder of case folders")
    if (root / CASE_FILE).is_file():
        return [root]
    found = sorted({p.parent for depth in ("*", "*/*", "*/*/*") for p in root.glob(f"{depth}/{CASE_FILE}")})
    if not found:
        raise NotFoundError(
            f"no {CASE_FILE} under {root}",
            hint="a case is a folder with test_case.yaml and its recorded tool outputs (docs/evaluation.md)",
        )
    return found


def load_cases(root: Path) -> list[Case]:
    """Every case under ``root``: variants expanded, skip flags kept (the caller decides)."""
    cases: list[Case] = []
    for folder in find_case_dirs(root):
        cases.extend(load_case(folder))
    ids = [c.id for c in cases]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:  # results are keyed by id: two suites with one case name must not merge
        cases = [
            Case(**{**c.__dict__, "id": f"{c.folder.parent.name}/{c.id}"}) if c.id in dup else c
            for c in cases
        ]
    return cases


def load_case(folder: Path) -> list[Case]:
    """The case(s) of one folder; a malformed file is a :class:`ConfigError` naming it."""
    path = folder / CASE_FILE
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        spec = CaseFile.model_validate(raw)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not YAML: {exc}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(
            f"{path}: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}",
            hint="see the case format in docs/evaluation.md",
        ) from exc
    expected = [spec.expected_output] if isinstance(spec.expected_output, str) else list(spec.expected_output)
    recordings = read_recordings(folder)

    def case(
        case_id: str,
        kind: Kind,
        prompt: str,
        inputs: dict[str, Any],
        history: list[dict[str, str]],
        followups: list[str] | None = None,
    ) -> Case:
        return Case(
            id=case_id,
            kind=kind,
            folder=folder,
            prompt=prompt,
            expected=[e.strip() for e in expected if e and e.strip()],
            correctness=_correctness(spec.evaluation),
            tags=list(spec.tags or []),
            skip=bool(spec.skip),
            skip_reason=spec.skip_reason,
            expected_sections=spec.expected_sections,
            inputs=inputs,
            history=history,
            recordings=recordings,
            followups=followups or [],
        )

    our_inputs = _our_inputs(spec.inputs, folder)
    if (folder / "investigate_request.json").is_file():
        request = _json(folder / "investigate_request.json")
        inputs = our_inputs or _subject_inputs(request.get("subject"))
        return [case(folder.name, "investigate", _investigation(request, folder), inputs, [])]
    if (folder / "workload_health_request.json").is_file():
        request = _json(folder / "workload_health_request.json")
        inputs = our_inputs or _subject_inputs(request.get("resource"))
        return [case(folder.name, "workload_health", _workload_health(request, folder), inputs, [])]
    attached = _attachments(folder, spec.include_files or [])
    history = _history(folder)
    if spec.turns:
        if spec.user_prompt:
            raise ConfigError(
                f"{path}: give user_prompt or turns, not both", hint="turns: questions in order"
            )
        asked = [t.replace("{case_dir}", str(folder.resolve())) for t in spec.turns]
        opening = asked[0] + attached
        inputs = our_inputs or _reference_inputs("\n".join(spec.turns))
        return [case(folder.name, "ask", opening, inputs, history, asked[1:])]
    if not spec.user_prompt:
        raise ConfigError(
            f"{path}: no user_prompt, and no investigate_request.json or workload_health_request.json",
            hint="an ask case needs user_prompt (or turns)",
        )
    prompts = [spec.user_prompt] if isinstance(spec.user_prompt, str) else spec.user_prompt
    out = []
    for i, prompt in enumerate(prompts):
        text = prompt.replace("{case_dir}", str(folder.resolve())) + attached
        case_id = folder.name if len(prompts) == 1 else f"{folder.name}[{i}]"
        out.append(case(case_id, "ask", text, our_inputs or _reference_inputs(prompt), history))
    return out


def _correctness(evaluation: dict[str, Any] | None) -> Correctness:
    value = (evaluation or {}).get("correctness", 1)
    if isinstance(value, dict):
        return Correctness.model_validate(value)
    return Correctness(expected_score=float(value))


def _json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    return value if isinstance(value, dict) else {}


def _our_inputs(inputs: dict[str, Any] | None, folder: Path) -> dict[str, Any]:
    """``inputs`` with ``logs`` paths made absolute against the case folder."""
    out = dict(inputs or {})
    if "logs" in out:
        paths = out["logs"] if isinstance(out["logs"], list) else [out["logs"]]
        out["logs"] = [str((folder / str(p)).resolve()) for p in paths]
    if "repo" in out:
        out["repo"] = str((folder / str(out["repo"])).resolve())
    return out


def _subject_inputs(subject: Any) -> dict[str, Any]:
    """An alert's or workload's subject as offline inputs: a pod or deployment and its namespace."""
    if not isinstance(subject, dict):
        return {}
    kind = str(subject.get("subject_type") or subject.get("kind") or "").lower()
    out: dict[str, Any] = {}
    if kind in _INPUT_KINDS and subject.get("name"):
        out[_INPUT_KINDS[kind]] = str(subject["name"])
    if subject.get("namespace"):
        out["namespace"] = str(subject["namespace"])
    return out


def _reference_inputs(prompt: str) -> dict[str, Any]:
    """Offline inputs from ``<< {"type": "pod", "name": …, "namespace": …} >>`` references; a kind
    referenced twice with different names gives nothing (as a question naming two pods does)."""
    found: dict[str, set[str]] = {}
    for m in _REFERENCE.finditer(prompt):
        try:
            ref = json.loads(m.group(1))
        except json.JSONDecodeError:
            continue
        if not isinstance(ref, dict):
            continue
        kind = _INPUT_KINDS.get(str(ref.get("type", "")).lower())
        if kind and ref.get("name"):
            found.setdefault(kind, set()).add(str(ref["name"]))
        if ref.get("namespace"):
            found.setdefault("namespace", set()).add(str(ref["namespace"]))
    return {k: v.pop() for k, v in found.items() if len(v) == 1}


def _attachments(folder: Path, names: list[str]) -> str:
    """``include_files`` appended to the prompt, each in an ``<attached-file>`` block."""
    out = ""
    for name in names:
        path = folder / name
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"include_files names {path}, which cannot be read: {exc.strerror}") from exc
        out += f'\n\n<attached-file path="{name}">\n{text.strip()}\n</attached-file>'
    return out


def _history(folder: Path) -> list[dict[str, str]]:
    """Earlier turns: ``conversation_history/NN_role.md`` files, else ``conversation_history.json``.
    System turns are left out (our agent has its own instructions), so are tool turns."""
    turns: list[dict[str, str]] = []
    md_dir = folder / "conversation_history"
    if md_dir.is_dir():
        for path in sorted(md_dir.glob("*.md")):
            _, _, role = path.stem.partition("_")
            turns.append({"role": role, "content": path.read_text(encoding="utf-8")})
    elif (folder / "conversation_history.json").is_file():
        try:
            raw = json.loads((folder / "conversation_history.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"cannot read {folder / 'conversation_history.json'}: {exc}") from exc
        turns = [t for t in raw if isinstance(t, dict)] if isinstance(raw, list) else []
    return [
        {"role": str(t["role"]), "content": str(t.get("content") or "")}
        for t in turns
        if t.get("role") in ("user", "assistant") and t.get("content")
    ]


def _instructions(folder: Path) -> str:
    extra = ""
    data = (
        _json(folder / "resource_instructions.json")
        if (folder / "resource_instructions.json").is_file()
        else {}
    )
    lines = [str(i) for i in data.get("instructions") or []]
    lines += [str(d.get("url")) for d in data.get("documents") or [] if isinstance(d, dict) and d.get("url")]
    if lines:
        extra += "\n\nInstructions for this resource:\n" + "\n".join(f"- {line}" for line in lines)
    issue = _json(folder / "issue_data.json") if (folder / "issue_data.json").is_file() else {}
    if issue:
        extra += "\n\nIssue data:\n" + json.dumps(issue, indent=2)
    return extra


def _investigation(request: dict[str, Any], folder: Path) -> str:
    """The alert as a question, with every field the request carries."""
    subject = request.get("subject") if isinstance(request.get("subject"), dict) else {}
    assert isinstance(subject, dict)
    lines = [f"Investigate this alert: {request.get('title') or '(untitled)'}"]
    if request.get("description"):
        lines.append(f"Description: {request['description']}")
    if request.get("source"):
        lines.append(f"Source: {request['source']}")
    if subject:
        what = " ".join(str(subject[k]) for k in ("subject_type", "name") if subject.get(k))
        where = [f"{k} {subject[k]}" for k in ("namespace", "node", "container") if subject.get(k)]
        lines.append(f"Subject: {what}" + (f" ({', '.join(where)})" if where else ""))
    context = request.get("context")
    if isinstance(context, dict) and context:
        lines.append("Context: " + ", ".join(f"{k}={v}" for k, v in context.items()))
    return "\n".join(lines) + _instructions(folder)


def _workload_health(request: dict[str, Any], folder: Path) -> str:
    resource = request.get("resource") if isinstance(request.get("resource"), dict) else {}
    assert isinstance(resource, dict)
    ask = str(request.get("ask") or "Is this workload healthy?")
    name = "/".join(str(resource[k]) for k in ("namespace", "kind", "name") if resource.get(k))
    return (
        f"{ask}\nWorkload: {name}\n"
        "End the answer with one line `workload_healthy: true` or `workload_healthy: false`."
        + _instructions(folder)
    )
