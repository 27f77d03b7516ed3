"""Whether any worker answers now, and the worker's plugin list the view needs for connector types.

A background routine (``WorkerProbe``) asks every worker for its version every ``interval_s``. While no
worker answers, what the view shows may be out of date: its answers are marked stale. A worker found hung
or gone ends every request waiting on it there and then (``ConnectUpstream.stop_waiting``: the path of the
request's own timeout, so a read the view can answer gets the view's answer, marked stale). Every
``plugins_refresh_s`` (and once a worker answers after start) it reads ``GET /connector-plugins`` into
the view's plugin types (the shared rule ``rules.connectors.plugin_types``), through the ``PluginTypes``
port (``plugins.PluginCatalog``, the one loader of that list).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import structlog

from ..background import cancel_and_wait
from .ports import PluginTypes, ViewSnapshot, Workers

log = structlog.get_logger(__name__)


class WorkerProbe:
    def __init__(
        self,
        workers: Workers,
        view: ViewSnapshot,
        plugins: PluginTypes,
        *,
        interval_s: float,
        plugins_refresh_s: float,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._workers = workers
        self._view = view
        self._interval_s = interval_s
        self._plugins_refresh_s = plugins_refresh_s
        self._plugins = plugins
        self._clock = clock
        self._monotonic = monotonic
        self.answering: bool | None = None  # None until the probe ran once
        self.checked_at: float | None = None
        self._plugins_loaded_at: float | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def stale(self) -> bool:
        """No worker answered the last probe: what the view shows may be out of date."""
        return self.answering is False

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="worker-probe")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)

    async def probe(self) -> None:
        versions = await self._workers.worker_versions()
        self.answering = any(v is not None for v in versions.values())
        self.checked_at = self._clock()
        loaded = self._plugins_loaded_at
        if self.answering and (loaded is None or self._monotonic() - loaded > self._plugins_refresh_s):
            await self._load_plugin_types()

    async def _run(self) -> None:
        while True:
            try:
                await self.probe()
            except Exception as err:  # noqa: BLE001 - the probe must outlive any single failure
                log.warning("worker probe failed", error=repr(err))
            await asyncio.sleep(self._interval_s)

    async def _load_plugin_types(self) -> None:
        if await self._plugins.load():
            self._view.state.plugin_types = self._plugins.connector_types()
            self._plugins_loaded_at = self._monotonic()


__all__ = ["WorkerProbe"]
