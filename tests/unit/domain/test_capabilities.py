"""Which features the worker has natively, decided from its version (``GET /``) or forced by setting;
shown at /_sidecar/capabilities, and /readyz waits for the first answer."""

from __future__ import annotations

from collections.abc import Mapping

import httpx
import pytest
import respx

from control_plane.domain.capabilities import FEATURES, Capabilities, Feature, Mode, Version, decide
from control_plane.domain.cluster.versions import LiveWorkers, deciding_versions
from control_plane.rest.entities.about import decided_json, decision_json
from control_plane.settings import FeatureMode, load_settings
from tests.support.fakes import FakeWorkers
from tests.support.ports import free_port
from tests.support.waiting import eventually

W1 = "http://w1:8083"
W2 = "http://w2:8083"
ALL = {f.feature.value for f in FEATURES}
KIP875 = {"topic_tracking", "stop_and_offsets_read", "offsets_alter_reset"}  # and topic tracking
NEWER_THAN_34 = {"initial_state", "logger_cluster_scope", "patch_config", "health", "order_in_group"}
NEWER_THAN_43 = {"validate_unresolved"}  # 4.4


def root(version: str) -> httpx.Response:
    return httpx.Response(200, json={"version": version, "commit": "abc", "kafka_cluster_id": "k"})


def native(version: str | None, modes: Mapping[Feature, FeatureMode] | None = None) -> set[str]:
    parsed = Version.parse(version) if version else None
    return {feature.value for feature, d in decide(parsed, modes or {}).items() if d.native}


# -- Version


@pytest.mark.parametrize(
    ("text", "parts", "shown"),
    [
        pytest.param("4.3.1", (4, 3, 1), "4.3.1", id="release"),
        pytest.param("3.7.0-SNAPSHOT", (3, 7, 0), "3.7.0-SNAPSHOT", id="snapshot"),
        pytest.param("7.6.0-ccs", (3, 6, 0), "7.6.0-ccs", id="confluent-ccs"),
        pytest.param("3.6", (3, 6, 0), "3.6", id="no-patch"),
        pytest.param("4", (4, 0, 0), "4", id="major-only"),
        pytest.param(" 3.5.1 ", (3, 5, 1), "3.5.1", id="white-space"),
        pytest.param("3.10.0", (3, 10, 0), "3.10.0", id="two-digit-minor"),
    ],
)
def test_version_parse(text: str, parts: tuple[int, int, int], shown: str) -> None:
    version = Version.parse(text)
    assert version is not None
    assert version.parts == parts
    assert str(version) == shown


@pytest.mark.parametrize("text", ["", "unknown", "v3.6.0", "-1"])
def test_version_parse_without_a_release(text: str) -> None:
    assert Version.parse(text) is None


def test_versions_compare_by_release_only() -> None:
    parse = Version.parse
    assert parse("3.7.0-SNAPSHOT") == parse("3.7.0")
    assert parse("3.10.0") > parse("3.9.1")  # type: ignore[operator]
    assert parse("4.0.0") > parse("3.9.9")  # type: ignore[operator]
    assert min(parse(v) for v in ("4.3.1", "3.4.1", "3.6.0")) == parse("3.4.1")  # type: ignore[type-var]


# -- decide
NEWER_REST = {"restart_options", "plugin_listing"}  # KIP-745 (3.0), KIP-769 (3.2)


@pytest.mark.parametrize(
    ("version", "expected_native"),
    [
        pytest.param("2.4.1", set(), id="2.4.1"),
        pytest.param("2.5.0", {"topic_tracking"}, id="2.5.0"),
        pytest.param("2.8.2", {"topic_tracking"}, id="2.8.2"),
        pytest.param("3.0.2", {"topic_tracking", "restart_options"}, id="3.0.2"),
        pytest.param("3.4.1", {"topic_tracking", *NEWER_REST}, id="3.4.1"),
        pytest.param("3.5.0", {"topic_tracking", "stop_and_offsets_read", *NEWER_REST}, id="3.5.0"),
        pytest.param("3.6.0", {*KIP875, *NEWER_REST}, id="3.6.0"),
        pytest.param("3.7.0-SNAPSHOT", {*KIP875, *NEWER_REST, "initial_state", "logger_cluster_scope"}, id="3.7.0"),
        pytest.param("4.0.0", {*KIP875, *NEWER_REST, *NEWER_THAN_34, "logger_levels"} - {"order_in_group"}, id="4.0.0"),
        pytest.param(
            "4.1.0", ALL - {"status_store_retries", "topic_creation", "order_in_group", *NEWER_THAN_43}, id="4.1.0"
        ),
        pytest.param("4.3.1", ALL - {"status_store_retries", "topic_creation", *NEWER_THAN_43}, id="4.3.1"),
    ],
)
def test_decide_from_the_version(version: str, expected_native: set[str]) -> None:
    assert native(version) == expected_native


def test_decide_reasons() -> None:
    decisions = decide(Version.parse("3.4.1"), {})
    assert set(decisions) == ALL
    assert decisions[Feature.STOP_AND_OFFSETS_READ].reason == "worker 3.4.1 < 3.5.0"
    assert decisions[Feature.TOPIC_TRACKING].reason == "worker 3.4.1 >= 2.5.0"
    assert decisions[Feature.STATUS_STORE_RETRIES].reason == "no Connect release has it"
    shown = decision_json(decisions[Feature.STOP_AND_OFFSETS_READ])
    assert shown == {
        "mode": "emulated",
        "spec": "KIP-875",
        "native_since": "3.5.0",
        "reason": "worker 3.4.1 < 3.5.0",
        "summary": decisions[Feature.STOP_AND_OFFSETS_READ].spec.summary,
        "emulation": decisions[Feature.STOP_AND_OFFSETS_READ].spec.emulation,
    }


def test_topic_creation_checks_are_the_sidecars_own_on_every_version() -> None:
    for version in (None, "2.4.1", "3.4.1", "4.3.1"):
        decision = decide(Version.parse(version) if version else None, {})[Feature.TOPIC_CREATION]
        assert decision.mode is Mode.EMULATED
        assert decision.reason == "the sidecar's own on every version; no worker does it"
        assert "preview" in (decision.spec.emulation or "")


def test_decide_without_a_version_emulates_everything() -> None:
    decisions = decide(None, {})
    assert not any(d.native for d in decisions.values())
    assert decisions[Feature.TOPIC_TRACKING].reason == "worker version unknown (no worker answered yet)"


@pytest.mark.parametrize(
    ("version", "modes", "expected_native"),
    [
        pytest.param(
            "3.4.1",
            {Feature.STOP_AND_OFFSETS_READ: FeatureMode.NATIVE},
            {"topic_tracking", "stop_and_offsets_read", *NEWER_REST},
            id="force-native-on-old",
        ),
        pytest.param(
            "4.3.1",
            {Feature.TOPIC_TRACKING: FeatureMode.EMULATED, Feature.PLUGIN_VERSIONS: FeatureMode.EMULATED},
            {"stop_and_offsets_read", "offsets_alter_reset", *NEWER_THAN_34, *NEWER_REST, "logger_levels"},
            id="force-emulated-on-new",
        ),
        pytest.param(
            "4.3.1",
            {Feature.STATUS_STORE_RETRIES: FeatureMode.NATIVE},
            ALL - {"topic_creation", *NEWER_THAN_43},
            id="force-native-where-no-release-has-it",
        ),
        pytest.param(
            "2.4.1", {Feature.TOPIC_CREATION: FeatureMode.NATIVE}, {"topic_creation"}, id="force-native-own-checks-off"
        ),
        pytest.param(
            None, {Feature.TOPIC_TRACKING: FeatureMode.NATIVE}, {"topic_tracking"}, id="force-native-no-version"
        ),
        pytest.param(
            "3.4.1",
            {Feature.TOPIC_TRACKING: FeatureMode.AUTO},
            {"topic_tracking", *NEWER_REST},
            id="auto",
        ),
    ],
)
def test_forced_modes(version: str | None, modes: dict[Feature, FeatureMode], expected_native: set[str]) -> None:
    assert native(version, modes) == expected_native
    decisions = decide(Version.parse(version) if version else None, modes)
    for name, mode in modes.items():
        if mode is not FeatureMode.AUTO:
            # a feature the sidecar does not emulate says so after the setting
            assert decisions[name].reason.startswith(f"forced {mode.value} by setting")


@pytest.mark.parametrize(
    ("confluent", "kafka"),
    [pytest.param("7.6.0-ccs", "3.6.0", id="7.6.0-ccs"), pytest.param("7.4.1-ce", "3.4.1", id="7.4.1-ce")],
)
def test_decide_for_a_confluent_platform_worker_as_for_its_kafka(confluent: str, kafka: str) -> None:
    assert native(confluent) == native(kafka)


# -- through the app


async def test_capabilities_endpoint_after_detection(router: respx.MockRouter, serve) -> None:
    async with serve(version="3.4.1") as running:
        assert await running.runtime.herder.capabilities.wait_detected(1.0)
        response = await running.client.get("/_sidecar/capabilities")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["worker_version"] == "3.4.1"
    assert body["worker_versions"] == {W1: "3.4.1", W2: "3.4.1"}
    assert (body["group"], body["unknown"]) == (None, None)  # no Kafka settings: the given workers alone decide
    assert isinstance(body["detected_at"], float)
    modes = {name: f["mode"] for name, f in body["features"].items()}
    assert modes == {
        "topic_tracking": "native",
        "topic_creation": "emulated",  # the sidecar's own checks and preview, on every version
        "stop_and_offsets_read": "emulated",
        "offsets_alter_reset": "emulated",
        "plugin_versions": "emulated",  # pins checked against the installed versions (KIP-891)
        "status_store_retries": "emulated",
        **dict.fromkeys(sorted(NEWER_THAN_34), "emulated"),
        "restart_options": "native",
        "plugin_listing": "native",
        "logger_levels": "emulated",
        "validate_unresolved": "emulated",
    }


async def test_capabilities_follow_the_oldest_worker(router: respx.MockRouter, serve) -> None:
    versions = {"w1": "3.6.0", "w2": "3.5.0"}
    router["root"].mock(side_effect=lambda request: root(versions[request.url.host]))
    async with serve() as running:
        assert await running.runtime.herder.capabilities.wait_detected(1.0)
        body = (await running.client.get("/_sidecar/capabilities")).json()
    assert body["worker_version"] == "3.5.0"
    assert body["worker_versions"] == {W1: "3.6.0", W2: "3.5.0"}
    assert body["features"]["stop_and_offsets_read"]["mode"] == "native"
    assert body["features"]["offsets_alter_reset"]["mode"] == "emulated"


@pytest.mark.parametrize(
    ("advertised", "shown"),
    [pytest.param("worker", "3.5.0", id="the-workers-own"), pytest.param("effective", "4.4.0", id="effective")],
)
async def test_get_root_shows_the_version_of_the_oldest_worker_whichever_answers(
    router: respx.MockRouter, serve, advertised: str, shown: str
) -> None:
    versions = {"w1": "3.6.0", "w2": "3.5.0"}
    router["root"].mock(side_effect=lambda request: root(versions[request.url.host]))
    settings = load_settings(connect_urls=f"{W1},{W2}", advertised_version=advertised)
    async with serve(settings=settings) as running:
        assert await running.runtime.herder.capabilities.wait_detected(1.0)
        answer = (await running.client.get("/")).json()
        capabilities = (await running.client.get("/_sidecar/capabilities")).json()
    assert answer == {"version": shown, "commit": "abc", "kafka_cluster_id": "k"}  # w1's answer, but for its version
    assert capabilities["advertised_version"] == shown


async def test_capabilities_from_the_workers_that_answer(router: respx.MockRouter, serve) -> None:
    router["root"].mock(
        side_effect=lambda request: root("4.3.1") if request.url.host == "w2" else httpx.Response(503, text="starting")
    )
    async with serve() as running:
        assert await running.runtime.herder.capabilities.refresh()
        body = (await running.client.get("/_sidecar/capabilities")).json()
    assert body["worker_version"] == "4.3.1"
    assert body["worker_versions"] == {W2: "4.3.1"}


async def test_the_workers_group_decides_too_once_its_kafka_is_known(router: respx.MockRouter, serve) -> None:
    settings = load_settings(connect_urls=W1, bootstrap_servers=f"127.0.0.1:{free_port()}")  # nothing listens
    async with serve(version="4.3.1", settings=settings) as running:
        assert await running.runtime.herder.capabilities.refresh()
        body = (await running.client.get("/_sidecar/capabilities")).json()
    assert (body["worker_version"], body["worker_versions"], body["group"]) == (
        "4.3.1",
        {W1: "4.3.1"},
        "connect-cluster",
    )
    assert body["unknown"].startswith("the live workers of group connect-cluster are unknown (")
    assert body["unknown"].endswith("): 4.3.1 decided by the versions known")


async def test_forced_mode_shows_in_the_endpoint(router: respx.MockRouter, serve) -> None:
    settings = load_settings(
        connect_urls=f"{W1},{W2}", feature_plugin_versions="native", feature_topic_tracking="emulated"
    )
    async with serve(version="3.4.1", settings=settings) as running:
        assert await running.runtime.herder.capabilities.wait_detected(1.0)
        features = (await running.client.get("/_sidecar/capabilities")).json()["features"]
    assert features["plugin_versions"]["mode"] == "native"
    assert features["plugin_versions"]["reason"] == "forced native by setting"
    assert features["topic_tracking"]["mode"] == "emulated"
    assert features["topic_tracking"]["reason"] == "forced emulated by setting"


@pytest.mark.parametrize(
    "first_answer",
    [
        pytest.param(httpx.ConnectError, id="refused"),
        pytest.param(httpx.Response(503, text="starting"), id="not-200"),
        pytest.param(httpx.Response(200, text="<html>"), id="not-json"),
        pytest.param(httpx.Response(200, json={"commit": "abc"}), id="no-version"),
        pytest.param(httpx.Response(200, json={"version": "unknown"}), id="unparsable-version"),
        pytest.param(httpx.Response(200, json=["3.6.0"]), id="json-list"),
    ],
)
async def test_readyz_503_until_a_worker_answered(router: respx.MockRouter, serve, first_answer: object) -> None:
    up = False

    def answer(request: httpx.Request) -> httpx.Response:
        if up:
            return root("3.6.0")
        if isinstance(first_answer, type):
            raise first_answer("Connection refused", request=request)
        return first_answer  # type: ignore[return-value]

    router["root"].mock(side_effect=answer)
    async with serve() as running:
        detector = running.runtime.herder.capabilities
        assert not await detector.refresh()  # both workers: no usable answer
        response = await running.client.get("/readyz")
        assert response.status_code == 503
        assert response.json() == {"ready": False, "checks": {"worker_version_detected": False}}
        capabilities = (await running.client.get("/_sidecar/capabilities")).json()
        assert capabilities["worker_version"] is None
        modes = {name: f["mode"] for name, f in capabilities["features"].items()}
        # nothing is native before a worker answered; what the sidecar does not emulate is unavailable
        assert modes == dict.fromkeys(ALL, "emulated")

        up = True
        assert await detector.refresh()
        response = await running.client.get("/readyz")
        assert response.status_code == 200
        assert response.json() == {"ready": True, "checks": {"worker_version_detected": True}}
        assert (await running.client.get("/_sidecar/capabilities")).json()["worker_version"] == "3.6.0"


async def test_readyz_through_the_background_detector(router: respx.MockRouter, serve) -> None:
    async with serve(version="4.3.1") as running:
        assert await running.runtime.herder.capabilities.wait_detected(1.0)
        response = await running.client.get("/readyz")
    assert response.status_code == 200


def test_topic_tracking_is_the_sidecars_only_where_the_view_serves_it() -> None:
    served = decide(Version.parse("3.4.1"), {}, view_answers=True)[Feature.TOPIC_TRACKING]
    assert (served.mode.value, served.reason) == ("emulated", "served by the sidecar from the view on every version")
    assert decide(Version.parse("3.4.1"), {}, view_answers=False)[Feature.TOPIC_TRACKING].mode.value == "native"


async def test_capabilities_describe_the_write_path_to_kafka(router: respx.MockRouter, serve) -> None:
    settings = load_settings(
        connect_urls=f"{W1},{W2}",
        bootstrap_servers=f"127.0.0.1:{free_port()}",  # nothing listens there: nothing is written
        status_storage_topic="connect-status",
        audit_topic="audit",
        status_storage_retry_max_retries=7,
        status_storage_retry_initial_backoff_ms=100,
        emulation_request_timeout_ms=3000,
        status_write_request_timeout_ms=4000,
    )
    async with serve(version="3.4.1", settings=settings) as running:
        body = (await running.client.get("/_sidecar/capabilities")).json()
    assert body["kafka_writes"] == {
        "writes": ["audit", "offsets", "status"],  # no config topic: no config writes
        "retry": {
            "max_retries": 7,
            "initial_backoff_ms": 100.0,
            "max_backoff_ms": 10000.0,
            "backoff_multiplier": 2.0,
            "jitter_factor": 0.25,
        },
        "attempt_timeout_ms": {"audit": 6000, "offsets": 6000, "status": 8000},
        "retriable": "errors whose class Kafka marks retriable, and attempts not acknowledged in time",
        "acknowledged": "acks=all",
    }
    retries = body["features"]["status_store_retries"]["emulation"]
    assert all(kind in retries for kind in ("status-topic", "config-topic", "offsets-topic", "audit"))


# -- every live worker of the cluster decides (the workers' group), not only the given ones


class FakeGroupVersions:
    """The group port: the live members' versions as ``live`` holds them (``error``: the group unreadable)."""

    def __init__(self, **versions: str | None) -> None:
        self.versions = {f"http://{host}:8083": version for host, version in versions.items()}
        self.error: str | None = None

    async def live_workers(self, timeout_s: float) -> LiveWorkers:
        return LiveWorkers("connect-cluster", dict(self.versions), self.error)


def in_front_of(version: str | None, group: FakeGroupVersions | None) -> Capabilities:
    """The capabilities of a sidecar given one worker (w1) of ``version``."""
    return Capabilities(FakeWorkers(version), {}, group=group, refresh_s=60, first_detection_wait_s=0.1)


def stop_mode(capabilities: Capabilities) -> Mode:
    return capabilities.decision(Feature.STOP_AND_OFFSETS_READ).mode


async def test_the_oldest_live_member_decides_and_features_turn_native_once_it_left() -> None:
    group = FakeGroupVersions(w1="4.3.1", w2="3.4.1")  # a rolling upgrade: w2 not upgraded yet
    capabilities = in_front_of("4.3.1", group)
    assert await capabilities.refresh()
    assert (str(capabilities.version), stop_mode(capabilities)) == ("3.4.1", Mode.EMULATED)
    shown = decided_json(capabilities.seen())
    assert shown["worker_versions"] == {W1: "4.3.1", W2: "3.4.1"}
    assert (shown["group"], shown["unknown"]) == ("connect-cluster", None)
    del group.versions[W2]  # it left the group
    assert await capabilities.refresh()
    assert (str(capabilities.version), stop_mode(capabilities)) == ("4.3.1", Mode.NATIVE)
    assert decided_json(capabilities.seen())["worker_versions"] == {W1: "4.3.1"}


async def test_every_sidecar_of_the_cluster_decides_the_same() -> None:
    group = FakeGroupVersions(w1="4.3.1", w2="3.4.1")
    on_new, on_old = in_front_of("4.3.1", group), in_front_of("3.4.1", group)
    for capabilities in (on_new, on_old):
        assert await capabilities.refresh()
    assert on_new.version == on_old.version == Version.of("3.4.1")
    assert on_new.decisions == on_old.decisions


async def test_a_member_of_unknown_version_keeps_the_older_decision() -> None:
    group = FakeGroupVersions(w1="4.3.1", w2="3.4.1")
    capabilities = in_front_of("4.3.1", group)
    assert await capabilities.refresh()
    group.versions[W2] = None  # its GET / does not answer: it may still be the 3.4.1 worker
    assert await capabilities.refresh()
    assert (str(capabilities.version), stop_mode(capabilities)) == ("3.4.1", Mode.EMULATED)
    shown = decided_json(capabilities.seen())
    assert shown["worker_versions"] == {W1: "4.3.1", W2: None}
    assert shown["unknown"] == (
        f"no version from {W2} (GET / did not answer or named no release): 3.4.1 kept until every live worker's "
        "is known"
    )
    group.versions[W2] = "unknown"  # a version that names no release: unknown as well
    assert await capabilities.refresh() and str(capabilities.version) == "3.4.1"
    group.versions[W2] = "4.3.1"  # upgraded: every version known, the decision moves up
    assert await capabilities.refresh()
    assert (str(capabilities.version), stop_mode(capabilities), capabilities.unknown) == ("4.3.1", Mode.NATIVE, None)


async def test_an_older_version_decides_at_once_even_while_another_is_unknown() -> None:
    group = FakeGroupVersions(w1="4.3.1", w2=None)
    capabilities = in_front_of("4.3.1", group)
    assert await capabilities.refresh()  # the first decision: from the versions known
    assert str(capabilities.version) == "4.3.1"
    assert capabilities.unknown is not None and capabilities.unknown.endswith("4.3.1 decided by the versions known")
    group.versions["http://w3:8083"] = "3.4.1"  # an older worker joins
    assert await capabilities.refresh()
    assert (str(capabilities.version), stop_mode(capabilities)) == ("3.4.1", Mode.EMULATED)


async def test_a_group_that_cannot_be_read_keeps_the_older_decision() -> None:
    group = FakeGroupVersions(w1="4.3.1", w2="3.4.1")
    capabilities = in_front_of("4.3.1", group)
    assert await capabilities.refresh()
    group.error = "no answer from Kafka within 60 s"
    assert await capabilities.refresh()
    assert str(capabilities.version) == "3.4.1" and capabilities.worker_versions == {W1: "4.3.1"}
    assert capabilities.unknown == (
        "the live workers of group connect-cluster are unknown (no answer from Kafka within 60 s): 3.4.1 kept until "
        "every live worker's is known"
    )


async def test_a_given_worker_that_does_not_answer_and_is_not_in_the_group_decides_nothing() -> None:
    group = FakeGroupVersions(w2="4.3.1")
    capabilities = in_front_of(None, group)  # w1 is gone: out of the group, no answer
    assert await capabilities.refresh()
    assert (str(capabilities.version), capabilities.worker_versions, capabilities.unknown) == (
        "4.3.1",
        {W2: "4.3.1"},
        None,
    )


@pytest.mark.parametrize(
    ("given", "live", "versions", "unknown"),
    [
        pytest.param({W1: "3.6.0", W2: None}, None, {W1: "3.6.0"}, None, id="no-group-the-answers-alone"),
        pytest.param({W1: "4.3.1"}, {W1: None}, {W1: "4.3.1"}, None, id="a-given-workers-own-answer-first"),
        pytest.param({W1: None}, {W1: None}, {W1: None}, f"no version from {W1}", id="neither-answered"),
        pytest.param({W1: "4.3.1"}, {}, {W1: "4.3.1"}, None, id="not-joined-yet"),
    ],
)
def test_deciding_versions(
    given: dict[str, str | None],
    live: dict[str, str | None] | None,
    versions: dict[str, str | None],
    unknown: str | None,
) -> None:
    seen = deciding_versions(given, None if live is None else LiveWorkers("g", live))
    assert seen.versions == versions
    assert seen.unknown is None if unknown is None else unknown in (seen.unknown or "")
    assert seen.group == (None if live is None else "g")


async def test_a_live_worker_of_unknown_version_is_asked_again_soon() -> None:
    """The group rebalancing as a worker joins (its members' URLs are not in the answer then): the sidecar
    starting with that worker decides from the versions known, then again within a second, not a refresh
    period later."""
    group = FakeGroupVersions()
    group.versions = {W1: "4.3.1", "connect-2-member-id": None}
    capabilities = in_front_of("4.3.1", group)  # refresh_s=60

    async def decided_by() -> Version | None:
        return capabilities.version

    await capabilities.start()
    try:
        assert await capabilities.wait_detected(1.0) and capabilities.unknown is not None
        group.versions = {W1: "4.3.1", W2: "3.4.1"}  # the group stable again: an old worker in it
        await eventually(decided_by, lambda v: str(v) == "3.4.1", timeout_s=2, what="3.4.1 deciding")
        assert capabilities.unknown is None
    finally:
        await capabilities.stop()
