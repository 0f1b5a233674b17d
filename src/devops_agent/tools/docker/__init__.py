"""The ``docker`` toolset: containers, inspect, logs, stats and images of one Docker Engine, plus
three changes (restart, stop, remove a container), through the official ``docker`` SDK.

- :mod:`.client` — which daemon, the SDK client, how its failures read (the :class:`Docker`
  integration);
- :mod:`.summaries` — the Engine API's answers trimmed for triage (pure functions);
- :mod:`.containers` — the tools.

``build``, ``check`` and ``register`` are the toolset's entry points (``pyproject.toml``'s
``devops_agent.toolsets`` group, ``devops-agent doctor``). Only ``docker_restart``,
``docker_stop`` and ``docker_rm`` change anything; this package must not add others.
"""

from devops_agent.tools.docker.client import (
    DEFAULT_HOST,
    DESCRIPTION,
    DOCKER,
    NAME,
    Docker,
    client_kwargs,
    where,
)
from devops_agent.tools.docker.containers import (
    docker_containers,
    docker_images,
    docker_inspect,
    docker_logs,
    docker_restart,
    docker_rm,
    docker_stats,
    docker_stop,
)
from devops_agent.tools.docker.summaries import (
    REDACTED,
    container_row,
    cpu_percent,
    image_row,
    inspect_summary,
    memory_used,
    redact_args,
    stats_summary,
    status_counts,
)

build = DOCKER.build
check = DOCKER.check
register = DOCKER.register

__all__ = [
    "DEFAULT_HOST",
    "DESCRIPTION",
    "DOCKER",
    "NAME",
    "REDACTED",
    "Docker",
    "build",
    "check",
    "client_kwargs",
    "container_row",
    "cpu_percent",
    "docker_containers",
    "docker_images",
    "docker_inspect",
    "docker_logs",
    "docker_restart",
    "docker_rm",
    "docker_stats",
    "docker_stop",
    "image_row",
    "inspect_summary",
    "memory_used",
    "redact_args",
    "register",
    "stats_summary",
    "status_counts",
    "where",
]
