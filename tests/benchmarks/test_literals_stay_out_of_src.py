"""No literal from a benchmark file in ``src/`` (issue 30): not in a rule, not in a comment, not in a
docstring's example. The benchmarks' held-out halves are scored at each review; a value copied from
the development half into the code would make its figures say nothing about users' data.

Reads the shared benchmark data beside the project (skips when it is absent) and looks for what
could only have come from it: names, streets and companies of the PII set (runs of three words of
an entity, two words with a number, the words of a person's or a company's name), secret-like tokens
of the rule examples (letters and digits, 16 characters or more), the paths of the code
localization cases' gold files, and six-word runs of the Loghub logs and the HolmesGPT tool
outputs. Vocabulary is not a literal: countries and cities of the gazetteer, nationalities, the
Census first names, host names, counting runs, and what the gitleaks rule set that
``scripts/gen_secret_rules.py`` converts ships itself (its allowlisted examples).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from devops_agent.analysis.tokenclass import is_host_name
from devops_agent.privacy.names import first_names
from devops_agent.privacy.places import NATIONALITIES, gazetteer
from devops_agent.secrets.values import is_dummy

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "benchmarks"
SRC = ROOT / "src" / "devops_agent"
GENERATED = SRC / "secrets" / "data" / "gitleaks_rules.json"  # converted upstream data, not ours
SUFFIXES = (".py", ".txt", ".json", ".toml", ".yaml", ".yml", ".js", ".html", ".css")

pytestmark = pytest.mark.skipif(
    not DATA.is_dir(), reason="the shared benchmark data is not beside the project"
)


def _source_text() -> str:
    files = [
        p
        for p in sorted(SRC.rglob("*"))
        if p.is_file() and p.suffix in SUFFIXES and "__pycache__" not in p.parts and p != GENERATED
    ]
    assert len(files) > 100  # the check must not pass by reading nothing
    return re.sub(r"\s+", " ", "\n".join(p.read_text(errors="replace") for p in files))


@pytest.fixture(scope="module")
def source() -> str:
    return _source_text()


def _grams(words: list[str], n: int) -> Iterable[str]:
    return (" ".join(words[i : i + n]) for i in range(len(words) - n + 1))


def test_no_name_street_or_company_of_the_pii_set(source: str) -> None:
    samples = json.loads((DATA / "pii_presidio_synth" / "synth_dataset_v2.dev.json").read_text())
    places = gazetteer()
    names = places.regions | places.cities | NATIONALITIES | first_names()
    vocabulary = {n.lower() for n in names} | {w.lower() for n in names for w in n.split()}
    runs: set[str] = set()  # looked for anywhere
    words: set[str] = set()  # looked for as whole words
    for sample in samples:
        for span in sample["spans"]:
            value = span["entity_value"].split()
            runs.update(_grams(value, 3))
            # a number beside a word that is not a short lower-case one ("Edeby 55", not "of 76")
            runs.update(
                f"{a} {b}"
                for a, b in zip(value, value[1:], strict=False)
                if any(c.isdigit() for c in a + b)
                and not all(len(w) <= 3 and w.islower() for w in (a, b) if not w[0].isdigit())
            )
            if span["entity_type"] == "PERSON":  # a name's rarer words: Kuefer, Åberg
                words.update(
                    w
                    for w in re.findall(r"[^\W\d_]+", span["entity_value"])
                    if len(w) >= 6 or not w.isascii()
                )
    runs = {g for g in runs if g.strip(" ,.").lower() not in vocabulary}
    words = {w for w in words if w.lower() not in vocabulary}
    assert len(runs) > 1000
    assert len(words) > 100
    ours = set(re.findall(r"[^\W\d_]+", source))
    assert sorted(g for g in runs if g in source) + sorted(words & ours) == []


def test_no_secret_like_token_of_the_rule_examples(source: str) -> None:
    generated = GENERATED.read_text()
    literals: set[str] = set()
    for line in (DATA / "secrets" / "rule_examples.jsonl").read_text().splitlines():
        for token in re.findall(r"[A-Za-z0-9_\-+/=.]{16,}", json.loads(line)["text"]):
            if not (re.search(r"\d", token) and re.search(r"[A-Za-z]", token)):
                continue  # a word or a field name (authenticity_token), not a value
            if is_host_name(token.strip(".")) or is_dummy(token) or token in generated:
                continue
            literals.add(token)
    assert len(literals) > 300
    assert sorted(t for t in literals if t in source) == []


def test_no_file_of_the_code_localization_cases(source: str) -> None:
    cases = (DATA / "swebench_lite_localization" / "dev.jsonl").read_text().splitlines()
    literals = {path for line in cases for path in json.loads(line)["gold_files"] if path.count("/") >= 2}
    assert len(literals) > 100
    assert sorted(p for p in literals if p in source) == []


def test_no_run_of_words_from_the_logs_or_tool_outputs(source: str) -> None:
    ours = set(_grams(source.split(), 6))
    files = list((DATA / "loghub2k").glob("*/*_2k.log"))
    files += [p for p in (DATA / "holmesgpt_evals").rglob("*") if p.is_file() and p.suffix in SUFFIXES]
    assert len(files) > 50
    theirs: set[str] = set()
    for path in files:
        for line in path.read_text(errors="replace").splitlines():
            theirs.update(_grams(line.split(), 6))
    assert sorted(ours & theirs) == []
