"""Loopback ports for what a test starts, and for a worker that refuses every connection."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A loopback port nothing listens on (bound and released at once): a server of the test's may take it;
    until one does, connections to it are refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def closed_url() -> str:
    """``http://`` on a closed loopback port: a Connect worker that refuses every connection."""
    return f"http://127.0.0.1:{free_port()}"
