"""Generate the scrubber's provider token rules from gitleaks' rule set.

Usage: python scripts/gen_secret_rules.py [--source DIR] [--out FILE] [--check]

Reads ``DIR/gitleaks.toml`` (gitleaks' default configuration) and ``DIR/SOURCE.md`` (which names
the upstream commit), translates each rule's Go RE2 regex into Python ``re`` syntax and writes
``src/devops_agent/secrets/data/gitleaks_rules.json`` with the commit, the licence notice and the
translation counts in its header. ``--check`` regenerates in memory and exits 1 if the committed
file differs (for CI or a test).

What is translated (RE2 and Python disagree):

* a flag group inside a pattern (``p8e-(?i)[a-z0-9]{32}``): RE2 applies it to the rest of the
  enclosing group; Python accepts global flags only at the start, so the rest of the group becomes
  a scoped group ``(?i:…)``;
* an allowlist regex's leading flags become a scoped group (the scrubber joins an allowlist's
  regexes into one alternation);
* the lazy ``[\\w.-]{0,50}?`` before a keyword-context rule's provider name is dropped (it only
  widens the match to the key name; the secret group is unchanged; Python tries it at every
  position);
* ``\\z`` (end of text) becomes ``\\Z``; POSIX classes (``[[:alnum:]]``) become explicit ranges;
  a ``[`` inside a class is escaped (Python would warn of a nested set); ``(?<name>`` becomes
  ``(?P<name>``.

Every translated regex must compile under Python with ``re.ASCII`` (RE2's ``\\w``, ``\\d``, ``\\s``
and ``\\b`` are ASCII) or the rule is skipped with the reason. Also skipped, each with a reason:
rules with no regex or restricted to file paths (the scrubber sees text, not file names), and the
few structural rules the scrubber implements itself (generic keys, private keys, JWTs, curl
credentials; see ``COVERED``).

The rule set is MIT-licensed (Copyright (c) 2019 Zachary Rice); the notice is copied next to the
generated file. The generated file is rule data, not benchmark data: nothing here reads a benchmark.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = ROOT.parent / "shared" / "data" / "gitleaks"
DEFAULT_OUT = ROOT / "src" / "devops_agent" / "privacy" / "data" / "gitleaks_rules.json"
LICENSE_OUT = DEFAULT_OUT.with_name("gitleaks_LICENSE.txt")

# Structural rules the scrubber implements itself, with its own context tests: importing these
# would duplicate them with a different notion of a placeholder (and the curl rules' ``.*`` across
# lines is slow on long tool outputs).
COVERED = {
    "generic-api-key": "assignment context + entropy: the scrubber's config_secret finder",
    "private-key": "PEM blocks: the scrubber's private_key finder (also inside JSON with \\n escapes)",
    "jwt": "JWT structure: the scrubber's jwt shape rule",
    "curl-auth-header": "Authorization headers anywhere: the scrubber's authorization_header finder",
    "curl-auth-user": "curl -u user:pass: the scrubber's cli_password finder",
}

_POSIX = {
    "alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "digit": "0-9", "lower": "a-z", "upper": "A-Z",
    "space": r"\t\n\v\f\r ", "xdigit": "0-9A-Fa-f", "word": r"\w", "punct": r"!-/:-@\[-`{-~",
}  # fmt: skip


class Untranslatable(ValueError):
    """A construct Python's ``re`` has no equivalent for."""


def translate(pattern: str) -> str:
    """The RE2 ``pattern`` in Python ``re`` syntax (see the module docstring for what changes)."""
    out: list[str] = []
    # For each open group: how many scoped flag groups were opened inside it (closed with it).
    scopes: list[int] = [0]
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1 : i + 2]
            if nxt == "z":
                out.append(r"\Z")
            elif nxt in ("Q", "p", "P", "C"):
                raise Untranslatable(f"\\{nxt} at {i}")
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if c == "[":
            j, cls = _char_class(pattern, i)
            out.append(cls)
            i = j
            continue
        if c == "(":
            m = re.match(r"\(\?([a-zA-Z-]+)\)", pattern[i:])
            if m:
                flags = m.group(1)
                if "U" in flags:
                    raise Untranslatable(f"ungreedy flag at {i}")
                if i == 0:
                    out.append(m.group())  # global flags at the start: Python agrees
                else:
                    out.append(f"(?{flags}:")
                    scopes[-1] += 1
                i += len(m.group())
                continue
            if pattern.startswith("(?<", i) and not pattern.startswith(("(?<=", "(?<!"), i):
                out.append("(?P<")
                i += 3
            else:
                out.append(c)
                i += 1
            scopes.append(0)
            continue
        if c == ")":
            out.append(")" * scopes.pop())
            if not scopes:
                raise Untranslatable(f"unbalanced ) at {i}")
            out.append(c)
            i += 1
            continue
        out.append(c)
        i += 1
    if len(scopes) != 1:
        raise Untranslatable("unbalanced (")
    out.append(")" * scopes[0])
    return "".join(out)


def _char_class(pattern: str, i: int) -> tuple[int, str]:
    """Translate the bracket expression starting at ``pattern[i]``; returns (end index, text)."""
    out = ["["]
    j = i + 1
    if pattern.startswith("^", j):
        out.append("^")
        j += 1
    if pattern.startswith("]", j):  # a leading ] is a literal
        out.append(r"\]")
        j += 1
    while j < len(pattern):
        c = pattern[j]
        if c == "\\":
            if pattern[j + 1 : j + 2] in ("p", "P", "Q"):
                raise Untranslatable(f"\\{pattern[j + 1]} in a class at {j}")
            out.append(pattern[j : j + 2])
            j += 2
            continue
        if c == "[":
            m = re.match(r"\[:(\^?)([a-z]+):\]", pattern[j:])
            if m:
                if m.group(1) or m.group(2) not in _POSIX:
                    raise Untranslatable(f"POSIX class {m.group()} at {j}")
                out.append(_POSIX[m.group(2)])
                j += len(m.group())
                continue
            out.append(r"\[")
            j += 1
            continue
        if c == "]":
            out.append("]")
            return j + 1, "".join(out)
        out.append(c)
        j += 1
    raise Untranslatable(f"unterminated class at {i}")


def _compile(pattern: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a FutureWarning (nested set) is a translation defect too
        re.compile(pattern, re.ASCII)


_KEY_PREFIX_RX = re.compile(r"^((?:\(\?i[:)])?)\[\\w\.-\]\{0,50\}\?")


def _drop_key_prefix(pattern: str) -> str:
    """Drop the lazy ``[\\w.-]{0,50}?`` that gitleaks' keyword-context rules put before the
    provider's name (twice in some, around a flag group): it only widens the match to the rest of
    the key name (the secret group is the same), and Python tries it at every position of a line,
    which made these rules the slowest."""
    while True:
        m = _KEY_PREFIX_RX.match(pattern)
        if m is None:
            return pattern
        pattern = m.group(1) + pattern[m.end() :]


def _scoped(pattern: str) -> str:
    """``(?i)x`` as ``(?i:x)``: the scrubber joins an allowlist's regexes into one alternation, and
    Python accepts global flags only at the very start of the whole pattern."""
    m = re.match(r"\(\?([a-zA-Z]+)\)", pattern)
    return f"(?{m.group(1)}:{pattern[m.end() :]})" if m else pattern


def _allowlists(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Allowlists in the form the scrubber applies: regexes (translated) on a target, stopwords,
    and whether all present checks must hold. Path and commit conditions are dropped (no paths)."""
    out: list[dict[str, Any]] = []
    for a in items:
        if a.get("paths") and a.get("condition", "OR").upper() == "AND":
            continue  # an AND with a path can never hold for text without a path
        regexes = [_scoped(translate(r)) for r in a.get("regexes", [])]
        for r in regexes:
            _compile(r)
        stopwords = [w.lower() for w in a.get("stopwords", [])]
        if not regexes and not stopwords:
            continue
        out.append({
            "target": a.get("regexTarget", "secret"), "regexes": regexes, "stopwords": stopwords,
            "all": a.get("condition", "OR").upper() == "AND",
        })  # fmt: skip
    return out


def commit_of(source: Path) -> str:
    """The upstream commit named in ``source/SOURCE.md``."""
    text = (source / "SOURCE.md").read_text()
    m = re.search(r"commit ([0-9a-f]{40})", text)
    if m is None:
        raise SystemExit(f"gen_secret_rules: no 40-hex commit in {source / 'SOURCE.md'}")
    return m.group(1)


def generate(source: Path) -> dict[str, Any]:
    """The generated rule file's content, as a dict."""
    config = tomllib.loads((source / "gitleaks.toml").read_text())
    rules: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    translated = prefix_dropped = 0
    for rule in config["rules"]:
        rid = rule["id"]
        if rid in COVERED:
            skipped.append({"id": rid, "why": "covered: " + COVERED[rid]})
            continue
        if "regex" not in rule:
            skipped.append({"id": rid, "why": "no regex (a file-name rule)"})
            continue
        if "path" in rule:
            skipped.append({"id": rid, "why": f"only for file paths matching {rule['path']}"})
            continue
        try:
            translated_re = translate(rule["regex"])
            pattern = _drop_key_prefix(translated_re)
            _compile(pattern)
            allow = _allowlists(rule.get("allowlists", []))
        except (Untranslatable, re.error, FutureWarning) as exc:
            skipped.append({"id": rid, "why": f"untranslatable: {exc}"})
            continue
        translated += translated_re != rule["regex"]
        prefix_dropped += pattern != translated_re
        entry: dict[str, Any] = {
            "id": rid, "description": rule.get("description", ""), "regex": pattern,
            "keywords": sorted({k.lower() for k in rule.get("keywords", [])}),
        }  # fmt: skip
        if rule.get("entropy"):
            entry["entropy"] = rule["entropy"]
        if rule.get("secretGroup"):
            entry["secret_group"] = rule["secretGroup"]
        if allow:
            entry["allowlists"] = allow
        rules.append(entry)
    glob = config.get("allowlist", {})
    global_allow = _allowlists([{"regexes": glob.get("regexes", []), "stopwords": glob.get("stopwords", [])}])
    commit = commit_of(source)
    return {
        "generated_by": "scripts/gen_secret_rules.py (do not edit by hand: rerun the script)",
        "source": {
            "repository": "gitleaks/gitleaks", "commit": commit, "file": "config/gitleaks.toml",
            "license": "MIT", "copyright": "Copyright (c) 2019 Zachary Rice",
            "notice": "gitleaks_LICENSE.txt beside this file",
        },
        "counts": {
            "upstream_rules": len(config["rules"]), "kept": len(rules), "regex_translated": translated,
            "key_prefix_dropped": prefix_dropped, "skipped": len(skipped),
        },
        "skipped": skipped,
        "global_allowlist": global_allow,
        "rules": rules,
    }  # fmt: skip


def render(data: dict[str, Any]) -> str:
    """Stable JSON text: one rule per line, so a regeneration diffs by rule."""
    head = {k: v for k, v in data.items() if k != "rules"}
    body = ",\n".join("  " + json.dumps(r, sort_keys=True) for r in data["rules"])
    text = json.dumps(head, indent=1, sort_keys=True)
    return text[:-2] + ',\n "rules": [\n' + body + "\n ]\n}\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="folder of gitleaks.toml + SOURCE.md")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="generated JSON (default: %(default)s)")
    ap.add_argument("--check", action="store_true", help="exit 1 if --out differs from a fresh generation")
    args = ap.parse_args(argv)
    if not (args.source / "gitleaks.toml").is_file():
        ap.error(f"--source {args.source}: no gitleaks.toml there (the shared data: ../shared/data/gitleaks)")
    data = generate(args.source)
    text = render(data)
    json.loads(text)  # the renderer's output must stay valid JSON
    if args.check:
        same = args.out.is_file() and args.out.read_text() == text
        print(f"{args.out}: {'up to date' if same else 'differs from a fresh generation'}")
        return 0 if same else 1
    args.out.write_text(text)
    license_out = args.out.with_name(LICENSE_OUT.name)
    license_out.write_text(
        "gitleaks rule data (gitleaks_rules.json) is derived from gitleaks/gitleaks "
        f"@ {data['source']['commit']}, config/gitleaks.toml, under this licence:\n\n"
        + (args.source / "LICENSE").read_text()
    )
    c = data["counts"]
    print(
        f"{args.out}: {c['kept']} of {c['upstream_rules']} rules kept, {c['regex_translated']} regexes "
        f"translated from RE2, {c['key_prefix_dropped']} key-name prefixes dropped, {c['skipped']} skipped "
        f"(commit {data['source']['commit'][:12]})"
    )
    for s in data["skipped"]:
        print(f"  skipped {s['id']}: {s['why']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
