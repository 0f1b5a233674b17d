"""Numenta Anomaly Benchmark: validate our NAB scorer, then score our causal detector.

Data: ``--data`` (default ``/work/shared/benchmarks/nab``, layout in its SOURCE.md). Scoring is
``benchmarks/nab_scoring.py`` (written from the published definitions).

Validation: the folder holds NAB's published per-file raw scores of each detector
(``results/<det>/<det>_<profile>_scores.csv``) but not their per-timestamp outputs, so we check
what those files allow: (1) our window/probation bookkeeping reproduces, for every file, the
published count of scored rows inside windows (TP+FN) and outside (TN+FP); (2) the published
per-file raw scores, summed and normalised with our null/perfect baselines, reproduce the
published final score (``results/final_results.json``).

Our detector (``devops_agent.analysis.anomaly``) runs with ONE default configuration on every
file, online (each score uses only earlier points), without labels; as in NAB, one threshold per
profile is swept over the whole corpus. Prints per-category lines and, LAST, a JSON object.

    .venv/bin/python benchmarks/nab.py [--data DIR] [--detector numenta]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from devops_agent.analysis.anomaly import score_series  # noqa: E402
from nab_scoring import (  # noqa: E402
    PROFILES,
    ScoredFile,
    file_score,
    normalize,
    prepare,
    read_series,
    read_windows,
    score_corpus,
)

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "nab"
SHORT = {"standard": "standard", "reward_low_FP_rate": "reward_low_fp", "reward_low_FN_rate": "reward_low_fn"}


def validate(data: Path, files: dict[str, ScoredFile], detector: str) -> dict[str, Any]:
    """Reproduce a published detector's counts and final scores from its per-file results."""
    published = json.loads((data / "results" / "final_results.json").read_text())[detector]
    n_windows = sum(f.n_windows for f in files.values())
    out: dict[str, Any] = {"name": detector, "count_mismatches": 0}
    for p in PROFILES:
        path = data / "results" / detector / f"{detector}_{p.name}_scores.csv"
        raw = 0.0
        with path.open(newline="") as fh:
            for row in csv.DictReader(fh):
                if row["Detector"] == "Totals":
                    continue
                raw += float(row["Score"])
                f = files[row["File"]]
                scored = f.window_of[f.first_scored :]
                inside = sum(1 for w in scored if w >= 0)
                if (inside, len(scored) - inside) != (
                    int(row["TP"]) + int(row["FN"]),
                    int(row["TN"]) + int(row["FP"]),
                ):
                    out["count_mismatches"] += 1
        key = SHORT[p.name]
        out[key] = {
            "published": round(published[p.name], 3),
            "reproduced": round(normalize(raw, n_windows, p), 3),
        }
    out["published"] = out["standard"]["published"]
    out["reproduced"] = out["standard"]["reproduced"]
    out["check"] = (
        "published per-file raw scores normalised with our null/perfect; per-file window/probation counts"
    )
    return out


def main() -> None:
    """Run validation and the benchmark; print the JSON summary last."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--detector", default="numenta", help="published detector to validate against")
    args = ap.parse_args()
    t0 = time.perf_counter()
    windows = read_windows(args.data)
    files: dict[str, ScoredFile] = {}
    scores: dict[str, list[float]] = {}
    for name in sorted(windows):
        ts, vs = read_series(args.data / "data" / name)
        files[name] = prepare(name, ts, windows[name])
        scores[name] = [p.score for p in score_series(ts, vs)]
    validation = validate(args.data, files, args.detector)
    names = sorted(files)
    result: dict[str, Any] = {}
    for p in PROFILES:
        r = score_corpus([files[n] for n in names], [scores[n] for n in names], p)
        result[SHORT[p.name]] = round(r["score"], 2)
        result[f"{SHORT[p.name]}_threshold"] = round(r["threshold"], 4)
        if p.name == "standard":
            by_cat: dict[str, list[float]] = {}
            for n in names:
                raw, tp, fp = file_score(files[n], scores[n], r["threshold"], p)
                agg = by_cat.setdefault(n.split("/")[0], [0.0, 0, 0, 0])
                agg[0] += raw
                agg[1] += tp
                agg[2] += files[n].n_windows
                agg[3] += fp
            for cat, (cat_raw, cat_tp, cat_nw, cat_fp) in sorted(by_cat.items()):
                print(f"{cat:24s} raw={cat_raw:7.2f} windows={int(cat_tp)}/{int(cat_nw)} fp={int(cat_fp)}")
    print(f"validation: {json.dumps(validation)}")
    result.update(validation=validation, files=len(files), seconds=round(time.perf_counter() - t0, 1))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
