"""Code retrieval benchmark: SWE-bench Lite DEV issues -> the file the fix changed.

For each case the repository is taken from PyPI as the source distribution of the release nearest
*before* the case's base commit (see ``RELEASES`` for the method), indexed with
``devops_agent.knowledge`` (cached per (package, version) under ``~/.cache/devops-agent-bench``),
and queried with the issue text. Reports file-level Recall@1/@5 and MRR for BM25 alone, dense
alone (``knowledge-dense`` extra; null when absent) and the hybrid of
:func:`devops_agent.knowledge.search.search_files` (RRF of chunk BM25, file BM25, named files,
symbol definitions, modules the title names, modules whose tests match best and dense), all in
one run. No language model and no
gold information is used for retrieval; the gold file is only looked up to score and to count how
many gold files exist in what was indexed. Retrieval settings were tuned on the odd positions of
``dev.jsonl`` (0-based); ``holdout`` reports the even positions alone, and ``per_repo`` the hybrid
Recall@5 by project. The headline figures count every case; ``gold_present`` repeats the hybrid's
over the cases whose gold file exists in the indexed release, and ``renames`` over all cases with
an absent gold file's predecessor (see :func:`predecessor`) counting as the gold file.

``--throughput`` instead measures indexing speed and query latency on this venv's site-packages.

Usage: python benchmarks/code_retrieval.py [--data DIR] [--limit N] [--no-dense] [--throughput]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import sys
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from devops_agent.knowledge.index import Hit, KnowledgeIndex
from devops_agent.knowledge.search import (
    FILE_CHANNELS,
    HYBRID_K,
    file_channels,
    file_weights,
    files_of,
    fuse_files,
    hybrid_search,
    is_test_file,
    rank_files,
    search_files,
)
from retrieval_cv import cross_validate, tune
from retrieval_cv import ranks as fused_ranks

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("DEVOPS_AGENT_BENCH_CACHE", Path.home() / ".cache" / "devops-agent-bench"))
CANDIDATES = 300  # chunks taken from each retriever before rolling up to files

# SOURCE.md gives only base commits, and no git history is available offline, so the commit date
# is estimated from the instance number (the upstream PR number, which grows with time) against
# each project's release dates. Each row: (first PR number after release R, "<next line>") means
# "cases from that PR on use the highest final release below <next line>", i.e. the last release
# published before the commit. PR-number boundaries are approximate (about +-1 month).
# fmt: off
RELEASES: dict[str, tuple[str, list[tuple[int, str]]]] = {
    "django/django": ("Django", [(0, "2.2"), (11200, "3.0"), (12200, "3.1"), (13300, "3.2"),
                                 (14200, "4.0"), (15200, "4.1"), (15950, "4.2"), (16750, "5.0")]),
    "sympy/sympy": ("sympy", [(0, "1.1"), (13000, "1.2"), (14900, "1.3"), (15200, "1.4"), (16600, "1.5"),
                              (18100, "1.6"), (19700, "1.7"), (20400, "1.8"), (21300, "1.9"),
                              (22200, "1.10"), (23100, "1.11"), (23900, "1.12"), (25100, "1.13")]),
    "matplotlib/matplotlib": ("matplotlib", [(0, "3.3"), (17700, "3.4"), (19700, "3.5"), (21500, "3.6"),
                                             (23900, "3.7"), (25200, "3.8"), (26700, "3.9")]),
    "scikit-learn/scikit-learn": ("scikit-learn", [(0, "0.20"), (12000, "0.21"), (13900, "0.22"),
                                                   (15900, "0.23"), (17300, "0.24"), (18900, "1.0"),
                                                   (21000, "1.1"), (23300, "1.2"), (25100, "1.3")]),
    "pytest-dev/pytest": ("pytest", [(0, "5.0"), (5500, "5.1"), (5700, "5.2"), (5900, "5.3"),
                                     (6200, "5.4"), (6900, "6.0"), (7500, "6.1"), (7800, "6.2"),
                                     (8150, "7.0"), (9600, "7.1"), (9800, "7.2"), (10400, "7.3"),
                                     (10900, "7.4"), (11100, "8.0")]),
    "sphinx-doc/sphinx": ("Sphinx", [(0, "3.1"), (7800, "3.2"), (8050, "3.3"), (8400, "3.4"),
                                     (8550, "3.5"), (8900, "4.0"), (9200, "4.1"), (9450, "4.2"),
                                     (9650, "4.3"), (9800, "4.4"), (10050, "4.5"), (10250, "5.0"),
                                     (10450, "5.1"), (10650, "5.2"), (10850, "5.3"), (10950, "6.0"),
                                     (11050, "6.1"), (11150, "6.2"), (11300, "7.0"), (11350, "7.1"),
                                     (11500, "7.2")]),
    "astropy/astropy": ("astropy", [(0, "3.0"), (7300, "3.1"), (8000, "3.2"), (11900, "5.0"),
                                    (12400, "5.1"), (13200, "5.2"), (14100, "5.3"), (14800, "6.0")]),
    "psf/requests": ("requests", [(0, "0.15"), (1500, "2.3"), (2100, "2.4"), (2300, "2.5"),
                                  (2600, "2.8"), (3300, "2.12"), (5000, "2.25")]),
    "pydata/xarray": ("xarray", [(0, "0.15"), (3700, "0.16"), (4200, "0.17"), (4900, "0.18"),
                                 (5300, "0.19"), (5600, "0.20"), (5950, "2022.3"), (6400, "2022.6"),
                                 (6700, "2022.10"), (7200, "2023.1")]),
    "pylint-dev/pylint": ("pylint", [(0, "2.13"), (5900, "2.14"), (6900, "2.15"), (7300, "2.16"),
                                     (8100, "2.17")]),
    "mwaskom/seaborn": ("seaborn", [(0, "0.12"), (3000, "0.13"), (3450, "0.14")]),
    "pallets/flask": ("Flask", [(0, "2.1"), (4500, "2.2"), (4750, "2.3"), (5050, "3.0"), (5250, "3.1")]),
}
# fmt: on


def _vtuple(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


def _pypi_json(name: str) -> dict[str, Any]:
    """PyPI's JSON metadata for ``name`` (one request per package, cached on disk)."""
    path = CACHE / "pypi" / f"{name.lower()}.json"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(f"https://pypi.org/pypi/{name}/json", timeout=60) as resp:
            path.write_bytes(resp.read())
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def release_for(repo: str, instance_id: str) -> tuple[str, str]:
    """(PyPI name, version): the highest final release with an sdist below the case's next line."""
    name, table = RELEASES[repo]
    number = int(instance_id.rsplit("-", 1)[1])
    bound = [nxt for start, nxt in table if number >= start][-1]
    return name, max((v for v in _final_sdists(name) if _vtuple(v) < _vtuple(bound)), key=_vtuple)


def _final_sdists(name: str) -> list[str]:
    """The final releases of ``name`` (no pre-releases) that have a source distribution."""
    return [
        v
        for v, files in _pypi_json(name)["releases"].items()
        if re.fullmatch(r"\d+(\.\d+)*", v) and any(f["packagetype"] == "sdist" for f in files)
    ]


def fetch_source(name: str, version: str) -> Path:
    """Extracted sdist of ``name==version`` (top folder stripped), cached."""
    dest = CACHE / "src" / f"{name.lower()}-{version}"
    if (dest / ".complete").exists():
        return dest
    sdists = CACHE / "sdists"
    sdists.mkdir(parents=True, exist_ok=True)
    files = [f for f in _pypi_json(name)["releases"][version] if f["packagetype"] == "sdist"]
    archive = sdists / files[0]["filename"]
    if not archive.exists():
        # pip download runs the sdist's build backend for metadata, which fails for many old
        # releases (numpy/Cython builds), so the archive is fetched from the same PyPI file URL
        # pip would use, and checked against PyPI's sha256.
        url = urllib.parse.urljoin(f"https://pypi.org/pypi/{name}/json", files[0]["url"])
        with urllib.request.urlopen(url, timeout=300) as resp:
            data = resp.read()
        if hashlib.sha256(data).hexdigest() != files[0]["digests"]["sha256"]:
            raise RuntimeError(f"sha256 mismatch for {archive.name}")
        archive.write_bytes(data)
    tmp = Path(tempfile.mkdtemp(dir=CACHE))
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(tmp)
    else:
        with tarfile.open(archive) as tf:
            tf.extractall(tmp, filter="data")
    top = next(tmp.iterdir())
    shutil.rmtree(dest, ignore_errors=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    top.rename(dest)
    shutil.rmtree(tmp)
    (dest / ".complete").touch()
    return dest


def file_ranking(hits: list[Hit], include_tests: bool) -> list[str]:
    """Chunk hits rolled up to files (best chunk first), keeping non-test ``.py`` files."""
    return file_ranking_paths(files_of([h.chunk.path for h in hits]), include_tests)


def file_ranking_paths(paths: list[str], include_tests: bool) -> list[str]:
    return [p for p in paths if ranked(p, include_tests)]


def ranked(path: str, include_tests: bool) -> bool:
    # The benchmark's gold files are non-test Python files by construction (SWE-bench patches
    # minus tests), so other files are dropped from every ranking alike; --include-tests keeps them.
    return path.endswith(".py") and (include_tests or not is_test_file(path))


def _metrics(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {
        "recall_at_1": sum(1 for r in ranks if r is not None and r <= 1) / n,
        "recall_at_5": sum(1 for r in ranks if r is not None and r <= 5) / n,
        "mrr": sum(1.0 / r for r in ranks if r is not None) / n,
    }


_DEFINES = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.M)


def _defined(path: Path) -> set[str]:
    return set(_DEFINES.findall(path.read_text(errors="replace")))


def predecessor(name: str, version: str, src: Path, gold: str) -> str | None:
    """The file of ``src`` that an absent gold file was renamed from, or None.

    A gold file missing from the indexed release was usually renamed between that release and the
    base commit (``voting_classifier.py`` -> ``voting.py``). The first of the next three final
    releases that has the gold path gives its defined names; the release's ``.py`` file whose
    defined names overlap them most (Jaccard of the two name sets, at least 0.5) is taken as its
    predecessor. Used only to score the separate ``renames`` block, never for retrieval; the answer
    is cached on disk.
    """
    cache = CACHE / "renames.json"
    known: dict[str, str | None] = json.loads(cache.read_text()) if cache.exists() else {}
    key = f"{name}=={version}:{gold}"
    if key not in known:
        later = sorted((v for v in _final_sdists(name) if _vtuple(v) > _vtuple(version)), key=_vtuple)[:3]
        best = (0.0, "")
        for v in later:
            target = fetch_source(name, v) / gold
            if not target.is_file():
                continue
            names = _defined(target)
            for cand in src.rglob("*.py"):
                theirs = _defined(cand)
                if names and theirs:
                    best = max(best, (len(names & theirs) / len(names | theirs), str(cand.relative_to(src))))
            break
        known[key] = best[1] if best[0] >= 0.5 else None
        print(f"{key}: predecessor {best[1] or None} (name Jaccard {best[0]:.2f})", file=sys.stderr)
        cache.write_text(json.dumps(known, indent=1, sort_keys=True))
    return known[key]


def _rank(ranking: list[str], gold: list[str]) -> int | None:
    for i, path in enumerate(ranking, start=1):
        if path in gold:
            return i
    return None


def run_benchmark(
    data: Path,
    limit: int | None,
    use_dense: bool,
    include_tests: bool,
    folds: int = 5,
    dump: Path | None = None,
) -> dict[str, Any]:
    cases = [json.loads(line) for line in (data / "dev.jsonl").read_text().splitlines() if line.strip()]
    cases = cases[:limit] if limit else cases
    embedder = None
    if use_dense:
        try:
            from devops_agent.knowledge.dense import MiniLMEmbedder

            embedder = MiniLMEmbedder()
        except ImportError as exc:
            print(f"dense skipped: {exc}", file=sys.stderr)
    ranks: dict[str, list[int | None]] = {"bm25": [], "dense": [], "hybrid": []}
    has_gold: list[bool] = []
    renamed: list[int | None] = []  # hybrid ranks, a renamed gold file's predecessor counting as gold
    opened: dict[tuple[str, str], KnowledgeIndex] = {}
    kept_channels: list[tuple[dict[str, list[str]], str, list[str]]] = []
    timing = {"index_s": 0.0, "embed_s": 0.0, "query_s": 0.0, "embedded": 0}
    for n, case in enumerate(cases, start=1):
        name, version = release_for(case["repo"], case["instance_id"])
        src = fetch_source(name, version)
        if (name, version) not in opened:
            # One index per (package, version), kept open so BM25 and vectors load once.
            idx = KnowledgeIndex(CACHE / "index" / f"{name.lower()}-{version}" / "code.sqlite")
            opened[(name, version)] = idx
            t0 = time.perf_counter()
            idx.update(src)
            idx.bm25()
            idx.file_bm25()
            idx.symbols()
            timing["index_s"] += time.perf_counter() - t0
            if embedder is not None:
                t0 = time.perf_counter()
                # One vector per .py file (its outline): embedding every chunk takes too long on CPU.
                timing["embedded"] += idx.embed_missing(embedder, kinds=["outline"], suffixes=[".py"])
                timing["embed_s"] += time.perf_counter() - t0
        idx = opened[(name, version)]
        gold = case["gold_files"]
        has_gold.append(any((src / g).is_file() for g in gold))
        query = case["problem_statement"]
        t0 = time.perf_counter()
        lex = file_ranking_paths(rank_files(idx.lexical(query, CANDIDATES)), include_tests)
        dense = file_ranking(idx.dense(embedder, query, CANDIDATES), include_tests) if embedder else []
        keep = lambda p: ranked(p, include_tests)  # noqa: E731
        channels = file_channels(idx, query, embedder, keep)
        hybrid = fuse_files(channels, query)  # what search_files returns, all files
        # kept for the cross-validation of the fusion weights (ranks past 100 barely move RRF)
        kept_channels.append(({c: r[:KEPT] for c, r in channels.items()}, query, gold))
        timing["query_s"] += time.perf_counter() - t0
        for key, ranking in (("bm25", lex), ("dense", dense), ("hybrid", hybrid)):
            ranks[key].append(_rank(ranking, gold))
        old = [] if has_gold[-1] else [predecessor(name, version, src, g) for g in gold]
        renamed.append(_rank(hybrid, gold + [p for p in old if p]))
        print(
            f"[{n}/{len(cases)}] {case['instance_id']} {name}=={version} bm25={ranks['bm25'][-1]} "
            f"dense={ranks['dense'][-1]} hybrid={ranks['hybrid'][-1]}",
            file=sys.stderr,
        )
    for idx in opened.values():
        idx.close()
    out: dict[str, Any] = {"cases": len(cases), "gold_files_present": sum(has_gold)}
    holdout: dict[str, Any] = {"cases": sum(1 for n in range(len(cases)) if n % 2 == 0)}
    for key in ("bm25", "dense", "hybrid"):
        for metric, value in _metrics(ranks[key]).items():
            out[f"{key}_{metric}"] = None if (key == "dense" and embedder is None) else round(value, 4)
        for metric, value in _metrics(ranks[key][::2]).items():  # even positions: not tuned on
            holdout[f"{key}_{metric}"] = None if (key == "dense" and embedder is None) else round(value, 4)
    out["holdout"] = holdout
    # The same hybrid figures over the cases whose gold file exists in the indexed release (a
    # release published before the fix may predate the file); the headline figures count all cases.
    found = [r for r, ok in zip(ranks["hybrid"], has_gold, strict=True) if ok]
    out["gold_present"] = {f"hybrid_{metric}": round(value, 4) for metric, value in _metrics(found).items()}
    # All cases again, an absent gold file's predecessor (see predecessor()) counting as the gold file.
    out["renames"] = {f"hybrid_{metric}": round(value, 4) for metric, value in _metrics(renamed).items()}
    by_repo: dict[str, list[int | None]] = {}
    for case, r in zip(cases, ranks["hybrid"], strict=True):
        by_repo.setdefault(case["repo"].split("/")[1], []).append(r)
    out["per_repo"] = {repo: round(_metrics(r)["recall_at_5"], 2) for repo, r in sorted(by_repo.items())}
    out["fusion"] = fusion_figures(kept_channels, ranks["bm25"], folds, embedder is not None)
    if dump is not None:  # the channels of every case, to study other fusions without re-running
        dump.write_text(json.dumps([{"channels": c, "query": q, "gold": g} for c, q, g in kept_channels]))
    out.update({k: round(v, 2) for k, v in timing.items()})
    out["dense_model"] = embedder.name if embedder else None
    return out


KEPT = 100  # files of each channel kept per case for the fusion's cross-validation


def fusion_figures(
    cases: list[tuple[dict[str, list[str]], str, list[str]]], bm25: list[int | None], folds: int, dense: bool
) -> dict[str, Any]:
    """The shipped fusion weights, weights tuned on all cases, and ``folds``-fold cross-validation
    (tuned on the other folds, scored on each), each with the cases where BM25 has the gold file
    first and the hybrid does not (``below_bm25_at_1``) and where the reverse holds."""
    channels = [c for c in FILE_CHANNELS if dense or c != "dense"]
    shipped = file_weights()
    weights, k, _ = tune(cases, shipped, HYBRID_K, channels)
    cv, chosen = cross_validate(cases, shipped, HYBRID_K, folds, channels)
    out: dict[str, Any] = {"folds": folds, "bm25": _rounded(_metrics(bm25))}
    for name, found in (
        ("shipped", fused_ranks(cases, shipped, HYBRID_K)),
        ("tuned_all", fused_ranks(cases, weights, k)),
        ("cross_validated", cv),
    ):
        out[name] = {
            **_rounded(_metrics(found)),
            "below_bm25_at_1": sum(1 for a, b in zip(bm25, found, strict=True) if a == 1 and b != 1),
            "above_bm25_at_1": sum(1 for a, b in zip(bm25, found, strict=True) if b == 1 and a != 1),
        }
    out["shipped"]["weights"] = {c: shipped[c] for c in channels} | {"k": HYBRID_K}
    out["tuned_all"]["weights"] = {c: weights[c] for c in channels} | {"k": k}
    out["cross_validated"]["folds_chosen"] = chosen
    return out


def _rounded(metrics: dict[str, float]) -> dict[str, float]:
    return {key: round(value, 4) for key, value in metrics.items()}


def run_throughput(root: Path, queries: int) -> dict[str, Any]:
    """Index ``root`` from scratch, then time lexical queries built from indexed symbol names."""
    with tempfile.TemporaryDirectory() as tmp, KnowledgeIndex(Path(tmp) / "code.sqlite") as idx:
        stats = idx.update(root)
        noop = idx.update(root)  # nothing changed: only stat() calls and no hashing
        t0 = time.perf_counter()
        bm25 = idx.bm25()
        load_s = time.perf_counter() - t0
        db_mb = sum(p.stat().st_size for p in Path(tmp).iterdir()) / 1e6
        symbols = [
            r[0]
            for r in idx._db.execute(  # noqa: SLF001 - benchmark reads the store directly
                "SELECT symbol FROM chunks WHERE kind IN ('function','method','class') ORDER BY id"
            )
        ]
        step = max(1, len(symbols) // queries)
        texts = [f"how does {s.replace('.', ' ').replace('_', ' ')} handle errors" for s in symbols[::step]]
        lat = []
        for text in texts[:queries]:
            t0 = time.perf_counter()
            idx.lexical(text, 10)
            lat.append((time.perf_counter() - t0) * 1000)
        lat.sort()
        t0 = time.perf_counter()
        idx.file_bm25()
        idx.symbols()
        file_load_s = time.perf_counter() - t0
        file_lat = []
        for text in texts[:queries]:
            t0 = time.perf_counter()
            search_files(idx, text, 10)
            file_lat.append((time.perf_counter() - t0) * 1000)
        file_lat.sort()
        hybrid_lat = []  # what retrieve_code_context, search_kb and `devops-agent search` run
        for text in texts[:queries]:
            t0 = time.perf_counter()
            hybrid_search(idx, text, 8)
            hybrid_lat.append((time.perf_counter() - t0) * 1000)
        hybrid_lat.sort()
        return {
            "files": stats.files_indexed,
            "chunks": stats.chunks_added,
            "index_s": round(stats.seconds, 2),
            "files_per_s": round(stats.files_indexed / stats.seconds, 1),
            "chunks_per_s": round(stats.chunks_added / stats.seconds, 1),
            "noop_update_s": round(noop.seconds, 2),
            "db_mb": round(db_mb, 1),
            "bm25_build_s": round(load_s, 2),
            "bm25_docs": bm25.n_docs,
            "queries": len(lat),
            "query_p50_ms": round(statistics.median(lat), 2),
            "query_p95_ms": round(lat[int(0.95 * (len(lat) - 1))], 2),
            "file_channels_build_s": round(file_load_s, 2),
            "files_query_p50_ms": round(statistics.median(file_lat), 2),
            "files_query_p95_ms": round(file_lat[int(0.95 * (len(file_lat) - 1))], 2),
            "hybrid_query_p50_ms": round(statistics.median(hybrid_lat), 2),
            "hybrid_query_p95_ms": round(hybrid_lat[int(0.95 * (len(hybrid_lat) - 1))], 2),
        }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "benchmarks")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--no-dense", action="store_true")
    parser.add_argument("--include-tests", action="store_true", help="rank test files too")
    parser.add_argument("--throughput", action="store_true")
    parser.add_argument(
        "--root", type=Path, default=Path(sys.prefix) / "lib" / "python3.11" / "site-packages"
    )
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--folds", type=int, default=5, help="cross-validation folds over the cases")
    parser.add_argument("--dump", type=Path, help="write each case's channel rankings to this JSON file")
    args = parser.parse_args()
    if args.throughput:
        print(json.dumps(run_throughput(args.root, args.queries)))
        return
    data = args.data if (args.data / "dev.jsonl").exists() else args.data / "swebench_lite_localization"
    out = run_benchmark(data, args.limit, not args.no_dense, args.include_tests, args.folds, args.dump)
    fusion = out["fusion"]
    for name in ("bm25", "shipped", "tuned_all", "cross_validated"):
        m = fusion[name]
        extra = (
            f" below BM25 at rank 1: {m['below_bm25_at_1']}, above: {m['above_bm25_at_1']}"
            if name != "bm25"
            else ""
        )
        print(
            f"file ranking {name:<16} R@1={m['recall_at_1']:.3f} R@5={m['recall_at_5']:.3f} "
            f"MRR={m['mrr']:.3f}{extra}"
        )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
