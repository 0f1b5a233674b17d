"""NAB (Numenta Anomaly Benchmark) scoring, written from the published definitions.

Definitions (Lavin & Ahmad 2015, Ahmad et al. 2017, and the NAB data folder's SOURCE.md):

* The first 15% of each file (at most 750 rows) is a probationary period and is not scored.
* Each labelled anomaly window is ``[start, end]`` (inclusive, by timestamp). For a row ``i``
  inside a window whose last row is ``r`` and which holds ``w`` rows, the relative position is
  ``y = -(r - i + 1) / w`` (-1 at the left edge, towards 0 at the right edge). For a row after a
  window (last row ``r``, ``w`` rows) it is ``y = (i - r) / (w - 1)``; before any window the
  weight is -1.
* ``sigma(y) = 2 / (1 + exp(5 y)) - 1``, with ``sigma(y) = -1`` for ``y > 3``.
* Only the earliest detection in a window counts, ``A_TP * sigma(y)``; a window with no detection
  costs ``-A_FN``; a detection outside windows adds ``A_FP * sigma(y)`` (negative); true negatives
  add nothing.
* One threshold per detector and profile, chosen to maximise the summed raw score over the whole
  corpus (a sweep over every distinct score, highest first).
* ``normalized = 100 * (raw - raw_null) / (raw_perfect - raw_null)``, where the null detector
  never fires (``raw_null = -A_FN * windows``) and ``raw_perfect = A_TP * windows``. These two
  baselines reproduce NAB's published ``final_results.json`` from its per-file raw scores exactly.

This module only scores: it must not run detectors or know about our package.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

PROBATION_FRACTION = 0.15
PROBATION_MAX_ROWS = 750  # 0.15 * 5000, NAB's cap


@dataclass(frozen=True)
class Profile:
    """A NAB cost matrix (``A_TN`` is part of the published profiles but scores nothing)."""

    name: str
    tp: float
    fp: float
    fn: float
    tn: float = 1.0


PROFILES = (
    Profile("standard", tp=1.0, fp=0.11, fn=1.0),
    Profile("reward_low_FP_rate", tp=1.0, fp=0.22, fn=1.0),
    Profile("reward_low_FN_rate", tp=1.0, fp=0.11, fn=2.0),
)


@dataclass
class ScoredFile:
    """One file prepared for scoring: per scored row, its window (or -1) and its sigmoid weight."""

    name: str
    length: int
    n_windows: int
    window_of: list[int] = field(default_factory=list)
    weight: list[float] = field(default_factory=list)
    first_scored: int = 0


def sigma(y: float) -> float:
    """NAB's scaled sigmoid: ~+1 at a window's left edge, 0 at its right edge, -> -1 far after."""
    if y > 3.0:
        return -1.0
    return 2.0 / (1.0 + math.exp(5.0 * y)) - 1.0


def probation_rows(length: int) -> int:
    """Rows at the head of a file that are not scored."""
    return min(math.floor(PROBATION_FRACTION * length), int(PROBATION_FRACTION * 5000))


def prepare(name: str, timestamps: list[datetime], windows: list[tuple[datetime, datetime]]) -> ScoredFile:
    """Assign each row its window and sigmoid weight (windows must be sorted and disjoint)."""
    n = len(timestamps)
    idx_windows: list[tuple[int, int]] = []
    for start, end in windows:
        rows = [i for i, t in enumerate(timestamps) if start <= t <= end]
        if rows:
            idx_windows.append((rows[0], rows[-1]))
    window_of = [-1] * n
    weight = [-1.0] * n
    for k, (lo, hi) in enumerate(idx_windows):
        width = hi - lo + 1
        nxt = idx_windows[k + 1][0] if k + 1 < len(idx_windows) else n
        for i in range(lo, hi + 1):
            window_of[i] = k
            weight[i] = sigma(-(hi - i + 1) / width)
        for i in range(hi + 1, nxt):
            weight[i] = sigma((i - hi) / (width - 1)) if width > 1 else -1.0
    return ScoredFile(name, n, len(windows), window_of, weight, probation_rows(n))


def _file_score(f: ScoredFile, scores: list[float], threshold: float, p: Profile) -> tuple[float, int, int]:
    """Raw score, true-positive windows and false-positive rows of one file at ``threshold``."""
    best: dict[int, float] = {}
    fp_total = 0.0
    fps = 0
    for i in range(f.first_scored, f.length):
        if scores[i] < threshold:
            continue
        w = f.window_of[i]
        if w < 0:
            fp_total += p.fp * f.weight[i]
            fps += 1
        else:
            best[w] = max(best.get(w, -math.inf), p.tp * f.weight[i])
    raw = sum(best.values()) + fp_total - p.fn * (f.n_windows - len(best))
    return raw, len(best), fps


def sweep(files: list[ScoredFile], scores: list[list[float]], p: Profile) -> tuple[float, float]:
    """Best (threshold, raw corpus score) over all distinct scores, as NAB's threshold sweep does."""
    rows: list[tuple[float, int, int]] = []
    for fi, (f, s) in enumerate(zip(files, scores, strict=True)):
        rows.extend((s[i], fi, i) for i in range(f.first_scored, f.length))
    rows.sort(key=lambda r: -r[0])
    total = -p.fn * sum(f.n_windows for f in files)
    best_total, best_threshold = total, math.inf
    detected: dict[tuple[int, int], float] = {}
    for j, (value, fi, i) in enumerate(rows):
        f = files[fi]
        w = f.window_of[i]
        gain = p.tp * f.weight[i] if w >= 0 else p.fp * f.weight[i]
        if w < 0:
            total += gain
        elif (fi, w) not in detected:
            detected[(fi, w)] = gain
            total += gain + p.fn
        elif gain > detected[(fi, w)]:
            total += gain - detected[(fi, w)]
            detected[(fi, w)] = gain
        last_of_group = j + 1 == len(rows) or rows[j + 1][0] != value
        if last_of_group and total > best_total:
            best_total, best_threshold = total, value
    return best_threshold, best_total


def normalize(raw: float, n_windows: int, p: Profile) -> float:
    """Map a raw corpus score to NAB's 0-100 scale (null detector 0, perfect detector 100)."""
    null = -p.fn * n_windows
    perfect = p.tp * n_windows
    return 100.0 * (raw - null) / (perfect - null)


def score_corpus(files: list[ScoredFile], scores: list[list[float]], p: Profile) -> dict[str, float]:
    """Threshold, raw and normalised score of a detector over a corpus for one profile."""
    threshold, raw = sweep(files, scores, p)
    return {
        "threshold": threshold,
        "raw": raw,
        "score": normalize(raw, sum(f.n_windows for f in files), p),
    }


def file_score(f: ScoredFile, scores: list[float], threshold: float, p: Profile) -> tuple[float, int, int]:
    """Raw score, detected windows and false-positive rows of one file at a fixed threshold."""
    return _file_score(f, scores, threshold, p)


def choose_by_folds(
    files: dict[str, ScoredFile], runs: Sequence[dict[str, list[float]]], folds: int, p: Profile
) -> tuple[float, list[int]]:
    """``folds``-fold cross-validation over the files (sorted names, fold = index modulo
    ``folds``): each fold is scored with the run (candidate) and threshold that score best on the
    other folds. The normalised score of the whole corpus so scored, and each fold's choice (an
    index into ``runs``; ties go to the earlier run, the default first)."""
    names = sorted(files)
    total, chosen = 0.0, []
    for f in range(folds):
        train = [files[n] for i, n in enumerate(names) if i % folds != f]
        test = [files[n] for i, n in enumerate(names) if i % folds == f]
        fits = [score_corpus(train, [run[x.name] for x in train], p) for run in runs]
        scores = [fit["score"] for fit in fits]
        best = scores.index(max(scores))
        chosen.append(best)
        total += sum(file_score(x, runs[best][x.name], fits[best]["threshold"], p)[0] for x in test)
    return normalize(total, sum(x.n_windows for x in files.values()), p), chosen


# --- reading the NAB data folder -------------------------------------------------------------


def parse_ts(text: str) -> datetime:
    """NAB timestamps: ``YYYY-MM-DD HH:MM:SS`` with optional microseconds."""
    return datetime.fromisoformat(text.strip())


def read_series(path: Path) -> tuple[list[datetime], list[float]]:
    """One NAB data file as (timestamps, values)."""
    ts: list[datetime] = []
    vs: list[float] = []
    with path.open(newline="") as fh:
        for row in csv.DictReader(fh):
            ts.append(parse_ts(row["timestamp"]))
            vs.append(float(row["value"]))
    return ts, vs


def read_windows(data_dir: Path) -> dict[str, list[tuple[datetime, datetime]]]:
    """``labels/combined_windows.json`` as sorted datetime windows per relative file name."""
    raw = json.loads((data_dir / "labels" / "combined_windows.json").read_text())
    return {k: sorted((parse_ts(a), parse_ts(b)) for a, b in v) for k, v in raw.items()}
