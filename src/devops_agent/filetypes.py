"""Telling a text file from a binary one by its first bytes.

Shared by everything that reads files for a person or a model: the file and log tools, the
knowledge walker and ``privacy mask``, so they all skip (or refuse) the same files. Foundation:
this module must not open files itself or import tools, knowledge or interfaces.
"""

from __future__ import annotations

__all__ = ["BINARY_PROBE_BYTES", "is_binary_head"]

BINARY_PROBE_BYTES = 8192
"""How many leading bytes are read to decide whether a file is binary."""


def is_binary_head(head: bytes) -> bool:
    """Whether a file's or a stream's first bytes say binary: a NUL in the first 8 KB. What the
    file and log tools skip, and what ``privacy mask`` refuses to print."""
    return b"\0" in head[:BINARY_PROBE_BYTES]
