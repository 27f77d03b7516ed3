"""The I/O seam to the Connect workers' REST API: the client (failover, retries, budgets) over one
transport interface, with a lean HTTP/1.1 pool for plain-HTTP workers and aiohttp's for HTTPS ones."""

from .client import REQUEST_DEADLINE, ConnectUpstream, UpstreamRequest, UpstreamResponse
from .errors import BudgetExhausted, NoWorkerAvailable, UpstreamError, UpstreamOverloaded, UpstreamTimeout
from .transport import Transport

__all__ = [
    "REQUEST_DEADLINE",
    "BudgetExhausted",
    "ConnectUpstream",
    "NoWorkerAvailable",
    "Transport",
    "UpstreamError",
    "UpstreamOverloaded",
    "UpstreamRequest",
    "UpstreamResponse",
    "UpstreamTimeout",
]
