"""The domain's exception tree. It knows nothing of HTTP: ``rest/errors.py`` alone maps each class
to Connect's status code and ``{"error_code", "message"}`` body (as ConnectExceptionMapper does).

    ControlPlaneError
     ├── NotFoundError        the connector, task or status does not exist
     ├── OperationDisabled    the worker's settings forbid it (e.g. topic.tracking.enable=false)
     ├── Forbidden            the access rules refuse the principal the request (one connector's, of many)
     ├── BadRequestError      the request cannot be carried out as given
     ├── ConflictError        not now: the cluster is not yet in the state the request needs (retry later)
     ├── ViewNotReady         the view has not read its topics to the end yet
     ├── OperationFailed      a step of an operation the sidecar carries out itself failed (a write to
     │    │                   Kafka, its read-back); the message says which step and the cause
     │    └── CoordinationUnavailable  the sidecars' own topic cannot be written or read back (a fence
     │                        cannot be claimed): what needs it is refused, what the workers do natively
     │                        goes through without it
     ├── OutcomeUnknown       a write the worker took and did not answer (in time): whether it was made is
     │                        not known (the connector's fence stays held until it is)
     ├── UnreadableBody       a request body Connect's JSON binding cannot read into its entity (Connect
                              answers those 500: ConnectExceptionMapper over Jackson's exception)
     ├── Unsupported          the workers lack it and the sidecar cannot compose it from what they have
     └── WorkerRefused        a worker refused a request the sidecar sent to compose an answer: its
                              own status and message, passed on
"""

from __future__ import annotations

import orjson


class ControlPlaneError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFoundError(ControlPlaneError):
    pass


class OperationDisabled(ControlPlaneError):
    pass


class Forbidden(ControlPlaneError):
    pass


class BadRequestError(ControlPlaneError):
    pass


class ConflictError(ControlPlaneError):
    pass


class ViewNotReady(ControlPlaneError):
    pass


class OperationFailed(ControlPlaneError):
    pass


class OutcomeUnknown(ControlPlaneError):
    """Connect's own ``Request timed out`` (``HerderRequestHandler.completeOrForwardRequest``) says the same:
    the request may still be carried out. ``timed_out``: the worker did not answer in time (else the
    connection to it broke)."""

    def __init__(self, message: str, *, timed_out: bool) -> None:
        super().__init__(message)
        self.timed_out = timed_out


class CoordinationUnavailable(OperationFailed):
    pass


class UnreadableBody(ControlPlaneError):
    pass


class Unsupported(ControlPlaneError):
    pass


class WorkerRefused(ControlPlaneError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status

    @classmethod
    def of(cls, status: int, body: bytes) -> WorkerRefused:
        """From the worker's answer: Connect's ``{"error_code", "message"}`` when it is one, else the text."""
        try:
            message = orjson.loads(body).get("message")
        except (orjson.JSONDecodeError, AttributeError):
            message = None
        return cls(status, message if isinstance(message, str) else body.decode(errors="replace"))
