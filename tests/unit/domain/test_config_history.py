"""Config history (domain/history/, codecs/config_history.py, rules/config_diff.py): the records,
secrets kept as keyed digests, one recording sidecar among several, retention, who, diff and rollback,
over the sidecars' topic in memory."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from control_plane.backoff import ProposalBackoff
from control_plane.codecs.config_history import (
    Author,
    HistoryEntry,
    HistoryKey,
    decode_author,
    decode_entry,
    encode_author,
    encode_entry,
)
from control_plane.codecs.presence import SidecarPresence
from control_plane.codecs.results import Malformed, Tombstone, UnknownKey
from control_plane.domain.cluster.acting import OneActor, records_history
from control_plane.domain.cluster.fence import SidecarLog
from control_plane.domain.errors import BadRequestError, NotFoundError, Unsupported
from control_plane.domain.herder import changed_connector
from control_plane.domain.history import (
    AUTHOR,
    NO_HISTORY,
    ConfigHistory,
    HistoryRecorder,
    KeptHistory,
    PendingRecords,
)
from control_plane.domain.outcomes import Refusal, Relay
from control_plane.rest.resources.config_history import diff_json, one_version_json, page_json
from control_plane.rules.config_diff import ChangeMarks, SecretDigests, SecretMarks, diff
from control_plane.upstream import UpstreamRequest, UpstreamResponse
from control_plane.view.config_history import ConfigHistoryTable, ObservedChange
from control_plane.view.sidecars import SidecarTable
from tests.support.fakes import FakeSidecarReader, FakeSidecarsTopic

DIGESTS = SecretDigests(b"k")
WRITTEN = Relay(UpstreamResponse(200, [], b"{}", "http://w:8083"))  # the worker's answer to a rollback's PUT
BASE = {"connector.class": "FileStreamSource", "topic": "t", "connection.password": "s3cret"}


def test_the_records_read_back_as_written() -> None:
    entry = HistoryEntry(42, "a-b", 1000, "updated", {"x": "1", "p": "[hidden]"}, "PAUSED", "s0", {"p": "hmac:1"})
    assert decode_entry(*encode_entry(entry)) == entry
    assert decode_entry(*encode_entry(Tombstone(HistoryKey(42, "a-b")))) == Tombstone(HistoryKey(42, "a-b"))
    author = Author(42, "a-b", "alice", "s1")
    assert decode_author(*encode_author(author)) == author
    assert encode_entry(entry)[0] == b"config-history-42-a-b"  # the offset first: any connector name reads back
    assert isinstance(decode_entry(b"config-history-x-c", b"{}"), Malformed)
    assert isinstance(decode_entry(b"config-history-1-c", b'{"ts": 1, "change": "moved", "sidecar": "s"}'), Malformed)
    assert isinstance(decode_author(b"config-author-1-c", b'{"who": 3, "sidecar": "s"}'), Malformed)
    assert isinstance(decode_entry(b"fence-c", b"{}"), UnknownKey)


def test_secrets_are_digests_references_stay_and_a_diff_says_changed_without_values() -> None:
    stored = DIGESTS.stored("c", {**BASE, "ssl.key.password": "${file:/etc/s.properties:pw}"})
    assert "s3cret" not in repr(stored)
    assert stored.config["connection.password"] == "[hidden]"
    assert stored.config["ssl.key.password"] == "${file:/etc/s.properties:pw}"  # where it is, not what
    assert set(stored.secrets) == {"connection.password"}
    assert DIGESTS.stored("other", BASE).secrets != stored.secrets  # per connector: digests say nothing across
    assert SecretDigests(b"other-key").stored("c", BASE).secrets != stored.secrets
    same = DIGESTS.stored("c", {**BASE, "topic": "u"})
    assert [c.as_json() for c in diff(DIGESTS.stored("c", BASE), same)] == [
        {"name": "topic", "op": "changed", "before": "t", "after": "u"}
    ]
    changed = diff(DIGESTS.stored("c", BASE), DIGESTS.stored("c", {**BASE, "connection.password": "other"}))
    assert [c.as_json() for c in changed] == [
        {"name": "connection.password", "op": "changed", "before": "[hidden]", "after": "[hidden]", "secret": True}
    ]
    added = diff(None, DIGESTS.stored("c", {"a": "1"}))
    assert [c.as_json() for c in added] == [{"name": "a", "op": "added", "after": "1"}]


@dataclass
class Cluster:
    """The sidecars' topic in memory, and the config topic's changes every sidecar's view observes."""

    now: float = 1_000_000_000.0
    clock: float = 0.0  # the recorders' monotonic clock (their backoff)
    topic: FakeSidecarsTopic = field(init=False)
    offset: int = 0
    sidecars: list[tuple[HistoryRecorder, FakeSidecarReader]] = field(default_factory=list)
    records: dict[str, bool] = field(default_factory=dict)  # whether each sidecar's presence says it records
    tables: dict[str, SidecarTable] = field(default_factory=dict)  # each sidecar's table of presences

    def __post_init__(self) -> None:
        self.topic = FakeSidecarsTopic(lambda: self.now)

    def sidecar(
        self,
        name: str,
        *,
        records: bool = True,
        log: SidecarLog | None = None,
        limit: int = 100,
        marks: SecretMarks = DIGESTS,
    ) -> tuple[HistoryRecorder, FakeSidecarReader]:
        """A sidecar writing through ``log`` (the topic itself by default), holding at most ``limit`` records
        not acknowledged, written again 1 s after a first failure, then 2 s, 4 s, ..."""
        reader = self.topic.reader()
        table = self.tables[name] = SidecarTable()
        recorder = HistoryRecorder(
            reader.history,
            OneActor(table, name, records_history, now_ms=lambda: self.now),
            name,
            log or self.topic,
            reader,
            marks,
            retention_s=3600,
            interval_s=1,
            read_timeout_s=1,
            ready=lambda: True,
            pending=PendingRecords(limit, ProposalBackoff(1000, 8000, 2.0, 0.0), clock=lambda: self.clock),
            now_ms=lambda: self.now,
        )
        self.records[name] = records
        self.sidecars.append((recorder, reader))
        self.present()
        return recorder, reader

    def present(self, *gone: str) -> None:
        """Every sidecar's table of presences: the ones not gone, each saying whether it records."""
        for recorder, _ in self.sidecars:
            table = self.tables[recorder.sidecar]
            for other, _ in self.sidecars:
                if other.sidecar in gone:
                    table.apply(Tombstone(other.sidecar), int(self.now))
                else:
                    presence = SidecarPresence(other.sidecar, None, "1", 60_000, history=self.records[other.sidecar])
                    table.apply(presence, int(self.now))

    def change(self, connector: str, config: Mapping[str, str] | None, state: str | None = "STARTED") -> int:
        """A record of the config topic, as every sidecar's view observes it."""
        self.offset += 1
        self.now += 1000
        for _, reader in self.sidecars:
            reader.history.observe(
                ObservedChange(self.offset, int(self.now), connector, config, state, deleted=config is None)
            )
        return self.offset

    async def tick(self) -> None:
        for recorder, _ in self.sidecars:
            await recorder.check()
        for _, reader in self.sidecars:
            await reader.read_to_end("sidecars", 1)


def history_of(recorder: HistoryRecorder, reader: FakeSidecarReader, connector: str) -> dict[str, Any]:
    """A connector's history as ``GET /_sidecar/connectors/{c}/history`` renders it."""

    async def current(name: str) -> Mapping[str, str | None] | None:
        return None

    async def write(name: str, config: dict[str, str | None], expected: Mapping[str, str | None]) -> Any:
        return None

    return page_json(KeptHistory(reader.history, recorder, current, write).history(connector))


async def test_one_sidecar_records_each_change_once_and_the_others_see_it() -> None:
    cluster = Cluster()
    first, first_view = cluster.sidecar("s0")
    second, second_view = cluster.sidecar("s1")
    created = cluster.change("c", BASE)
    cluster.change("c", BASE)  # a PUT of the same config: no version
    updated = cluster.change("c", {**BASE, "topic": "u"})
    paused = cluster.change("c", {**BASE, "topic": "u"}, "PAUSED")
    deleted = cluster.change("c", None, None)
    await cluster.tick()
    assert first.acting() and not second.acting()
    for recorder, view in ((first, first_view), (second, second_view)):
        versions = history_of(recorder, view, "c")["versions"]
        assert [(v["version"], v["change"]) for v in versions] == [
            (deleted, "deleted"),
            (paused, "state"),
            (updated, "updated"),
            (created, "created"),
        ]
        assert versions[2]["changes"] == [{"name": "topic", "op": "changed", "before": "t", "after": "u"}]
        assert versions[1]["changes"] == [] and versions[1]["state"] == "PAUSED"
        assert view.history.pending() == []
    assert first.counts["recorded"] == 4 and first.counts["unchanged"] == 1 and second.counts["recorded"] == 0
    assert sum(k.startswith(b"config-history-") for k, _, _ in cluster.topic.records) == 4


async def test_the_next_sidecar_goes_on_after_the_last_change_recorded() -> None:
    cluster = Cluster()
    cluster.sidecar("s0")
    second, second_view = cluster.sidecar("s1")
    cluster.change("c", BASE)
    await cluster.tick()
    cluster.present("s0")  # the recording sidecar left
    later = cluster.change("c", {**BASE, "tasks.max": "2"})
    await cluster.tick()
    assert second.acting() and second.counts["recorded"] == 1
    assert [v["version"] for v in history_of(second, second_view, "c")["versions"]] == [later, 1]


async def test_two_that_both_record_write_the_same_versions() -> None:
    cluster = Cluster()
    first, first_view = cluster.sidecar("s0")
    second, second_view = cluster.sidecar("s1")
    cluster.change("c", BASE)
    cluster.change("c", {**BASE, "topic": "u"})
    # each thinks it records (the second has not yet seen the first's presence) before reading the other's
    await asyncio.gather(first.record(first_view.history.pending()), second.record(second_view.history.pending()))
    await cluster.tick()
    assert first.counts["recorded"] == second.counts["recorded"] == 2
    assert history_of(first, first_view, "c")["versions"] == history_of(second, second_view, "c")["versions"]
    assert first_view.history.size() == 2  # the same keys: compaction keeps one of each


async def test_an_older_release_is_passed_over_and_versions_past_retention_go_but_the_newest() -> None:
    cluster = Cluster()
    old, _ = cluster.sidecar("s0", records=False)
    recorder, view = cluster.sidecar("s1")
    assert recorder.acting() and not old.acting()
    for topic in ("a", "b", "c"):
        cluster.change("live", {**BASE, "topic": topic})
    cluster.change("gone", BASE)
    cluster.change("gone", None, None)
    await cluster.tick()
    assert view.history.size() == 5
    cluster.now += 3600 * 1000 + 1
    cluster.present()  # still there an hour later
    await cluster.tick()
    assert [v["change"] for v in history_of(recorder, view, "live")["versions"]] == ["updated"]  # the newest kept
    assert view.history.connectors() == ["live"]  # a deleted connector's history goes once past retention


async def test_who_names_the_principal_of_a_write_through_a_sidecar() -> None:
    cluster = Cluster()
    recorder, view = cluster.sidecar("s0")
    start = recorder.position()
    direct = cluster.change("d", BASE)  # straight to a worker: nobody names it
    through = cluster.change("c", BASE)
    token = AUTHOR.set("alice")
    try:
        await recorder.attribute("c", start)
    finally:
        AUTHOR.reset(token)
    await recorder.authors_written()
    await cluster.tick()
    (version,) = history_of(recorder, view, "c")["versions"]
    assert (version["version"], version["who"], version["via_sidecar"]) == (through, "alice", "s0")
    assert history_of(recorder, view, "d")["versions"][0]["who"] is None and direct


async def test_diff_and_rollback_restore_secrets_by_digest_or_ask_for_them() -> None:
    cluster = Cluster()
    recorder, view = cluster.sidecar("s0")
    v1 = cluster.change("c", BASE)
    v2 = cluster.change("c", {**BASE, "topic": "u", "connection.password": "rotated"})
    await cluster.tick()
    written: list[dict[str, str | None]] = []
    current: dict[str, str | None] = {**BASE, "topic": "u", "connection.password": "rotated"}

    async def now(name: str) -> Mapping[str, str | None] | None:
        return current if name == "c" else None

    async def write(name: str, config: dict[str, str | None], expected: Mapping[str, str | None]) -> Any:
        assert expected == current  # the PUT holds only while the config is still what the rollback read
        written.append(config)
        return WRITTEN

    history = KeptHistory(view.history, recorder, now, write)
    assert [c["name"] for c in diff_json(history.diff("c", v1, None))["changes"]] == ["connection.password", "topic"]
    assert one_version_json(history.version("c", v1))["config"]["connection.password"] == "[hidden]"
    with pytest.raises(BadRequestError, match=r"connection\.password"):
        await history.rollback("c", v1, {})  # the current password is another: only the caller has it
    assert await history.rollback("c", v1, {"connection.password": "s3cret"}) is WRITTEN
    assert written[-1] == {**BASE}
    current["connection.password"] = "s3cret"
    await history.rollback("c", v1, {})  # the current value has the version's digest: restored from it
    assert written[-1] == {**BASE}
    await history.rollback("c", v2, {"connection.password": "rotated"})
    with pytest.raises(NotFoundError):
        history.version("c", 999)
    with pytest.raises(NotFoundError):
        history.history("nobody")


async def test_without_a_key_the_history_keeps_whether_a_secret_changed_and_no_digest() -> None:
    """No ``HISTORY_SECRET_KEY``: each sidecar compares under a key of its own process; a sidecar that takes
    over compares with the config topic's record of the newest version; a rollback restores a secret no
    change was recorded of since."""
    cluster = Cluster()
    cluster.sidecar("s0", marks=ChangeMarks())
    second, second_view = cluster.sidecar("s1", marks=ChangeMarks())
    created = cluster.change("c", BASE)
    topic = cluster.change("c", {**BASE, "topic": "u"})
    rotated = cluster.change("c", {**BASE, "topic": "u", "connection.password": "rotated"})
    await cluster.tick()
    cluster.present("s0")  # the recording sidecar left: the next knows none of the values in its process
    paused = cluster.change("c", {**BASE, "topic": "u", "connection.password": "rotated"}, "PAUSED")
    await cluster.tick()
    assert second.acting() and second.counts["recorded"] == 1
    written = b" ".join(v or b"" for _, v, _ in cluster.topic.records)
    assert b"hmac" not in written and b"s3cret" not in written and b"rotated" not in written
    versions = history_of(second, second_view, "c")["versions"]
    assert [(v["version"], v["change"]) for v in versions] == [
        (paused, "state"),  # the password the same: compared with the config topic's record of the version
        (rotated, "updated"),
        (topic, "updated"),
        (created, "created"),
    ]
    assert [c["name"] for c in versions[1]["changes"]] == ["connection.password"]
    assert [c["name"] for c in versions[2]["changes"]] == ["topic"]
    entries = second_view.history.entries("c")
    assert [e.secrets["connection.password"] for e in entries] == [f"changed-at:{created}"] * 2 + [
        f"changed-at:{rotated}"
    ] * 2

    current: dict[str, str | None] = {**BASE, "topic": "u", "connection.password": "rotated"}
    written_configs: list[dict[str, str | None]] = []

    async def now(name: str) -> Mapping[str, str | None] | None:
        return current

    async def write(name: str, config: dict[str, str | None], expected: Mapping[str, str | None]) -> Any:
        written_configs.append(config)
        return WRITTEN

    history = KeptHistory(second_view.history, second, now, write)
    assert await history.rollback("c", rotated, {}) is WRITTEN  # no change of it recorded since: the current one
    assert written_configs[-1]["connection.password"] == "rotated"
    with pytest.raises(BadRequestError, match=r"connection\.password"):
        await history.rollback("c", topic, {})  # changed since: only the caller has it
    cluster.change("c", {**BASE, "connection.password": "unrecorded"})  # not recorded yet: not restored
    current["connection.password"] = "unrecorded"
    with pytest.raises(BadRequestError, match=r"connection\.password"):
        await history.rollback("c", rotated, {})


async def test_versions_recorded_under_an_earlier_key_still_read() -> None:
    """Records whose secrets are digests under another key (the group id's, before a key was required):
    shown, compared, their secrets marked as changed once; a rollback to one asks for its secrets."""
    cluster = Cluster()
    _, old_view = cluster.sidecar("s0", marks=SecretDigests(b"connect-group:connect-cluster"))
    first = cluster.change("c", BASE)
    await cluster.tick()
    gone = ["s0"]
    cluster.present(*gone)
    for marks in (ChangeMarks(), SecretDigests(b"from-a-kubernetes-secret")):
        recorder, view = cluster.sidecar(f"s{len(cluster.sidecars)}", marks=marks)
        cluster.present(*gone)
        await cluster.tick()
        later = cluster.change("c", {**BASE, "topic": f"after-{len(cluster.sidecars)}"})
        await cluster.tick()
        assert recorder.acting()
        (newest, *_) = history_of(recorder, view, "c")["versions"]
        assert newest["version"] == later and {c["name"] for c in newest["changes"]} == {"connection.password", "topic"}
        gone.append(recorder.sidecar)
        cluster.present(*gone)
    assert old_view.history.entry("c", first) is not None
    kept = KeptHistory(view.history, recorder, lambda name: _same(BASE), lambda *a: _same(WRITTEN))
    with pytest.raises(BadRequestError, match=r"connection\.password"):
        await kept.rollback("c", first, {})  # the same password, but the version's digest is under another key


async def _same(value: Any) -> Any:
    return value


def test_a_creation_is_a_change_of_the_connector_it_names() -> None:
    def create(body: bytes) -> str | None:
        return changed_connector(UpstreamRequest("POST", "/connectors", body=body))

    assert create(b'{"name": " orders ", "config": {}}') == "orders"  # ConnectorsResource trims it
    assert create(b'{"config": {}}') is None and create(b"not json") is None and create(b'{"name": 3}') is None
    assert changed_connector(UpstreamRequest("PUT", "/connectors/a%20b/config")) == "a b"


async def test_a_history_in_pages() -> None:
    cluster = Cluster()
    recorder, view = cluster.sidecar("s0")
    offsets = [cluster.change("c", {**BASE, "topic": str(i)}) for i in range(5)]
    await cluster.tick()

    async def none(name: str) -> Mapping[str, str | None] | None:
        return None

    async def nothing(*_: object) -> Any:
        return None

    history = KeptHistory(view.history, recorder, none, nothing)
    first = page_json(history.history("c", limit=2))
    assert [v["version"] for v in first["versions"]] == offsets[:2:-1] and first["next_before"] == offsets[3]
    second = page_json(history.history("c", limit=2, before=first["next_before"]))
    assert [v["version"] for v in second["versions"]] == [offsets[2], offsets[1]]
    last = page_json(history.history("c", limit=2, before=second["next_before"]))
    assert [v["version"] for v in last["versions"]] == [offsets[0]] and last["next_before"] is None
    assert last["versions"][0]["first_kept"] and history.history("c").next_before is None


async def test_without_the_sidecars_topic_every_request_says_so() -> None:
    history = ConfigHistory(None)
    for refused in (
        history.history("c"),
        history.version("c", 1),
        history.diff("c", 1, None),
        await history.rollback("c", 1, {}),
    ):
        assert isinstance(refused, Refusal) and isinstance(refused.error, Unsupported)
        assert refused.error.message == NO_HISTORY


def test_a_topic_names_the_earlier_configs_that_named_it() -> None:
    table = ConfigHistoryTable()
    sink = "org.apache.kafka.connect.file.FileStreamSinkConnector"
    versions = [  # (offset, ts, change, config)
        ("s", 10, 100, "created", {"connector.class": sink, "topics": "old, kept"}),
        ("s", 11, 110, "state", {"connector.class": sink, "topics": "old, kept"}),
        ("s", 12, 120, "updated", {"connector.class": sink, "topics": "kept"}),
        ("r", 20, 200, "created", {"connector.class": sink, "topics.regex": "ol[cd]"}),
        ("r", 21, 210, "deleted", None),
        ("src", 30, 300, "created", {"connector.class": "x.FileStreamSourceConnector", "topic": "old"}),
        ("src", 31, 310, "updated", {"connector.class": "x.FileStreamSourceConnector", "topic": "new"}),
    ]
    for connector, offset, ts, change, config in versions:
        table.apply_entry(HistoryEntry(offset, connector, ts, change, config, "STARTED", "s0"))
    assert [e.as_json() for e in table.earlier_configs_naming("old")] == [
        {"connector": "r", "version": 20, "via": "topics.regex", "named_at_ms": 200, "until_ms": 210, "deleted": True},
        {"connector": "s", "version": 11, "via": "topics", "named_at_ms": 110, "until_ms": 120, "deleted": False},
    ]  # the newest version that named it; a source's topic is no config naming (its topics are KIP-558's)
    assert table.earlier_configs_naming("kept") == []  # the newest config still names it
    assert table.earlier_configs_naming("other") == []


@dataclass
class BrokerDown:
    """The sidecars' topic as one sidecar writes it: while ``down``, no write is acknowledged."""

    topic: FakeSidecarsTopic
    down: bool = True
    attempts: int = 0

    async def write(self, key: bytes, value: bytes | None) -> None:
        self.attempts += 1
        if self.down:
            raise TimeoutError("the broker did not acknowledge the record in time")
        await self.topic.write(key, value)


def entries_written(cluster: Cluster) -> list[bytes]:
    return [k for k, v, _ in cluster.topic.records if k.startswith(b"config-history-") and v is not None]


async def test_a_record_the_broker_did_not_acknowledge_is_pending_unseen_and_written_again_after_a_backoff() -> None:
    cluster = Cluster()
    log = BrokerDown(cluster.topic)
    recorder, view = cluster.sidecar("s0", log=log)
    _, other_view = cluster.sidecar("s1")
    created = cluster.change("c", BASE)
    updated = cluster.change("c", {**BASE, "topic": "u"})
    await cluster.tick()
    assert recorder.unacknowledged() == 2 and recorder.counts["unacknowledged"] == 2
    assert recorder.counts["recorded"] == 0 and entries_written(cluster) == []
    # nothing shown that nobody else has: the history is what is read back from the topic
    assert view.history.size() == 0 and other_view.history.size() == 0
    assert recorder.pending() == 2  # the changes stay uncovered, in the view's queue too
    attempts = log.attempts
    cluster.clock += 0.5
    await cluster.tick()
    assert log.attempts == attempts  # within the backoff: not written again
    cluster.clock += 0.5
    await cluster.tick()
    assert log.attempts == attempts + 2 and recorder.unacknowledged() == 2  # again, and again not acknowledged
    log.down = False
    cluster.clock += 1.5
    await cluster.tick()
    assert log.attempts == attempts + 2  # the backoff doubled: 2 s after the second failure
    cluster.clock += 0.5
    await cluster.tick()
    assert recorder.unacknowledged() == 0 and recorder.counts["recorded"] == 2
    for v in (view, other_view):
        assert [e.offset for e in v.history.entries("c")] == [created, updated]
        assert [e.change for e in v.history.entries("c")] == ["created", "updated"]
        assert v.history.pending() == []
    assert history_of(recorder, view, "c") == history_of(recorder, other_view, "c")


async def test_changes_made_while_records_are_pending_compare_with_them() -> None:
    cluster = Cluster()
    log = BrokerDown(cluster.topic)
    recorder, view = cluster.sidecar("s0", log=log)
    cluster.change("c", BASE)
    await cluster.tick()
    cluster.change("c", BASE)  # the same config again: no version, though the first is not acknowledged yet
    paused = cluster.change("c", BASE, "PAUSED")
    await cluster.tick()
    assert recorder.unacknowledged() == 2 and recorder.counts["unchanged"] == 1
    log.down, cluster.clock = False, 60.0
    await cluster.tick()
    assert [(e.change, e.state) for e in view.history.entries("c")] == [("created", "STARTED"), ("state", "PAUSED")]
    assert view.history.entries("c")[-1].offset == paused


async def test_the_sidecar_that_takes_over_records_once_what_the_first_could_not_write() -> None:
    cluster = Cluster()
    log = BrokerDown(cluster.topic)
    first, first_view = cluster.sidecar("s0", log=log)
    second, second_view = cluster.sidecar("s1")
    cluster.change("c", BASE)
    cluster.change("c", {**BASE, "topic": "u"})
    await cluster.tick()
    assert first.unacknowledged() == 2 and second.counts["recorded"] == 0
    cluster.present("s0")  # the recording sidecar is no longer live to the others: the second records
    await cluster.tick()
    assert second.acting() and second.counts["recorded"] == 2
    log.down, cluster.clock = False, 60.0
    await cluster.tick()  # the first's records land late: the same keys, the same versions
    assert first.unacknowledged() == 0 and first.counts["recorded"] == 2
    assert len(entries_written(cluster)) == 4 and len(set(entries_written(cluster))) == 2
    for view in (first_view, second_view):
        assert view.history.size() == 2 and view.history.pending() == []
    assert history_of(first, first_view, "c") == history_of(second, second_view, "c")


async def test_a_full_pending_set_takes_no_more_changes_until_it_drains() -> None:
    cluster = Cluster()
    log = BrokerDown(cluster.topic)
    recorder, view = cluster.sidecar("s0", log=log, limit=2)
    offsets = [cluster.change("c", {**BASE, "topic": str(i)}) for i in range(5)]
    await cluster.tick()
    assert recorder.unacknowledged() == 2 and recorder.pending() == 5 and recorder.dropped() == 0
    log.down = False
    for _ in range(3):
        cluster.clock += 60
        await cluster.tick()
    assert [e.offset for e in view.history.entries("c")] == offsets and recorder.unacknowledged() == 0


async def test_a_tombstone_not_acknowledged_leaves_the_version_shown_and_is_written_again() -> None:
    cluster = Cluster()
    log = BrokerDown(cluster.topic, down=False)
    recorder, view = cluster.sidecar("s0", log=log)
    cluster.change("c", BASE)
    cluster.change("c", {**BASE, "topic": "u"})
    await cluster.tick()
    cluster.now += 3600 * 1000 + 1
    cluster.present()
    log.down = True
    with pytest.raises(TimeoutError):
        await recorder.check()
    assert view.history.size() == 2  # the old version is still kept: its tombstone was not acknowledged
    log.down, cluster.clock = False, 60.0
    await cluster.tick()
    assert [e.change for e in view.history.entries("c")] == ["updated"] and recorder.counts["expired"] == 1


def test_a_change_dropped_from_a_full_queue_is_counted_only_when_no_record_was_made_of_it() -> None:
    table = ConfigHistoryTable(max_pending=2)
    for offset in (1, 2):
        table.observe(ObservedChange(offset, offset, "c", BASE, "STARTED"))
    table.made_through = 1  # the recorder holds a record of the first
    table.observe(ObservedChange(3, 3, "c", BASE, "STARTED"))
    assert table.dropped == 0
    table.observe(ObservedChange(4, 4, "c", BASE, "STARTED"))
    assert table.dropped == 1 and [c.offset for c in table.pending()] == [3, 4]
