"""Topic-creation rules (KIP-158), the sidecar's own on every version.

- ``feature``: ``CreationPreviews``, the one entry: which group, with which settings, creates a topic; and
  whether the checks run (``checks_active``);
- ``creation``: ``TopicCreation``, the checks of ``topic.creation.*`` (a ``ConfigCheck`` the ``configs``
  feature runs, handed to it at composition) and the preview's requests to the broker.
"""

from .creation import CreationPreview, Difference, TopicCreation, TopicPlan, TopicShape
from .feature import CreationPreviews, checks_active

__all__ = [
    "CreationPreview",
    "CreationPreviews",
    "Difference",
    "TopicCreation",
    "TopicPlan",
    "TopicShape",
    "checks_active",
]
