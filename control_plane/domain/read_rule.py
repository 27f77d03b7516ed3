"""The read rule the herder's features share: who answers a read (the view or a worker), how fresh the
view's answer is, and whether the sidecar does a feature itself.

The view answers the read endpoints once it has read its topics to the end, unless the operator chose the
workers (``read_from=upstream``); otherwise the request goes to a worker, and when no worker answers the
view answers anyway, marked stale with its age. Where the workers cannot stop connectors (before 3.5) the
view knows better than they do: a connector the sidecar stopped is shown as 3.5+ shows it, STOPPED and
without tasks, whoever else would answer.

With several sidecars in front of one cluster, a write acknowledged through one must show in a read
through any other (``read_synced``). A sidecar's view reads a record within milliseconds of its write, but a
client can be faster: the view then reads the topics the answer comes from to the end offsets they have
after the read arrived (``synced``; concurrent reads share one end-offset request per topic) before it
answers. ``view_read_sync`` says when: ``missing``, before the view answers that a connector does not exist
(a create through another sidecar is never a 404 here); ``always``, before every answer (every change);
``never``. When the sync does not finish within ``view_read_sync_s`` (or a tail cannot read now), the view
answers what it has, marked stale.

``always`` costs no round trip per read: it is a window, ``view_read_sync_window_s`` (W), kept by both sides.
A write through a sidecar is answered W after it is done (``settle_write``); a read is answered at once when
the view has read its topics to end offsets asked for at most W ago (``ViewSnapshot.fresh_within``, which
asks ahead while reads come), else after a sync. A read that comes after a write's answer therefore finds a
view that read ends asked for after the write was in the log. This is a commit wait (as Spanner's): what it
assumes is that the sidecars' clocks run at one rate, not that they agree. Each sidecar's presence says how
long it waits (``write_wait_ms``); while a live sidecar waits less than W (another setting, an older release),
or the sidecars are not known yet, every read syncs.

The read rule is built once (``control_plane.composition``) and shared by every feature and the herder.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import structlog

from ..storage.errors import ReadTimeout
from ..upstream import UpstreamError, UpstreamRequest
from ..view import ClusterView
from .capabilities import Capabilities, Feature, Mode, Version
from .connect_api import Config, config_path
from .errors import ControlPlaneError, NotFoundError
from .liveness import WorkerProbe
from .outcomes import Answer, Forward, Provenance, Read, Refusal, Source
from .ports import ViewSnapshot, Workers

T = TypeVar("T")
log = structlog.get_logger(__name__)

# KAFKA-12525: from 3.6.0 KafkaStatusBackingStore.readTaskStatus ignores a task's UNASSIGNED of the same or
# an older generation than its RUNNING; 3.4 and 3.5 show the last record. The view answers by its workers' rule.
STALE_UNASSIGNED_IGNORED_SINCE = Version.of("3.6.0")


class ReadRule:
    def __init__(
        self,
        *,
        capabilities: Capabilities,
        workers: Workers,
        view: ViewSnapshot | None,
        probe: WorkerProbe | None,
        reads_from_view: bool,
        read_your_writes_s: float = 5.0,
        view_read_sync: str = "never",
        view_read_sync_s: float = 1.0,
        view_read_sync_window_s: float = 0.025,
        writers_wait_s: Callable[[], float | None] = lambda: None,
    ) -> None:
        """``writers_wait_s``: the least wait between a write and its answer among the live sidecars (None
        when not known): the window holds only while every one of them keeps it."""
        self.capabilities = capabilities
        self.workers = workers
        self.view = view
        self.probe = probe
        self._reads_from_view_setting = reads_from_view
        self._read_your_writes_s = read_your_writes_s
        self._sync = view_read_sync
        self._sync_s = view_read_sync_s
        self._window_s = view_read_sync_window_s
        self._writers_wait_s = writers_wait_s
        self.read_syncs: Counter[str] = Counter()  # the synced reads by outcome (``synced``)

    @property
    def view_ready(self) -> bool:
        return self.view is not None and self.view.ready

    def reads_from_view(self) -> bool:
        return self.view_ready and self._reads_from_view_setting

    def stale(self) -> bool:
        return self.probe is not None and self.probe.stale

    def from_view(self, build: Callable[[ClusterView], T], *, stale: bool) -> Answer[T] | Refusal:
        assert self.view is not None
        state = self.view.state
        provenance = Provenance(Source.VIEW, stale, state.age_s() if stale else None)
        try:
            return Answer(build(state), provenance)
        except ControlPlaneError as err:
            return Refusal(err, provenance)

    def fallback(self, build: Callable[[ClusterView], T]) -> Answer[T] | Refusal | None:
        return self.from_view(build, stale=True) if self.view_ready else None

    def read(
        self, build: Callable[[ClusterView], T], *, view_knows_better: bool = False, synced: bool = True
    ) -> Read[T]:
        """Who answers: the view (marked stale when no worker answers the probe, or when it was not
        ``synced``) or a worker (the view's answer, stale, when none answers)."""
        if self.reads_from_view() or (view_knows_better and self.view_ready):
            return self.from_view(build, stale=self.stale() or not synced)
        return Forward(lambda: self.fallback(build))

    async def read_synced(
        self, build: Callable[[ClusterView], T], tails: Sequence[str], *, view_knows_better: bool = False
    ) -> Read[T]:
        """``read``, with the view synced on ``tails`` as ``view_read_sync`` says."""
        synced = await self.synced(tails) if self._sync == "always" else True
        read = self.read(build, view_knows_better=view_knows_better, synced=synced)
        if (
            self._sync == "missing"
            and isinstance(read, Refusal)
            and isinstance(read.error, NotFoundError)
            and read.provenance.source is Source.VIEW
        ):
            synced = await self.synced(tails)
            read = self.read(build, view_knows_better=view_knows_better, synced=synced)
        return read

    async def synced(self, tails: Sequence[str]) -> bool:
        """Whether the view has read ``tails`` to the end offsets they had after this call (bounded by
        ``view_read_sync_s``). A tail that cannot read now is not waited for. Counted by outcome
        (``read_syncs``): ``window``, answered at once; ``waited``, for a round of the read-ahead; ``synced``,
        for a request of its own; ``stale``, not in time (or a tail cannot read)."""
        view = self.view
        if view is None or not self.view_ready:
            return True
        wanted = [t for t in tails if view.has_tail(t)]
        if any(view.tail_error(t) for t in wanted):
            self.read_syncs["stale"] += 1
            return False
        window = self.window_in_use()
        if window and view.fresh_within(wanted, self._window_s):
            self.read_syncs["window"] += 1
            return True  # every write answered before this read was in the ends the view read to
        try:
            async with asyncio.timeout(self._sync_s):  # bounded here, whatever the view port does
                if window:  # a round of the read-ahead sent within the window will do
                    await view.until_fresh(wanted, self._window_s)
                else:
                    await view.read_all_to_end(wanted, None)
        except (TimeoutError, ReadTimeout):
            self.read_syncs["stale"] += 1
            return False
        self.read_syncs["waited" if window else "synced"] += 1
        return True

    def window_in_use(self) -> bool:
        """Whether reads are answered within the window now (``always``, and every live sidecar waits it out)."""
        return self._sync == "always" and self.window_holds()

    def knows_better(self, build: Callable[[ClusterView], T], name: str) -> Answer[T] | Refusal | None:
        """A read the workers answer (a connector's info or task configs): the view's answer instead when the
        sidecar stopped ``name`` (a worker before 3.5 shows it as it ran until its herder applies the stop,
        after the stop's answer), else None (the worker answers)."""
        return self.from_view(build, stale=self.stale()) if self.stopped_by_sidecar([name]) else None

    def may_know_better(self) -> bool:
        """Whether ``knows_better`` can answer any read now (cheap: no connector looked up)."""
        return self.view_ready and self.stop_emulated()

    def stop_emulated(self) -> bool:
        return self.capabilities.decision(Feature.STOP_AND_OFFSETS_READ).mode is Mode.EMULATED

    def ignores_stale_unassigned(self) -> bool:
        """The status rule of the workers' version (the oldest live worker's; 3.6+'s before any answered)."""
        version = self.capabilities.version
        return version is None or version >= STALE_UNASSIGNED_IGNORED_SINCE

    def stopped_by_sidecar(self, names: Sequence[str]) -> bool:
        if not self.stop_emulated() or not self.view_ready or self.view is None:
            return False
        return any(self.view.state.target_state(name) == "STOPPED" for name in names)

    async def connector_config(self, name: str) -> Config | None:
        """A connector's configuration: the view's once it has caught up, else a worker's (None when
        neither has it)."""
        if self.view_ready and self.view is not None:
            return self.view.state.connector_config(name)
        try:
            answer = await self.workers.forward(UpstreamRequest("GET", config_path(name)))
        except UpstreamError:
            return None
        config = answer.json() if answer.status == 200 else None
        return config if isinstance(config, dict) else None

    async def emulates(self, feature: Feature) -> bool:
        return await self.capabilities.mode(feature) is Mode.EMULATED

    def window_holds(self) -> bool:
        """Whether every live sidecar waits the window out after its writes (one that does not, or an
        older one, or one not known yet: every read syncs)."""
        least = self._writers_wait_s()
        return least is not None and least >= self._window_s * (1 - 1e-9)

    async def settle_write(self) -> None:
        """Under ``always``: the wait between a write's end and its answer, the writers' side of the window
        (a commit wait by design, not a wait for a condition: the condition is another sidecar's)."""
        if self._sync == "always":  # whether or not this sidecar's view reads: the others' does
            await asyncio.sleep(self._window_s)

    @property
    def write_wait_s(self) -> float:
        """How long the sidecar waits for a write to show (``read_your_writes_timeout_s``)."""
        return self._read_your_writes_s

    async def read_config_back(self, message: str, **fields: Any) -> None:
        """Read-your-writes: the view reads the config topic to its end (bounded by
        ``read_your_writes_timeout_s``); a timeout is logged with ``message``, never raised."""
        assert self.view is not None
        try:
            await self.view.read_to_end("config", self._read_your_writes_s)
        except ReadTimeout as err:
            log.warning(message, **fields, error=str(err))


__all__ = ["STALE_UNASSIGNED_IGNORED_SINCE", "ReadRule"]
