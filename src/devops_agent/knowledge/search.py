"""Rank fusion: reciprocal-rank fusion (RRF) of several rankings, and chunk-to-file rollup.

RRF scores an item ``sum(weight / (k + rank))`` over the rankings it appears in (rank 1-based),
so BM25's and the embedder's incomparable scores never need calibrating. Two searches fuse the
same channels: :func:`hybrid_search` returns chunks, :func:`search_files` returns files. The
channels are BM25 over chunks, BM25 over whole files (file level only), dense (when an embedder
is given), the files the query names by path or dotted module (:func:`mentioned_files`), the
files that define the code names it mentions (:mod:`devops_agent.knowledge.symbols`), for chunks
the definitions of those names themselves (:func:`definitions`) and, for files, the modules its
title names (:func:`title_modules`) and the modules whose tests match it best
(:func:`tested_files`). The fusion functions are pure; the searches only read an index. This
module must not write to an index or load a model itself (the caller passes the embedder).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import weakref
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from devops_agent.knowledge.chunking import PROSE, language_of
from devops_agent.knowledge.index import Hit, KnowledgeIndex
from devops_agent.knowledge.lexical import Bm25
from devops_agent.knowledge.symbols import MAX_DEFINITIONS, defined_names, query_names
from devops_agent.knowledge.tokenize import tokenize

K = TypeVar("K", bound=Hashable)

RRF_K = 60
# Hybrid fusion: a sharper k keeps BM25's lead where it is confident, and the dense ranking is a
# quarter-weight vote (tuned on the first 20 DEV cases of benchmarks/code_retrieval.py, where equal
# weights at k=60 lowered file Recall@5 from 0.85 to 0.75). On all 153 cases with one vector per
# file outline, dense at this weight is neutral (R@5 0.843 -> 0.837, MRR 0.719 -> 0.725) and no
# weight in 0-1 beat the lexical channels on the tuning half: it stays a small vote.
HYBRID_K = 10
DENSE_WEIGHT = 0.25
CANDIDATES_PER_LIMIT = 5
# Chunks (or files) each channel of search_files contributes before fusion.
FILE_CANDIDATES = 300
# title_modules: a module name shared by more files than this, or a word that most files contain
# (BM25 idf below this, e.g. "error", "field"), does not point at a file.
MAX_MODULE_FILES = 10
MIN_MODULE_IDF = 1.0
# tested_files: the test files among this many best whole-file BM25 matches (tests included) vote
# for the modules they test, at this weight. Chosen on the tuning half of the SWE-bench DEV
# benchmark (file Recall@5 tied there at 64 of 76 for every top 5-20 and weight 0.5-1; this
# pair had the best MRR); see docs/knowledge.md.
TESTED_TOP = 5
TESTED_WEIGHT = 0.75
# search_files: the weights of the other file channels (see file_weights).
CHUNK_BM25_WEIGHT = 1.0
FILE_BM25_WEIGHT = 1.0
NAMED_WEIGHT = 1.0
SYMBOLS_WEIGHT = 1.0
TITLE_WEIGHT = 1.0
# Test files rank at this fraction of their fused score unless the query talks about tests: a
# question about behaviour is answered by the code, and a test that exercises the same names would
# otherwise crowd it out. On the SWE-bench DEV benchmark with test files kept in the rankings
# (--include-tests), 0.5 lifted file Recall@5 from 0.797 to 0.830 (tuning half 62 -> 63 of 76,
# held-out 60 -> 64 of 77); weights from 0 to 0.6 tied on the tuning half.
TEST_FILE_WEIGHT = 0.5
_TEST_FILE = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec)/|(^|/)tests\.py$|(^|/)test_[^/]*$|_tests?\.\w+$|_spec\.rb$"
    r"|(^|/)conftest\.py$|\.(test|spec)\.[cm]?[jt]sx?$|(^|/)\w+Tests?\.(java|kt|cs|scala)$",
    re.IGNORECASE,
)
# A query that talks about tests: test words and test names (test_retry, TestCase), test tools.
_ABOUT_TESTS = re.compile(r"\b(test\w*|\w+_tests?|unittests?|pytest|fixtures?|conftest)\b", re.IGNORECASE)
# module_map of each whole-file BM25 index's files, kept as long as that index is alive.
_MODULES: weakref.WeakKeyDictionary[Bm25, dict[str, list[str]]] = weakref.WeakKeyDictionary()


def rrf(rankings: Sequence[Sequence[K]], k: int = RRF_K, weights: Sequence[float] | None = None) -> list[K]:
    """Items of all ``rankings`` (each best first) ordered by fused score; ties keep first-seen order."""
    score = rrf_scores(rankings, k, weights)
    return sorted(score, key=lambda item: -score[item])


def rrf_scores(
    rankings: Sequence[Sequence[K]], k: int = RRF_K, weights: Sequence[float] | None = None
) -> dict[K, float]:
    """The fused RRF score of each item: ``sum(weight / (k + rank))`` over the rankings."""
    score: defaultdict[K, float] = defaultdict(float)
    for n, ranking in enumerate(rankings):
        w = 1.0 if weights is None else weights[n]
        for rank, item in enumerate(ranking, start=1):
            score[item] += w / (k + rank)
    return dict(score)


def files_of(ranked_paths: Sequence[str]) -> list[str]:
    """Distinct paths in order of their best chunk: a chunk ranking rolled up to files."""
    return list(dict.fromkeys(ranked_paths))


def hybrid_search(index: KnowledgeIndex, query: str, limit: int = 8, embedder: Any = None) -> list[Hit]:
    """BM25, dense (when an embedder is given), named-file and definition chunk rankings fused by RRF.

    Each retriever contributes ``CANDIDATES_PER_LIMIT * limit`` candidates. The extra rankings:
    the candidates from files the query names (see :func:`mentioned_files`); the candidates from
    files defining the code names it mentions, best file first; and the chunks that *are* those
    definitions (:func:`definitions`), fetched by name, so a long method that BM25 ranks low
    (``Console.print``) is still found. The fused score is reported as the hit's score. With no
    extra ranking this is plain BM25. Either way, chunks of test files are scaled by
    :func:`demotion_for_tests`, a file's outline ranks below its best real chunk when one matched,
    and one location indexed under two roots (a tree and its subdirectory) is returned once.
    """
    depth = max(limit * CANDIDATES_PER_LIMIT, 20)
    lexical = index.lexical(query, depth)
    dense = index.dense(embedder, query, depth) if embedder is not None else []
    named = set(mentioned_files(query, index.paths()) if names_a_file(query) else [])
    defining, defined = definitions(index, query)
    defs = index.get_hits(defined[:depth])
    rankings = [[h.key for h in lexical]]
    weights = [1.0]
    if dense:
        rankings.append([h.key for h in dense])
        weights.append(DENSE_WEIGHT)
    if named:  # chunks of files the query names (a traceback frame, a dotted module path)
        rankings.append([h.key for h in [*lexical, *dense] if h.chunk.path in named])
        weights.append(1.0)
    if defining:  # chunks of files defining the code names the query mentions, best file first
        candidates = [h for h in [*defs, *lexical, *dense] if (h.root, h.chunk.path) in defining]
        # stable: within a file, its definitions of the names, then BM25 order
        candidates.sort(key=lambda h: -defining[h.root, h.chunk.path])
        rankings.append(list(dict.fromkeys(h.key for h in candidates)))
        weights.append(1.0)
    if defs:  # the definitions themselves, most specific first
        rankings.append([h.key for h in defs])
        weights.append(1.0)
    demote = demotion_for_tests(query)
    if len(rankings) == 1:
        scored = [dataclasses.replace(h, score=h.score * demotion(h.chunk.path, demote)) for h in lexical]
        return _finish(scored, limit)
    by_id = {h.key: h for h in [*defs, *dense, *lexical]}
    fused = rrf_scores(rankings, k=HYBRID_K, weights=weights)
    return _finish(
        [
            dataclasses.replace(by_id[c], score=v * demotion(by_id[c].chunk.path, demote))
            for c, v in fused.items()
        ],
        limit,
    )


def definitions(
    index: KnowledgeIndex, query: str
) -> tuple[dict[tuple[str, str], float], list[tuple[int, float]]]:
    """Where the code names ``query`` mentions are defined: files and chunks.

    Returns each defining file's score keyed by ``(root, path)``, as the symbol table's
    :meth:`~devops_agent.knowledge.symbols.SymbolTable.scores` but per root, so a name defined in
    one indexed tree does not lift the same relative path in another; and the defining chunks as
    ``(chunk_id, score)``, best first. Only names the symbol table counts (defined in at most
    ``MAX_DEFINITIONS`` files) take part. A chunk defines the names of :func:`defined_names` (its
    symbol, ``Class.method`` also as ``method``, the methods of a class kept whole, module
    constants) and scores ``(1 + log mentions) / chunks defining the name`` over the names the
    query mentions, twice that when its own symbol is the name. The parts of a qualified name that
    is defined are its context, not what is asked for: for ``Console.print`` the method is the
    chunk, not the class ``Console`` nor every function named ``print`` (the files defining them
    still score). A dotted name that looks like a file (``Console.log``) counts when some chunk
    defines it.
    """
    table = index.symbols()
    named = query_names(query)
    for m in _DOTTED.finditer(query):  # `Console.log`: query_names takes it for a file name (.log)
        parts = m.group().split(".")
        for pair in (f"{a}.{b}" for a, b in zip(parts, parts[1:], strict=False)):
            if pair not in named and table.files_defining(pair):
                named.update([pair, *pair.split(".")])
    mentioned = {n: m for n, m in named.items() if 0 < len(table.files_defining(n)) <= MAX_DEFINITIONS}
    parts_of = {part for n in mentioned if "." in n for part in n.split(".")}
    if not mentioned:
        return {}, []
    paths = sorted({p for n in mentioned for p in table.files_defining(n)})
    rows = index.definition_rows(paths)
    found = {
        (cid, root, path, symbol): [n for n in defined_names(kind, symbol, text) if n in mentioned]
        for cid, root, path, kind, symbol, text in rows
    }
    in_files: defaultdict[str, set[tuple[str, str]]] = defaultdict(set)
    in_chunks: Counter[str] = Counter()
    for (_, root, path, _), names in found.items():
        for n in names:
            in_files[n].add((root, path))
            in_chunks[n] += 1
    files: defaultdict[tuple[str, str], float] = defaultdict(float)
    for n, where in in_files.items():
        for f in where:
            files[f] += (1.0 + math.log(mentioned[n])) / len(where)
    chunks: defaultdict[int, float] = defaultdict(float)
    for (cid, _, _, symbol), names in found.items():
        for n in names:
            if in_chunks[n] <= MAX_DEFINITIONS and n not in parts_of:
                chunks[cid] += (1.0 + math.log(mentioned[n])) / in_chunks[n] * (2.0 if symbol == n else 1.0)
    return dict(files), sorted(chunks.items(), key=lambda item: (-item[1], item[0]))


def location(hit: Hit) -> tuple[str, int, int]:
    """Where a hit's text is: the page URL, or the file's absolute path (roots are stored
    resolved), and its line range; the same for one file indexed under two overlapping roots."""
    c = hit.chunk
    where = hit.url or (os.path.normpath(os.path.join(hit.root, c.path)) if hit.root else c.path)
    return (where, c.start_line, c.end_line)


def _finish(hits: Sequence[Hit], limit: int) -> list[Hit]:
    """The ``limit`` best of ``hits``, each location once; an outline no higher than its file's
    best real chunk, when one is among ``hits`` (the chunk is the answer, the outline a pointer)."""
    best_real: dict[str, float] = {}
    for h in hits:
        if h.chunk.kind != "outline":
            where = location(h)[0]
            best_real[where] = max(best_real.get(where, h.score), h.score)
    capped = [
        dataclasses.replace(h, score=min(h.score, best_real[location(h)[0]]))
        if h.chunk.kind == "outline" and location(h)[0] in best_real
        else h
        for h in hits
    ]
    seen: set[tuple[str, int, int, bool]] = set()
    result: list[Hit] = []
    # stable: the given order among equal scores, a real chunk before an outline it ties with;
    # a short file's one chunk and its outline span the same lines, and are both kept
    for h in sorted(capped, key=lambda h: (-h.score, h.chunk.kind == "outline")):
        spot = (*location(h), h.chunk.kind == "outline")
        if spot in seen:
            continue
        seen.add(spot)
        result.append(h)
        if len(result) == limit:
            break
    return result


# The channels of search_files, in the order they are fused (a tie keeps the first-seen order).
FILE_CHANNELS = ("chunk_bm25", "file_bm25", "named", "symbols", "title", "tested", "dense")


def file_weights() -> dict[str, float]:
    """The weight of each of ``FILE_CHANNELS`` in :func:`search_files` (read at call time, so a
    caller or a test may change one module constant)."""
    return {
        "chunk_bm25": CHUNK_BM25_WEIGHT,
        "file_bm25": FILE_BM25_WEIGHT,
        "named": NAMED_WEIGHT,
        "symbols": SYMBOLS_WEIGHT,
        "title": TITLE_WEIGHT,
        "tested": TESTED_WEIGHT,
        "dense": DENSE_WEIGHT,
    }


def file_channels(
    index: KnowledgeIndex,
    query: str,
    embedder: Any = None,
    keep: Callable[[str], bool] | None = None,
) -> dict[str, list[str]]:
    """Each channel's file ranking for ``query`` (best first), before fusion; see :func:`search_files`.

    ``keep`` filters each ranking, so a dropped file does not take a rank. ``dense`` is empty
    without an embedder. Kept apart from the fusion so that a benchmark can compute the channels
    once and score many weightings (cross-validating the weights) without re-running retrieval.
    """

    def kept(paths: Iterable[str]) -> list[str]:
        # once each: a relative path indexed under two roots must not vote twice in one ranking
        return [p for p in dict.fromkeys(paths) if keep is None or keep(p)]

    file_bm25, code_paths = index.file_bm25()
    modules = _MODULES.get(file_bm25)
    if modules is None:  # the file index's files (code only, in a collection holding code), mapped
        # once per file index: a changed collection builds a new one, and this entry is dropped
        modules = _MODULES[file_bm25] = module_map(code_paths)
    # deduplicated before TESTED_TOP is taken: two roots' copies of a file are one of the five
    whole_files = list(dict.fromkeys(p for p, _ in index.file_lexical(query, FILE_CANDIDATES)))
    dense = index.dense(embedder, query, FILE_CANDIDATES) if embedder is not None else []
    return {
        "chunk_bm25": kept(rank_files(index.lexical(query, FILE_CANDIDATES))),
        "file_bm25": kept(whole_files),
        "named": kept(mentioned_files(query, index.paths()) if names_a_file(query) else []),
        "symbols": kept(index.symbols().rank_files(query)),
        "title": kept(title_modules(query, modules, file_bm25.idf)),
        "tested": kept(tested_files(whole_files[:TESTED_TOP], modules)),
        "dense": kept(files_of([h.chunk.path for h in dense])),
    }


def fuse_files(
    channels: Mapping[str, Sequence[str]],
    query: str,
    weights: Mapping[str, float] | None = None,
    k: int | None = None,
) -> list[str]:
    """All files of ``channels`` (:func:`file_channels`) best first: RRF at ``k`` (default
    ``HYBRID_K``) with ``weights`` (default :func:`file_weights`), test files scaled by
    :func:`demotion_for_tests`. A channel with weight 0 or missing from ``weights`` is left out."""
    weights = file_weights() if weights is None else weights
    names = [c for c in FILE_CHANNELS if channels.get(c) and weights.get(c, 0.0) > 0]
    fused = rrf_scores(
        [channels[c] for c in names], k=HYBRID_K if k is None else k, weights=[weights[c] for c in names]
    )
    demote = demotion_for_tests(query)
    score = {p: v * demotion(p, demote) for p, v in fused.items()}
    return sorted(score, key=lambda p: -score[p])


def search_files(
    index: KnowledgeIndex,
    query: str,
    limit: int = 10,
    embedder: Any = None,
    keep: Callable[[str], bool] | None = None,
) -> list[str]:
    """Files for ``query``, best first: every channel's file ranking fused by RRF (k = ``HYBRID_K``).

    Channels (:func:`file_channels`, weights :func:`file_weights`): chunk BM25 rolled up by
    :func:`rank_files`; BM25 over whole files; :func:`mentioned_files`; files defining the code
    names the query mentions; :func:`title_modules`; :func:`tested_files` of the whole-file
    ranking; dense (when an embedder is given). ``keep`` filters each channel's ranking before
    fusion (e.g. only ``.py`` files), so a dropped file does not take a rank. Test files' fused
    scores are scaled by :func:`demotion_for_tests`. The weights and ``HYBRID_K`` are chosen by
    cross-validation on the SWE-bench DEV benchmark (benchmarks/code_retrieval.py: tuned on four
    fifths of the cases, scored on the fifth, for each fifth); see docs/benchmarks.md.
    """
    return fuse_files(file_channels(index, query, embedder, keep), query)[:limit]


def is_test_file(path: str) -> bool:
    """Whether ``path`` looks like a test (``tests/``, ``test_*.py``, ``*_test.go``, ``conftest.py``,
    ``*.spec.ts``, ...)."""
    return bool(_TEST_FILE.search(path))


def demotion_for_tests(query: str) -> float:
    """The factor test files' scores take for ``query``: ``TEST_FILE_WEIGHT``, or 1 when the query
    talks about tests (then a test may be what is wanted)."""
    return 1.0 if _ABOUT_TESTS.search(query) else TEST_FILE_WEIGHT


def demotion(path: str, weight: float) -> float:
    """``weight`` for a test file of code, else 1 (runbooks and postmortems are never tests)."""
    return weight if weight != 1.0 and is_test_file(path) and language_of(path) not in PROSE else 1.0


_PATH_MENTION = re.compile(r"[\w.-]*(?:[/\\][\w.-]+)+\.[A-Za-z]\w*")
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b")


def names_a_file(query: str) -> bool:
    """Whether ``query`` holds a path or a dotted name at all (saves listing the index's files)."""
    return bool(_PATH_MENTION.search(query) or _DOTTED.search(query))


def mentioned_files(query: str, paths: Sequence[str]) -> list[str]:
    """Indexed files that ``query`` names: by path (a traceback's ``.../pkg/mod.py``) or dotted module.

    Matching is by path suffix, so absolute paths from another machine still match. Files are
    ordered by how often they are named, then by first mention.
    """
    by_suffix: dict[str, list[str]] = defaultdict(list)
    for p in paths:
        parts = p.split("/")
        for i in range(len(parts)):
            by_suffix["/".join(parts[i:])].append(p)
    counts: defaultdict[str, int] = defaultdict(int)

    def add(candidate: str) -> bool:
        parts = candidate.strip("/").split("/")
        for i in range(len(parts)):  # longest suffix first
            hits = by_suffix.get("/".join(parts[i:]))
            if hits and (i < len(parts) - 1 or len(parts) == 1):
                for h in hits[:3]:
                    counts[h] += 1
                return True
        return False

    for m in _PATH_MENTION.finditer(query):
        add(m.group().replace("\\", "/"))
    for m in _DOTTED.finditer(query):
        parts = m.group().split(".")
        for end in range(len(parts), 1, -1):  # shop.billing.invoice.Invoice -> .../invoice.py
            stem = "/".join(parts[:end])
            if add(stem + ".py") or add(stem + "/__init__.py"):
                break
    return sorted(counts, key=lambda p: -counts[p])


def module_name(path: str) -> str:
    """The name a file is imported or talked about by: its stem, or its package's name for an
    ``__init__`` file; lowercased, without edge underscores (``_runner/nodes.py`` -> ``nodes``,
    ``docgen/ext/apidoc/__init__.py`` -> ``apidoc``), as :func:`tokenize` writes a word."""
    parts = path.split("/")
    stem = parts[-1].rsplit(".", 1)[0] if "." in parts[-1].lstrip(".") else parts[-1]
    if stem == "__init__" and len(parts) > 1:
        stem = parts[-2]
    return stem.lower().strip("_")


def module_map(paths: Iterable[str]) -> dict[str, list[str]]:
    """Each :func:`module_name` and the files that bear it."""
    modules: defaultdict[str, list[str]] = defaultdict(list)
    for p in paths:
        modules[module_name(p)].append(p)
    return dict(modules)


def title_modules(query: str, modules: Mapping[str, Sequence[str]], idf: Callable[[str], float]) -> list[str]:
    """Files whose module a word of the query's title names, best first.

    An issue's title often names the module it is about in plain words ("inspectdb should
    generate related_name", "check_for_template_tags ... in TEMPLATES" -> ``checks/templates.py``)
    without the path or dotted form :func:`mentioned_files` needs. The title is the query's first
    non-blank line (a one-line query is all title). A file scores ``count * idf / n`` for each
    title word equal to its :func:`module_name` (``modules`` is :func:`module_map` of the files),
    where ``idf`` is the word's rarity over those files and ``n`` how many files share that module
    name; words most files contain (idf below ``MIN_MODULE_IDF``) and names of more than
    ``MAX_MODULE_FILES`` files count for nothing.
    """
    title = next((line for line in query.splitlines() if line.strip()), "")
    words = Counter(tokenize(title))
    score: defaultdict[str, float] = defaultdict(float)
    for name, count in words.items():
        files = modules.get(name, ())
        if not files or len(files) > MAX_MODULE_FILES:
            continue
        weight = idf(name)
        if weight < MIN_MODULE_IDF:
            continue
        for p in files:
            score[p] += count * weight / len(files)
    return sorted(score, key=lambda p: (-score[p], p))


# A test file's name around its subject's: test_retry.py, retry_test.go, retry_tests.py,
# retry.test.ts, retry.spec.js, retry_spec.rb, RetryTest.java / RetryTests.kt; tests.py (and
# test.py) take their directory's name (Django's tests/auth_tests/tests.py).
_TEST_AFFIX = re.compile(
    r"^tests?_(?P<a>.+)$|^(?P<b>.+?)(?:_tests?|_spec|\.test|\.spec|(?<=[a-z0-9])Tests?)$"
)
# Directories that hold tests, and the affixes that make a directory name a test directory
# (auth_tests, test_utils): what is left names where the subject lives.
_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs"})
_TEST_DIR_AFFIX = re.compile(r"^tests?_|_tests?$")
# A test of one language tests code of its own language or of one compiled or bundled with it
# (a .test.js for a .ts module, a Kotlin test for a Java class), never a config file or a script
# of another language that bears the same name (config_test.go is no test of deploy/config.yaml).
_LANGUAGE_FAMILY = {"typescript": "javascript", "kotlin": "java", "scala": "java", "cpp": "c"}


def tested_module(path: str, modules: Mapping[str, Sequence[str]]) -> str | None:
    """The file a test file tests, by naming convention, or None when that is not clear.

    The subject's :func:`module_name` is the test's name without its test affix
    (``testing/test_nodes.py`` -> ``nodes``, ``pkg/retry_test.go`` -> ``retry``,
    ``RetryClientTest.java`` -> ``retryclient``); a ``tests.py`` takes its directory's name and a
    file in ``__tests__`` its own. Among the files of ``modules`` (:func:`module_map`) that bear
    it, test files excluded, of the test's own language if any are, else of a related one
    (``_LANGUAGE_FAMILY``; never a YAML file or another language's script), the one sharing most
    directory names with the test's directories wins (``tests/billing_tests/test_invoices.py`` ->
    ``shop/contrib/billing/invoices/__init__.py``, the shallowest on a tie); when several share
    none, or several share as many at the same depth, it is None: a wrong subject's vote would
    lift a file the question is not about.
    """
    parts = path.split("/")
    name = parts[-1]
    stem = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
    if stem.lower() in {"tests", "test"}:
        if len(parts) < 2:
            return None
        stem = _TEST_DIR_AFFIX.sub("", parts[-2])
    elif m := _TEST_AFFIX.match(stem):
        stem = m.group("a") or m.group("b")
    elif len(parts) < 2 or parts[-2] != "__tests__":  # Jest: src/__tests__/retry.ts tests src/retry.ts
        return None
    subject = stem.lower().strip("_")
    if subject in _TEST_DIRS:  # tests/test.py: a test directory names no module
        return None
    candidates = [p for p in dict.fromkeys(modules.get(subject, ())) if p != path and not is_test_file(p)]
    language = language_of(path)
    family = _LANGUAGE_FAMILY.get(language, language)
    same = [p for p in candidates if language_of(p) == language]
    candidates = same or [
        p for p in candidates if _LANGUAGE_FAMILY.get(language_of(p), language_of(p)) == family
    ]
    if not candidates:
        return None
    context = {_TEST_DIR_AFFIX.sub("", d.lower()) for d in parts[:-1]} - _TEST_DIRS - {""}

    def shared(p: str) -> int:
        return len(context & {d.lower() for d in p.split("/")[:-1]})

    best = max(candidates, key=lambda p: (shared(p), -len(p)))
    if len(candidates) > 1 and shared(best) == 0:
        return None
    # lib/a/utils.py and lib/b/utils.py for lib/tests/test_utils.py: as close, as deep; a guess
    if any(p != best and shared(p) == shared(best) and p.count("/") == best.count("/") for p in candidates):
        return None
    return best


def tested_files(ranking: Sequence[str], modules: Mapping[str, Sequence[str]]) -> list[str]:
    """The files that the test files of ``ranking`` test (:func:`tested_module`), in the tests' order.

    A test that exercises the behaviour a question describes repeats its words (the inputs, the
    expected output, the names called) more often than the code it tests, so whole-file BM25
    often ranks the test above its subject. The best tests point at the module to read. On the
    SWE-bench DEV benchmark, the tests among the five best whole files, as a channel of
    :func:`search_files` at ``TESTED_WEIGHT``, lifted file Recall@5 from 0.843 to 0.856 (six gold
    files ranked higher, four lower; docs/benchmarks.md has the cases).
    """
    found: dict[str, None] = {}
    for p in ranking:
        if is_test_file(p):
            subject = tested_module(p, modules)
            if subject is not None:
                found.setdefault(subject)
    return list(found)


def rank_files(hits: Sequence[Hit], top: int = 2) -> list[str]:
    """Files of ``hits`` ordered by the sum of their ``top`` best chunk scores.

    One strong chunk and a second supporting one beat a single lucky match (on the SWE-bench
    DEV benchmark, top-2 sums raised file MRR from 0.572 to 0.607 over best-chunk-only).
    """
    scores: defaultdict[str, list[float]] = defaultdict(list)
    seen: set[tuple[str, int, int, str]] = set()
    for h in hits:
        spot = (h.chunk.path, h.chunk.start_line, h.chunk.end_line, h.chunk.kind)
        if spot not in seen:  # one chunk indexed under two roots is one piece of evidence
            seen.add(spot)
            scores[h.chunk.path].append(h.score)
    total = {p: sum(sorted(s, reverse=True)[:top]) for p, s in scores.items()}
    return sorted(total, key=lambda p: -total[p])
