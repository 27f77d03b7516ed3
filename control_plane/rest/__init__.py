"""The HTTP layer (Starlette): thin handlers, one error mapper, the sidecar's own endpoints."""

from .app import create_app

__all__ = ["create_app"]
