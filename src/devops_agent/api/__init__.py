"""The service tier: ``devops-agent serve`` — REST (``/v1``), WebSocket (``/v1/ws``) and SSE over the
same sessions, runs and ``RunEvent`` stream the CLI uses, with users, alerts in, and metrics.

Everything here is a client of :class:`~devops_agent.agent.session.SessionService` (start, events,
answer, cancel) and the :class:`~devops_agent.store.Store`: no second event model, no second store.
Modules by concept: :mod:`.app` (builds the FastAPI app from its routers and any mounted
sub-apps), :mod:`.auth` and :mod:`.tokens` (users and roles), :mod:`.sessions`, :mod:`.runs`,
:mod:`.streaming` (SSE), :mod:`.ws` (the WebSocket protocol), :mod:`.approvals`, :mod:`.alerts`,
:mod:`.ops` (health, metrics), :mod:`.tracing`, :mod:`.problems` (RFC 9457 errors).

This package is the interfaces layer: nothing below may import it. Importing the package itself
must not import FastAPI (the CLI's ``users`` command uses :mod:`.tokens` without the extra).
"""
