"""This sidecar's presence among the sidecars of its cluster: a record in the sidecars' own topic every
``interval_s`` (who it is, where it is reached, the workers it knows and their versions, how far its view is
behind, the digest of its worker's installed plugins), and a tombstone when it stops. Every sidecar reads
them all (``view.sidecars``), so each knows every live sidecar, and forgets one that stopped writing within a
bounded time (three intervals).

The installed plugins themselves (``codecs.worker_plugins``, a few kB) are written only when they change,
before the presence that names their digest: a reader that reads the presence has read them already (one
partition, one order)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping

import structlog

from ...background import cancel_and_wait
from ...codecs.presence import SidecarPresence, encode_presence
from ...codecs.results import Tombstone
from ...codecs.worker_plugins import InstalledOnWorker, encode_installed
from ...view.sidecars import KnownSidecar, SidecarTable
from .fence import SidecarLog

log = structlog.get_logger(__name__)


class Presence:
    def __init__(
        self,
        log_: SidecarLog,
        table: SidecarTable,
        *,
        sidecar: str,
        url: str | None,
        version: str,
        interval_s: float,
        workers: Callable[[], Mapping[str, str | None]],
        view_lag: Callable[[], Mapping[str, int | None]],
        stop_timeout_s: float,
        installed: Callable[[], InstalledOnWorker | None] = lambda: None,
        write_wait_s: float = 0.0,
        auto_restart: bool = False,
        auto_restart_chosen: bool = False,
        history: bool = False,
        read: Callable[[], bool] = lambda: True,
        ready: Callable[[], bool] = lambda: True,
        until_ready: Callable[[], Awaitable[None]] | None = None,
        now_ms: Callable[[], float] = lambda: time.time() * 1000,
    ) -> None:
        """``write_wait_s``: how long after a write this sidecar answers it (``ReadRule.settle_write``);
        ``read``: whether the sidecars' topic has been read to the end offsets it had at start; ``ready``:
        whether this sidecar may act for the cluster now (its view caught up), and ``until_ready`` waits for
        it (a presence that said "not ready" is written again as soon as it is); ``auto_restart``,
        ``auto_restart_chosen``, ``history``: what its settings let it do (``codecs.presence``)."""
        self._log = log_
        self._table = table
        self.sidecar = sidecar
        self._url = url
        self._version = version
        self._interval_s = interval_s
        self._workers = workers
        self._view_lag = view_lag
        self._stop_timeout_s = stop_timeout_s
        self._now_ms = now_ms
        self._installed = installed
        self._write_wait_s = write_wait_s
        self.auto_restart = auto_restart  # whether it restarts the failed connectors its settings choose
        self.auto_restart_chosen = auto_restart_chosen  # whether it restarts those an operator chose
        self.history = history  # whether it records the config history
        self._read = read
        self._ready = ready
        self._until_ready = until_ready
        self._said_ready = False  # what its last presence written said
        self._least_wait: tuple[int, float | None] = (-1, None)  # (table revision, least_write_wait_s)
        self._written: str | None = None  # the digest of the installed plugins last written
        self._task: asyncio.Task[None] | None = None

    def live(self) -> list[KnownSidecar]:
        """The sidecars of the cluster that wrote their presence lately, this one among them once its
        first record is read."""
        return self._table.live(self._now_ms())

    def least_write_wait_s(self) -> float | None:
        """The shortest wait between a write and its answer among the live sidecars, this one among them
        (None until the sidecars' topic is read and this sidecar's own presence with it). Kept per revision
        of the table: a sidecar that leaves without a record only lowers the figure kept, never raises it.
        """
        revision, least = self._least_wait
        if revision != self._table.revision:
            live = self.live()
            least = (
                min(s.presence.write_wait_ms for s in live) / 1000
                if self._read() and any(s.presence.sidecar == self.sidecar for s in live)
                else None
            )
            self._least_wait = (self._table.revision, least)
        return least

    def record(self) -> SidecarPresence:
        """This sidecar's presence now."""
        written = self._installed()
        return SidecarPresence(
            self.sidecar,
            self._url,
            self._version,
            round(self._interval_s * 1000),
            dict(self._workers()),
            dict(self._view_lag()),
            {written.worker: written.digest} if written is not None and written.digest == self._written else {},
            self._write_wait_s * 1000,
            self.auto_restart,
            self.history,
            self.auto_restart_chosen,
            self._ready(),
        )

    async def write(self) -> None:
        """The worker's installed plugins when they changed since last written, then the presence."""
        installed = self._installed()
        if installed is not None and installed.digest != self._written:
            await self._log.write(*encode_installed(installed))
            self._written = installed.digest
        record = self.record()
        await self._log.write(*encode_presence(record))
        self._said_ready = record.ready

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="sidecar-presence")

    async def stop(self) -> None:
        """Stops writing, and says so with a tombstone (bounded): the others forget it at once."""
        await cancel_and_wait(self._task)
        try:
            async with asyncio.timeout(self._stop_timeout_s):
                await self._log.write(*encode_presence(Tombstone(self.sidecar)))
        except Exception as err:  # noqa: BLE001 - best effort: the others forget it after three intervals
            log.warning("writing the sidecar's leave failed", sidecar=self.sidecar, error=str(err))

    async def _run(self) -> None:
        while True:
            try:
                await self.write()
            except Exception as err:  # noqa: BLE001 - tried again at the next interval
                log.warning("writing the sidecar's presence failed", sidecar=self.sidecar, error=str(err))
                # a whole interval: a write refused at once (the topic refused) never spins on readiness
                await asyncio.sleep(self._interval_s)
                continue
            await self._until_next()

    async def _until_next(self) -> None:
        """The interval, cut short once this sidecar becomes ready: the others learn at once that it may act."""
        if self._said_ready or self._until_ready is None:
            await asyncio.sleep(self._interval_s)
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._interval_s):
                await self._until_ready()


__all__ = ["Presence"]
