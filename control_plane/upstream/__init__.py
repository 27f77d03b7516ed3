"""The I/O seam to the Connect workers' REST API (httpx on an aiohttp pool)."""

from .client import ConnectUpstream, UpstreamRequest, UpstreamResponse
from .errors import NoWorkerAvailable, UpstreamError, UpstreamTimeout

__all__ = [
    "ConnectUpstream",
    "NoWorkerAvailable",
    "UpstreamError",
    "UpstreamRequest",
    "UpstreamResponse",
    "UpstreamTimeout",
]
