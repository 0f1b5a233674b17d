"""Secret-detection benchmark: our scrubber against detect-secrets on the same inputs, in one run.

Usage: ``python benchmarks/secrets_bench.py [--data DIR] [--verbose]``

Inputs (``DIR/secrets``, see its SOURCE.md):

* ``rule_examples.jsonl``: labelled strings from Nosey Parker and gitleaks rule tests. A positive is
  found when the detector reports anything in it; a negative is flagged when it does. Rules whose
  Nosey Parker category is ``identifier`` (account ids, bucket names, ARNs, user names) are scored
  with the full privacy guard (``Anonymizer``: scrubber + entity recognizers), since identifiers are
  the recognizers' job, and reported separately too; everything else with the scrubber alone.
* ``leaky-repo/``: 44 files with expected per-file counts of risky and informative lines (175).
  Following the upstream scoring, ``found`` per file = number of distinct lines on which we report
  anything (a secret, or an entity the guard would mask), ``false positives = max(0, found -
  expected)`` and ``finds = found - false positives``.

detect-secrets 1.5.0 (if installed) runs on the same strings / files with its default plugins.
Throughput is measured on the leaky repo plus the rule examples concatenated, best of 3.
The last line of output is JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from devops_agent.privacy import Anonymizer, find_secrets

LineFinder = Callable[[str], set[int]]


def _line_of(text: str, offsets: list[int]) -> set[int]:
    return {text.count("\n", 0, off) for off in offsets}


def ours_lines(text: str) -> set[int]:
    """Line numbers (0-based) with a secret or a maskable entity."""
    result = _GUARD.anonymize(text)
    offsets = [f.start for f in result.secrets] + [e.start for e in result.entities]
    return _line_of(text, offsets)


def ours_all_hosts_lines(text: str) -> set[int]:
    """As ``ours_lines`` but masking public endpoints too (``keep_public_hosts=False``)."""
    result = _GUARD_ALL_HOSTS.anonymize(text)
    return _line_of(text, [f.start for f in result.secrets] + [e.start for e in result.entities])


def ours_secret_lines(text: str) -> set[int]:
    return _line_of(text, [f.start for f in find_secrets(text)])


_GUARD = Anonymizer(b"bench-key", "bench")
_GUARD_ALL_HOSTS = Anonymizer(b"bench-key", "bench", keep_public_hosts=False)


def _detect_secrets_finder() -> LineFinder | None:
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def finder(text: str) -> set[int]:
        lines: set[int] = set()
        with default_settings():
            for i, line in enumerate(text.splitlines()):
                if any(True for _ in scan_line(line)):
                    lines.add(i)
        return lines

    return finder


def load_expected(repo: Path) -> dict[str, int]:
    expected: dict[str, int] = {}
    for raw in (repo / ".leaky-meta" / "secrets.csv").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, risk, info = line.split(",")
        expected[name] = int(risk) + int(info)
    return expected


def score_leaky(repo: Path, finder: LineFinder, verbose: bool = False) -> dict[str, Any]:
    expected = load_expected(repo)
    finds = fps = covered = 0
    for name, exp in sorted(expected.items()):
        text = (repo / name).read_text(errors="replace")
        found = len(finder(text))
        fp = max(0, found - exp)
        finds += found - fp
        fps += fp
        covered += found > 0
        if verbose and found != exp:
            print(f"  leaky {name}: found {found} expected {exp}")
    return {"found": finds, "expected": sum(expected.values()), "fp": fps, "files_covered": covered}


def score_rules(rows: list[dict[str, Any]], detect: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    pos = [r for r in rows if r["label"] == "positive"]
    neg = [r for r in rows if r["label"] == "negative"]
    tp = sum(1 for r in pos if detect(r))
    flagged = sum(1 for r in neg if detect(r))
    return {
        "recall": round(tp / len(pos), 4) if pos else 0.0,
        "neg_flagged": round(flagged / len(neg), 4) if neg else 0.0,
        "positives": len(pos), "positives_found": tp, "negatives": len(neg), "negatives_flagged": flagged,
    }  # fmt: skip


def _is_identifier_rule(row: dict[str, Any]) -> bool:
    return "identifier" in row.get("categories", [])


def _ours_detect(row: dict[str, Any]) -> bool:
    text = row["text"]
    if _is_identifier_rule(row):
        result = _GUARD.anonymize(text)
        return bool(result.secrets or result.entities)
    return bool(find_secrets(text))


def throughput(corpus: str, fn: Callable[[str], object], runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(corpus)
        best = min(best, time.perf_counter() - t0)
    return round(len(corpus.encode()) / 1e6 / best, 3)


def main() -> None:
    default = Path(__file__).resolve().parents[1].parent / "shared" / "benchmarks"
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--data", type=Path, default=default)
    ap.add_argument("--verbose", action="store_true", help="print per-file differences and misses")
    args = ap.parse_args()
    base = args.data / "secrets"
    rows = [
        json.loads(line) for line in (base / "rule_examples.jsonl").read_text().splitlines() if line.strip()
    ]
    repo = base / "leaky-repo"

    leaky = score_leaky(repo, ours_lines, args.verbose)
    leaky_secrets_only = score_leaky(repo, ours_secret_lines)
    leaky_all_hosts = score_leaky(repo, ours_all_hosts_lines)
    rules = score_rules(rows, _ours_detect)
    rules_secret_rules = score_rules([r for r in rows if not _is_identifier_rule(r)], _ours_detect)
    rules_identifier = score_rules([r for r in rows if _is_identifier_rule(r)], _ours_detect)
    if args.verbose:
        for r in rows:
            if (r["label"] == "positive") != _ours_detect(r):
                print(f"  {r['label']:<8} {r['rule_name']}: {r['text'][:120]!r}")
    files = [p for p in repo.rglob("*") if p.is_file() and ".leaky-meta" not in p.parts]
    corpus = (
        "\n".join(p.read_text(errors="replace") for p in files) + "\n" + "\n".join(r["text"] for r in rows)
    )
    report: dict[str, Any] = {
        "leaky_found": leaky["found"], "leaky_expected": leaky["expected"], "leaky_fp": leaky["fp"],
        "leaky_files_covered": leaky["files_covered"], "leaky_secrets_only": leaky_secrets_only,
        "leaky_public_hosts_masked": leaky_all_hosts,
        "rule_recall": rules["recall"], "rule_neg_flagged": rules["neg_flagged"], "rules": rules,
        "rules_secret_rules": rules_secret_rules, "rules_identifier_rules": rules_identifier,
        "mb_per_s": throughput(corpus, find_secrets), "guard_mb_per_s": throughput(corpus, _GUARD.anonymize),
        "corpus_bytes": len(corpus.encode()),
    }  # fmt: skip

    peer = _detect_secrets_finder()
    if peer is not None:
        p_leaky = score_leaky(repo, peer)
        p_rules = score_rules(rows, lambda r: bool(peer(r["text"])))
        report["peer"] = {
            "name": "detect-secrets 1.5.0 (default plugins)",
            "leaky_found": p_leaky["found"], "leaky_fp": p_leaky["fp"],
            "leaky_files_covered": p_leaky["files_covered"],
            "rule_recall": p_rules["recall"], "rule_neg_flagged": p_rules["neg_flagged"], "rules": p_rules,
            "mb_per_s": throughput(corpus, peer, runs=1),
        }  # fmt: skip
    else:
        report["peer"] = None
    print(json.dumps(report, sort_keys=True))


if __name__ == "__main__":
    main()
