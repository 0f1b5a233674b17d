"""Reading Kubernetes container states: shared by the ``kubernetes`` toolset and the pod crash-loop
analyzer (``runbooks/analyzers/kubernetes.py``).

Pure and import-free, so the analyzers (loaded by every CLI command) do not pull in the toolset
and the client code behind it.
"""

from __future__ import annotations

from typing import Any


def container_failing(container: dict[str, Any]) -> bool:
    """Whether a container (a row of ``pod_summary``'s ``containers``) is the one in trouble, not
    merely waiting its turn: it exited non-zero, waits for a reason other than its pod's start-up
    (``PodInitializing``, ``ContainerCreating``), or has restarted and is not ready."""
    state = container.get("state")
    state = state if isinstance(state, dict) else {}
    if state.get("state") == "terminated":
        return state.get("exitCode") not in (0, None)
    if state.get("state") == "waiting":
        return state.get("reason") not in (None, "PodInitializing", "ContainerCreating")
    return not container.get("ready") and int(container.get("restartCount") or 0) > 0


__all__ = ["container_failing"]
