"""``devops-agent index`` and ``devops-agent search``: the knowledge index from the command line.

``index`` takes directories and Confluence spaces (``--confluence SPACE``, the ``confluence``
extra); both go through the same incremental :meth:`KnowledgeIndex.update_from`. Paths and chunk
text are printed literally (never as console markup): a directory may be called ``build[/x]``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from devops_agent.cli.context import err, out, state, with_roots
from devops_agent.config import Settings
from devops_agent.errors import UserError
from devops_agent.knowledge.index import COLLECTIONS, IndexStats, KnowledgeIndex
from devops_agent.knowledge.sources import DirectorySource, Source
from devops_agent.tools.knowledge import MAX_LIMIT, collection_db, index_dir, locate_files, search_collection

CollectionOpt = Annotated[str, typer.Option("--collection", "-c", help=f"one of: {', '.join(COLLECTIONS)}")]


def _check(collection: str) -> None:
    if collection not in COLLECTIONS:
        raise typer.BadParameter(
            f"{collection!r}: use one of {', '.join(COLLECTIONS)}", param_hint="--collection"
        )


def _confluence(settings: Settings, space: str) -> Any:
    try:
        from devops_agent.knowledge.confluence import ConfluenceSource

        return ConfluenceSource.from_settings(settings, space)
    except ImportError as exc:
        raise UserError(str(exc), hint="or index exported pages as a directory of Markdown files") from None


def index(
    ctx: typer.Context,
    paths: Annotated[
        list[Path] | None,
        typer.Argument(resolve_path=True, help="directories"),
    ] = None,
    confluence: Annotated[
        list[str] | None,
        typer.Option(
            "--confluence",
            metavar="SPACE",
            help="a Confluence space key to index (repeatable); with no directories and no "
            "--confluence, the spaces of confluence.spaces",
        ),
    ] = None,
    collection: Annotated[
        str | None,
        typer.Option(
            "--collection",
            "-c",
            help=f"one of: {', '.join(COLLECTIONS)} (default: code; runbooks for Confluence only)",
        ),
    ] = None,
    forget: Annotated[
        list[str] | None,
        typer.Option(
            "--forget",
            metavar="PATH|SPACE",
            help="drop an indexed directory (it may no longer exist) or Confluence space (its key or "
            "URL) from the collection (repeatable)",
        ),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="print a JSON summary")] = False,
) -> None:
    """Index directories or Confluence spaces for retrieval: only new or changed files and pages are
    re-chunked; deleted ones leave the index.

    Example: devops-agent index ~/src/payments ~/runbooks -c code
    """
    paths = list(paths or [])
    spaces = list(confluence or [])
    settings = with_roots(state(ctx).settings, paths)
    if forget:
        if paths or spaces:
            raise typer.BadParameter(
                "--forget runs alone: index and forget in two commands", param_hint="--forget"
            )
        _forget(settings, collection or "code", forget, json_out)
        return
    if not paths and not spaces:
        spaces = list(settings.confluence.spaces)
        if not spaces:
            raise typer.BadParameter("give directories, or --confluence SPACE", param_hint="PATHS")
    collection = collection or ("runbooks" if spaces and not paths else "code")
    _check(collection)
    for path in paths:
        _check_dir(settings, collection, path)
    results: list[dict[str, Any]] = []
    pages: list[dict[str, Any]] = []
    started = time.perf_counter()
    with (
        KnowledgeIndex.for_collection(index_dir(settings), collection) as idx,
        Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=err,
            disable=json_out,
        ) as progress,
    ):

        def run(source: Source, label: str) -> IndexStats:
            label = escape(label)  # progress descriptions are console markup
            task = progress.add_task(f"indexing {label}", total=None)
            t0 = time.perf_counter()

            def tick(stats: IndexStats) -> None:
                if stats.files_seen % 50 == 0:
                    rate = stats.files_seen / max(time.perf_counter() - t0, 1e-6)
                    progress.update(
                        task, description=f"{label}: {stats.files_seen} files ({rate:.0f} files/s)"
                    )

            stats = idx.update_from(source, on_file=tick)
            progress.update(
                task, description=f"{label}: {stats.files_seen} files, {stats.files_indexed} (re)indexed"
            )
            return stats

        for path in paths:
            stats = run(DirectorySource(path), str(path))
            results.append({"path": str(path), **dataclasses.asdict(stats)})
        for space in spaces:
            with _confluence(settings, space) as source:
                stats = run(source, f"Confluence {space}")
                pages.append({"space": space, "source": source.key, **dataclasses.asdict(stats)})
        counts = idx.counts()
    elapsed = time.perf_counter() - started
    done = [*results, *pages]
    seen = sum(r["files_seen"] for r in done)
    summary = {
        "collection": collection,
        "paths": results,
        "confluence": pages,
        "files_per_s": round(seen / elapsed, 1) if elapsed else None,
        "chunks_per_s": round(sum(r["chunks_added"] for r in done) / elapsed, 1) if elapsed else None,
        "index": counts,
    }
    if json_out:
        out.print_json(json.dumps(summary))
        return
    for r in results:
        out.print(
            f"{r['path']}: {r['files_seen']} files seen, {r['files_indexed']} indexed, "
            f"{r['files_removed']} removed, +{r['chunks_added']}/-{r['chunks_removed']} chunks "
            f"in {r['seconds']:.1f}s",
            markup=False,
            highlight=False,
        )
    for r in pages:
        out.print(
            f"Confluence {r['space']}: {r['files_seen']} pages seen, {r['files_indexed']} indexed, "
            f"{r['files_removed']} removed, +{r['chunks_added']}/-{r['chunks_removed']} chunks "
            f"in {r['seconds']:.1f}s",
            markup=False,
            highlight=False,
        )
    for r in done:  # what the source could not read ("PATH (reason)"), when it reports that
        for skipped in r.get("skipped") or ():
            err.print(f"skipped {skipped}", markup=False, highlight=False)
    out.print(_describe(collection, counts), markup=False, highlight=False)


def _describe(collection: str, counts: dict[str, int]) -> str:
    vectors = f", {counts['vectors']} vectors" if counts.get("vectors") else ""
    return f"index {collection}: {counts['files']} files, {counts['chunks']} chunks{vectors}"


def _check_dir(settings: Settings, collection: str, path: Path) -> None:
    """A clear error for a path that is not a directory; for an indexed one that is gone, how to drop it."""
    if path.is_dir():
        return
    if path.exists():
        raise UserError(f"{path} is not a directory", hint="index the directory that holds it")
    db = collection_db(settings, collection)
    indexed = db.exists() and str(path) in _roots(db)
    raise UserError(
        f"{path} does not exist" + (f" (it is still in the {collection!r} index)" if indexed else ""),
        hint=f"devops-agent index --forget {path}" if indexed else "give an existing directory",
    )


def _roots(db: Path) -> list[str]:
    with KnowledgeIndex(db) as idx:
        return idx.roots()


def _root_named(value: str, roots: list[str]) -> str | None:
    """The indexed root ``value`` names: a directory (as a path, resolved like ``index`` does),
    a root exactly as listed (a Confluence space URL), or a Confluence space key."""
    path = str(Path(value).expanduser().resolve())
    if path in roots:
        return path
    if value in roots:
        return value
    spaces = [r for r in roots if "://" in r and r.endswith(f"/spaces/{value}")]
    return spaces[0] if len(spaces) == 1 else None


def _forget(settings: Settings, collection: str, names: list[str], json_out: bool) -> None:
    _check(collection)
    db = collection_db(settings, collection)
    roots = _roots(db) if db.exists() else []
    keys = {name: _root_named(name, roots) for name in names}
    unknown = [name for name, key in keys.items() if key is None]
    if unknown:
        raise UserError(
            f"not indexed in {collection!r}: {', '.join(unknown)}",
            hint=f"indexed there: {', '.join(roots)}" if roots else f"the {collection!r} collection is empty",
        )
    with KnowledgeIndex(db) as idx:
        forgotten = [{"path": key, **dataclasses.asdict(idx.forget(key))} for key in keys.values() if key]
        counts = idx.counts()
    if json_out:
        out.print_json(json.dumps({"collection": collection, "forgotten": forgotten, "index": counts}))
        return
    for r in forgotten:
        out.print(
            f"{r['path']}: forgotten, {r['files_removed']} files and {r['chunks_removed']} chunks removed",
            markup=False,
            highlight=False,
        )
    out.print(_describe(collection, counts), markup=False, highlight=False)


def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="what to look for, in words or identifiers")],
    collection: CollectionOpt = "code",
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=MAX_LIMIT, help=f"how many hits (at most {MAX_LIMIT})")
    ] = 8,
    json_out: Annotated[
        bool,
        typer.Option(
            "--json",
            help="hits as JSON (root, path, lines, text; with --files: rank, path, roots, best_chunk)",
        ),
    ] = False,
    files: Annotated[
        bool,
        typer.Option(
            "--files",
            help="rank whole files of the code collection instead of chunks: which files an issue, "
            "question or stack trace is about",
        ),
    ] = False,
) -> None:
    """Search an index; each hit comes with a path:line citation.

    Example: devops-agent search "retry logic of the payment client" -n 5
    Example: devops-agent search --files "$(cat issue.txt)"
    """
    _check(collection)
    if files and collection != "code":
        raise UserError(
            f"--files ranks the files of the code collection, not {collection!r}",
            hint="leave out --collection, or search runbooks and postmortems without --files",
        )
    settings = state(ctx).settings
    db = collection_db(settings, collection)
    if not db.exists():
        raise UserError(
            f"nothing is indexed in {collection!r} yet", hint=f"devops-agent index PATH -c {collection}"
        )
    with KnowledgeIndex(db) as idx:  # all forgotten, or a first index that was interrupted
        empty = idx.counts()["files"] == 0
    if empty:
        raise UserError(
            f"nothing is indexed in {collection!r}: the collection is empty",
            hint=f"devops-agent index PATH -c {collection}",
        )
    result = (
        locate_files(settings, query, limit)
        if files
        else search_collection(settings, query, collection, limit)
    )
    if result.status == "error":
        raise UserError(result.error or "search failed", hint=result.hint)
    hits: list[dict[str, Any]] = result.data if isinstance(result.data, list) else []
    if files:
        _print_files(query, hits, json_out, result.hint)
        return
    if json_out:
        out.print_json(json.dumps({"query": query, "collection": collection, "hits": hits}, default=str))
        return
    if not hits:
        err.print(result.hint or "no matches", markup=False, highlight=False)
    for h in hits:
        _print_hit(h)


def _print_files(query: str, files: list[dict[str, Any]], json_out: bool, hint: str | None) -> None:
    """``search --files``: one line per file, best first: rank, path (under its roots when the
    collection holds several), and the best-matching chunk's lines and symbol."""
    if json_out:
        out.print_json(json.dumps({"query": query, "collection": "code", "files": files}))
        return
    if not files:
        err.print(hint or "no matches", markup=False, highlight=False)
    for f in files:
        roots = f["roots"]
        where = f"{roots[0]}/{f['path']}" if len(roots) == 1 else f["path"]
        also = f"  (under {', '.join(roots)})" if len(roots) > 1 else ""
        best = (
            f"  best: {f['best_chunk'].rsplit(':', 1)[-1]} {f['symbol'] or ''}".rstrip()
            if f["best_chunk"]
            else ""
        )
        out.print(f"{f['rank']:>3}. [bold]{escape(where)}[/]{escape(also)}{escape(best)}", highlight=False)


def _print_hit(h: dict[str, Any]) -> None:
    """A hit's citation and symbol, then its text. A file outline is no text of the file (it is
    the file's path and the names it defines), so it is cited by path alone, labelled, and shows
    those names on one line."""
    # a directory's files are cited under their root, so two indexed trees' src/app.py differ
    root = "" if h.get("url") or not h.get("root") else f"{h['root']}/"
    text = str(h.get("text") or h.get("snippet") or "")
    if h.get("kind") == "outline" and not h.get("url"):
        out.print(f"[bold]{escape(root + str(h.get('path')))}[/]  (file outline)", highlight=False)
        text = ", ".join(text.splitlines()[1:])  # the names it defines; the first line is the path
    else:
        out.print(
            f"[bold]{escape(root + str(h.get('citation')))}[/]  {escape(h.get('symbol') or '')}",
            highlight=False,
        )
    out.print(text[:400], markup=False, highlight=False)
    out.print()
