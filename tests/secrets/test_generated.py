"""Provider rules generated from gitleaks' rule set: the RE2 translation, the shipped data, and the
semantics the scrubber applies them with (secret group, entropy, allowlists).

Token bodies are built at test time from a hash; no literal here is a real provider token.
"""

from __future__ import annotations

import importlib.util
import json
import re
import string
import sys
from pathlib import Path
from types import ModuleType

import pytest

from devops_agent.privacy import find_secrets
from devops_agent.secrets.gitleaks_rules import generated_rules, known_public_value, source
from fixtures_canary import random_text as body

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data" / "gitleaks"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_secret_rules", ROOT / "scripts" / "gen_secret_rules.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_secret_rules"] = module
    spec.loader.exec_module(module)
    return module


gen = _generator()


@pytest.mark.parametrize(
    ("re2", "python"),
    [
        (r"\b(p8e-(?i)[a-z0-9]{32})(?:x|$)", r"\b(p8e-(?i:[a-z0-9]{32}))(?:x|$)"),  # flags mid-pattern
        (r"a(?i)b|c", r"a(?i:b|c)"),  # to the end of the enclosing group, alternatives included
        (r"(?i)abc", r"(?i)abc"),  # leading global flags stay
        (r"(?:[^\w-]|\z)", r"(?:[^\w-]|\Z)"),
        (r"pat[[:alnum:]]{14}", r"pat[a-zA-Z0-9]{14}"),
        (r"(?<name>x)", r"(?P<name>x)"),
        (r"[]a]", r"[\]a]"),
    ],
)
def test_re2_constructs_are_translated(re2: str, python: str) -> None:
    assert gen.translate(re2) == python
    re.compile(python, re.ASCII)


@pytest.mark.parametrize("re2", [r"\p{Greek}+", r"\QA.B\E", r"(?U)a+", r"[[:^alpha:]]", r"(ab"])
def test_untranslatable_constructs_are_refused(re2: str) -> None:
    with pytest.raises(gen.Untranslatable):
        gen.translate(re2)


def test_keyword_context_prefix_is_dropped_and_flags_scoped() -> None:
    assert gen._drop_key_prefix(r"(?i)[\w.-]{0,50}?(?:acme)(?:x)") == "(?i)(?:acme)(?:x)"
    assert gen._drop_key_prefix(r"[\w.-]{0,50}?(?i:[\w.-]{0,50}?(?:acme))") == "(?i:(?:acme))"
    assert gen._scoped("(?i)^true|false$") == "(?i:^true|false$)"


def test_shipped_data_records_its_source_and_counts() -> None:
    info = source()
    assert info["repository"] == "gitleaks/gitleaks"
    assert re.fullmatch(r"[0-9a-f]{40}", info["commit"])
    assert info["license"] == "MIT"
    assert info["kept"] + info["skipped"] == info["upstream_rules"]
    assert info["kept"] == len(generated_rules()) > 150
    notice = Path(__file__).resolve().parents[2] / "src/devops_agent/secrets/data/gitleaks_LICENSE.txt"
    assert info["commit"] in notice.read_text()
    assert "MIT License" in notice.read_text()


@pytest.mark.skipif(not (SHARED / "gitleaks.toml").is_file(), reason="no ../shared/data/gitleaks here")
def test_shipped_data_is_what_the_generator_makes_from_the_shared_rule_set() -> None:
    data = gen.generate(SHARED)
    shipped = (ROOT / "src/devops_agent/secrets/data/gitleaks_rules.json").read_text()
    assert gen.render(data) == shipped, "regenerate: python scripts/gen_secret_rules.py"
    assert json.loads(shipped)["source"]["commit"] == gen.commit_of(SHARED)


def test_generator_cli_check_and_a_missing_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        gen.main(["--source", str(tmp_path), "--out", str(tmp_path / "x.json")])
    assert exit_.value.code == 2
    assert "gitleaks.toml" in capsys.readouterr().err
    (tmp_path / "gitleaks.toml").write_text(
        "[allowlist]\nregexes = ['''^\\$[A-Z_]+$''']\nstopwords = []\n\n"
        "[[rules]]\nid = 'acme-token'\ndescription = 'x'\nregex = '''\\b(acme_(?i)[a-z0-9]{24})\\b'''\n"
        "keywords = ['acme_']\nentropy = 3\n\n"
        "[[rules]]\nid = 'file-only'\ndescription = 'x'\npath = '''\\.p12$'''\n"
    )
    (tmp_path / "SOURCE.md").write_text("- repo: gitleaks/gitleaks, commit " + "a" * 40 + "\n")
    (tmp_path / "LICENSE").write_text("MIT License\n")
    out = tmp_path / "rules.json"
    assert gen.main(["--source", str(tmp_path), "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["counts"] == {
        "upstream_rules": 2, "kept": 1, "regex_translated": 1, "key_prefix_dropped": 0, "skipped": 1,
    }  # fmt: skip
    assert data["rules"][0]["regex"] == r"\b(acme_(?i:[a-z0-9]{24}))\b"
    assert data["source"]["commit"] == "a" * 40
    assert gen.main(["--source", str(tmp_path), "--out", str(out), "--check"]) == 0
    out.write_text(out.read_text().replace("acme", "acmf"))
    assert gen.main(["--source", str(tmp_path), "--out", str(out), "--check"]) == 1


def test_generated_rule_reports_its_secret_group_and_respects_entropy() -> None:
    token = "glpat-" + body(string.ascii_letters + string.digits, 20, "gl")
    text = f"GITLAB_TOKEN={token}\n"
    found = [(f.kind, text[f.start : f.end]) for f in find_secrets(text)]
    assert ("gitlab_pat", token) in found
    # a keyword-context rule reports the value, not the key name before it
    key = body("0123456789abcdef", 32, "adafruit")
    line = f"adafruit_io_key = '{key}'"
    assert [line[f.start : f.end] for f in find_secrets(line)] == [key]


def test_values_that_the_rule_set_allowlists_are_public() -> None:
    assert known_public_value("AKIAIOSFODNN7" + "EXAMPLE")  # AWS' documentation key
    assert not known_public_value("AKIAQX4ZRT7MWN2PLK5B")
    assert known_public_value("x" * 300) is False  # blobs are not looked at
    assert find_secrets("aws_access_key_id = AKIAIOSFODNN7" + "EXAMPLE") == []


B62 = string.ascii_letters + string.digits


@pytest.mark.parametrize(
    ("lookalike", "real"),
    [
        # GitHub's format is ghp_ + exactly 36 base62: one short, or with a character it never issues
        ("ghp_" + body(B62, 35, "gh"), "ghp_" + body(B62, 36, "gh")),
        ("ghp_" + body(B62, 20, "gh2") + "-" + body(B62, 15, "gh3"), "ghp_" + body(B62, 36, "gh4")),
        # GitLab's pipeline trigger token is glptt- + 40 hex: base62 after the prefix is not it
        ("glptt-" + body(B62, 40, "gl"), "glptt-" + body("0123456789abcdef", 40, "gl")),
    ],
)
def test_a_shape_whose_prefix_a_provider_claims_defers_to_that_format(lookalike: str, real: str) -> None:
    # With provider rules on, the provider's format decides for its own prefix; a lookalike of it is
    # left. Without them (a provider nobody named) the shape still masks it.
    assert find_secrets(f"value {lookalike} end") == [], lookalike
    assert find_secrets(f"value {lookalike} end", provider_rules=False)
    text = f"value {real} end"
    assert [text[f.start : f.end] for f in find_secrets(text)] == [real]


def test_an_unclaimed_prefix_or_another_case_is_still_a_shape() -> None:
    # Octopus Deploy claims "API-" (capitals, as its format writes it); a lower-case "api-" token of
    # a provider no rule names is not its lookalike.
    token = "api-" + body(B62, 32, "octo")
    assert find_secrets(f"value {token} end")
    assert find_secrets(f"value zx9_{body(B62, 32, 'zx')} end")
