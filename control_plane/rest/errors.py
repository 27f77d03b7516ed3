"""The one error mapper: every failure leaves the sidecar as Connect's ``{"error_code", "message"}``.

Mirrors Connect's ``rest/errors/ConnectExceptionMapper`` and ``rest/entities/ErrorMessage``: the
``error_code`` is the HTTP status. Which domain error gets which status is decided here only.
"""

from __future__ import annotations

import orjson
import structlog
from starlette.requests import Request
from starlette.responses import Response

from ..domain.errors import (
    BadRequestError,
    ConflictError,
    ControlPlaneError,
    NotFoundError,
    OperationDisabled,
    OperationFailed,
    UnreadableBody,
    Unsupported,
    ViewNotReady,
    WorkerRefused,
)
from ..upstream import NoWorkerAvailable, UpstreamError, UpstreamOverloaded, UpstreamTimeout
from .limits import BodyTooLarge

log = structlog.get_logger(__name__)


def connect_error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response(
        orjson.dumps({"error_code": status, "message": message}),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


# Domain error -> HTTP status, as ConnectExceptionMapper maps Connect's exceptions.
DOMAIN_STATUS: dict[type[ControlPlaneError], int] = {
    NotFoundError: 404,
    OperationDisabled: 403,
    BadRequestError: 400,
    ConflictError: 409,
    ViewNotReady: 503,
    OperationFailed: 500,  # Connect's ConnectException: 500 with the exception's message
    UnreadableBody: 500,  # Jackson's exception reading the entity: 500 with its message
    Unsupported: 501,  # no Connect answer: the workers lack it and the sidecar cannot compose it
}


def error_response(err: ControlPlaneError) -> Response:
    if isinstance(err, WorkerRefused):  # the worker's own status, passed on
        return connect_error(err.status, err.message)
    status = next((code for cls, code in DOMAIN_STATUS.items() if isinstance(err, cls)), 500)
    return connect_error(status, err.message)


async def on_domain_error(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, ControlPlaneError)
    return error_response(exc)


async def on_no_worker(_: Request, exc: Exception) -> Response:
    return connect_error(503, str(exc))


async def on_upstream_timeout(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, UpstreamTimeout)
    return connect_error(504, f"Kafka Connect worker {exc.worker} did not answer in time: {exc.detail}")


async def on_upstream_error(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, UpstreamError)
    return connect_error(502, f"Kafka Connect worker {exc.worker} failed: {exc.detail}")


async def on_overloaded(_: Request, exc: Exception) -> Response:
    return connect_error(503, str(exc), headers={"retry-after": "1"})


async def on_body_too_large(_: Request, exc: Exception) -> Response:
    return connect_error(413, str(exc))


async def on_unexpected(request: Request, exc: Exception) -> Response:
    log.error("unexpected error", path=request.url.path, error=repr(exc), exc_info=exc)
    return connect_error(500, str(exc) or type(exc).__name__)


EXCEPTION_HANDLERS = {
    ControlPlaneError: on_domain_error,
    NoWorkerAvailable: on_no_worker,
    UpstreamOverloaded: on_overloaded,
    BodyTooLarge: on_body_too_large,
    UpstreamTimeout: on_upstream_timeout,
    UpstreamError: on_upstream_error,
    Exception: on_unexpected,
}
