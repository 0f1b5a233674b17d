"""Secret-detection benchmark: our scrubber against detect-secrets on the same inputs, in one run.

Usage: ``python benchmarks/secrets_bench.py [--data DIR] [--misses] [--lines] [--no-peer]``

Inputs (``DIR/secrets``, or ``DIR`` itself when it is that folder; see its SOURCE.md):

* ``rule_examples.jsonl``: labelled strings from Nosey Parker and gitleaks rule tests. A positive is
  found when the detector reports anything in it; a negative is flagged when it does. Rules whose
  Nosey Parker category is ``identifier`` (account ids, bucket names, ARNs, user names) are scored
  with the full privacy guard (``Anonymizer``: scrubber + entity recognizers), since identifiers are
  the recognizers' job, and reported separately too; everything else with the scrubber alone.
* ``leaky-repo/``: 44 files with expected per-file counts of risky and informative lines (175).
  Following the upstream scoring, ``found`` per file = number of distinct lines on which we report
  anything (a secret, or an entity the guard would mask), ``false positives = max(0, found -
  expected)`` and ``finds = found - false positives``. The answer key counts lines with user names
  and hosts as "informative", so entity lines count as finds; it is count-based, so an extra line
  in a file with misses hides a miss rather than showing as a false positive (``--lines`` shows
  which lines were flagged).

The raw figures (``rule_recall``, ``rule_neg_flagged``) use the upstream labels unchanged. Upstream
labels are per rule ("this rule must not fire"), so two secondary figures are reported as well:

* ``rules_cross_rule``: negatives that are (or contain) a positive example of another rule are left
  out (a Slack bot token is a negative of the user-token rule); positives are unchanged.
* ``rules_reviewed``: labels re-decided by hand for the question a scrubber answers ("does this text
  hold something to remove?"), one reason per string in ``benchmarks/secrets_label_review.csv``.

``--heldout FILE`` (repeatable) scores extra JSONL files of positives (``{"id", "text"}`` per line, e.g. a
sample of Kingfisher rule examples, which SOURCE.md keeps out of the DEV data) as recall only, for us
and the peer.

detect-secrets 1.5.0 (if installed) runs on the same strings / files with its default plugins;
without it (or with ``--no-peer``) ``peer`` is null and ``peer_note`` says why. Throughput is
measured on the leaky repo plus the rule examples concatenated: wall clock and CPU time, best of
``--runs``. Prints one line per figure (ours, then the peer's) and, last, one JSON object.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any, Protocol

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_data import DEFAULT, data_dir  # noqa: E402
from devops_agent.privacy import Anonymizer, find_secrets  # noqa: E402


class LineFinder(Protocol):
    """Line numbers (0-based) a detector flags in ``text``; ``path`` is the file's path in the repo
    (empty for a rule example)."""

    def __call__(self, text: str, path: str = "") -> set[int]: ...


Row = dict[str, Any]

REVIEW_FILE = Path(__file__).with_name("secrets_label_review.csv")


def _line_of(text: str, offsets: list[int]) -> set[int]:
    return {text.count("\n", 0, off) for off in offsets}


def ours_lines(text: str, path: str = "") -> set[int]:
    """Line numbers (0-based) with a secret or a maskable entity; a file of key material by its
    name (``master.key``) is secret on every line, as the guard treats a tool's read of it."""
    result = _GUARD.anonymize(text, secret_file=_GUARD.holds_only_secrets(path))
    offsets = [f.start for f in result.secrets] + [e.start for e in result.entities]
    return _line_of(text, offsets)


def ours_all_hosts_lines(text: str, path: str = "") -> set[int]:
    """As ``ours_lines`` but masking public endpoints too (``keep_public_hosts=False``)."""
    result = _GUARD_ALL_HOSTS.anonymize(text, secret_file=_GUARD.holds_only_secrets(path))
    return _line_of(text, [f.start for f in result.secrets] + [e.start for e in result.entities])


def ours_secret_lines(text: str, path: str = "") -> set[int]:
    found = find_secrets(text, secret_file=_GUARD.holds_only_secrets(path))
    return _line_of(text, [f.start for f in found])


_GUARD = Anonymizer(b"bench-key", "bench")
_GUARD_ALL_HOSTS = Anonymizer(b"bench-key", "bench", keep_public_hosts=False)


def _detect_secrets_finder() -> LineFinder | None:
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def finder(text: str, path: str = "") -> set[int]:  # noqa: ARG001 - its plugins read lines, not file names
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


def score_leaky(repo: Path, finder: LineFinder, show: bool = False) -> dict[str, Any]:
    expected = load_expected(repo)
    finds = fps = covered = 0
    for name, exp in sorted(expected.items()):
        text = (repo / name).read_text(errors="replace")
        lines = finder(text, name)
        found = len(lines)
        fp = max(0, found - exp)
        finds += found - fp
        fps += fp
        covered += found > 0
        if show:
            mark = "" if found == exp else f"  <-- {found - exp:+d}"
            print(f"leaky {name}: flagged {found}, expected {exp}{mark}")
            if found != exp:
                for i, line in enumerate(text.splitlines()):
                    print(f"  {'*' if i in lines else ' '} {i + 1:4} {line[:110]}")
    return {"found": finds, "expected": sum(expected.values()), "fp": fps, "files_covered": covered}


def score_rules(rows: list[Row], detect: Callable[[Row], bool]) -> dict[str, Any]:
    pos = [r for r in rows if r["label"] == "positive"]
    neg = [r for r in rows if r["label"] == "negative"]
    tp = sum(1 for r in pos if detect(r))
    flagged = sum(1 for r in neg if detect(r))
    return {
        "recall": round(tp / len(pos), 4) if pos else 0.0,
        "neg_flagged": round(flagged / len(neg), 4) if neg else 0.0,
        "positives": len(pos), "positives_found": tp, "negatives": len(neg), "negatives_flagged": flagged,
    }  # fmt: skip


def cross_rule_negatives(rows: list[Row]) -> set[str]:
    """Ids of negatives whose text is, or contains, a positive example of another rule."""
    pos = [r for r in rows if r["label"] == "positive"]
    out: set[str] = set()
    for r in rows:
        if r["label"] != "negative":
            continue
        text = r["text"].strip()
        for p in pos:
            other = p["text"].strip()
            if p["rule_name"] != r["rule_name"] and (other in text or text in other):
                out.add(r["id"])
                break
    return out


def load_review(path: Path = REVIEW_FILE) -> dict[str, tuple[str, str]]:
    """``id -> (verdict, reason)`` from the hand review; verdict ``sensitive`` or ``not_sensitive``."""
    lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return {row["id"]: (row["verdict"], row["reason"]) for row in csv.DictReader(lines)}


def relabel(rows: list[Row], review: dict[str, tuple[str, str]]) -> list[Row]:
    """The rows with reviewed labels: ``sensitive`` makes a positive, ``not_sensitive`` a negative."""
    to_label = {"sensitive": "positive", "not_sensitive": "negative"}
    return [{**r, "label": to_label[review[r["id"]][0]]} if r["id"] in review else r for r in rows]


def _is_identifier_rule(row: Row) -> bool:
    return "identifier" in row.get("categories", [])


def _ours_detect(row: Row) -> bool:
    text = row["text"]
    if _is_identifier_rule(row):
        result = _GUARD.anonymize(text)
        return bool(result.secrets or result.entities)
    return bool(find_secrets(text))


def _show_disagreements(
    rows: list[Row], detect: Callable[[Row], bool], review: dict[str, tuple[str, str]]
) -> None:
    for r in rows:
        hit = detect(r)
        if (r["label"] == "positive") == hit:
            continue
        what = ""
        if hit:
            found = find_secrets(r["text"])
            kinds = sorted({f.kind for f in found})
            if not found:
                kinds = sorted({e.type for e in _GUARD.anonymize(r["text"]).entities})
            what = f" -> {','.join(kinds)}"
        kind = "missed " if r["label"] == "positive" else "flagged"
        print(f"{kind} {r['id']} [{r['rule_name']}]{what}: {r['text'][:100]!r}")
        if r["id"] in review:
            print(f"        reviewed {review[r['id']][0]}: {review[r['id']][1]}")


def heldout_recall(rows: list[Row], detect: Callable[[str], bool]) -> dict[str, Any]:
    """Share of held-out positives on which ``detect`` reports anything."""
    found = sum(1 for r in rows if detect(r["text"]))
    return {"positives": len(rows), "found": found, "recall": round(found / len(rows), 4) if rows else 0.0}


def throughput(corpus: str, fn: Callable[[str], object], runs: int = 3) -> tuple[float, float]:
    """(MB/s by wall clock, MB/s by CPU time), each the best of ``runs``."""
    wall = cpu = float("inf")
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        fn(corpus)
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    mb = len(corpus.encode()) / 1e6
    return round(mb / wall, 3), round(mb / max(cpu, 1e-9), 3)


def _print_figures(report: dict[str, Any]) -> None:
    """One line per figure: ours, then the peer's after the bar when it ran."""
    peer = report["peer"]

    def line(label: str, *path: str, fmt: str = "") -> None:
        def get(figures: dict[str, Any]) -> Any:
            for key in path:
                figures = figures[key]
            return figures

        text = f"{label}: {get(report):{fmt}}"
        print(text if peer is None else f"{text}  | detect-secrets {get(peer):{fmt}}")

    line(f"leaky repo: found of {report['leaky_expected']}", "leaky_found")
    line("leaky repo: false positives", "leaky_fp")
    line("rule examples: recall on positives", "rule_recall", fmt=".3f")
    line("rule examples: negatives flagged", "rule_neg_flagged", fmt=".3f")
    line("hand-reviewed labels: recall", "rules_reviewed", "recall", fmt=".3f")
    line("hand-reviewed labels: negatives flagged", "rules_reviewed", "neg_flagged", fmt=".3f")
    line("throughput, scrubber (MB/s by CPU)", "mb_per_s_cpu", fmt=".2f")
    print(f"throughput, whole guard (MB/s by CPU): {report['guard_mb_per_s_cpu']:.2f}")
    if peer is None:
        print(f"peer: none ({report['peer_note']})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument(
        "--data",
        type=Path,
        default=DEFAULT,
        help="benchmark data folder, or its secrets (default: %(default)s)",
    )
    ap.add_argument("--misses", action="store_true", help="print rule examples we get wrong, and why")
    ap.add_argument(
        "--lines", action="store_true", help="print flagged lines of leaky-repo files we get wrong"
    )
    ap.add_argument("--verbose", action="store_true", help="both --misses and --lines")
    ap.add_argument("--no-peer", action="store_true", help="skip detect-secrets (faster while iterating)")
    ap.add_argument("--runs", type=int, default=5, help="throughput: best of this many runs")
    ap.add_argument(
        "--heldout", type=Path, action="append", default=[], help="JSONL of held-out positives (recall only)"
    )
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    for path in args.heldout:
        if not path.is_file():
            ap.error(f"--heldout {path}: no such file")
    base = data_dir(args.data, "secrets", "rule_examples.jsonl", "leaky-repo/.leaky-meta/secrets.csv")
    rows = [
        json.loads(line) for line in (base / "rule_examples.jsonl").read_text().splitlines() if line.strip()
    ]
    repo = base / "leaky-repo"

    leaky = score_leaky(repo, ours_lines, args.lines or args.verbose)
    leaky_secrets_only = score_leaky(repo, ours_secret_lines)
    leaky_all_hosts = score_leaky(repo, ours_all_hosts_lines)
    hits = {r["id"]: _ours_detect(r) for r in rows}

    def ours(r: Row) -> bool:
        return hits[r["id"]]

    rules = score_rules(rows, ours)
    rules_secret_rules = score_rules([r for r in rows if not _is_identifier_rule(r)], ours)
    rules_identifier = score_rules([r for r in rows if _is_identifier_rule(r)], ours)
    cross = cross_rule_negatives(rows)
    without_cross = [r for r in rows if r["id"] not in cross]
    review = load_review()
    reviewed = relabel(rows, review)
    if args.misses or args.verbose:
        _show_disagreements(rows, ours, review)
    files = [p for p in repo.rglob("*") if p.is_file() and ".leaky-meta" not in p.parts]
    corpus = (
        "\n".join(p.read_text(errors="replace") for p in files) + "\n" + "\n".join(r["text"] for r in rows)
    )
    mb_per_s, mb_per_s_cpu = throughput(corpus, find_secrets, args.runs)
    guard_mb_per_s, guard_mb_per_s_cpu = throughput(corpus, _GUARD.anonymize, args.runs)
    report: dict[str, Any] = {
        "leaky_found": leaky["found"], "leaky_expected": leaky["expected"], "leaky_fp": leaky["fp"],
        "leaky_files_covered": leaky["files_covered"], "leaky_secrets_only": leaky_secrets_only,
        "leaky_public_hosts_masked": leaky_all_hosts,
        "rule_recall": rules["recall"], "rule_neg_flagged": rules["neg_flagged"], "rules": rules,
        "rules_secret_rules": rules_secret_rules, "rules_identifier_rules": rules_identifier,
        "rules_cross_rule": {**score_rules(without_cross, ours), "negatives_left_out": len(cross)},
        "rules_reviewed": {**score_rules(reviewed, ours), "review_rows": len(review)},
        "mb_per_s": mb_per_s, "mb_per_s_cpu": mb_per_s_cpu,
        "guard_mb_per_s": guard_mb_per_s, "guard_mb_per_s_cpu": guard_mb_per_s_cpu,
        "corpus_bytes": len(corpus.encode()),
    }  # fmt: skip

    heldout = {p.name: [json.loads(x) for x in p.read_text().splitlines() if x.strip()] for p in args.heldout}
    report["heldout"] = {
        name: heldout_recall(hrows, lambda t: bool(find_secrets(t))) for name, hrows in heldout.items()
    }

    peer = None if args.no_peer else _detect_secrets_finder()
    if peer is not None:
        p_leaky = score_leaky(repo, peer)
        p_hits = {r["id"]: bool(peer(r["text"])) for r in rows}

        def theirs(r: Row) -> bool:
            return p_hits[r["id"]]

        p_rules = score_rules(rows, theirs)
        p_mb, p_mb_cpu = throughput(corpus, peer, runs=1)
        report["peer"] = {
            "name": f"detect-secrets {version('detect-secrets')} (default plugins)",
            "leaky_found": p_leaky["found"], "leaky_fp": p_leaky["fp"],
            "leaky_files_covered": p_leaky["files_covered"],
            "rule_recall": p_rules["recall"], "rule_neg_flagged": p_rules["neg_flagged"], "rules": p_rules,
            "rules_cross_rule": score_rules(without_cross, theirs),
            "rules_reviewed": score_rules(reviewed, theirs),
            "mb_per_s": p_mb, "mb_per_s_cpu": p_mb_cpu,
        }  # fmt: skip
        report["peer"]["heldout"] = {
            name: heldout_recall(hrows, lambda t: bool(peer(t))) for name, hrows in heldout.items()
        }
        report["speed_ratio_vs_peer"] = round(mb_per_s_cpu / max(p_mb_cpu, 1e-9), 1)
    else:
        report["peer"] = None
        report["peer_note"] = (
            "--no-peer: detect-secrets not run"
            if args.no_peer
            else "detect-secrets not importable: peer figures are null (pip install -e '.[bench]')"
        )
    _print_figures(report)
    print(json.dumps(report, sort_keys=True))


if __name__ == "__main__":
    main()
