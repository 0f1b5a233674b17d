"""Errors as RFC 9457 problem details (``application/problem+json``), with the CLI's messages and hints.

Every error the API returns has ``type``, ``title``, ``status`` and ``detail``, plus ``hint`` (what
to do next, as the CLI prints it) and ``error`` (the error's kind, e.g. ``NotFoundError``). Our
:class:`~devops_agent.errors.DevOpsAgentError` subclasses map to statuses here; anything else is a
500 that names no internals. This module must not know about sessions or runs.
"""

from __future__ import annotations

import http
from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException as StarletteHTTPException

from devops_agent.errors import (
    ConfigError,
    DevOpsAgentError,
    ModelError,
    NotFoundError,
    RunCancelledError,
    StoreError,
    UserError,
)

log = structlog.get_logger(__name__)
MEDIA_TYPE = "application/problem+json"


class Problem(BaseModel):
    """An RFC 9457 problem: what went wrong and what to do about it."""

    model_config = ConfigDict(extra="allow")

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    hint: str | None = None
    error: str | None = None


class ApiError(Exception):
    """An error an endpoint raises on purpose (401, 403, 409, 429 …), shown as a problem."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        hint: str | None = None,
        error: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.hint = hint
        self.error = error
        self.headers = headers or {}


def status_for(exc: DevOpsAgentError) -> int:
    """The HTTP status of one of our errors."""
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, ConfigError | UserError):
        return 400
    if isinstance(exc, StoreError):
        return 503
    if isinstance(exc, ModelError):
        return 502
    if isinstance(exc, RunCancelledError):
        return 409
    return 500


def problem(
    status: int,
    detail: str,
    *,
    hint: str | None = None,
    error: str | None = None,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    """A problem+json response."""
    body = Problem(
        title=http.HTTPStatus(status).phrase, status=status, detail=detail, hint=hint, error=error, **extra
    )
    return JSONResponse(
        body.model_dump(exclude_none=True), status_code=status, media_type=MEDIA_TYPE, headers=headers
    )


def problem_dict(exc: BaseException) -> dict[str, Any]:
    """A problem as a plain dict (the WebSocket's ``problem`` message)."""
    if isinstance(exc, ApiError):
        status, detail, hint, error = exc.status, exc.detail, exc.hint, exc.error
    elif isinstance(exc, DevOpsAgentError):
        status, detail, hint, error = status_for(exc), exc.message, exc.hint, type(exc).__name__
    else:
        status, detail, hint, error = 500, "unexpected error", None, type(exc).__name__
    out: dict[str, Any] = {"title": http.HTTPStatus(status).phrase, "status": status, "detail": detail}
    if hint:
        out["hint"] = hint
    if error:
        out["error"] = error
    return out


PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem, "content": {MEDIA_TYPE: {}}, "description": http.HTTPStatus(code).phrase}
    for code in (400, 401, 403, 404, 409, 413, 422, 429, 503)
}
"""The error responses every endpoint may give, for the OpenAPI document."""


def install(app: FastAPI) -> None:
    """Turn every error an endpoint can raise into a problem response."""

    @app.exception_handler(ApiError)
    async def _api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return problem(exc.status, exc.detail, hint=exc.hint, error=exc.error, headers=exc.headers)

    @app.exception_handler(DevOpsAgentError)
    async def _ours(_request: Request, exc: DevOpsAgentError) -> JSONResponse:
        status = status_for(exc)
        if status >= 500:
            log.warning("request_failed", error=type(exc).__name__, message=exc.message)
        return problem(status, exc.message, hint=exc.hint, error=type(exc).__name__)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        parts = [f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in errors[:5]]
        more = f"; and {len(errors) - 5} more" if len(errors) > 5 else ""
        return problem(
            422,
            "invalid request: " + "; ".join(parts) + more,
            hint="see /docs for what this endpoint takes",
            error="ValidationError",
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else http.HTTPStatus(exc.status_code).phrase
        return problem(exc.status_code, detail, headers=dict(exc.headers or {}))

    @app.exception_handler(Exception)
    async def _bug(_request: Request, exc: Exception) -> JSONResponse:
        log.error("request_crashed", error=type(exc).__name__, message=str(exc)[:300])
        return problem(500, "unexpected error; the server log has the details", error="InternalError")
