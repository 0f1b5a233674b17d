"""Slots per integration shared by every worker: PostgreSQL advisory locks.

"At most 4 concurrent Jenkins calls cluster-wide" is N advisory locks per integration, each call
holding one (``pg_try_advisory_lock(integration, slot)``) on a connection of its own for as long
as the call runs. A worker killed mid-call loses its connection, and PostgreSQL releases its locks
with it: no lease to expire, no slot leaked. A call that finds every slot taken waits (a short,
growing pause with jitter, so waiters do not poll in step) and tries again.
"""

from __future__ import annotations

import asyncio
import random
import zlib
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import sqlalchemy as sa

MAX_WAIT_S = 0.5


def lock_key(integration: str) -> int:
    """A stable 32-bit key for an integration's locks (the first of the two advisory-lock keys)."""
    return zlib.crc32(f"devops-agent:{integration}".encode()) - 2**31


class AdvisoryLimiter:
    """At most ``limits[name]`` concurrent calls to integration ``name`` across all processes."""

    def __init__(self, url: str, limits: Mapping[str, int]) -> None:
        self.limits = dict(limits)
        pool = max(1, sum(self.limits.values()))
        self._engine: sa.Engine = sa.create_engine(
            url, isolation_level="AUTOCOMMIT", pool_size=pool, max_overflow=pool, pool_pre_ping=True
        )
        self.waited = 0
        """Calls that found every slot taken at least once (for tests and metrics)."""

    def limited(self, integration: str) -> bool:
        return integration in self.limits

    @asynccontextmanager
    async def slot(self, integration: str) -> AsyncIterator[None]:
        conn = await asyncio.to_thread(self._engine.connect)
        key, held = lock_key(integration), None
        try:
            pause = 0.02
            while True:
                held = await asyncio.to_thread(self._try, conn, key, self.limits[integration])
                if held is not None:
                    break
                self.waited += 1
                await asyncio.sleep(pause * (0.5 + random.random()))
                pause = min(pause * 1.5, MAX_WAIT_S)
            yield
        finally:
            try:
                if held is not None:
                    await asyncio.to_thread(self._release, conn, key, held)
            except Exception:  # the lock dies with the connection; never return it to the pool held
                conn.invalidate()
            conn.close()

    @staticmethod
    def _try(conn: sa.Connection, key: int, n: int) -> int | None:
        for slot in random.sample(range(n), n):
            if conn.execute(sa.select(sa.func.pg_try_advisory_lock(key, slot))).scalar():
                return slot
        return None

    @staticmethod
    def _release(conn: sa.Connection, key: int, slot: int) -> Any:
        return conn.execute(sa.select(sa.func.pg_advisory_unlock(key, slot))).scalar()

    def close(self) -> None:
        self._engine.dispose()
