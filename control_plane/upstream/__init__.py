"""The I/O seam to the Connect workers' REST API (httpx on an aiohttp pool)."""

from .client import ConnectUpstream, Transport, UpstreamRequest, UpstreamResponse
from .errors import NoWorkerAvailable, UpstreamError, UpstreamTimeout

__all__ = [
    "ConnectUpstream",
    "NoWorkerAvailable",
    "Transport",
    "UpstreamError",
    "UpstreamRequest",
    "UpstreamResponse",
    "UpstreamTimeout",
]
