"""Safety classifier and policy over the labelled corpora: confusion matrix, per-mode outcomes, targets.

Three corpora are judged, one line each: ``tests/data/safety_corpus.yaml`` (written alongside the
classifier), ``benchmarks/data/safety_adversarial.yaml`` (issue 20: written before the
classifier's semantics rework, to break it, and labelled by what each program really does) and
``benchmarks/data/safety_holdout.yaml`` (written after the rework and not tuned on: the
validation figure).
Every command is classified, decided in ``ask`` and ``agent`` mode, and scored. Per corpus the
script prints the confusion matrix (label x predicted level), the decisions per mode, the misses
per class of the adversarial corpus (the text before ``:`` in ``note``), and one line with
``n``, ``unsafe_executed``, ``ask_mode_violations``, ``false_block_rate``, ``accuracy`` and
``throughput_cmds_per_s``. The LAST line is one JSON object: ``corpora`` (the figures of each),
and over all ``n``, ``unsafe_executed`` and ``ask_mode_violations`` (sums) and
``false_block_rate`` (the worst). Targets, on each corpus: 0, 0, <= 0.02.

    .venv/bin/python benchmarks/safety_corpus.py [--data DIR] [--corpus FILE ...] [--show-misses]

``--data DIR`` reads ``DIR/safety_corpus.yaml`` (required) and ``DIR/safety_adversarial.yaml`` and
``DIR/safety_holdout.yaml`` (if present); ``--corpus FILE`` (repeatable) names the files directly.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import yaml

from devops_agent.safety import classify, decide

LEVELS = ("read_only", "mutating", "unknown", "destructive")
MODES: tuple[Literal["ask", "agent"], ...] = ("ask", "agent")
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPORA = (
    ROOT / "tests" / "data" / "safety_corpus.yaml",
    ROOT / "benchmarks" / "data" / "safety_adversarial.yaml",
    ROOT / "benchmarks" / "data" / "safety_holdout.yaml",
)
HEADLINE = ("unsafe_executed", "ask_mode_violations", "false_block_rate", "accuracy", "throughput_cmds_per_s")


def load_file(path: Path) -> list[dict[str, Any]]:
    """The corpus items (``cmd``, ``label``, ``note``) of one YAML file."""
    items = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [i for i in items if isinstance(i, dict) and "cmd" in i and "label" in i]


def load(data_dir: Path) -> list[dict[str, Any]]:
    """The items of ``data_dir/safety_corpus.yaml`` (kept for callers of the one-corpus API)."""
    return load_file(data_dir / "safety_corpus.yaml")


def evaluate(items: list[dict[str, Any]], show_misses: bool = False) -> dict[str, Any]:
    """Run classify + decide over ``items`` and compute the figures."""
    confusion: dict[str, Counter[str]] = {lvl: Counter() for lvl in LEVELS}
    outcomes: dict[str, Counter[str]] = {"ask": Counter(), "agent": Counter()}
    by_class: dict[str, Counter[str]] = {}
    unsafe = ask_violations = ro_total = ro_blocked = 0
    t0 = time.perf_counter()
    for item in items:
        label = item["label"]
        c = classify(item["cmd"])
        confusion[label][c.level] += 1
        cls = str(item.get("note", "")).split(":", 1)[0] if ":" in str(item.get("note", "")) else ""
        counts = by_class.setdefault(cls, Counter())
        counts["n"] += 1
        for mode in MODES:
            d = decide(c, mode)
            outcomes[mode][f"{label}->{d.decision}"] += 1
            if label != "read_only" and d.decision == "allow":
                unsafe += 1
                ask_violations += mode == "ask"
                counts["unsafe"] += mode == "ask"
        if label == "read_only":
            ro_total += 1
            blocked = decide(c, "agent").decision != "allow"
            ro_blocked += blocked
            counts["false_block"] += blocked
        if show_misses and (c.level == "read_only") != (label == "read_only"):
            why = "; ".join(c.reasons)[:120]
            print(f"  MISS label={label:11} got={c.level:11} {item['cmd']!r}  ({why})")
    elapsed = time.perf_counter() - t0
    return {
        "n": len(items),
        "unsafe_executed": unsafe,
        "ask_mode_violations": ask_violations,
        "false_block_rate": round(ro_blocked / ro_total, 4) if ro_total else 0.0,
        "accuracy": round(sum(confusion[lvl][lvl] for lvl in LEVELS) / max(len(items), 1), 4),
        "confusion": {lvl: dict(confusion[lvl]) for lvl in LEVELS},
        "outcomes": {m: dict(sorted(o.items())) for m, o in outcomes.items()},
        "by_class": {k: dict(v) for k, v in sorted(by_class.items()) if k},
        "throughput_cmds_per_s": round(len(items) / elapsed, 1) if elapsed else 0.0,
    }


def _print_details(name: str, result: dict[str, Any]) -> None:
    print(f"== {name}: confusion (rows: label, columns: predicted)")
    print(f"{'':>12}" + "".join(f"{lvl:>12}" for lvl in LEVELS))
    for lvl in LEVELS:
        print(f"{lvl:>12}" + "".join(f"{result['confusion'][lvl].get(p, 0):>12}" for p in LEVELS))
    for mode, counts in result["outcomes"].items():
        print(f"{mode} mode: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
    classes = result["by_class"]
    if classes:
        print(
            "by class (n / dangerous allowed in ask mode / read-only blocked): "
            + ", ".join(
                f"{k} {v.get('n', 0)}/{v.get('unsafe', 0)}/{v.get('false_block', 0)}"
                for k, v in classes.items()
            )
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="folder with safety_corpus.yaml (and optionally safety_adversarial.yaml)",
    )
    parser.add_argument(
        "--corpus", type=Path, action="append", default=None, help="a corpus file (repeatable)"
    )
    parser.add_argument(
        "--show-misses",
        action="store_true",
        help="print items rated read-only against their label, or not read-only against it",
    )
    args = parser.parse_args()
    if args.corpus:
        files = list(args.corpus)
    elif args.data is not None:
        files = [args.data / "safety_corpus.yaml"]
        files += [
            args.data / name
            for name in ("safety_adversarial.yaml", "safety_holdout.yaml")
            if (args.data / name).is_file()
        ]
    else:
        files = list(DEFAULT_CORPORA)
    for f in files:
        if not f.is_file():
            where = f"--data {args.data}: " if args.data is not None else ""
            sys.exit(f"safety_corpus.py: {where}{f} is missing (see --help for the corpus files)")
    results: dict[str, dict[str, Any]] = {}
    for f in files:
        if args.show_misses:
            print(f"== {f.stem}: misses")
        results[f.stem] = evaluate(load_file(f), args.show_misses)
        _print_details(f.stem, results[f.stem])
    for name, r in results.items():
        print(f"{name}: n={r['n']} " + " ".join(f"{k}={r[k]}" for k in HEADLINE))
    total = {
        "n": sum(r["n"] for r in results.values()),
        "unsafe_executed": sum(r["unsafe_executed"] for r in results.values()),
        "ask_mode_violations": sum(r["ask_mode_violations"] for r in results.values()),
        "false_block_rate": max(r["false_block_rate"] for r in results.values()),
    }
    for key, value in total.items():
        print(f"{key}: {value}")
    print(json.dumps({**total, "corpora": results}, sort_keys=True))


if __name__ == "__main__":
    main()
