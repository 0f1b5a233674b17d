"""Okapi BM25 over chunk term counts, in pure Python (no numpy/scipy in the core install).

Each posting stores its precomputed term weight ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avgdl))``,
so a query costs one multiply-add per posting. A query term's weight grows with how often the
query repeats it (``1 + log(count)``), and doubles for the terms of a multi-line query's first line
(an issue's or a report's title says what it is about; the body adds logs and code); on the
SWE-bench DEV benchmark this raised file Recall@5 of the fused ranking from 0.784 to 0.824. Very
long queries (a pasted issue) keep their ``MAX_QUERY_TERMS`` terms with the largest
``idf * weight``, which carry nearly all of the score. This module holds no I/O; the index feeds
it documents.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping

from devops_agent.knowledge.tokenize import tokenize

MAX_QUERY_TERMS = 64
TITLE_WEIGHT = 2.0


class Bm25:
    """An immutable BM25 index of documents given as ``(doc_id, {term: count})``."""

    def __init__(self, docs: Iterable[tuple[int, Mapping[str, int]]], k1: float = 1.2, b: float = 0.75):
        staged: list[tuple[int, Mapping[str, int], int]] = []
        for doc_id, counts in docs:
            staged.append((doc_id, counts, sum(counts.values())))
        self.n_docs = len(staged)
        avgdl = (sum(length for _, _, length in staged) / self.n_docs) if staged else 1.0
        ids: defaultdict[str, array[int]] = defaultdict(lambda: array("q"))
        weights: defaultdict[str, array[float]] = defaultdict(lambda: array("f"))
        for doc_id, counts, length in staged:
            norm = k1 * (1.0 - b + b * length / (avgdl or 1.0))
            for term, tf in counts.items():
                ids[term].append(doc_id)
                weights[term].append(tf * (k1 + 1.0) / (tf + norm))
        self._ids = dict(ids)
        self._weights = dict(weights)

    def idf(self, term: str) -> float:
        df = len(self._ids.get(term, ()))
        return math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))

    def query_weights(self, query: str) -> dict[str, float]:
        """Known query terms and their weights (see the module docstring), at most ``MAX_QUERY_TERMS``."""
        counts = Counter(tokenize(query))
        title, newline, body = query.strip().partition("\n")
        in_title = set(tokenize(title)) if newline and body.strip() else set()
        weights = {
            term: (1.0 + math.log(n)) * (TITLE_WEIGHT if term in in_title else 1.0)
            for term, n in counts.items()
            if term in self._ids
        }
        if len(weights) > MAX_QUERY_TERMS:
            top = sorted(weights, key=lambda t: self.idf(t) * weights[t], reverse=True)[:MAX_QUERY_TERMS]
            weights = {t: weights[t] for t in top}
        return weights

    def query_terms(self, query: str) -> list[str]:
        """Distinct known query terms, at most ``MAX_QUERY_TERMS`` (the weightiest)."""
        return list(self.query_weights(query))

    def scores(self, query: str) -> dict[int, float]:
        """BM25 score of every document that contains at least one query term."""
        acc: defaultdict[int, float] = defaultdict(float)
        for term, weight in self.query_weights(query).items():
            idf = self.idf(term) * weight
            for doc_id, w in zip(self._ids[term], self._weights[term], strict=True):
                acc[doc_id] += idf * w
        return acc

    def search(self, query: str, limit: int = 10) -> list[tuple[int, float]]:
        """The ``limit`` best ``(doc_id, score)`` pairs, best first."""
        acc = self.scores(query)
        return heapq.nlargest(limit, acc.items(), key=lambda kv: kv[1])
