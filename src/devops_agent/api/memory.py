"""Give the heap memory the service freed back to the operating system, now and then.

Measured under load (docs/benchmarks.md, service load): the server's live Python heap stays flat
(tracemalloc), yet its RSS climbs run after run, because glibc keeps freed blocks in its arenas
(one per thread that allocates: the store's worker threads, the journal, uvicorn's) instead of
returning them. ``malloc_trim(0)`` returns every free page. Elsewhere (musl, macOS) there is no
such call and this is a no-op. It must not free anything itself: it only asks the allocator.
"""

from __future__ import annotations

import asyncio
import ctypes
import sys
from collections.abc import Callable
from functools import cache

import structlog

log = structlog.get_logger(__name__)


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    return trim


def release_free_memory() -> bool:
    """Return the heap's free pages to the OS; False where the C library cannot."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


async def release_periodically(interval_s: float) -> None:
    """:func:`release_free_memory` every ``interval_s`` (in a thread: it takes the allocator's
    locks for a few milliseconds), until cancelled. Returns at once where it cannot trim."""
    if _malloc_trim() is None:
        log.debug("memory_trim_unavailable")
        return
    while True:
        await asyncio.sleep(interval_s)
        await asyncio.to_thread(release_free_memory)
