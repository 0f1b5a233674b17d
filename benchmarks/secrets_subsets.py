"""Subsets of the secrets benchmark that say whether the scrubber generalizes.

* :func:`half`: a deterministic split of the rule examples by upstream rule into a *tuned* half
  (whose misses may be read while working on the rules) and a *held-back* half (scored only), so
  that every example of one provider lies in one half. The half is the parity of the first byte of
  SHA-256 of the row's ``rule_id``.
* :func:`provider_named`: whether our rules name the provider of a row's upstream rule, by the
  words of the rule's name (``"Blynk Device Access Token"`` -> ``blynk``) against the words of
  every provider rule the scrubber has (generated gitleaks rule ids, hand rule kinds). Rows
  whose provider is not named are the "other providers" of issue 30: there only the structural
  rules can find the secret. Rules with no provider word (``Generic Password``, ``HTTP Bearer
  Token``) count as not named.
* :func:`placeholder_like`: a row whose text holds a token-like run that the scrubber's own
  documentation-value test calls hand-typed (``a1B2c3…``, ``…EXAMPLE``, ``abc123xyz``,
  ``1234-1234``). Issue 30 counts such positives as secrets to find (masking a value that only looks
  like a placeholder costs little); for negatives the same reasoning makes flagging one harmless,
  so negatives are reported with these apart as well as all together. The test is mechanical, the
  same for both halves, and decided without looking at what the scrubber reports.
* :func:`ordinary_corpus`: text with (nearly) no secrets, for false hits per 1,000 lines: the
  Loghub-2k logs and HolmesGPT's recorded tool outputs from the benchmark data, and the running
  Python's own standard library (code full of identifiers, hashes and test vectors).

This module reads benchmark data and our rule tables; it must not change either.
"""

from __future__ import annotations

import hashlib
import re
import sysconfig
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from devops_agent.secrets.gitleaks_rules import generated_rules
from devops_agent.secrets.rules import TOKEN_RULES
from devops_agent.secrets.scrubber import is_documentation_value

# Words of rule names that name a kind of secret, not a provider.
GENERIC_WORDS = frozenset(
    [
        "access",
        "account",
        "admin",
        "and",
        "api",
        "app",
        "application",
        "audit",
        "auth",
        "authentication",
        "base64",
        "basic",
        "batch",
        "bearer",
        "bot",
        "cli",
        "client",
        "code",
        "config",
        "configuration",
        "connection",
        "credential",
        "credentials",
        "custom",
        "deploy",
        "device",
        "encoded",
        "fine",
        "generic",
        "grained",
        "hash",
        "http",
        "identity",
        "insert",
        "json",
        "key",
        "keys",
        "legacy",
        "license",
        "live",
        "long",
        "lived",
        "oauth",
        "org",
        "organization",
        "password",
        "permissions",
        "personal",
        "pem",
        "private",
        "provision",
        "public",
        "query",
        "recovery",
        "refresh",
        "rest",
        "scim",
        "secret",
        "secrets",
        "sensitive",
        "service",
        "session",
        "setup",
        "short",
        "signing",
        "stream",
        "string",
        "temporary",
        "test",
        "the",
        "token",
        "tokens",
        "upload",
        "user",
        "username",
        "value",
        "web",
        "webhook",
        "with",
        "in",
        "of",
        "or",
        "for",
        "id",
        "ids",
        "v1",
        "x25519",
        "x22519",
        "recipient",
    ]
)
_WORD_RX = re.compile(r"[a-z0-9]+")
_CAMEL_RX = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def half(row: dict[str, Any]) -> str:
    """``"tuned"`` or ``"heldback"``, fixed by the row's upstream rule."""
    return "tuned" if hashlib.sha256(row["rule_id"].encode()).digest()[0] % 2 == 0 else "heldback"


def words(text: str) -> set[str]:
    """Provider words of a name: alphanumeric runs (camelCase split) of 3+ characters, less generic
    ones and numbers, plus each pair of adjacent non-generic words glued (``Docker Hub`` is also
    ``dockerhub``)."""
    spaced = text if " " in text else _CAMEL_RX.sub(" ", text)  # gitleaks names are CamelCase
    runs = [w for w in _WORD_RX.findall(spaced.lower()) if w not in GENERIC_WORDS]
    runs += [a + b for a, b in zip(runs, runs[1:], strict=False)]
    return {w for w in runs if len(w) >= 3 and not w.isdigit()}


def named_vocabulary() -> set[str]:
    """Every provider word our provider rules carry (ids of generated rules, kinds of hand rules)."""
    vocab: set[str] = set()
    for g in generated_rules():
        vocab |= words(g.kind.replace("_", " "))
    for r in TOKEN_RULES:
        if r.provider:
            vocab |= words(r.kind.replace("_", " "))
    return vocab


def provider_named(row: dict[str, Any], vocab: set[str]) -> bool:
    """Whether a provider word of the row's rule name is in ``vocab`` (see the module docstring)."""
    return bool(words(row["rule_name"]) & vocab)


_TOKEN_RUN_RX = re.compile(r"[A-Za-z0-9_.~+/=-]{16,}")


def placeholder_like(row: dict[str, Any]) -> bool:
    """Whether the row's text holds a 16+ character token-like run that reads as hand-typed."""
    return any(is_documentation_value(m.group()) for m in _TOKEN_RUN_RX.finditer(row["text"]))


def ordinary_corpus(base: Path) -> list[tuple[str, str]]:
    """``(name, text)`` of ordinary files: Loghub-2k logs, HolmesGPT tool outputs (both under
    ``base``, the benchmark data folder; absent ones are skipped) and the top-level modules of the
    running Python's standard library."""
    paths: list[Path] = sorted(base.glob("loghub2k/*/*_2k.log"))
    paths += sorted(
        p
        for p in base.glob("holmesgpt_evals/**/*")
        if p.is_file() and p.suffix in (".txt", ".log", ".json", ".yaml")
    )
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    paths += sorted(stdlib.glob("*.py"))
    return [(str(p), p.read_text(errors="replace")) for p in paths]


def flagged_lines(corpus: Iterable[tuple[str, str]], finder: Any) -> dict[str, Any]:
    """Lines flagged by ``finder(text, name) -> set of line numbers`` over ``corpus``, per 1,000."""
    lines = flagged = 0
    examples: list[str] = []
    for name, text in corpus:
        n = text.count("\n") + 1
        hit = finder(text, name)
        lines += n
        flagged += len(hit)
        if hit and len(examples) < 20:
            all_lines = text.split("\n")
            examples += [f"{Path(name).name}:{i + 1}: {all_lines[i][:120]}" for i in sorted(hit)[:3]]
    return {
        "lines": lines, "flagged": flagged, "per_1000": round(1000 * flagged / max(lines, 1), 3),
        "examples": examples,
    }  # fmt: skip
