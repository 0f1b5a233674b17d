"""Child processes of a benchmark: a free port for one to listen on, and stopping one that may not
stop when asked.

Only process handling; no data, no scoring.
"""

from __future__ import annotations

import socket
import subprocess
from typing import Any


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop(proc: subprocess.Popen[Any], timeout: float) -> None:
    """Ask ``proc`` to stop (SIGTERM), wait up to ``timeout`` seconds, then kill it and reap it."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
