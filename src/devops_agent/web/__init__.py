"""The web page of the service: static files shipped in the package, served at ``/``.

Everything the page does goes through the public API (REST under ``/v1`` and the WebSocket
``/v1/ws``); it holds no logic of its own that the API lacks. No build step: the HTML, CSS and
JavaScript modules under ``static/`` are served as they are, with a strict Content-Security-Policy
(no inline script or style, nothing from another origin).

This package must not import from the rest of ``devops_agent``: it is assets and the few lines that
serve them.
"""

from __future__ import annotations

from devops_agent.web.page import CSP, SECURITY_HEADERS, STATIC_DIR, install

__all__ = ["CSP", "SECURITY_HEADERS", "STATIC_DIR", "install"]
