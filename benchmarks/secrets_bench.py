"""Secret-detection benchmark: our scrubber against detect-secrets and CredSweeper, same inputs, one run.

Usage: ``python benchmarks/secrets_bench.py [--data DIR] [--misses [--show-heldback]] [--lines]
[--no-peer]``

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
* ordinary text with (nearly) no secrets, for false hits per 1,000 lines: ``DIR/loghub2k`` logs,
  ``DIR/holmesgpt_evals`` tool outputs and the running Python's standard library (see
  ``secrets_subsets.py``).

Figures (issue 30: every tuned figure has a validation figure beside it):

* upstream labels unchanged (``rule_recall``, ``rule_neg_flagged``); without negatives that are
  another rule's positive (``cross_rule``); labels re-decided by hand for a scrubber's question,
  one reason per string in ``benchmarks/secrets_label_review.csv`` (``reviewed``), and the same
  with placeholder-like negatives apart (``reviewed_plain``);
* each of them on the **tuned** and the **held-back** half (split by upstream rule); ``--misses``
  prints the tuned half's errors only;
* ``other_provider_recall``: positives whose provider our rules do not name (by rule-name words);
* ``structural_only``: recall with every provider rule switched off (``provider_rules=False``);
* per source: the gitleaks examples are circular for the rules generated from gitleaks;
* ``ordinary``: lines flagged per 1,000 of ordinary text;
* throughput (CPU time, best of ``--runs``) on the leaky repo plus the rule examples, and on the
  ordinary text.

``--heldout FILE`` (repeatable) scores extra JSONL files of positives (``{"id", "text"}`` per line)
as recall only, for us and the peers. The peers (``secrets_peers.py``) run on the same strings and
files when installed; one that is not is listed with the extra that installs it. Prints one line per
figure (ours, then each peer's) and, last, one JSON object.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_data import DEFAULT, data_dir  # noqa: E402
from devops_agent.privacy import Anonymizer, find_secrets  # noqa: E402
from devops_agent.secrets.gitleaks_rules import source as gitleaks_source  # noqa: E402
from secrets_peers import peers  # noqa: E402
from secrets_subsets import (  # noqa: E402
    flagged_lines,
    half,
    named_vocabulary,
    ordinary_corpus,
    placeholder_like,
    provider_named,
)


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


def row_figures(rows: list[Row], detect: Callable[[Row], bool], ctx: dict[str, Any]) -> dict[str, Any]:
    """Every rule-example figure of one detector: upstream labels, without cross-rule negatives,
    reviewed labels, per half, per source, and recall on providers our rules do not name."""
    reviewed = ctx["reviewed"]
    out: dict[str, Any] = {
        "upstream": score_rules(rows, detect),
        "cross_rule": score_rules([r for r in rows if r["id"] not in ctx["cross"]], detect),
        "reviewed": score_rules(reviewed, detect),
    }
    # Negatives with a placeholder-like value apart: flagging one costs little (see secrets_subsets).
    plain = [r for r in reviewed if r["label"] == "positive" or not placeholder_like(r)]
    out["reviewed_plain"] = score_rules(plain, detect)
    out["placeholder_negatives"] = score_rules(
        [r for r in reviewed if r["label"] == "negative" and placeholder_like(r)], detect
    )
    for name in ("tuned", "heldback"):
        out[name] = {
            "upstream": score_rules([r for r in rows if half(r) == name], detect),
            "reviewed": score_rules([r for r in reviewed if half(r) == name], detect),
            "reviewed_plain": score_rules([r for r in plain if half(r) == name], detect),
        }
    out["by_source"] = {
        src: score_rules([r for r in reviewed if r.get("source") == src], detect)
        for src in sorted({r.get("source", "") for r in rows})
    }
    other = [r for r in reviewed if r["label"] == "positive" and not provider_named(r, ctx["vocab"])]
    out["other_providers"] = {
        "all": score_rules(other, detect),
        "tuned": score_rules([r for r in other if half(r) == "tuned"], detect),
        "heldback": score_rules([r for r in other if half(r) == "heldback"], detect),
    }
    return out


def _recall_line(figures: dict[str, Any]) -> str:
    return f"{figures['recall']:.3f} ({figures['positives_found']}/{figures['positives']})"


def _neg_line(figures: dict[str, Any]) -> str:
    return f"{figures['neg_flagged']:.3f} ({figures['negatives_flagged']}/{figures['negatives']})"


def print_figures(report: dict[str, Any]) -> None:
    """One line per figure: ours, then each peer that ran, after a bar."""
    ran = {k: p for k, p in report["peers"].items() if p.get("figures")}

    def line(label: str, get: Callable[[dict[str, Any]], str], ours_only: bool = False) -> None:
        text = f"{label}: {get(report)}"
        if not ours_only:
            text += "".join(f"  | {p['name'].split(' (')[0]} {get(p['figures'])}" for p in ran.values())
        print(text)

    line(f"leaky repo: found of {report['leaky_expected']}", lambda f: str(f["leaky_found"]))
    line("leaky repo: false positives", lambda f: str(f["leaky_fp"]))
    for key, label in (("upstream", "upstream labels"), ("reviewed", "reviewed labels")):
        line(f"rule examples, {label}: recall", lambda f, k=key: _recall_line(f["rules"][k]))
        line(f"rule examples, {label}: negatives flagged", lambda f, k=key: _neg_line(f["rules"][k]))
    line(
        "rule examples, reviewed labels: negatives flagged, placeholder-like values apart",
        lambda f: _neg_line(f["rules"]["reviewed_plain"]),
    )
    line(
        "rule examples: placeholder-like negatives flagged",
        lambda f: _neg_line(f["rules"]["placeholder_negatives"]),
    )
    for h in ("tuned", "heldback"):
        line(f"{h} half, reviewed labels: recall", lambda f, h=h: _recall_line(f["rules"][h]["reviewed"]))
        line(
            f"{h} half, reviewed labels: negatives flagged",
            lambda f, h=h: _neg_line(f["rules"][h]["reviewed"]),
        )
        line(
            f"{h} half, reviewed labels: negatives flagged, placeholder-like apart",
            lambda f, h=h: _neg_line(f["rules"][h]["reviewed_plain"]),
        )
    for h in ("all", "tuned", "heldback"):
        line(
            f"other providers (not named by our rules), {h}: recall",
            lambda f, h=h: _recall_line(f["rules"]["other_providers"][h]),
        )
    for h in ("all", "tuned", "heldback"):
        line(
            f"structural rules only (no provider rule), {h}: recall",
            lambda f, h=h: _recall_line(f["structural_only"][h]),
            ours_only=True,
        )
    for src in report["rules"]["by_source"]:
        note = " (circular for the generated gitleaks rules)" if src == "gitleaks" else ""
        line(f"{src} examples{note}: recall", lambda f, s=src: _recall_line(f["rules"]["by_source"][s]))
        line(f"{src} examples: negatives flagged", lambda f, s=src: _neg_line(f["rules"]["by_source"][s]))
    line(
        f"ordinary text ({report['ordinary']['lines']} lines): lines flagged per 1,000",
        lambda f: f"{f['ordinary']['per_1000']:.2f}",
    )
    line("throughput on leaky repo + rule examples (MB/s by CPU)", lambda f: f"{f['mb_per_s_cpu']:.2f}")
    line("throughput on ordinary text (MB/s by CPU)", lambda f: f"{f['ordinary_mb_per_s_cpu']:.2f}")
    print(f"throughput, whole guard (MB/s by CPU): {report['guard_mb_per_s_cpu']:.2f}")
    g = report["generated_rules"]
    print(
        f"generated gitleaks rules: {g['kept']} of {g['upstream_rules']} kept, {g['regex_translated']} "
        f"translated from RE2, {g['key_prefix_dropped']} key-name prefixes dropped, {g['skipped']} skipped "
        f"(gitleaks {g['commit'][:12]})"
    )
    for p in report["peers"].values():
        if not p.get("figures"):
            print(f"peer {p['name']}: not run ({p['note']})")


def _ordinary_throughput(corpus: list[tuple[str, str]], fn: Callable[[str], object]) -> float:
    """MB/s by CPU time of ``fn`` over every text of ``corpus`` (one pass)."""
    c0 = time.process_time()
    for _, text in corpus:
        fn(text)
    mb = sum(len(t.encode()) for _, t in corpus) / 1e6
    return round(mb / max(time.process_time() - c0, 1e-9), 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument(
        "--data",
        type=Path,
        default=DEFAULT,
        help="benchmark data folder, or its secrets (default: %(default)s)",
    )
    ap.add_argument(
        "--misses", action="store_true", help="print the tuned half's rule examples we get wrong, and why"
    )
    ap.add_argument(
        "--show-heldback", action="store_true", help="with --misses: the held-back half's too (spends it)"
    )
    ap.add_argument(
        "--lines", action="store_true", help="print flagged lines of leaky-repo files we get wrong"
    )
    ap.add_argument("--verbose", action="store_true", help="both --misses and --lines")
    ap.add_argument("--no-peer", action="store_true", help="skip the peers (faster while iterating)")
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
    for r in rows:  # older or hand-made files: the rule's name stands for its id and source
        r.setdefault("rule_id", r.get("rule_name", ""))
        r.setdefault("source", "")
    repo = base / "leaky-repo"
    review = load_review()
    ctx = {
        "cross": cross_rule_negatives(rows),
        "reviewed": relabel(rows, review),
        "vocab": named_vocabulary(),
    }
    ordinary = ordinary_corpus(base.parent)

    leaky = score_leaky(repo, ours_lines, args.lines or args.verbose)
    hits = {r["id"]: _ours_detect(r) for r in rows}
    structural_hits = {r["id"]: bool(find_secrets(r["text"], provider_rules=False)) for r in rows}

    def ours(r: Row) -> bool:
        return hits[r["id"]]

    def structural(r: Row) -> bool:
        return structural_hits[r["id"]]

    if args.misses or args.verbose:
        shown = rows if args.show_heldback else [r for r in rows if half(r) == "tuned"]
        _show_disagreements(shown, ours, review)
    files = [p for p in repo.rglob("*") if p.is_file() and ".leaky-meta" not in p.parts]
    corpus = (
        "\n".join(p.read_text(errors="replace") for p in files) + "\n" + "\n".join(r["text"] for r in rows)
    )
    secret_rows = [r for r in ctx["reviewed"] if not _is_identifier_rule(r) and r["label"] == "positive"]
    mb_per_s, mb_per_s_cpu = throughput(corpus, find_secrets, args.runs)
    guard_mb_per_s, guard_mb_per_s_cpu = throughput(corpus, _GUARD.anonymize, args.runs)
    report: dict[str, Any] = {
        "leaky_found": leaky["found"], "leaky_expected": leaky["expected"], "leaky_fp": leaky["fp"],
        "leaky_files_covered": leaky["files_covered"],
        "leaky_secrets_only": score_leaky(repo, ours_secret_lines),
        "leaky_public_hosts_masked": score_leaky(repo, ours_all_hosts_lines),
        "rules": row_figures(rows, ours, ctx),
        "rules_secret_rules": score_rules([r for r in rows if not _is_identifier_rule(r)], ours),
        "rules_identifier_rules": score_rules([r for r in rows if _is_identifier_rule(r)], ours),
        "structural_only": {
            "all": score_rules(secret_rows, structural),
            "tuned": score_rules([r for r in secret_rows if half(r) == "tuned"], structural),
            "heldback": score_rules([r for r in secret_rows if half(r) == "heldback"], structural),
        },
        "ordinary": flagged_lines(ordinary, ours_secret_lines),
        "ordinary_mb_per_s_cpu": _ordinary_throughput(ordinary, find_secrets),
        "mb_per_s": mb_per_s, "mb_per_s_cpu": mb_per_s_cpu,
        "guard_mb_per_s": guard_mb_per_s, "guard_mb_per_s_cpu": guard_mb_per_s_cpu,
        "corpus_bytes": len(corpus.encode()), "generated_rules": gitleaks_source(),
    }  # fmt: skip
    rules = report["rules"]
    report["rule_recall"] = rules["upstream"]["recall"]
    report["rule_neg_flagged"] = rules["upstream"]["neg_flagged"]
    report["reviewed_recall"] = rules["reviewed"]["recall"]
    report["reviewed_neg_flagged"] = rules["reviewed"]["neg_flagged"]
    report["heldback_recall"] = rules["heldback"]["reviewed"]["recall"]
    report["heldback_neg_flagged"] = rules["heldback"]["reviewed"]["neg_flagged"]
    report["other_provider_recall"] = rules["other_providers"]["all"]["recall"]
    report["other_provider_names"] = sorted(
        {
            r["rule_name"]
            for r in ctx["reviewed"]
            if r["label"] == "positive" and not provider_named(r, ctx["vocab"])
        }
    )

    heldout = {p.name: [json.loads(x) for x in p.read_text().splitlines() if x.strip()] for p in args.heldout}
    report["heldout"] = {
        name: heldout_recall(hrows, lambda t: bool(find_secrets(t))) for name, hrows in heldout.items()
    }

    report["peers"] = {}
    for key, (name, finder, hint) in ({} if args.no_peer else peers()).items():
        if finder is None:
            report["peers"][key] = {"name": name, "figures": None, "note": f"not installed ({hint})"}
            continue
        p_leaky = score_leaky(repo, finder)
        p_hits = {r["id"]: bool(finder(r["text"])) for r in rows}

        def theirs(r: Row, p_hits: dict[str, bool] = p_hits) -> bool:
            return p_hits[r["id"]]

        p_mb, p_mb_cpu = throughput(corpus, finder, runs=1)
        report["peers"][key] = {
            "name": name, "note": "",
            "figures": {
                "leaky_found": p_leaky["found"], "leaky_fp": p_leaky["fp"],
                "leaky_files_covered": p_leaky["files_covered"],
                "rules": row_figures(rows, theirs, ctx),
                "ordinary": flagged_lines(ordinary, finder),
                "ordinary_mb_per_s_cpu": _ordinary_throughput(ordinary, finder),
                "mb_per_s": p_mb, "mb_per_s_cpu": p_mb_cpu,
                "heldout": {n: heldout_recall(h, lambda t, f=finder: bool(f(t))) for n, h in heldout.items()},
            },
        }  # fmt: skip
    if args.no_peer:
        report["peers"]["none"] = {"name": "peers", "figures": None, "note": "--no-peer"}
    print_figures(report)
    print(json.dumps(report, sort_keys=True))


if __name__ == "__main__":
    main()
