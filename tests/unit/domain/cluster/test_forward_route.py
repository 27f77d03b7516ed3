"""Where a create goes (domain/cluster/forward_route.py): to the leader itself while it predates KIP-980's
``initial_state`` and another worker has it (a newer follower would forward the create with the field, which
the leader refuses); anywhere else to the workers as any request."""

from __future__ import annotations

import orjson

from control_plane.domain.cluster.forward_route import ForwardRoute, older_leader, straddles
from control_plane.domain.cluster.membership import ClusterWorker, Membership
from control_plane.upstream import UpstreamRequest
from tests.support.fakes import FakeWorkers

CREATE = UpstreamRequest("POST", "/connectors", body=orjson.dumps({"name": "c", "config": {}}))


def group(*workers: tuple[str, str | None, bool]) -> Membership:
    members = tuple(ClusterWorker(f"m-{url}", url, "h", 0, leader, version) for url, version, leader in workers)
    return Membership("connect-cluster", "Stable", "sessioned", None, members, 0.0)


def test_a_leader_older_than_initial_state_with_a_newer_worker_takes_the_creates() -> None:
    mixed = group(("http://old:8083", "3.4.1", True), ("http://new:8083", "4.3.1", False))
    assert older_leader(mixed) == "http://old:8083"


def test_otherwise_no_worker_is_singled_out() -> None:
    assert older_leader(group(("http://new:8083", "4.3.1", True), ("http://old:8083", "3.4.1", False))) is None
    assert older_leader(group(("http://a:8083", "3.4.1", True), ("http://b:8083", "3.4.1", False))) is None
    assert older_leader(group(("http://a:8083", None, True), ("http://b:8083", "4.3.1", False))) is None
    assert older_leader(group(("http://a:8083", "3.7.0", True), ("http://b:8083", "4.3.1", False))) is None
    assert older_leader(group()) is None


async def test_a_create_goes_to_the_older_leader_and_every_other_request_to_the_workers() -> None:
    workers = FakeWorkers("4.3.1")
    workers.answers[("POST", "/connectors")] = (201, b'{"name":"c"}')
    mixed = group(("http://old:8083", "3.4.1", True), ("http://new:8083", "4.3.1", False))

    async def read(timeout_s: float) -> Membership | None:
        return mixed

    route = ForwardRoute(workers, read, lambda: {"http://old:8083": "3.4.1", "http://new:8083": "4.3.1"})
    assert (await route.send(CREATE)).status == 201
    assert [(w, r.method) for w, r in workers.sent_to] == [("http://old:8083", "POST")]
    await route.send(UpstreamRequest("PUT", "/connectors/c/config", body=b"{}"))
    assert [r.method for r in workers.forwarded] == ["PUT"]
    await ForwardRoute(workers, None).send(CREATE)  # the group not known: as any request
    uniform = ForwardRoute(workers, read, lambda: {"http://a:8083": "3.4.1", "http://b:8083": "3.4.1"})
    await uniform.send(CREATE)  # every worker on one side of initial_state: the group is not even read
    assert [r.method for r in workers.forwarded] == ["PUT", "POST", "POST"]


def test_the_workers_straddle_initial_state_when_some_have_it_and_some_do_not() -> None:
    assert straddles({"a": "3.4.1", "b": "4.3.1"}) and straddles({"a": "3.6.2", "b": "3.7.0", "c": None})
    assert not straddles({"a": "3.4.1", "b": "2.8.2"}) and not straddles({"a": "4.3.1"}) and not straddles({})
