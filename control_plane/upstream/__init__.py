"""The I/O seam to the Connect workers' REST API: the client (failover, retries, budgets) over one
transport interface, with a lean HTTP/1.1 pool for plain-HTTP workers and aiohttp's for HTTPS ones."""

from .client import (
    REQUEST_DEADLINE,
    ConnectUpstream,
    UpstreamRequest,
    UpstreamResponse,
    is_forward_failure,
    is_rebalance_answer,
)
from .errors import (
    BudgetExhausted,
    ConnectionRefused,
    NoWorkerAvailable,
    UpstreamError,
    UpstreamOverloaded,
    UpstreamTimeout,
    WorkerDisconnected,
    WorkerUnreachable,
)
from .transport import Transport

__all__ = [
    "REQUEST_DEADLINE",
    "BudgetExhausted",
    "ConnectUpstream",
    "ConnectionRefused",
    "NoWorkerAvailable",
    "Transport",
    "UpstreamError",
    "UpstreamOverloaded",
    "UpstreamRequest",
    "UpstreamResponse",
    "UpstreamTimeout",
    "WorkerDisconnected",
    "WorkerUnreachable",
    "is_forward_failure",
    "is_rebalance_answer",
]
