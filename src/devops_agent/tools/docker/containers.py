"""The ``docker`` tools: containers, inspect, logs, stats and images of one Docker Engine, plus
three changes (restart, stop, remove a container).

Each tool is a module-level function taking the run's ``ctx`` (its settings) and hands its body
to :data:`~devops_agent.tools.docker.client.DOCKER`, which opens and closes the client and maps
its failures. A long container log is condensed by :func:`devops_agent.analysis.logsummary.summarize_log`,
as pod logs are. Environment variable *values* are never returned (they often hold secrets):
``docker_inspect`` lists their names only. Only ``docker_restart``, ``docker_stop`` and
``docker_rm`` change anything (read_only=False, so they go through approval); this module must
not add others.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field
from pydantic_ai import RunContext

from devops_agent.analysis import parse_since
from devops_agent.analysis.logsummary import summarize_log
from devops_agent.config import Settings
from devops_agent.config.settings import DockerSettings
from devops_agent.deps import ToolDeps
from devops_agent.errors import UserError
from devops_agent.tools.base import ToolResult
from devops_agent.tools.docker.client import DOCKER, where
from devops_agent.tools.docker.summaries import (
    attention,
    container_row,
    human_size,
    image_row,
    inspect_summary,
    state_summary,
    stats_summary,
    status_counts,
    tail_bytes,
)
from devops_agent.tools.evidence import summary_evidence

LIMIT_MAX = 500
TAIL_MAX = 5000
INSPECT_MAX = 10  # failing containers docker_containers inspects for restart count and OOM kill


def _state_after(api: Any, container: str) -> dict[str, Any] | None:
    """The container's state after a change, or ``None`` when it cannot be read (e.g. removed)."""
    docker = DOCKER.client_module()
    try:
        obj = api.inspect_container(container)
    except docker.errors.APIError:
        return None
    return state_summary(obj.get("State") or {}, obj.get("RestartCount"))


@DOCKER.tool(category="containers", read_only=True)
def docker_containers(
    ctx: RunContext[ToolDeps],
    all: bool = False,
    name: str | None = None,
    label: str | None = None,
    limit: Annotated[int, Field(ge=1, le=LIMIT_MAX)] = 50,
) -> ToolResult:
    """List containers like `docker ps`: state, status, health, exit code, ports, restarts.

    Containers that need attention (restarting, exited with a non-zero code, unhealthy,
    dead) come first, with their restart count and whether they were OOM-killed.

    Args:
        all: include stopped containers (default: running ones only, as `docker ps`).
        name: only containers whose name contains this text.
        label: only containers with this label: "key" or "key=value",
            e.g. "com.docker.compose.project=shop".
        limit: most containers to return (1-500); all are counted.
    """

    def run(api: Any, section: DockerSettings) -> ToolResult:
        docker = DOCKER.client_module()
        filters = {k: v for k, v in (("name", name), ("label", label)) if v}
        # The API's own `limit` would include stopped containers; cut here instead.
        rows = [container_row(c) for c in api.containers(all=all, filters=filters or None)]
        if not rows:
            which = "containers" if all else "running containers (all=True includes stopped ones)"
            wanted = f" matching {filters}" if filters else ""
            return ToolResult.empty(f"no {which}{wanted} on {where(section)}")
        rows.sort(key=attention)
        # A container whose start failed (port taken, command not found, bad mount) stays in
        # state "created" with the reason only in its inspect; a plain `docker create` has none.
        suspects = [r for r in rows if r["problem"]] + [r for r in rows if r["state"] == "created"]
        for row in suspects[:INSPECT_MAX]:
            try:
                obj = api.inspect_container(row["id"])
            except docker.errors.NotFound:
                continue  # removed since the list was read
            state = state_summary(obj.get("State") or {}, obj.get("RestartCount"))
            row["restart_count"] = state["restart_count"]
            row["oom_killed"] = state["oom_killed"]
            if state["error"]:
                row["error"] = state["error"]
            if row["state"] == "created" and (state["error"] or state["exit_code"]):
                row["exit_code"] = state["exit_code"]
                row["problem"] = "failed to start" + (
                    f": {state['error']}" if state["error"] else f" (exit code {state['exit_code']})"
                )
        rows.sort(key=attention)
        data = {
            "daemon": where(section),
            "total": len(rows),
            "summary": status_counts(rows),
            "containers": rows[:limit],
            "truncated": len(rows) > limit,
        }
        return ToolResult.ok(data, source="docker containers")

    return DOCKER.call(ctx.deps.settings, "container list", run)


@DOCKER.tool(category="containers", read_only=True)
def docker_inspect(ctx: RunContext[ToolDeps], container: str) -> ToolResult:
    """A `docker inspect` digest of one container: state, exit code, OOM kill, health checks, restarts,
    image, command, env variable names (never values), mounts, networks, restart policy, limits.

    Args:
        container: the container's name or id.
    """

    def run(api: Any, section: DockerSettings) -> ToolResult:
        return ToolResult.ok(inspect_summary(api.inspect_container(container)), source="docker inspect")

    return DOCKER.call(ctx.deps.settings, f"container {container}", run)


@DOCKER.tool(category="containers", read_only=True)
def docker_logs(
    ctx: RunContext[ToolDeps],
    container: str,
    tail: Annotated[int, Field(ge=1, le=TAIL_MAX)] = 200,
    since: str | None = None,
    timestamps: bool = True,
    summarize: bool = True,
) -> ToolResult:
    """Read the last lines of a container's log (stdout and stderr merged, as `docker logs`).

    A long log comes back summarized: error signatures (message templates of error lines,
    with counts, first/last seen and quoted example lines), the other templates, and the
    last lines, instead of `text` (the full log is kept for the user); summarize=False
    returns the text.

    Args:
        container: the container's name or id.
        tail: how many of the last lines to read (1-5000); the read is capped in bytes too.
        since: only lines from this time on: 15m, 2h, 1d, '2 hours ago', an ISO date.
        timestamps: prefix each line with the daemon's receive time.
        summarize: summarize a long log instead of returning all of it.
    """
    try:
        start = parse_since(since) if since else None
    except UserError as exc:
        return ToolResult.fail(exc.message, exc.hint)

    def run(api: Any, section: DockerSettings) -> ToolResult:
        raw = api.logs(
            container,
            stdout=True,
            stderr=True,
            stream=False,
            follow=False,
            timestamps=timestamps,
            tail=tail,
            since=int(start.timestamp()) if start else None,
        )
        body, truncated = tail_bytes(raw, section.logs_max_bytes)
        text = body.decode("utf-8", errors="replace")
        data: dict[str, Any] = {
            "container": container,
            "lines": len(text.splitlines()),
            "bytes": len(body),
            "truncated": truncated,
            "since": start.isoformat() if start else None,
            "text": text,
        }
        if not text.strip():
            window = f" since {data['since']}" if start else ""
            return ToolResult.empty(f"the log of {container} is empty{window}", container=container)
        summary = summarize_log(text, f"docker/{container}") if summarize else None
        if summary is None:
            return ToolResult.ok(data, source="docker logs", truncated=truncated)
        del data["text"]
        return (
            ToolResult.ok(data | summary, source="docker logs", truncated=truncated)
            .with_raw(text)
            .with_evidence(summary_evidence(summary))
        )

    return DOCKER.call(ctx.deps.settings, f"container {container}", run)


@DOCKER.tool(category="containers", read_only=True)
def docker_stats(ctx: RunContext[ToolDeps], container: str) -> ToolResult:
    """One resource snapshot of a container, as `docker stats --no-stream` shows it: CPU %,
    memory used/limit/% (without reclaimable page cache), network and block I/O, process count.

    Args:
        container: the container's name or id.
    """

    def run(api: Any, section: DockerSettings) -> ToolResult:
        data = stats_summary(api.stats(container, stream=False))
        if not data["running"]:
            return ToolResult.empty(f"{container} is not running: it has no live stats", container=container)
        return ToolResult.ok(data, source="docker stats")

    return DOCKER.call(ctx.deps.settings, f"container {container}", run)


@DOCKER.tool(category="containers", read_only=True)
def docker_images(
    ctx: RunContext[ToolDeps],
    name: str | None = None,
    dangling: bool | None = None,
    limit: Annotated[int, Field(ge=1, le=LIMIT_MAX)] = 50,
) -> ToolResult:
    """List local images, newest first: repository tags, id, size, created.

    Args:
        name: only images whose reference matches, e.g. "registry.example.com/shop/api" or "redis:7*".
        dangling: True for untagged images only, False for tagged ones only.
        limit: most images to return (1-500); all are counted.
    """

    def run(api: Any, section: DockerSettings) -> ToolResult:
        filters = {"dangling": dangling} if dangling is not None else None
        rows = [image_row(i) for i in api.images(name=name, filters=filters)]
        if not rows:
            return ToolResult.empty(f"no images match on {where(section)}")
        rows.sort(key=lambda r: r["created"] or "", reverse=True)
        data = {
            "total": len(rows),
            "total_size": human_size(sum(int(r["size_bytes"] or 0) for r in rows)),
            "dangling": sum(r["dangling"] for r in rows),
            "images": rows[:limit],
            "truncated": len(rows) > limit,
        }
        return ToolResult.ok(data, source="docker images")

    return DOCKER.call(ctx.deps.settings, f"image {name}" if name else "image list", run)


def _stop_or_restart(
    settings: Settings, container: str, timeout_s: int, verb: Literal["stop", "restart"]
) -> ToolResult:
    """``docker stop`` / ``docker restart``, reporting the state the container is left in."""

    def run(api: Any, section: DockerSettings) -> ToolResult:
        getattr(api, verb)(container, timeout=timeout_s)
        data = {
            "container": container,
            "action": "stopped" if verb == "stop" else "restarted",
            "timeout_s": timeout_s,
            "state": _state_after(api, container),
        }
        return ToolResult.ok(data, source=f"docker {verb}")

    return DOCKER.call(settings, f"container {container}", run)


@DOCKER.tool(category="containers", read_only=False, risk="sensitive")
def docker_restart(
    ctx: RunContext[ToolDeps], container: str, timeout_s: Annotated[int, Field(ge=0, le=600)] = 10
) -> ToolResult:
    """Restart a container, like `docker restart`: SIGTERM, then SIGKILL after timeout_s, then start.

    Args:
        container: the container's name or id.
        timeout_s: seconds to wait for a graceful stop before killing (0-600).
    """
    return _stop_or_restart(ctx.deps.settings, container, timeout_s, "restart")


@DOCKER.tool(category="containers", read_only=False, risk="sensitive")
def docker_stop(
    ctx: RunContext[ToolDeps], container: str, timeout_s: Annotated[int, Field(ge=0, le=600)] = 10
) -> ToolResult:
    """Stop a running container, like `docker stop`: SIGTERM, then SIGKILL after timeout_s.

    Args:
        container: the container's name or id.
        timeout_s: seconds to wait for a graceful stop before killing (0-600).
    """
    return _stop_or_restart(ctx.deps.settings, container, timeout_s, "stop")


@DOCKER.tool(category="containers", read_only=False, risk="destructive")
def docker_rm(ctx: RunContext[ToolDeps], container: str, force: bool = False) -> ToolResult:
    """Remove a container, like `docker rm`; its named volumes are kept.

    Args:
        container: the container's name or id.
        force: kill and remove a running container (otherwise the daemon refuses with a conflict).
    """

    def run(api: Any, section: DockerSettings) -> ToolResult:
        api.remove_container(container, force=force)
        return ToolResult.ok(
            {"container": container, "action": "removed", "force": force}, source="docker rm"
        )

    return DOCKER.call(ctx.deps.settings, f"container {container}", run)
