"""``WorkerCatalogs``: what each worker of the cluster has installed, as far as this sidecar knows it.

Its own worker's plugins come from its catalog (``plugins.catalog``); every other worker's from the sidecars'
topic, where the sidecar in front of it writes an installed-plugins record when its list changes
(``codecs.worker_plugins``) and, every interval, a presence that names the record's digest
(``codecs.presence``). A worker's plugins are known while a live sidecar vouches for them; where several do
(several sidecars in front of one worker), the one seen last wins. A worker no live sidecar is in front of is
unknown: never guessed from another worker's plugins.

Workers are named as Connect names them in the status topic (``rules.worker_id``): ``host:port`` of the
advertised URL. ``known()`` is rebuilt only when the sidecars' topic or the catalog changed, and keeps the
same objects while the contents are the same (the statuses built from them are cached by ``revision``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ...codecs.worker_plugins import InstalledOnWorker
from ...rules.plugin_versions import CONNECTOR_TYPES
from ...rules.worker_id import worker_id_of
from ...view.installed import InstalledTable
from ...view.sidecars import SidecarTable
from .catalog import PluginCatalog, PluginList


@dataclass(frozen=True)
class KnownWorker:
    record: InstalledOnWorker  # its installed plugins, as its sidecar reports them
    plugins: PluginList  # the same, as a list
    reported_by: str | None  # the sidecar that vouches for it; None: this sidecar's own worker

    @property
    def worker(self) -> str:  # its id: the host:port of its advertised URL
        return self.record.worker

    @property
    def version(self) -> str | None:  # its Connect version
        return self.record.version

    @property
    def digest(self) -> str:
        return self.record.digest


class WorkerCatalogs:
    def __init__(
        self,
        catalog: PluginCatalog,
        *,
        worker_versions: Callable[[], Mapping[str, str | None]],
        worker_ids: Mapping[str, str] | None = None,
        sidecars: SidecarTable | None = None,
        installed: InstalledTable | None = None,
        sidecar: str | None = None,
        now_ms: Callable[[], float] = lambda: time.time() * 1000,
    ) -> None:
        self._catalog = catalog
        self._worker_versions = worker_versions
        self._worker_ids = dict(worker_ids or {})
        self._sidecars = sidecars
        self._installed = installed
        self._sidecar = sidecar
        self._now_ms = now_ms
        self._own: tuple[tuple[object, ...], InstalledOnWorker] | None = None
        self._built: tuple[tuple[object, ...], dict[str, KnownWorker]] | None = None
        self._lists: dict[str, PluginList] = {}  # digest -> the list of another worker's record
        self._newest: dict[tuple[int, str], str | None] = {}  # (id of a list, connector class) -> newest version

    # -- this sidecar's own worker ------------------------------------------------------------------
    def own_id(self) -> str | None:
        url = self._catalog.worker
        return None if url is None else self._worker_ids.get(url) or worker_id_of(url)

    def own(self) -> InstalledOnWorker | None:
        """The installed-plugins record of this sidecar's worker (None before its catalog loaded): what its
        presence vouches for."""
        url, worker = self._catalog.worker, self.own_id()
        if url is None or worker is None or self._catalog.loaded_at is None:
            return None
        version = self._worker_versions().get(url)
        key = (id(self._catalog.snapshot), worker, version)
        if self._own is None or self._own[0] != key:
            self._own = (key, InstalledOnWorker(worker, version, self._catalog.snapshot.by_type()))
        return self._own[1]

    # -- every worker -----------------------------------------------------------------------------
    def known(self) -> Mapping[str, KnownWorker]:
        """Every worker whose plugins are known now, by id."""
        own = self.own()
        now_s = int(self._now_ms() // 1000)  # liveness moves with time: looked at again every second
        key = (
            own.digest if own else None,
            self._sidecars.revision if self._sidecars else None,
            self._installed.revision if self._installed else None,
            now_s,
        )
        if self._built is not None and self._built[0] == key:
            return self._built[1]
        vouched: dict[str, tuple[InstalledOnWorker, str | None]] = dict(self._vouched())
        if own is not None:
            vouched[own.worker] = (own, None)
        previous = self._built[1] if self._built else {}
        known: dict[str, KnownWorker] = {}
        for worker, (record, by) in sorted(vouched.items()):
            same = previous.get(worker)
            if same is not None and same.digest == record.digest and same.reported_by == by:
                known[worker] = same
            else:
                known[worker] = KnownWorker(record, self._list_of(record, by), by)
        if known.keys() == previous.keys() and all(known[w] is previous[w] for w in known):
            known = dict(previous)  # the same objects while nothing changed
        else:
            self._lists = {w.digest: w.plugins for w in known.values() if w.reported_by is not None}
            self._newest.clear()
        self._built = (key, known)
        return known

    def records(self) -> dict[str, InstalledOnWorker]:
        """Every known worker's installed plugins, by id (for ``membership``)."""
        return {worker: known.record for worker, known in self.known().items()}

    def of(self, worker: str | None) -> KnownWorker | None:
        return self.known().get(worker) if worker else None

    def revision(self) -> tuple[tuple[str, str], ...]:
        """Changes when what is known changes (a worker's plugins, a worker known or forgotten)."""
        return tuple((w.worker, w.digest) for w in self.known().values())

    def newest_connector(self, worker: str | None, connector_class: str) -> str | None:
        """The newest installed version of a connector class (or alias) on ``worker``: what a worker before
        4.1 runs. None where the worker or the version is unknown."""
        known = self.of(worker)
        if known is None:
            return None
        memo = (id(known.plugins), connector_class)
        if memo not in self._newest:
            plugins = known.plugins
            name = plugins.class_name(connector_class, CONNECTOR_TYPES)
            versions = [v for v in plugins.versions(name, CONNECTOR_TYPES) if v] if name else []
            self._newest[memo] = versions[-1] if versions else None
        return self._newest[memo]

    def unknown(self, members: Sequence[str]) -> list[str]:
        """The workers among ``members`` (ids) whose plugins are not known."""
        known = self.known()
        return sorted(m for m in members if m not in known)

    def _vouched(self) -> dict[str, tuple[InstalledOnWorker, str]]:
        """worker -> the record a live sidecar vouches for, and that sidecar (the one seen last)."""
        if self._sidecars is None or self._installed is None:
            return {}
        out: dict[str, tuple[InstalledOnWorker, str, int]] = {}
        for known in self._sidecars.live(self._now_ms()):
            for worker, digest in known.presence.plugins.items():
                record = self._installed.of(worker)
                if record is None or record.digest != digest:
                    continue  # not read yet, or replaced since: that worker's plugins changed
                if worker not in out or out[worker][2] <= known.seen_ms:
                    out[worker] = (record, known.presence.sidecar, known.seen_ms)
        return {worker: (record, by) for worker, (record, by, _) in out.items()}

    def _list_of(self, record: InstalledOnWorker, by: str | None) -> PluginList:
        if by is None:
            return self._catalog.snapshot
        found = self._lists.get(record.digest)
        if found is None:
            found = self._lists[record.digest] = PluginList.from_types(record.plugins)
        return found


__all__ = ["KnownWorker", "WorkerCatalogs"]
