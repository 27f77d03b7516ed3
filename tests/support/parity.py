"""The parity suite's harness: one scenario, run every way, answers compared after normalising.

A *way* is a client that a scenario talks Connect's REST API to: the session's sidecar (``harness.Sidecars``,
built from the code under test) in front of each cluster of the stack (``via-new``, ``via-old``, and any
cluster ``.stack/env`` adds), and the newest cluster's worker directly (``direct-new``), the reference.
``run_every_way`` runs a scenario once per way, concurrently, each with its own connector names, files
and topics (``Way.tag``), then compares every way's transcript with the reference's, step by step.

A transcript holds what the scenario recorded: the answers of ``Way.call`` (status code and body) and
the observations of ``Way.note`` (the records a connector produced, the lines a sink wrote). Before the
comparison a value is normalised (``Way.normalise``) for what must differ between ways and nothing else:
the way's tag and home directory in names, paths and messages; worker ids; traces (their presence stays);
the ``version`` field of statuses (4.1+ writes it); a task's config but its ``task.class`` (the connector
plugin's own output, which the FileStream plugins shipped with each release word differently); and the
two wordings of a successful offsets change
(an old worker's connector is never asked to alter its offsets, so the sidecar gives the message Connect
gives for a connector that manages none: ``offsets.messages.framework_managed``). The waits of a scenario
(``eventually``, ``Way.until``) are not recorded: they are how long state takes to move, which may differ.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from control_plane.domain.offsets.messages import framework_managed
from control_plane.upstream.client import REBALANCE_409_PREFIXES

from .connect_answers import states
from .harness import Alternating, Sidecars
from .kafka_topics import read_to_end, topic_configs
from .stack import Cluster, Stack, version_key
from .waiting import eventually

# what 4.3.1 says when a FileStream connector's own alterOffsets said yes, and what the sidecar says on
# workers without KIP-875 (it cannot ask the connector): the same success, in two wordings
SUCCESS = {
    "The offsets for this connector have been altered successfully": "<offsets altered>",
    framework_managed("altered"): "<offsets altered>",
    "The offsets for this connector have been reset successfully": "<offsets reset>",
    framework_managed("reset"): "<offsets reset>",
}
STOP_SINCE = (3, 5, 0)  # KIP-875's STOPPED state and offsets endpoints (the sidecar emulates them before)


@dataclass(frozen=True)
class Step:
    what: str
    value: Any


@dataclass(repr=False)
class Way:
    label: str  # "via-old", "direct-new"
    cluster: Cluster
    stack: Stack
    client: httpx.AsyncClient
    via_sidecar: bool
    tag: str  # in every connector name, topic and file of this way's run
    home: Path
    steps: list[Step] = field(default_factory=list, repr=False)
    created: list[str] = field(default_factory=list, repr=False)

    def __repr__(self) -> str:
        return f"Way({self.label}, Connect {self.cluster.version})"

    # -- names ------------------------------------------------------------------------------------
    def name(self, base: str) -> str:
        """A connector or topic name of this way: ``base`` and the way's tag."""
        return f"{base}-{self.tag}"

    def connector(self, base: str) -> str:
        """A connector name of this way, deleted from the cluster at the end of the run."""
        name = self.name(base)
        self.created.append(name)
        return name

    @staticmethod
    def path(name: str, suffix: str = "") -> str:
        return f"/connectors/{quote(name, safe='')}{suffix}"

    @property
    def emulates_stop(self) -> bool:
        """The sidecar does KIP-875 itself here (its cluster is older than 3.5)."""
        return self.via_sidecar and version_key(self.cluster.version) < STOP_SINCE

    def own(self, value: Any) -> Any:
        """The part of a cluster-wide listing that is this way's (other ways and tests share the cluster)."""
        if isinstance(value, dict):
            return {k: v for k, v in value.items() if self.tag in k}
        return sorted(v for v in value if self.tag in v)

    # -- recording --------------------------------------------------------------------------------
    async def call(
        self,
        method: str,
        path: str,
        *,
        record: bool = True,
        label: str | None = None,
        once: bool = False,
        **kwargs: Any,
    ) -> httpx.Response:
        """Send a request the way's client; record its status and body (``label``: the step's name when
        the path holds something that differs per way, e.g. a file name). ``once``: the first answer, a
        rebalance's 409 included (one that no retry changes)."""
        # as a careful client does: a request a worker turned away because of a rebalance (not carried
        # out) is sent again; the sidecar passes the worker's 409 through, so its clients do the same
        answer = await eventually(
            lambda: self.client.request(method, path, **kwargs),
            lambda r: once or not mid_rebalance(r),
            what=f"{self.label}: {method} {path} answered outside a rebalance",
        )
        if record:
            what = self.normalise(label or f"{method} {path}")
            self.steps.append(Step(what, self.normalise(body_of(answer), answer.status_code)))
        return answer

    def note(self, what: str, value: Any) -> None:
        """Record an observation (records a connector produced, lines a sink wrote)."""
        self.steps.append(Step(self.normalise(what), self.normalise(value)))

    def normalise(self, value: Any, status: int | None = None) -> Any:
        normalised = _normalise(value, self)
        return normalised if status is None else [status, normalised]

    # -- waiting ----------------------------------------------------------------------------------
    async def until(self, path: str, ok: Callable[[httpx.Response], bool], what: str, timeout_s: float = 90) -> None:
        await eventually(lambda: self.client.get(path), ok, timeout_s=timeout_s, what=f"{self.label}: {what}")

    async def until_states(self, name: str, connector: str, tasks: list[str], timeout_s: float = 90) -> None:
        await eventually(
            lambda: states(self.client, quote(name, safe="")),
            lambda s: s == (connector, tasks),
            timeout_s=timeout_s,
            what=f"{self.label}: {name} {connector} {tasks}",
        )

    async def values(self, topic: str) -> list[Any]:
        """The JSON values ``topic`` holds now, in order (one partition)."""
        return (await read_to_end(self.stack.bootstrap, topic)).json_values()

    async def values_at_least(self, topic: str, count: int, timeout_s: float = 90) -> list[Any]:
        log = await eventually(
            lambda: read_to_end(self.stack.bootstrap, topic),
            lambda t: len(t.json_values()) >= count,
            timeout_s=timeout_s,
            what=f"{self.label}: {count} values in {topic}",
        )
        return log.json_values()


def mid_rebalance(answer: httpx.Response) -> bool:
    """A worker's answer while a rebalance is due or running (409, or 500 for RebalanceNeededException):
    the request was not carried out, and the same request a moment later gets the real answer."""
    body = body_of(answer)
    message = body.get("message") if isinstance(body, dict) else None
    return answer.status_code in (409, 500) and isinstance(message, str) and message.startswith(REBALANCE_409_PREFIXES)


def body_of(answer: httpx.Response) -> Any:
    if not answer.content:
        return None
    try:
        return answer.json()
    except ValueError:
        return answer.text


def _normalise(value: Any, way: Way) -> Any:
    if isinstance(value, str):
        text = value.replace(str(way.home), "<home>").replace(way.tag, "<tag>")
        return SUCCESS.get(text, text)
    if isinstance(value, list | tuple):
        items = [_normalise(v, way) for v in value]
        return sorted(items) if all(isinstance(i, str) for i in items) else items  # names: a hash set's order
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key == "worker_id":
                out[key] = "<worker>"
            elif key == "trace":
                out[key] = None if item is None else "<trace>"
            elif key == "version" and "state" in value:
                continue  # 4.1+ statuses carry the plugin's version, older ones do not
            elif key == "config" and isinstance(item, dict) and isinstance(value.get("id"), dict):
                # a task's config is what the connector plugin's taskConfigs() gave, passed through: the
                # FileStream connectors shipped before 3.x give only their own keys, later ones the whole config
                out[key] = {k: v for k, v in item.items() if k == "task.class"}
            else:
                out[_normalise(key, way)] = _normalise(item, way)
        return out
    return value


# -- running a scenario every way ----------------------------------------------------------------
Scenario = Callable[[Way], Awaitable[None]]


@contextlib.asynccontextmanager
async def every_way(stack: Stack, sidecars: Sidecars, home: Path, run: str) -> AsyncIterator[list[Way]]:
    """The ways of this stack: the session's pair of sidecars in front of every cluster, newest first, each
    way's requests sent to the two in turn (as a Service spreads them over the worker pods' sidecars), and
    the newest cluster's worker directly; connectors the ways created are deleted afterwards."""
    async with contextlib.AsyncExitStack() as exits:
        ways: list[Way] = []
        pairs = [await sidecars.pair_of(cluster) for cluster in stack.clusters.values()]
        served = [running.requests_served for pair in pairs for running in pair]
        for cluster, pair in zip(stack.clusters.values(), pairs, strict=True):
            transport = Alternating([running.url for running in pair])
            client = await exits.enter_async_context(
                httpx.AsyncClient(transport=transport, base_url=pair[0].url, timeout=60)
            )
            label = f"via-{cluster.name}"
            ways.append(Way(label, cluster, stack, client, True, f"{label}-{run}", home / label))
        newest = stack.newest
        direct = await exits.enter_async_context(httpx.AsyncClient(base_url=newest.connect_url, timeout=60))
        label = f"direct-{newest.name}"
        ways.append(Way(label, newest, stack, direct, False, f"{label}-{run}", home / label))
        for way in ways:
            way.home.mkdir(parents=True, exist_ok=True)
        try:
            yield ways
            # the two sidecars of a pair that the scenario used both answered their share of its requests
            after = [running.requests_served for pair in pairs for running in pair]
            grew = [a > b for a, b in zip(after, served, strict=True)]
            assert all(grew[i] == grew[i + 1] for i in range(0, len(grew), 2)), f"served: {served} then {after}"
        finally:
            for way in ways:
                async with httpx.AsyncClient(base_url=way.cluster.connect_url, timeout=30) as worker:
                    for name in way.created:
                        await worker.delete(Way.path(name))


def since(ways: list[Way], version: str) -> list[Way]:
    """The ways whose cluster has a feature a scenario builds on (from ``version``); the reference stays."""
    return [w for w in ways if version_key(w.cluster.version) >= version_key(version)]


async def run_every_way(ways: list[Way], scenario: Scenario) -> None:
    """Run ``scenario`` every way at once; then each way's transcript must equal the reference's (the
    direct way, last)."""
    results = await asyncio.gather(*(scenario(way) for way in ways), return_exceptions=True)
    failures = [(way, r) for way, r in zip(ways, results, strict=True) if isinstance(r, BaseException)]
    if failures:
        way, error = failures[0]
        others = ", ".join(f"{w.label}: {e!r}" for w, e in failures[1:])
        raise AssertionError(f"{way.label} failed{f' (also {others})' if others else ''}") from error
    reference = ways[-1]
    for way in ways[:-1]:
        assert_same_transcript(way, reference)


def assert_same_transcript(way: Way, reference: Way) -> None:
    for i, (got, want) in enumerate(zip(way.steps, reference.steps, strict=False)):
        if got != want:
            raise AssertionError(
                f"step {i} differs, {way.label} against {reference.label}:\n"
                f"  {way.label}: {got.what} -> {json.dumps(got.value, default=str)[:2000]}\n"
                f"  {reference.label}: {want.what} -> {json.dumps(want.value, default=str)[:2000]}"
            )
    assert len(way.steps) == len(reference.steps), (
        f"{way.label} recorded {len(way.steps)} steps, {reference.label} {len(reference.steps)}: "
        f"{[s.what for s in way.steps]} vs {[s.what for s in reference.steps]}"
    )


# -- a busy source ---------------------------------------------------------------------------------
def line(i: int) -> str:
    return f"line {i}"


def position_of(i: int) -> int:
    """The byte position in a busy file at which ``line(i)`` starts (what FileStreamSourceTask stores)."""
    return sum(len(line(n)) + 1 for n in range(i))


@contextlib.asynccontextmanager
async def appending(path: Path, first: int = 1000) -> AsyncIterator[None]:
    """A file of ``first`` lines that grows by 20 lines every 50 ms while the block runs: a busy source."""
    await asyncio.to_thread(path.write_text, "".join(f"{line(i)}\n" for i in range(first)))

    async def grow() -> None:
        i = first
        while True:
            with path.open("a") as f:
                f.writelines(f"{line(n)}\n" for n in range(i, i + 20))
            i += 20
            await asyncio.sleep(0.05)  # the pace of the writer under test, not a wait for a condition

    task = asyncio.create_task(grow())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def replay(values: list[Any], start: int) -> dict[str, Any]:
    """What the records from index ``start`` on say: the line they begin with, and whether they follow each
    other without a gap or a repeat (all the way to the last)."""
    after = values[start:]
    if not after:
        return {"first_line": None, "consecutive": True}
    first = int(after[0].split()[1])
    return {"first_line": first, "consecutive": after == [line(i) for i in range(first, first + len(after))]}


async def create_topic(bootstrap: str, topic: str, configs: dict[str, str]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 1, 1, topic_configs=configs)])
    finally:
        await admin.close()


async def alter_topic(bootstrap: str, topic: str, configs: dict[str, str]) -> None:
    """Set ``configs`` on ``topic``; returns once the broker describes them (KRaft applies the change on
    the broker after the controller has answered, and a worker that reads the topic's configs in between,
    KafkaBasedLog's cleanup policy check, would still see the old ones)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        (answer,) = await admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs=configs)])
        errors = [r for r in answer.to_object()["resources"] if r["error_code"]]
        assert not errors, f"altering {topic}: {errors}"
        await eventually(
            lambda: topic_configs(admin, topic),
            lambda now: configs.items() <= now.items(),
            what=f"{topic}'s configs {configs}",
        )
    finally:
        await admin.close()


def lines_of(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


__all__ = [
    "Scenario",
    "Step",
    "Way",
    "alter_topic",
    "appending",
    "create_topic",
    "every_way",
    "line",
    "lines_of",
    "position_of",
    "replay",
    "run_every_way",
]
