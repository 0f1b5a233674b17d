"""The run supervisor: launching run bodies and following them to their end."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from devops_agent.agent.supervisor import RunHandle, RunSupervisor
from devops_agent.store import Store
from fixtures_db import sqlite_url


def test_a_run_cancelled_before_its_first_step_leaves_no_coroutine_unstarted(tmp_path: Path) -> None:
    ran: list[str] = []

    async def body() -> None:
        ran.append("body")

    async def scenario(supervisor: RunSupervisor) -> object:
        coroutine = body()
        handle = supervisor.launch(RunHandle("s1", "r1", None), coroutine)
        assert supervisor.local("r1") is handle
        assert handle.task is not None
        handle.task.cancel()  # before the loop ever ran it: a shutdown right after a start
        with contextlib.suppress(asyncio.CancelledError):
            await handle.task
        await asyncio.sleep(0)  # the done callbacks
        assert supervisor.local("r1") is None
        return coroutine

    with Store(sqlite_url(tmp_path)) as store:
        coroutine = asyncio.run(scenario(RunSupervisor(store)))
    assert ran == []
    # Closed, not left unstarted: an unstarted one warns "never awaited" when it is collected.
    assert getattr(coroutine, "cr_frame", "missing") is None


def test_a_finished_run_is_no_longer_local(tmp_path: Path) -> None:
    async def body() -> None:
        await asyncio.sleep(0)

    async def scenario(supervisor: RunSupervisor) -> None:
        handle = supervisor.launch(RunHandle("s1", "r2", None), body())
        assert handle.task is not None
        await handle.task
        await asyncio.sleep(0)
        assert supervisor.local("r2") is None

    with Store(sqlite_url(tmp_path)) as store:
        asyncio.run(scenario(RunSupervisor(store)))
