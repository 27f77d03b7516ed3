"""The HTTP layer: the sidecar's server (``server``), the one request pipeline every request goes through
(``pipeline``), the one route table (``routes``) and its matcher (``router``), thin handlers, one error mapper
(``errors``). Only this layer imports Starlette (its ``Request`` and ``Response`` for the handlers)."""

from .serving.app import create_app

__all__ = ["create_app"]
