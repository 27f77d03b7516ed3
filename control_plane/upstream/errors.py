"""Errors of the upstream seam: every transport (``upstream.transport``) raises these, translating its own
where they enter. ``retriable`` says whether the request may go to another worker whatever its method (the
failover loop reads it)::

    UpstreamError                one worker failed                              retriable
     ├── WorkerUnreachable       the request never reached the worker (refused,  yes
     │    │                      DNS, connect timeout, no free connection)
     │    └── ConnectionRefused  nothing listens on the worker's port: the       yes
     │                           process is gone (and its queued requests)
     ├── WorkerDisconnected      the connection broke after the request may      no (only safe methods
     │                           have been sent                                      go to another worker)
     └── UpstreamTimeout         the worker took the request, did not answer     no
          └── BudgetExhausted    ... within the request's budget (its deadline)  no

    NoWorkerAvailable            every worker failed; carries each worker's UpstreamError
    UpstreamOverloaded           no slot among the concurrent upstream requests before the deadline
"""

from __future__ import annotations


class UpstreamError(Exception):
    retriable = False

    def __init__(self, worker: str, detail: str) -> None:
        super().__init__(f"{worker}: {detail}")
        self.worker = worker
        self.detail = detail


class WorkerUnreachable(UpstreamError):
    retriable = True


class ConnectionRefused(WorkerUnreachable):
    """The worker's host refused the connection: no process listens there now."""


class WorkerDisconnected(UpstreamError):
    pass


class UpstreamTimeout(UpstreamError):
    pass


class BudgetExhausted(UpstreamTimeout):
    """The request's budget ran out while waiting for ``worker`` (a worker that hangs, or a slow request)."""


class UpstreamOverloaded(Exception):
    """``max_concurrent`` requests to the workers are under way; none ended before the request's deadline
    (or the pool timeout)."""

    def __init__(self, max_concurrent: int) -> None:
        super().__init__(
            f"Too many requests to the Kafka Connect workers are under way (at most {max_concurrent}); try again"
        )
        self.max_concurrent = max_concurrent


class NoWorkerAvailable(Exception):
    """Every worker of the cluster failed (each one's ``UpstreamError`` in ``errors``)."""

    def __init__(self, errors: list[UpstreamError]) -> None:
        self.errors = errors
        detail = "; ".join(str(e) for e in errors) or "no worker configured"
        super().__init__(f"No Kafka Connect worker answered: {detail}")
