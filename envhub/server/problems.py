"""The one place where exceptions become answers (`application/problem+json`)."""

from __future__ import annotations

import logging
import uuid

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from envhub.core import metrics
from envhub.errors import EnvhubError, Unauthorized, Unavailable
from envhub.server.encoding import dumps
from envhub.spec import Problem

log = logging.getLogger("envhub.server")
MEDIA_TYPE = "application/problem+json"


def problem_for(exc: BaseException) -> Problem:
    """The problem body for any exception (shared by HTTP and WebSocket)."""
    problem = _problem(exc)
    if 400 <= problem.status < 500:
        metrics.REJECTED.labels(problem.code).inc()
    return problem


def _problem(exc: BaseException) -> Problem:
    if isinstance(exc, EnvhubError):
        fc = exc.failure_class
        extra = {k: v for k, v in exc.extra.items() if k not in Problem.model_fields}
        return Problem(type=f"https://envhub.dev/problems/{exc.code}", title=exc.code.replace("_", " "),
                       status=exc.status, detail=exc.detail, code=exc.code, failure_class=fc,
                       retryable=exc.retryable, **extra)
    if isinstance(exc, RequestValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        if first.get("type") == "json_invalid":
            return Problem(title="malformed JSON", status=400, code="malformed_json",
                           detail=f"the body is not valid JSON ({first.get('msg')})")
        return Problem(title="invalid request", status=422, code="invalid_request",
                       detail=f"{where}: {first.get('msg', 'invalid')}", errors=_plain(exc.errors()))
    if isinstance(exc, StarletteHTTPException):
        return Problem(title="http error", status=exc.status_code, code=f"http_{exc.status_code}",
                       detail=str(exc.detail))
    # A bug: the log gets the traceback, the caller an id to quote (never the exception's text).
    ref = uuid.uuid4().hex[:12]
    log.error("unhandled error (ref %s)", ref, exc_info=exc)
    return Problem(title="internal error", status=500, code="internal", detail=f"internal error (ref {ref})")


def _plain(errors: list) -> list:
    return [{"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg")), "type": str(e.get("type"))}
            for e in errors[:20]]


def respond(exc: BaseException) -> Response:
    problem = problem_for(exc)
    headers = {}
    if isinstance(exc, Unavailable):
        headers["Retry-After"] = str(max(1, round(exc.retry_after_s)))
    if isinstance(exc, Unauthorized):
        headers["WWW-Authenticate"] = 'Bearer realm="envhub"'
    return Response(dumps(problem.model_dump(mode="json", exclude_none=True)), status_code=problem.status,
                    media_type=MEDIA_TYPE, headers=headers)


def install(app: FastAPI) -> None:
    async def handler(request: Request, exc: Exception) -> Response:
        return respond(exc)

    for cls in (EnvhubError, RequestValidationError, StarletteHTTPException, Exception):
        app.add_exception_handler(cls, handler)
