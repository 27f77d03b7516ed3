"""Topic tracking (KIP-558).

- ``feature``: ``Topics``, the one entry: the workers (2.5+) answer a connector's active topics and reset
  them unless the sidecar does it from the view; which connectors use a topic (beyond the KIP);
- ``tracking``: ``TopicTracking``, the active topics from the view, and the reset's tombstones.
"""

from .feature import Topics
from .tracking import TopicTracking

__all__ = ["TopicTracking", "Topics"]
