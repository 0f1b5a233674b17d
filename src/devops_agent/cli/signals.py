"""SIGTERM handled like Ctrl-C: the run in progress is cancelled and stored, its tools stopped.

``kill PID``, a container stop or a CI timeout sends SIGTERM. Python's default for it ends the
process on the spot, so the session stayed ``running`` for ever and a shell command the run had
started kept running. Here SIGTERM goes to whatever handles Ctrl-C at that moment (asyncio's
handler during a run, which cancels it: the session is stored as cancelled and the tool's
process group killed), and :func:`terminated` tells loops such as ``chat`` to stop instead of
carrying on as after a Ctrl-C.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

_terminated = threading.Event()


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    _terminated.set()
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)  # asyncio's (cancel the run) or Python's (KeyboardInterrupt)
    else:
        raise KeyboardInterrupt


def install_sigterm_handler() -> None:
    """Route SIGTERM to the Ctrl-C handling (main thread only, where signals are delivered)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)


def terminated() -> bool:
    """Whether SIGTERM arrived: the process is to end once the run has been stored."""
    return _terminated.is_set()
