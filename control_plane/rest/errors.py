"""The one error mapper: every failure leaves the sidecar as Connect's ``{"error_code", "message"}``.

Mirrors Connect's ``rest/errors/ConnectExceptionMapper`` and ``rest/entities/ErrorMessage``: the
``error_code`` is the HTTP status. Which domain error gets which status is decided here only, and the body
of every error in Connect's shape is made here only (``error_body``), whoever answers it: this mapper, the
request limits, the admission hook, access control, or the worker's Jersey as the sidecar mirrors it.
"""

from __future__ import annotations

from collections.abc import Callable

import orjson
import structlog
from starlette.responses import Response

from ..domain.errors import (
    BadRequestError,
    ConflictError,
    ControlPlaneError,
    CoordinationUnavailable,
    Forbidden,
    NotFoundError,
    OperationDisabled,
    OperationFailed,
    OutcomeUnknown,
    UnreadableBody,
    Unsupported,
    ViewNotReady,
    WorkerRefused,
)
from ..upstream import NoWorkerAvailable, UpstreamError, UpstreamOverloaded, UpstreamTimeout

log = structlog.get_logger(__name__)


class BodyTooLarge(Exception):
    """The request body read so far passed the sidecar's ``max_body_bytes`` (raised by the request's
    ``receive``, which the request limits wrap: ``rest.steps.limits``); answered 413."""


def error_body(status: int, message: str) -> bytes:
    """Connect's ``ErrorMessage`` as JSON: ``{"error_code": status, "message": message}``."""
    return orjson.dumps({"error_code": status, "message": message})


def connect_error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response(
        error_body(status, message),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


# Domain error -> HTTP status, as ConnectExceptionMapper maps Connect's exceptions.
DOMAIN_STATUS: dict[type[ControlPlaneError], int] = {
    NotFoundError: 404,
    OperationDisabled: 403,
    Forbidden: 403,
    BadRequestError: 400,
    ConflictError: 409,
    ViewNotReady: 503,
    CoordinationUnavailable: 503,  # before OperationFailed: the sidecars' own coordination is down, not the write
    OperationFailed: 500,  # Connect's ConnectException: 500 with the exception's message
    UnreadableBody: 500,  # Jackson's exception reading the entity: 500 with its message
    Unsupported: 501,  # no Connect answer: the workers lack it and the sidecar cannot compose it
}


def error_status(err: ControlPlaneError) -> int:
    if isinstance(err, WorkerRefused):  # the worker's own status, passed on
        return err.status
    if isinstance(err, OutcomeUnknown):  # as the worker's own failure is answered; the message says more
        return 504 if err.timed_out else 502
    return next((code for cls, code in DOMAIN_STATUS.items() if isinstance(err, cls)), 500)


def error_response(err: ControlPlaneError) -> Response:
    return connect_error(error_status(err), err.message)


def _no_worker(exc: Exception) -> Response:
    return connect_error(503, str(exc))


def _upstream_timeout(exc: Exception) -> Response:
    assert isinstance(exc, UpstreamTimeout)
    return connect_error(504, f"Kafka Connect worker {exc.worker} did not answer in time: {exc.detail}")


def _upstream_error(exc: Exception) -> Response:
    assert isinstance(exc, UpstreamError)
    return connect_error(502, f"Kafka Connect worker {exc.worker} failed: {exc.detail}")


def _overloaded(exc: Exception) -> Response:
    return connect_error(503, str(exc), headers={"retry-after": "1"})


def _body_too_large(exc: Exception) -> Response:
    return connect_error(413, str(exc))


def _domain_error(exc: Exception) -> Response:
    assert isinstance(exc, ControlPlaneError)
    return error_response(exc)


# The answer of each error the sidecar expects, by class (the most specific class of an error's MRO wins).
ANSWERS: dict[type[Exception], Callable[[Exception], Response]] = {
    ControlPlaneError: _domain_error,
    NoWorkerAvailable: _no_worker,
    UpstreamOverloaded: _overloaded,
    BodyTooLarge: _body_too_large,
    UpstreamTimeout: _upstream_timeout,
    UpstreamError: _upstream_error,
}


def answer_for(exc: Exception, path: str) -> Response:
    """The answer to ``exc``, raised while serving a request for ``path``; an error the sidecar does not
    expect is logged with its trace and answered 500 in Connect's shape."""
    answer = next((ANSWERS[c] for c in type(exc).__mro__ if c in ANSWERS), None)
    if answer is not None:
        return answer(exc)
    log.error("unexpected error", path=path, error=repr(exc), exc_info=exc)
    return connect_error(500, str(exc) or type(exc).__name__)


__all__ = ["ANSWERS", "DOMAIN_STATUS", "BodyTooLarge", "answer_for", "connect_error", "error_body", "error_response"]
