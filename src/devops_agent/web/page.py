"""Serve the web page: ``GET /`` answers ``index.html``, ``/assets/…`` the files beside it.

Every answer carries the security headers below. The policy allows scripts, styles, images and
connections from the page's own origin only (``connect-src 'self'`` covers the same-origin
WebSocket), nothing inline, no framing: tool output rendered by the page is untrusted, and even
if some of it were ever inserted as markup it could neither run script nor send data elsewhere.
The page is mounted beside the API, never over it: an unknown ``/v1/...`` path still gets the
API's problem+json 404.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

STATIC_DIR = Path(__file__).parent / "static"

CSP = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "manifest-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)

SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
    # The assets change with each release and are small: revalidate rather than serve stale code.
    "Cache-Control": "no-cache",
}


class SecureHeaders:
    """Add :data:`SECURITY_HEADERS` to every HTTP answer of the wrapped app."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.raw = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1000})
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *self.raw]
            await send(message)

        await self.app(scope, receive, with_headers)


def install(app: FastAPI) -> None:
    """Serve the page at ``/`` and its assets under ``/assets`` (after the API's own routes)."""
    index = STATIC_DIR / "index.html"

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(index, media_type="text/html; charset=utf-8", headers=SECURITY_HEADERS)

    app.mount("/assets", SecureHeaders(StaticFiles(directory=STATIC_DIR)), name="web-assets")
