"""Cross-validation of the file-fusion weights of ``search_files`` (used by code_retrieval.py).

The retrieval channels of each case are computed once (``file_channels``); this module only
re-fuses them. ``tune`` picks channel weights and the RRF ``k`` by coordinate ascent on a set of
cases; ``cross_validate`` splits the cases into ``folds`` (case position modulo ``folds``), tunes on
all folds but one and scores the one left out, for each fold, so every case is scored by weights
that never saw it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from devops_agent.knowledge.search import FILE_CHANNELS, fuse_files

# The values each weight and k may take. 0 switches a channel off.
WEIGHT_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
K_GRID = (5, 10, 20, 40, 60)

Case = tuple[Mapping[str, Sequence[str]], str, Sequence[str]]  # channels, query, gold files


def rank_of(ranking: Sequence[str], gold: Sequence[str]) -> int | None:
    """1-based rank of the first gold file in ``ranking``, or None."""
    for i, path in enumerate(ranking, start=1):
        if path in gold:
            return i
    return None


def ranks(cases: Sequence[Case], weights: Mapping[str, float], k: int) -> list[int | None]:
    """The gold file's rank in each case's fused ranking."""
    return [rank_of(fuse_files(ch, q, weights, k), gold) for ch, q, gold in cases]


def objective(found: Sequence[int | None]) -> float:
    """What tuning maximises: Recall@1 + Recall@5 + MRR (the first two are the issue's targets;
    MRR breaks ties between weightings that find the same files)."""
    n = len(found) or 1
    r1 = sum(1 for r in found if r is not None and r <= 1)
    r5 = sum(1 for r in found if r is not None and r <= 5)
    return (r1 + r5 + sum(1.0 / r for r in found if r is not None)) / n


def tune(
    cases: Sequence[Case], start: Mapping[str, float], k: int, channels: Sequence[str] = FILE_CHANNELS
) -> tuple[dict[str, float], int, float]:
    """Weights and k that maximise :func:`objective` on ``cases``, by coordinate ascent from
    ``start``/``k`` over ``WEIGHT_GRID`` and ``K_GRID``; a change must strictly improve, so ties
    keep the starting value (deterministic, and no drift on flat ground)."""
    weights = dict(start)
    best = objective(ranks(cases, weights, k))
    for _ in range(4):
        improved = False
        for c in channels:
            for w in WEIGHT_GRID:
                if w == weights.get(c):
                    continue
                trial = {**weights, c: w}
                score = objective(ranks(cases, trial, k))
                if score > best + 1e-9:
                    best, weights, improved = score, trial, True
        for kk in K_GRID:
            if kk == k:
                continue
            score = objective(ranks(cases, weights, kk))
            if score > best + 1e-9:
                best, k, improved = score, kk, True
        if not improved:
            break
    return weights, k, best


def cross_validate(
    cases: Sequence[Case], start: Mapping[str, float], k: int, folds: int, channels: Sequence[str]
) -> tuple[list[int | None], list[dict[str, Any]]]:
    """Each case's rank under weights tuned on the other folds, and each fold's chosen settings."""
    found: list[int | None] = [None] * len(cases)
    chosen = []
    for f in range(folds):
        train = [c for i, c in enumerate(cases) if i % folds != f]
        test = [i for i in range(len(cases)) if i % folds == f]
        weights, kk, _ = tune(train, start, k, channels)
        for i, r in zip(test, ranks([cases[i] for i in test], weights, kk), strict=True):
            found[i] = r
        chosen.append({"fold": f, "k": kk, "weights": {c: weights[c] for c in channels}})
    return found, chosen
