"""What each worker has installed, as the sidecars' topic says: the latest installed-plugins record per
worker (``codecs.worker_plugins``). A record says nothing of whether the worker is still there, nor whether
it still has those plugins: only a live sidecar's presence that names its digest vouches for it
(``domain.plugins.workers``)."""

from __future__ import annotations

from ..codecs.results import Tombstone
from ..codecs.worker_plugins import InstalledOnWorker


class InstalledTable:
    def __init__(self) -> None:
        self._latest: dict[str, InstalledOnWorker] = {}
        self.revision = 0  # bumped by every record applied

    def apply(self, record: InstalledOnWorker | Tombstone[str]) -> None:
        self.revision += 1
        if isinstance(record, Tombstone):
            self._latest.pop(record.key, None)
        else:
            self._latest[record.worker] = record

    def of(self, worker: str) -> InstalledOnWorker | None:
        return self._latest.get(worker)


__all__ = ["InstalledTable"]
