"""Where indexed text comes from: a :class:`Source` yields :class:`Document` objects.

A directory (walked with :func:`~devops_agent.knowledge.walker.walk`) is one source; Confluence
(:mod:`devops_agent.knowledge.confluence`) is another. The index only sees documents, so every
source gets the same incremental update: a document whose ``stamp`` is unchanged is not read;
a changed stamp is read and hashed, and only a different hash re-chunks it; documents a source
no longer yields leave the index. This module reads sources; it must not import the index.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from devops_agent.knowledge.walker import walk


@dataclass(frozen=True)
class Document:
    """One indexable document of a source.

    ``path`` identifies it within its source (a relative file path, ``SPACE/Page title``) and is
    what chunk citations name. ``stamp`` is a cheap change marker (a file's size and mtime, a
    page's version number): an unchanged stamp means the content is not even read. ``read``
    returns the content as UTF-8 bytes. ``url`` (when the document lives on the web) replaces
    the path in citations; ``language`` overrides the chunker's guess from the path's suffix.
    """

    path: str
    stamp: str
    read: Callable[[], bytes]
    title: str | None = None
    url: str | None = None
    language: str | None = None
    modified_ns: int = 0


class Source(Protocol):
    """Something that lists the documents to index, all of them on every call."""

    @property
    def key(self) -> str:
        """Names the source in the index (its ``root``): a directory path, a Confluence space URL."""
        ...

    def documents(self) -> Iterable[Document]:
        """Every document the source holds now; the index drops those it stops yielding."""
        ...


class DirectorySource:
    """Text files under ``root`` (by :func:`walk`, or the given relative ``files``)."""

    def __init__(self, root: Path, files: Iterable[Path] | None = None) -> None:
        self.root = root.resolve()
        self._files = files

    @property
    def key(self) -> str:
        return str(self.root)

    def documents(self) -> Iterator[Document]:
        for rel in self._files if self._files is not None else walk(self.root):
            full = self.root / rel
            try:
                st = full.stat()
            except OSError:
                continue  # vanished while walking: it leaves the index like a deleted file
            yield Document(
                path=rel.as_posix(),
                stamp=file_stamp(st.st_size, st.st_mtime_ns),
                read=full.read_bytes,
                modified_ns=st.st_mtime_ns,
            )


def file_stamp(size: int, mtime_ns: int) -> str:
    """A file's change marker: size and modification time (what ``os.stat`` gives for free)."""
    return f"{size}:{mtime_ns}"
