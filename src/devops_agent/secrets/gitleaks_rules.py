"""Provider token formats generated from gitleaks' rule set, applied with gitleaks' own semantics.

The data is ``data/gitleaks_rules.json``, written by ``scripts/gen_secret_rules.py`` from gitleaks'
``config/gitleaks.toml`` (MIT, Copyright (c) 2019 Zachary Rice; notice in
``data/gitleaks_LICENSE.txt``); the file's header records the upstream commit and how many rules
were translated from Go RE2 or skipped. Nothing here is edited by hand: to update, regenerate.

Each rule is applied as gitleaks applies it: the regex runs where one of its keywords occurs
(case-insensitively); the secret is the rule's ``secretGroup`` or else the first non-empty group
(or the whole match); a rule with an entropy threshold drops a secret whose Shannon entropy is not
above it; the global and the rule's allowlists (regexes on the secret, the match or the line;
stopwords in the secret) cancel a finding. This module imports nothing from the package and never
returns secret values, only spans.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class _Allowlist:
    target: str  # "secret", "match" or "line"
    regexes: tuple[re.Pattern[str], ...]
    stopwords: tuple[str, ...]
    all: bool  # gitleaks' condition AND: every check present must hold

    def allows(self, secret: str, match: str, line: str) -> bool:
        """Whether this allowlist cancels a finding of ``secret`` (in ``match``, on ``line``)."""
        target = match if self.target == "match" else line if self.target == "line" else secret
        checks: list[bool] = []
        if self.regexes:
            checks.append(any(rx.search(target) for rx in self.regexes))
        if self.stopwords:
            low = secret.lower()
            checks.append(any(w in low for w in self.stopwords))
        return all(checks) if self.all else any(checks)


@dataclass(frozen=True, slots=True)
class GeneratedRule:
    """One gitleaks rule: ``kind`` is its id with ``_`` for ``-`` (``github_pat``)."""

    kind: str
    keywords: tuple[str, ...]
    regex: re.Pattern[str]
    entropy: float
    secret_group: int
    allowlists: tuple[_Allowlist, ...]

    def find(
        self, text: str, lo: int, hi: int, global_allow: tuple[_Allowlist, ...]
    ) -> Iterator[tuple[int, int]]:
        """Spans of secrets in ``text[lo:hi]`` (whole lines) as gitleaks would report them."""
        for m in self.regex.finditer(text, lo, hi):
            start, end = _secret_span(m, self.secret_group)
            if end <= start:
                continue
            secret = text[start:end]
            if self.entropy and shannon_entropy(secret) <= self.entropy:
                continue
            if any(a.allows(secret, secret, secret) for a in global_allow):
                continue  # the global allowlist looks at the secret only
            if self.allowlists:
                line_lo = text.rfind("\n", 0, m.start()) + 1
                line_hi = text.find("\n", m.end())
                line = text[line_lo : len(text) if line_hi < 0 else line_hi]
                if any(a.allows(secret, m.group(), line) for a in self.allowlists):
                    continue
            yield start, end


def _secret_span(m: re.Match[str], group: int) -> tuple[int, int]:
    if group:
        return m.span(group) if m.re.groups >= group and m.group(group) is not None else (0, 0)
    for g in range(1, m.re.groups + 1):
        if m.group(g):
            return m.span(g)
    return m.span()


def shannon_entropy(value: str) -> float:
    """Bits per character of ``value``'s character distribution (0 for an empty string)."""
    n = len(value)
    if not n:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def _allowlists(items: Iterable[dict[str, Any]]) -> tuple[_Allowlist, ...]:
    # The regexes of one allowlist are tried as one alternation (one search instead of a dozen).
    return tuple(
        _Allowlist(
            a["target"],
            (re.compile("|".join(f"(?:{r})" for r in a["regexes"]), re.ASCII),) if a["regexes"] else (),
            tuple(a["stopwords"]),
            bool(a["all"]),
        )
        for a in items
    )


@functools.cache
def _data() -> dict[str, Any]:
    path = importlib.resources.files("devops_agent.secrets") / "data" / "gitleaks_rules.json"
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data


def source() -> dict[str, Any]:
    """Where the rules come from (repository, commit, licence) and the generator's counts."""
    data = _data()
    return {**data["source"], **data["counts"]}


@functools.cache
def global_allowlist() -> tuple[_Allowlist, ...]:
    """gitleaks' global allowlist (placeholders such as ``${VAR}``, one letter repeated)."""
    return _allowlists(_data()["global_allowlist"])


@functools.cache
def generated_rules() -> tuple[GeneratedRule, ...]:
    """Every generated rule, compiled (``re.ASCII``: RE2's ``\\w``, ``\\d``, ``\\b`` are ASCII)."""
    return tuple(
        GeneratedRule(
            kind=r["id"].replace("-", "_"),
            keywords=tuple(r["keywords"]),
            regex=re.compile(r["regex"], re.ASCII),
            entropy=float(r.get("entropy", 0.0)),
            secret_group=int(r.get("secret_group", 0)),
            allowlists=_allowlists(r.get("allowlists", [])),
        )
        for r in _data()["rules"]
    )


_LITERAL_RX = re.compile(r"[A-Za-z0-9_-]+")


@functools.cache
def _known_values() -> tuple[frozenset[str], re.Pattern[str] | None, tuple[str, ...]]:
    """The rule allowlists' secret tests (OR allowlists): literal values (compared whole: findings
    are the tokens themselves),
    the other regexes as one alternation, and the stopwords."""
    lists = [
        a
        for r in _data()["rules"]
        for a in r.get("allowlists", [])
        if a["target"] == "secret" and not a["all"]
    ]
    patterns = [p for a in lists for p in a["regexes"]]
    literals = frozenset(p for p in patterns if _LITERAL_RX.fullmatch(p))
    # A search for ".+X$" is quadratic; anchored ("^.+X$") it is the same test on a one-line value.
    others = ["^" + p if p.startswith((".+", ".*")) else p for p in patterns if p not in literals]
    combined = re.compile("|".join(f"(?:{p})" for p in others), re.ASCII) if others else None
    return literals, combined, tuple(w for a in lists for w in a["stopwords"])


def known_public_value(value: str) -> bool:
    """Whether a rule's allowlist in the rule set names ``value`` as a known public or example value
    (the Firebase SDK's test API keys, ``…EXAMPLE`` keys): applied to every finding, whichever rule
    made it, since the value is public whatever shape found it."""
    if len(value) > 256:
        return False  # a key block or a blob, not a token
    literals, combined, stopwords = _known_values()
    if value in literals or (combined is not None and combined.search(value)):
        return True
    low = value.lower()
    return any(w in low for w in stopwords)


# gitleaks builds its "<provider name> ... = <value>" rules with one helper, whose regex carries this
# piece; every other rule is a token format that starts with its own literal prefix.
_NAMED_CONTEXT = r"(?:[ \t\w.-]{0,20})"


@functools.cache
def _prefix_rules() -> dict[str, tuple[tuple[str, bool, re.Pattern[str]], ...]]:
    """``(prefix, ignore_case, regex)`` of every token-format rule and keyword (4+ characters) it
    starts with, as the regex writes it (``API-`` for Octopus Deploy: an ``api-…`` run is not
    claimed), by the prefix's first four characters (lower case where the rule ignores case)."""
    claims: dict[str, list[tuple[str, bool, re.Pattern[str]]]] = {}
    for rule in generated_rules():
        pattern = rule.regex.pattern
        if _NAMED_CONTEXT in pattern:
            continue
        head = pattern.replace("\\", "")[:60]
        for kw in rule.keywords:
            at = head.lower().find(kw)
            if len(kw) < 4 or kw.startswith("http") or at < 0:
                continue
            ignore_case = "(?i" in head[:at]
            prefix = kw if ignore_case else head[at : at + len(kw)]
            claims.setdefault(prefix[:4], []).append((prefix, ignore_case, rule.regex))
    return {k: tuple(v) for k, v in claims.items()}


def claimed_but_malformed(run: str) -> bool:
    """Whether ``run`` starts with a prefix a provider's token format claims (``ghp_``, ``glpat-``,
    ``sk-ant-api03``) yet matches none of the formats that claim it: a lookalike (a token cut
    short, padded, or with characters the provider never issues), not that provider's token. The
    provider's format, maintained upstream, knows its tokens better than a generic shape does."""
    claims = _prefix_rules()
    low = run[:40].lower()
    candidates = claims.get(run[:4], ()) + (claims.get(low[:4], ()) if low[:4] != run[:4] else ())
    regexes = [rx for p, i, rx in candidates if (low if i else run).startswith(p)]
    return bool(regexes) and not any(rx.search(run + "\n") for rx in regexes)
