"""The service gives freed heap memory back to the OS (glibc's malloc_trim), periodically."""

from __future__ import annotations

import gc
import threading
import time
from pathlib import Path

import psutil
import pytest

from api_harness import running_service
from devops_agent.api import memory
from devops_agent.config import Settings
from fixtures_db import sqlite_url

glibc = pytest.mark.skipif(memory._malloc_trim() is None, reason="needs glibc (malloc_trim)")


@glibc
def test_release_returns_a_fragmented_heap_to_the_os() -> None:
    """What the service's RSS creep was: blocks freed in a worker thread's arena, with live ones
    between them, stay in the process until trimmed."""
    kept: list[bytes] = []

    def fragment() -> None:  # 60 MB of 1.5 KB blocks (malloc, not pymalloc), one in 16 kept
        blocks = [bytes(1500) for _ in range(40_000)]
        kept.extend(blocks[::16])
        del blocks

    worker = threading.Thread(target=fragment)
    worker.start()
    worker.join()
    gc.collect()
    before = psutil.Process().memory_info().rss
    assert memory.release_free_memory()
    after = psutil.Process().memory_info().rss
    assert before - after > 20 * 2**20, (before / 2**20, after / 2**20)
    assert len(kept) == 2500


def test_the_service_trims_on_its_interval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float] = []
    monkeypatch.setattr(memory, "_malloc_trim", lambda: lambda pad: 0)
    monkeypatch.setattr(memory, "release_free_memory", lambda: calls.append(time.monotonic()) or True)
    url = sqlite_url(tmp_path)
    settings = Settings(database_url=url, server={"memory_trim_s": 0.05})
    with running_service(url, settings=settings):
        time.sleep(0.5)
    assert len(calls) >= 3, calls
    count = len(calls)
    time.sleep(0.2)
    assert len(calls) == count, "the trimmer stops with the service"
