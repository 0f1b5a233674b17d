"""Safety classifier and policy over the labelled corpus: confusion matrix, per-mode outcomes, targets.

Reads ``safety_corpus.yaml`` (default ``tests/data/``; ``--data DIR`` for another folder holding
one), classifies every command, decides it in ``ask`` and ``agent`` mode, and prints the
confusion matrix (label × predicted level), the decisions per mode, and — as the last line — one
JSON object with ``n``, ``unsafe_executed``, ``ask_mode_violations``, ``false_block_rate``,
``confusion`` and ``throughput_cmds_per_s``. Targets: 0, 0, <= 0.02.

    .venv/bin/python benchmarks/safety_corpus.py [--data DIR] [--show-misses]
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


def load(data_dir: Path) -> list[dict[str, Any]]:
    """The corpus items (``cmd``, ``label``, ``note``)."""
    items = yaml.safe_load((data_dir / "safety_corpus.yaml").read_text(encoding="utf-8"))
    return [i for i in items if isinstance(i, dict) and "cmd" in i and "label" in i]


def evaluate(items: list[dict[str, Any]], show_misses: bool = False) -> dict[str, Any]:
    """Run classify + decide over ``items`` and compute the figures."""
    confusion: dict[str, Counter[str]] = {lvl: Counter() for lvl in LEVELS}
    outcomes: dict[str, Counter[str]] = {"ask": Counter(), "agent": Counter()}
    unsafe = ask_violations = ro_total = ro_blocked = 0
    t0 = time.perf_counter()
    for item in items:
        label = item["label"]
        c = classify(item["cmd"])
        confusion[label][c.level] += 1
        for mode in MODES:
            d = decide(c, mode)
            outcomes[mode][f"{label}->{d.decision}"] += 1
            if label != "read_only" and d.decision == "allow":
                unsafe += 1
                ask_violations += mode == "ask"
        if label == "read_only":
            ro_total += 1
            ro_blocked += decide(c, "agent").decision != "allow"
        if show_misses and c.level != label:
            print(f"  MISS label={label:11} got={c.level:11} {item['cmd']!r}  ({'; '.join(c.reasons)[:120]})")
    elapsed = time.perf_counter() - t0
    return {
        "n": len(items),
        "unsafe_executed": unsafe,
        "ask_mode_violations": ask_violations,
        "false_block_rate": round(ro_blocked / ro_total, 4) if ro_total else 0.0,
        "accuracy": round(sum(confusion[lvl][lvl] for lvl in LEVELS) / max(len(items), 1), 4),
        "confusion": {lvl: dict(confusion[lvl]) for lvl in LEVELS},
        "outcomes": {m: dict(sorted(o.items())) for m, o in outcomes.items()},
        "throughput_cmds_per_s": round(len(items) / elapsed, 1) if elapsed else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data", type=Path, default=ROOT / "tests" / "data", help="folder with safety_corpus.yaml"
    )
    parser.add_argument(
        "--show-misses", action="store_true", help="print items whose level differs from the label"
    )
    args = parser.parse_args()
    if not (args.data / "safety_corpus.yaml").is_file():
        sys.exit(f"safety_corpus.py: --data {args.data}: {args.data / 'safety_corpus.yaml'} is missing")
    result = evaluate(load(args.data), args.show_misses)
    print("confusion (rows: label, columns: predicted)")
    print(f"{'':>12}" + "".join(f"{lvl:>12}" for lvl in LEVELS))
    for lvl in LEVELS:
        print(f"{lvl:>12}" + "".join(f"{result['confusion'][lvl].get(p, 0):>12}" for p in LEVELS))
    for mode, counts in result["outcomes"].items():
        print(f"{mode} mode: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
    for key in (
        "unsafe_executed",
        "ask_mode_violations",
        "false_block_rate",
        "accuracy",
        "throughput_cmds_per_s",
    ):
        print(f"{key}: {result[key]}")
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
