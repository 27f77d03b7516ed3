"""The I/O seam to the Connect workers' REST API (httpx on an aiohttp pool)."""

from .client import REQUEST_DEADLINE, ConnectUpstream, Transport, UpstreamRequest, UpstreamResponse
from .errors import BudgetExhausted, NoWorkerAvailable, UpstreamError, UpstreamOverloaded, UpstreamTimeout

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
