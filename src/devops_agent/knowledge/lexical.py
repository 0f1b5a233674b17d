"""Okapi BM25 over chunk term counts, in pure Python (no numpy/scipy in the core install).

Each posting stores its precomputed term weight ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avgdl))``,
so a query costs one multiply-add per posting. Very long queries (a pasted issue) keep their
``MAX_QUERY_TERMS`` rarest terms, which carry nearly all of the score. This module holds no I/O;
the index feeds it documents.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections import defaultdict
from collections.abc import Iterable, Mapping

from devops_agent.knowledge.tokenize import tokenize

MAX_QUERY_TERMS = 64


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

    def query_terms(self, query: str) -> list[str]:
        """Distinct known query terms, the rarest ``MAX_QUERY_TERMS`` when there are more."""
        terms = [t for t in dict.fromkeys(tokenize(query)) if t in self._ids]
        if len(terms) > MAX_QUERY_TERMS:
            terms = sorted(terms, key=self.idf, reverse=True)[:MAX_QUERY_TERMS]
        return terms

    def scores(self, query: str) -> dict[int, float]:
        """BM25 score of every document that contains at least one query term."""
        acc: defaultdict[int, float] = defaultdict(float)
        for term in self.query_terms(query):
            idf = self.idf(term)
            for doc_id, w in zip(self._ids[term], self._weights[term], strict=True):
                acc[doc_id] += idf * w
        return acc

    def search(self, query: str, limit: int = 10) -> list[tuple[int, float]]:
        """The ``limit`` best ``(doc_id, score)`` pairs, best first."""
        acc = self.scores(query)
        return heapq.nlargest(limit, acc.items(), key=lambda kv: kv[1])
