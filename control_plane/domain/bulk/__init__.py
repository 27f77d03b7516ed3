"""Bulk actions: one action (pause, resume, stop, restart, delete, auto-restart on or off) on every connector
a selector picks, each an ordinary single request's write, with a result per connector.

- ``selector``: ``Selector`` and ``select`` (pure): which connectors a request picks;
- ``request``: ``BulkRequest`` and the single request each connector's action stands for (pure);
- ``feature``: ``BulkActions``, the one entry: the connectors from the view, the access rules per connector
  (a ``Gate``), the actions through the herder with bounded concurrency.
"""

from .feature import VIEW_NEEDED, BulkActions, BulkResult, Gate, ItemError, ItemResult, OpenGate
from .request import ACTIONS, RESTART, BulkRequest, SingleRequest, request_of, single_request
from .selector import Candidate, Picked, Selector, matches, select, selector_of

__all__ = [
    "ACTIONS",
    "RESTART",
    "VIEW_NEEDED",
    "BulkActions",
    "BulkRequest",
    "BulkResult",
    "Candidate",
    "Gate",
    "ItemError",
    "ItemResult",
    "OpenGate",
    "Picked",
    "Selector",
    "SingleRequest",
    "matches",
    "request_of",
    "select",
    "selector_of",
    "single_request",
]
