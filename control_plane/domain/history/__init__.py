"""Config history: every change of every connector's config and target state, kept once per cluster in the
sidecars' own topic; key-level diffs; rollback.

- ``feature``: ``ConfigHistory``, the one entry: a connector's versions, one version, a diff, a rollback; a
  501 where the sidecar has no sidecars' topic or fence;
- ``recorder``: ``HistoryRecorder``, the acting sidecar's recording and retention, and who made each
  change through a sidecar (``AUTHOR``);
- ``pending``: ``PendingRecords``, the records made and not yet acknowledged, written again until they are;
- ``kept``: the versions as the endpoints read them, and the config a rollback writes.
"""

from .feature import NO_HISTORY, ConfigHistory
from .kept import ConfigVersion, HistoryPage, KeptHistory, VersionDiff
from .pending import PendingRecords
from .recorder import AUTHOR, HistoryRecorder, stored_of

__all__ = [
    "AUTHOR",
    "NO_HISTORY",
    "ConfigHistory",
    "ConfigVersion",
    "HistoryPage",
    "HistoryRecorder",
    "KeptHistory",
    "PendingRecords",
    "VersionDiff",
    "stored_of",
]
