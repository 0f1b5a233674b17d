"""Finding runbooks: the shipped ones (package data) plus user directories, and choosing among them.

User runbooks in ``runbooks.extra_dirs`` override shipped ones of the same name. Selection is
deterministic keyword scoring on the question, plus the inputs that imply a runbook (log files
imply ``log-errors``, a repository ``recent-changes``) and ``host-health`` as the fallback.

This module reads YAML files and nothing else: it must not run tools or analyzers.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from devops_agent.errors import ConfigError, NotFoundError
from devops_agent.runbooks.model import Runbook
from devops_agent.runbooks.templating import is_empty

DEFAULT_RUNBOOK = "host-health"
ALERT_RUNBOOK = "metric-alert"
"""What an alert (a run whose inputs carry its ``onset``) is investigated with."""
INPUT_RUNBOOKS = {
    "query": "metric-alert",
    "logs": "log-errors",
    "repo": "recent-changes",
    "pod": "pod-crashloop",
    "selector": "pod-crashloop",
    "deployment": "pod-crashloop",
}
"""A non-empty input of this name selects that runbook whatever the question says."""

_LIST_HINT = "`devops-agent runbooks list`"


class _RunbookYAMLLoader(yaml.SafeLoader):
    """YAML 1.2 booleans: only true/false. YAML 1.1 would turn the key ``on:`` into ``True``."""


_BOOL = "tag:yaml.org,2002:bool"
_RunbookYAMLLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != _BOOL]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_RunbookYAMLLoader.add_implicit_resolver(
    _BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _where(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


_PATH = re.compile(r"^(?P<path>[A-Za-z_]\w*(?:\[\d+\])?(?:\.[A-Za-z_]\w*(?:\[\d+\])?)*): ")
"""A field path such as ``steps[1].args`` leading a whole-runbook check's message."""


def _loc_of(path: str) -> tuple[int | str, ...]:
    """``steps[1].args`` as a pydantic location: ``("steps", 1, "args")``."""
    loc: list[int | str] = []
    for part in path.split("."):
        name, _, index = part.partition("[")
        loc.append(name)
        if index:
            loc.append(int(index.rstrip("]")))
    return tuple(loc)


def _line_of(text: str, loc: tuple[int | str, ...]) -> int | None:
    """The 1-based line of the YAML node at ``loc`` (or of the deepest part of it that exists)."""
    try:
        node = yaml.compose(text, Loader=_RunbookYAMLLoader)
    except yaml.YAMLError:
        return None
    if node is None:
        return None
    line = node.start_mark.line
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            pair = next(
                ((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == str(part)),
                None,
            )
            if pair is None:
                break
            line, node = pair[0].start_mark.line, pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line
        else:
            break
    return line + 1


def parse_runbook(text: str, source: str) -> Runbook:
    """Validate one runbook from YAML text; ``source`` names the file in error messages.

    Raises :class:`ConfigError` whose message carries the file, the line and the offending key:
    ``rb.yaml:7: steps[1].tol: unknown key``.
    """
    try:
        raw = yaml.load(text, Loader=_RunbookYAMLLoader)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: invalid YAML: {exc}", hint="fix the syntax") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: a runbook must be a YAML mapping", hint="see the shipped runbooks")
    try:
        return Runbook.model_validate(raw).with_source(source)
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        what = (
            "unknown key"
            if first["type"] == "extra_forbidden"
            else first["msg"].removeprefix("Value error, ")
        )
        loc = tuple(first["loc"])
        if not loc and (path := _PATH.match(what)):  # a whole-runbook check names its field itself
            loc, what = _loc_of(path["path"]), what[path.end() :]
        line = _line_of(text, loc)
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise ConfigError(
            f"{source}{f':{line}' if line else ''}: {_where(loc)}: {what}{more}",
            hint="compare with a shipped runbook: `devops-agent runbooks show host-health`",
        ) from None


def load_runbook_file(path: Path) -> Runbook:
    """Load and validate one runbook file; raises :class:`ConfigError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read runbook: {exc.strerror}") from exc
    return parse_runbook(text, str(path))


def _package_runbooks() -> list[Runbook]:
    return list(_parsed_package_runbooks())


@functools.cache
def _parsed_package_runbooks() -> tuple[Runbook, ...]:
    # Shipped files do not change while the process runs: parsed once (the planner offers the
    # runbooks as tools on every model run; parsing them took most of its own time per run).
    data = resources.files("devops_agent.runbooks") / "data"
    files = sorted((f for f in data.iterdir() if f.name.endswith(".yaml")), key=lambda f: f.name)
    return tuple(parse_runbook(f.read_text(encoding="utf-8"), f"package:{f.name}") for f in files)


def _dir_runbooks(directory: Path) -> list[Runbook]:
    if not directory.is_dir():
        raise ConfigError(
            f"runbook directory {directory} does not exist",
            hint="fix runbooks.extra_dirs in devops-agent.toml",
        )
    files = sorted([*directory.glob("*.yaml"), *directory.glob("*.yml")])
    return [load_runbook_file(f) for f in files]


def load_runbooks(extra_dirs: Sequence[Path] = ()) -> list[Runbook]:
    """Shipped runbooks, then each of ``extra_dirs`` in order; a later runbook replaces an
    earlier one of the same name. Two files with the same name in one directory are an error."""
    by_name: dict[str, Runbook] = {}
    for batch in [_package_runbooks(), *(_dir_runbooks(Path(d)) for d in extra_dirs)]:
        seen: dict[str, str] = {}
        for runbook in batch:
            if runbook.name in seen:
                raise ConfigError(
                    f"runbook {runbook.name!r} is defined twice: {seen[runbook.name]} and {runbook.source}",
                    hint="rename one of them",
                )
            seen[runbook.name] = runbook.source
            by_name[runbook.name] = runbook
    return sorted(by_name.values(), key=lambda r: r.name)


def get_runbook(
    name: str, runbooks: Iterable[Runbook] | None = None, *, extra_dirs: Sequence[Path] = ()
) -> Runbook:
    """The runbook called ``name`` among ``runbooks`` (default: :func:`load_runbooks`).

    Raises :class:`NotFoundError` naming the known runbooks.
    """
    available = list(runbooks) if runbooks is not None else load_runbooks(extra_dirs)
    for runbook in available:
        if runbook.name == name:
            return runbook
    known = ", ".join(r.name for r in available) or "none"
    raise NotFoundError(f"unknown runbook {name!r} (known: {known})", hint=_LIST_HINT)


def keyword_score(question: str, runbook: Runbook) -> int:
    """How many of the runbook's keywords (and its name) occur in ``question`` as whole words."""
    text = question.lower()
    score = 0
    for keyword in {*runbook.keywords, runbook.name}:
        words = keyword.lower().strip()
        if words and re.search(rf"(?<!\w){re.escape(words)}(?!\w)", text):
            score += 1
    return score


def select_runbooks(question: str, inputs: Mapping[str, Any], available: Sequence[Runbook]) -> list[Runbook]:
    """The runbooks that apply to ``question`` and ``inputs``, best match first.

    Keyword matches (case-insensitive, whole words) ranked by score; then the runbooks implied
    by non-empty inputs (:data:`INPUT_RUNBOOKS`); if nothing applies, :data:`DEFAULT_RUNBOOK`.

    An alert's investigation (its ``onset`` input is set) gets :data:`ALERT_RUNBOOK` instead of
    keyword matches: its question is the rule author's text about the host the alert fires on,
    and a runbook it matches (host-health: "memory", "disk") would inspect this machine instead.
    """
    by_name = {r.name: r for r in available}
    if not is_empty(inputs.get("onset")) and ALERT_RUNBOOK in by_name:
        chosen = [by_name[ALERT_RUNBOOK]]
    else:
        scored = [(keyword_score(question, r), i, r) for i, r in enumerate(available)]
        chosen = [r for score, _, r in sorted(scored, key=lambda t: (-t[0], t[1])) if score > 0]
    for input_name, runbook_name in INPUT_RUNBOOKS.items():
        implied = by_name.get(runbook_name)
        if implied and not is_empty(inputs.get(input_name)) and all(r.name != runbook_name for r in chosen):
            chosen.append(implied)
    if not chosen and DEFAULT_RUNBOOK in by_name:
        chosen.append(by_name[DEFAULT_RUNBOOK])
    return chosen
