"""Version pins (KIP-891) with a sidecar in front of each worker: every worker's installed plugins through
the sidecars' topic, a pin checked against every worker that can run the connector (the same answer through
every sidecar), statuses with the version of the worker that runs each task, and the pins a worker's changed
plugins no longer hold."""

from __future__ import annotations

import pytest

from control_plane.codecs import Malformed, UnknownKey
from control_plane.codecs.presence import SidecarPresence, decode_presence, encode_presence
from control_plane.codecs.worker_plugins import InstalledOnWorker, decode_installed, encode_installed
from control_plane.domain.cluster.presence import Presence
from control_plane.domain.config_checks import CheckResult, ConfigSubject, RequestKind
from control_plane.domain.plugins import PinHealth
from control_plane.rules.worker_id import advertised_worker_id, worker_id_of
from control_plane.view import ConnectorStateView, StateEntry
from control_plane.view.installed import InstalledTable
from control_plane.view.sidecars import SidecarTable
from tests.support.fakes import FakeSidecarsTopic, SidecarsOfWorkers

CONNECTOR = "org.example.versioned.VersionedSourceConnector"
CONVERTER = "org.example.versioned.VersionedConverter"
Plugins = dict[str, dict[str, list[str | None]]]
ALL: Plugins = {"source": {CONNECTOR: ["1.0.0", "1.1.0", "2.0.0"]}, "converter": {CONVERTER: [None]}}
OLDER: Plugins = {"source": {CONNECTOR: ["1.0.0", "1.1.0"]}, "converter": {CONVERTER: [None]}}
UPGRADED: Plugins = {"source": {CONNECTOR: ["1.0.0", "1.1.0", "2.0.0", "3.0.0"]}, "converter": {CONVERTER: [None]}}


def subject(pin: str, kind: RequestKind = RequestKind.CREATE) -> ConfigSubject:
    return ConfigSubject(kind, "c", {"name": "c", "connector.class": CONNECTOR, "connector.plugin.version": pin})


def shown(result: CheckResult) -> list[tuple[str, bool, str]]:
    return [(p.key, p.connect_rule, p.message) for p in result.problems]


async def cluster(*workers: tuple[str, str, Plugins]) -> SidecarsOfWorkers:
    """Workers (id, version, plugins), each with a sidecar in front of it that reported its plugins."""
    sidecars = SidecarsOfWorkers()
    for worker, version, plugins in workers:
        await sidecars.add(worker, version, plugins)
        await sidecars.report(worker)
    return sidecars


# -- the records and the workers' ids -------------------------------------------------------------------


def test_installed_plugins_round_trip_and_their_digest_ignores_the_listing_order() -> None:
    record = InstalledOnWorker(
        "10.0.0.7:8084", "3.4.1", {"source": {"a.S": ("1.0", "2.0")}, "converter": {"a.C": (None,)}}
    )
    assert decode_installed(*encode_installed(record)) == record
    reordered = InstalledOnWorker("x:1", "3.4.1", {"converter": {"a.C": (None,)}, "source": {"a.S": ("1.0", "2.0")}})
    assert reordered.digest == record.digest
    assert InstalledOnWorker("x:1", "3.5.0", record.plugins).digest != record.digest  # the version counts
    assert isinstance(decode_installed(b"plugins-w:1", b'{"plugins": {"source": {"a": [1]}}}'), Malformed)
    assert isinstance(decode_installed(b"sidecar-a", b"{}"), UnknownKey)
    presence = SidecarPresence("a", None, "1", 5000, {}, {}, {"10.0.0.7:8084": record.digest})
    assert decode_presence(*encode_presence(presence)) == presence


@pytest.mark.parametrize(
    ("properties", "expected"),
    [
        pytest.param(  # the Kubernetes sidecar layout: the pod's address, the sidecar's port
            {
                "listeners": "http://127.0.0.1:8083",
                "rest.advertised.listener": "http",
                "rest.advertised.port": "8084",
                "rest.advertised.host.name": "10.0.0.7",
            },
            "10.0.0.7:8084",
            id="advertised",
        ),
        pytest.param({"listeners": "http://connect-0:8083"}, "connect-0:8083", id="listener"),
        pytest.param({"listeners": "http://0.0.0.0:8083"}, "0.0.0.0:8083", id="wildcard-as-written"),
        pytest.param({"listeners": "https://a:8443,http://b:8083"}, "b:8083", id="http-first-when-not-told"),
        pytest.param({"listeners": "http://:8083"}, None, id="no-host-only-the-worker-knows"),
        pytest.param({}, None, id="default-listener"),
    ],
)
def test_the_id_a_worker_advertises_as_restserver_builds_it(properties: dict[str, str], expected: str | None) -> None:
    assert advertised_worker_id(properties) == expected


def test_a_workers_id_from_its_url() -> None:
    assert worker_id_of("http://10.0.0.7:8083/") == "10.0.0.7:8083"
    assert worker_id_of("https://connect") == "connect:443"


# -- who is known ------------------------------------------------------------------------------------


async def test_a_worker_is_known_while_a_live_sidecar_vouches_for_its_plugins() -> None:
    sidecars = await cluster(("w1:8083", "3.4.1", ALL), ("w2:8083", "3.4.1", OLDER))
    one = sidecars.sidecar("w1:8083")
    await one.catalog.load()
    known = one.workers.known()
    assert {w: (k.version, k.reported_by) for w, k in known.items()} == {
        "w1:8083": ("3.4.1", None),  # its own, from its catalog
        "w2:8083": ("3.4.1", "sidecar-of-w2:8083"),
    }
    assert one.workers.known()["w2:8083"] is known["w2:8083"]  # nothing changed: the same objects
    sidecars.now_ms += 3 * 5000  # w2's sidecar silent for three intervals
    assert set(one.workers.known()) == {"w1:8083"}
    assert one.workers.newest_connector("w2:8083", CONNECTOR) is None  # unknown: never guessed


async def test_a_presence_that_names_another_digest_than_the_record_read_vouches_for_nothing() -> None:
    sidecars = await cluster(("w1:8083", "3.4.1", ALL))
    table, installed = SidecarTable(), InstalledTable()
    installed.apply(InstalledOnWorker("w2:8083", "3.4.1", {"source": {CONNECTOR: ("1.0.0",)}}))
    table.apply(SidecarPresence("s2", None, "1", 5000, {}, {}, {"w2:8083": "another"}), sidecars.now_ms)
    sidecars.table, sidecars.installed = table, installed
    one = sidecars.sidecar("w1:8083")
    await one.catalog.load()
    assert set(one.workers.known()) == {"w1:8083"}


async def test_presence_writes_the_installed_plugins_only_when_they_change() -> None:
    sidecars = await cluster(("w1:8083", "3.4.1", ALL))
    one = sidecars.sidecar("w1:8083")
    await one.catalog.load()
    topic = FakeSidecarsTopic(lambda: 0)
    presence = Presence(
        topic,
        SidecarTable(),
        sidecar="s1",
        url=None,
        version="1",
        interval_s=5,
        workers=dict,
        view_lag=dict,
        stop_timeout_s=1,
        installed=one.workers.own,
    )
    for _ in range(3):
        await presence.write()
    keys = [key.decode().split("-", 1)[0] for key, _, _ in topic.records]
    assert keys == ["plugins", "sidecar", "sidecar", "sidecar"]
    digest = one.workers.own().digest  # type: ignore[union-attr]
    assert decode_presence(*topic.records[-1][:2]).plugins == {"w1:8083": digest}  # type: ignore[union-attr]
    sidecars.workers["w1:8083"][0].answers[("GET", "/connector-plugins")] = (
        200,
        b'[{"class": "%s", "type": "source", "version": "3.0.0"}]' % CONNECTOR.encode(),
    )
    await one.catalog.load()
    await presence.write()
    assert [key.decode().split("-", 1)[0] for key, _, _ in topic.records[-2:]] == ["plugins", "sidecar"]


# -- the check, the same through every sidecar --------------------------------------------------------


async def test_a_pin_missing_on_one_worker_is_refused_the_same_through_each_sidecar() -> None:
    sidecars = await cluster(("w1:8083", "3.4.1", ALL), ("w2:8083", "3.4.1", OLDER))
    one, two = sidecars.sidecar("w1:8083"), sidecars.sidecar("w2:8083")
    holding = [await s.check(subject("[2.0,)")) for s in (one, two)]
    assert shown(holding[0]) == shown(holding[1]) != []
    ((key, connect_rule, message),) = shown(holding[0])
    assert (key, connect_rule) == ("connector.plugin.version", False)  # the sidecar's own: config_checks=warn lets it
    assert "on w2:8083 (Connect 3.4.1): no installed version is inside the range (available versions: " in message
    assert "runs 1.1.0, the worker ignores the pin" in message
    # nowhere inside the range: Connect's own refusal, on both keys, through either
    nowhere = [await s.check(subject("[5.0,)")) for s in (one, two)]
    assert shown(nowhere[0]) == shown(nowhere[1])
    assert [(k, rule) for k, rule, _ in shown(nowhere[0])] == [
        ("connector.class", True),
        ("connector.plugin.version", True),
    ]
    # each worker's newest inside the range: goes through either
    assert [(await s.check(subject("[1.1,)"))).problems for s in (one, two)] == [(), ()]


async def test_one_worker_behaves_as_before_and_unknown_workers_are_named_in_a_warning() -> None:
    sidecars = await cluster(("w1:8083", "3.4.1", ALL))
    sidecars.members = ["w1:8083", "w9:8083"]  # w9 has no sidecar in front of it
    one = sidecars.sidecar("w1:8083")
    older = await one.check(subject("1.0.0"))
    ((_, connect_rule, message),) = shown(older)
    assert not connect_rule and "Connect 3.4.1 always loads the newest installed version, 2.0.0" in message
    assert older.warnings == (
        "the installed plugins of worker(s) w9:8083 are unknown (no live sidecar in front of them reports them): "
        "version pins are checked against w1:8083 only",
    )
    assert (await one.check(subject("[2.0,)"))).problems == ()
    sidecars.members = None  # the group cannot be read: every worker known, no warning
    assert (await one.check(subject("[2.0,)"))).warnings == ()


async def test_in_a_mixed_cluster_the_4_1_worker_loads_the_pin_and_the_older_one_does_not() -> None:
    sidecars = await cluster(("w1:8083", "3.4.1", ALL), ("w2:8083", "4.3.1", ALL))
    one, two = sidecars.sidecar("w1:8083"), sidecars.sidecar("w2:8083")
    results = [await s.check(subject("[1.0,2.0)")) for s in (one, two)]
    assert shown(results[0]) == shown(results[1])
    ((_, _, message),) = shown(results[0])
    assert "on w1:8083 (Connect 3.4.1): only 1.1.0 is inside the range, but the worker always loads" in message
    assert "w2:8083" not in message.split("does not hold")[1]  # 4.3.1 loads 1.1.0 itself


async def test_native_the_worker_a_request_reaches_refuses_what_it_lacks_and_the_other_sidecar_names_it() -> None:
    sidecars = await cluster(("w1:8083", "4.3.1", ALL), ("w2:8083", "4.3.1", OLDER))
    one, two = sidecars.sidecar("w1:8083"), sidecars.sidecar("w2:8083")
    via_one, via_two = await one.check(subject("2.0.0")), await two.check(subject("2.0.0"))
    ((key, connect_rule, message),) = shown(via_one)  # w1 has 2.0.0: the sidecar's own problem names w2
    assert (key, connect_rule, via_one.hidden_from_worker) == ("connector.plugin.version", False, frozenset())
    assert "on w2:8083 (Connect 4.3.1): no installed version is inside the range" in message
    assert "a connector or task assigned there fails" in message
    # w2 itself refuses it (Connect validates where the request arrives): its answer, the pin hidden from it
    assert [(k, rule) for k, rule, _ in shown(via_two)] == [
        ("connector.class", True),
        ("connector.plugin.version", True),
    ]
    assert via_two.hidden_from_worker == {"connector.plugin.version"}  # 4.3.1 would answer a 500 from the second time


# -- statuses and the pins that stop holding -----------------------------------------------------------


async def test_each_task_shows_the_version_of_the_worker_that_runs_it() -> None:
    sidecars = await cluster(("w1:8083", "3.4.1", ALL), ("w2:8083", "3.4.1", OLDER))
    one = sidecars.sidecar("w1:8083")
    await one.catalog.load()
    state = ConnectorStateView(
        "c",
        StateEntry("RUNNING", "w2:8083", None, None, 1),
        (
            (0, StateEntry("RUNNING", "w1:8083", None, None, 1)),
            (1, StateEntry("RUNNING", "w2:8083", None, None, 1)),
            (2, StateEntry("RUNNING", "w9:8083", None, None, 1)),
        ),
        "source",
    )
    versioned = one.with_versions(state, {"connector.class": "VersionedSource"})
    assert versioned.connector.version == "1.1.0"
    assert [entry.version for _, entry in versioned.tasks] == ["2.0.0", "1.1.0", None]


async def test_pins_a_plugin_upgrade_breaks_are_reported_checked_not_enforced() -> None:
    sidecars = await cluster(("w1:8083", "3.4.1", ALL), ("w2:8083", "3.4.1", ALL))
    one = sidecars.sidecar("w1:8083")
    await one.catalog.load()
    configs = {
        "kept": {"connector.class": CONNECTOR, "connector.plugin.version": "[2.0,3.0)"},
        "free": {"connector.class": CONNECTOR},
    }
    health = PinHealth(one, lambda: configs)
    assert health.counts() == {}
    await sidecars.report("w2:8083", UPGRADED)  # 3.0.0 installed on w2: it now runs 3.0.0
    assert health.counts() == {("older_only", "checked, not enforced by the worker"): 1}
    report = await health.report()
    (found,) = report.not_holding
    assert (found.connector, found.pin.worker, found.pin.runs) == ("kept", "w2:8083", "3.0.0")
    assert report.pins == 1 and report.unknown == ()
    assert [enforcement for _, enforcement in report.checked] == ["checked, not enforced by the worker"] * 2
