"""The domain's exception tree. It knows nothing of HTTP: ``rest/errors.py`` alone maps each class
to Connect's status code and ``{"error_code", "message"}`` body (as ConnectExceptionMapper does).

    ControlPlaneError
     ├── NotFoundError        the connector, task or status does not exist
     ├── OperationDisabled    the worker's settings forbid it (e.g. topic.tracking.enable=false)
     ├── BadRequestError      the request cannot be carried out as given
     ├── ConflictError        not now: the cluster is not yet in the state the request needs (retry later)
     ├── ViewNotReady         the view has not read its topics to the end yet
     ├── OperationFailed      a step of an operation the sidecar carries out itself failed (a write to
     │                        Kafka, its read-back); the message says which step and the cause
     └── UnreadableBody       a request body Connect's JSON binding cannot read into its entity (Connect
                              answers those 500: ConnectExceptionMapper over Jackson's exception)
"""

from __future__ import annotations


class ControlPlaneError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFoundError(ControlPlaneError):
    pass


class OperationDisabled(ControlPlaneError):
    pass


class BadRequestError(ControlPlaneError):
    pass


class ConflictError(ControlPlaneError):
    pass


class ViewNotReady(ControlPlaneError):
    pass


class OperationFailed(ControlPlaneError):
    pass


class UnreadableBody(ControlPlaneError):
    pass
