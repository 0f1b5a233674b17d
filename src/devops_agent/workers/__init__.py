"""Durable, distributed and proactive investigations (``execution = "queue"``).

Runs are queued in PostgreSQL and carried out by ``devops-agent worker`` processes on DBOS
Transact: a run is a DBOS workflow whose id is the run id; DBOS's queues give the limits across
workers (per worker, in all, per user), priorities and de-duplication; a worker whose heartbeat
stops has its runs taken over by another, which replays them from their checkpoints (the model's
requests are DBOS steps through pydantic-ai's DBOS capability; tool calls are checkpointed by what
they are, see :mod:`devops_agent.policies.toolsets.checkpoint`). Schedules and alerts become
queued runs; notifications go out when a run finishes.

Modules: :mod:`.app` (DBOS set-up and the workflow), :mod:`.durable` (what a worker adds to one
run), :mod:`.limits` (integration slots across workers), :mod:`.submit` (enqueueing: the executor
the session service uses, alerts, the queue's operations), :mod:`.worker` (the process:
heartbeats, taking over dead workers' runs, schedules), :mod:`.schedules`, :mod:`.notify`,
:mod:`.status` (what ``/v1/workers`` and ``/metrics`` show).

This package sits between the interfaces and the agent: it drives the session service, and
nothing below it imports it.
"""
