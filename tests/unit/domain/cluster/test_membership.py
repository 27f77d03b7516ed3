"""The cluster's workers from their group: each member's advertised URL and the leader from the group
protocol's bytes, each worker's version from its GET /."""

from __future__ import annotations

import asyncio

from control_plane.codecs.worker_plugins import InstalledOnWorker
from control_plane.domain.cluster.membership import ClusterMembership
from control_plane.rest.entities.about import membership_json
from control_plane.storage.consumer_groups import GroupDescription, GroupMember
from tests.support.fakes import FakeWorkerGroup, FakeWorkers, member


def membership(
    group: FakeWorkerGroup, workers: FakeWorkers, now: list[float], plugins: dict[str, InstalledOnWorker] | None = None
) -> ClusterMembership:
    return ClusterMembership(
        group,
        workers,
        "connect-cluster",
        version_timeout_s=1.0,
        clock=lambda: now[0],
        plugins=(lambda: plugins) if plugins is not None else None,
    )


async def test_every_member_with_its_url_version_and_the_leader() -> None:
    group = FakeWorkerGroup(
        member("m2", "http://w2:8083/", "m1", "http://w1:8083/", (("c", 0), ("c", 1))),
        member("m1", "http://w1:8083/", "m1", "http://w1:8083/"),
    )
    workers = FakeWorkers("3.4.1")
    workers.answers[("GET", "/")] = (200, b'{"version":"3.4.1","commit":"x"}')
    # w1's plugins reported by a sidecar in front of it; none in front of w2
    installed = InstalledOnWorker(
        "w1:8083", "3.4.1", {"source": {"a.Source": ("1.0", "2.0")}, "converter": {"a.C": (None,)}}
    )
    read = await membership(group, workers, [100.0], {"w1:8083": installed}).read()
    assert membership_json(read) == {
        "group": "connect-cluster",
        "state": "Stable",
        "protocol": "sessioned",
        "leader_url": "http://w1:8083",
        "workers": [
            {
                "id": "m1",
                "url": "http://w1:8083",
                "host": "127.0.0.1",
                "version": "3.4.1",
                "leader": True,
                "config_offset": 7,
                "plugins": {"source": {"a.Source": ["1.0", "2.0"]}, "converter": {"a.C": [None]}},
            },
            {
                "id": "m2",
                "url": "http://w2:8083",
                "host": "127.0.0.1",
                "version": "3.4.1",
                "leader": False,
                "config_offset": 7,
                "plugins": None,  # unknown: no sidecar in front of it
            },
        ],
        "read_at": 100.0,
        "error": None,
        "sidecar": None,  # no sidecars' topic: no fences, no other sidecars known
        "fences": [],
        "sidecars": [],
        "least_write_wait_ms": None,
    }
    assert sorted(worker for worker, _ in workers.sent_to) == ["http://w1:8083", "http://w2:8083"]


async def test_read_again_only_after_the_refresh_interval_and_a_worker_that_left_is_gone() -> None:
    group = FakeWorkerGroup(member("m1", "http://w1:8083/", "m1", "http://w1:8083/"))
    now = [100.0]
    members = membership(group, FakeWorkers(), now)
    assert [w.url for w in (await members.read()).workers] == ["http://w1:8083"]
    group.description = FakeWorkerGroup(member("m2", "http://w2:8083/", "m2", "http://w2:8083/")).description
    assert [w.url for w in (await members.read()).workers] == ["http://w1:8083"]  # within the interval
    now[0] += 1.0
    read = await members.read()
    assert [w.url for w in read.workers] == ["http://w2:8083"] and read.workers[0].version is None  # no answer


async def test_a_group_that_cannot_be_read_says_why() -> None:
    group = FakeWorkerGroup()
    group.failing = "CoordinatorNotAvailableError"
    read = await membership(group, FakeWorkers(), [1.0]).read()
    assert read.workers == () and read.error is not None and "CoordinatorNotAvailableError" in read.error


async def test_the_live_workers_the_capabilities_read() -> None:
    group = FakeWorkerGroup(
        member("m1", "http://w1:8083/", "m1", "http://w1:8083/"),
        GroupMember("m2", "connect-2", "/127.0.0.1", b"\x00", b""),  # bytes that are not Connect's: no URL
    )
    workers = FakeWorkers()
    workers.answers[("GET", "/")] = (200, b'{"version":"3.4.1"}')
    members = membership(group, workers, [1.0])
    live = await members.live_workers(1.0)
    assert (live.group, dict(live.versions), live.error) == (
        "connect-cluster",
        {"http://w1:8083": "3.4.1", "m2": None},  # a member without a URL: named by its id, its version unknown
        None,
    )
    group.failing = "CoordinatorNotAvailableError"
    unread = await membership(group, workers, [1.0]).live_workers(1.0)
    assert (unread.group, dict(unread.versions)) == ("connect-cluster", {})
    assert unread.error is not None and "CoordinatorNotAvailableError" in unread.error


async def test_a_group_not_read_in_time_is_one_that_could_not_be_read() -> None:
    class SlowGroup(FakeWorkerGroup):
        async def describe(self, group: str) -> GroupDescription:
            await asyncio.sleep(5)
            return await super().describe(group)

    live = await membership(SlowGroup(), FakeWorkers(), [1.0]).live_workers(0.05)
    assert (live.group, dict(live.versions), live.error) == (
        "connect-cluster",
        {},
        "DescribeGroups not answered within 0.05 s",
    )


async def test_a_read_going_on_past_its_bound_is_ended_at_stop() -> None:
    """The read goes on after its caller's bound (the next caller shares it); at shutdown it is ended, so
    that its Kafka client is closed (left to the loop's end, its connections stay open)."""
    ended = asyncio.Event()

    class HangingGroup(FakeWorkerGroup):
        async def describe(self, group: str) -> GroupDescription:
            try:
                await asyncio.Event().wait()
            finally:
                ended.set()  # where the real client closes
            raise AssertionError("not reached")

    members = membership(HangingGroup(), FakeWorkers(), [1.0])
    assert (await members.live_workers(0.05)).error == "DescribeGroups not answered within 0.05 s"
    assert not ended.is_set()  # still going on
    await members.stop()
    assert ended.is_set()
    await members.stop()  # nothing left: a no-op
