"""KIP-158 in the domain: the check registered with ConnectorConfigs (which findings refuse: only what Connect
fails on; which warn: what Connect accepts and runs, and what the broker could not tell; what the worker
reports itself; the brokers of the connector's admin client) and the preview (which group claims each
topic, what the broker would create, an existing topic's differences), over fake brokers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import orjson
import pytest

from control_plane.domain.config_checks import ConfigSubject, RequestKind
from control_plane.domain.configs.connector_configs import ConnectorConfigs
from control_plane.domain.connect_api import validate_path
from control_plane.domain.errors import BadRequestError
from control_plane.domain.outcomes import Forward, Refusal
from control_plane.domain.topic_creation.creation import PROBE_PREFIX, Difference, TopicCreation
from control_plane.storage.errors import TopicAdminError
from control_plane.storage.topic_admin import CreationOutcome, ExistingTopic, LiveBrokers, NewTopic
from tests.support.fakes import FakeWorkers

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
PLUGINS = {SOURCE: "source", "FileStreamSource": "source", SINK: "sink", "FileStreamSink": "sink"}
BASE = {
    "name": "c",
    "connector.class": SOURCE,
    "topic.creation.default.replication.factor": "1",
    "topic.creation.default.partitions": "2",
}
THREE_GROUPS = {
    **BASE,
    "topic.creation.groups": "compacted, wide, single",
    "topic.creation.compacted.include": "state\\..*, (?i:config)-.*",
    "topic.creation.compacted.cleanup.policy": "compact",
    "topic.creation.compacted.partitions": "1",
    "topic.creation.wide.include": "events-.*",
    "topic.creation.wide.exclude": "events-internal.*",
    "topic.creation.wide.partitions": "6",
    "topic.creation.single.include": "events-.*, audit",
    "topic.creation.single.partitions": "-1",
    "topic.creation.single.retention.ms": "60000",
}


class FakeBroker:
    """The BrokerTopics port: ``live`` brokers (and ``absent`` ones that hold replicas), defaults of 1
    partition and replication factor 1, configs it refuses by name, topics that exist; ``down`` makes every
    call fail; ``probes_refused`` (error, message) answers every creation so (an ACL, a policy...)."""

    def __init__(self, live: int = 1) -> None:
        self.live = live
        self.absent: frozenset[int] = frozenset()
        self.unknown = {"no.such.setting"}
        self.existing: dict[str, ExistingTopic] = {}
        self.down = False
        self.probes_refused: tuple[str, str] | None = None
        self.created: list[NewTopic] = []
        self.asked = 0

    def _up(self) -> None:
        if self.down:
            raise TopicAdminError("asking the broker", "no answer from Kafka within 1 s")

    async def live_brokers(self) -> LiveBrokers:
        self.asked += 1
        self._up()
        return LiveBrokers(self.live, self.absent)

    async def try_create(self, topics: Sequence[NewTopic]) -> list[CreationOutcome]:
        self._up()
        self.created += topics
        outcomes = []
        for t in topics:
            partitions = 1 if t.partitions == -1 else t.partitions
            replication = 1 if t.replication_factor == -1 else t.replication_factor
            bad = sorted(set(t.configs) & self.unknown)
            if self.probes_refused is not None:
                outcomes.append(CreationOutcome(t.name, *self.probes_refused, None, None, {}))
            elif t.name in self.existing:
                outcomes.append(CreationOutcome(t.name, "TopicAlreadyExistsError", "exists", None, None, {}))
            elif bad:
                message = f"Unknown topic config name: {bad[0]}"
                outcomes.append(CreationOutcome(t.name, "InvalidConfigurationError", message, None, None, {}))
            elif replication > self.live:
                message = f"replication factor {replication} but {self.live} broker(s)"
                outcomes.append(CreationOutcome(t.name, "InvalidReplicationFactorError", message, None, None, {}))
            else:
                configs = {"cleanup.policy": "delete", "retention.ms": "604800000", **t.configs}
                outcomes.append(CreationOutcome(t.name, None, None, partitions, replication, configs))
        return outcomes

    async def describe(self, names: Iterable[str]) -> dict[str, ExistingTopic | None]:
        self._up()
        return {name: self.existing.get(name) for name in names}


def creation(
    broker: FakeBroker,
    *,
    enabled: bool = True,
    active: bool = True,
    overridden: FakeBroker | TopicAdminError | None = None,
) -> TopicCreation:
    """``overridden``: the brokers of a connector's ``admin.override.*`` (or why they cannot be built)."""
    asked: list[Mapping[str, str]] = []

    def admins(overrides: Mapping[str, str]) -> FakeBroker:
        asked.append(overrides)
        if isinstance(overridden, TopicAdminError):
            raise overridden
        assert overridden is not None, "no admin.override.* expected"
        return overridden

    return TopicCreation(
        broker, worker_enabled=enabled, plugin_types=lambda: PLUGINS, active=lambda: active, connector_admins=admins
    )


def subject(config: dict[str, str]) -> ConfigSubject:
    return ConfigSubject(RequestKind.CREATE, "c", config)


async def test_a_clean_three_group_config_has_no_problem_and_asks_the_broker_per_setting() -> None:
    broker = FakeBroker()
    found = await creation(broker).check(subject(THREE_GROUPS))
    assert found.problems == () and found.warnings == ()
    tried = {tuple(t.configs.items()) for t in broker.created}
    assert tried == {(("cleanup.policy", "compact"),), (("retention.ms", "60000"),)}
    assert all(t.name.startswith(PROBE_PREFIX) and t.partitions == t.replication_factor == -1 for t in broker.created)


@pytest.mark.parametrize(
    ("extra", "key", "words"),
    [
        pytest.param(
            {"topic.creation.default.partitions": None},
            "topic.creation.default.partitions",
            ("Missing required",),
            id="required-default",
        ),
        pytest.param(
            {"topic.creation.wide.partitions": "0"}, "topic.creation.wide.partitions", ("group 'wide'",), id="zero"
        ),
        pytest.param(
            {"topic.creation.compacted.replication.factor": "3"},
            "topic.creation.compacted.replication.factor",
            ("group 'compacted'", "1 live broker"),
            id="replication-above-live-brokers",
        ),
        pytest.param(
            {"topic.creation.wide.exclude": "events-(x"},
            "topic.creation.wide.exclude",
            ("'events-(x'", "group 'wide'", "Unclosed group"),
            id="invalid-regex",
        ),
        pytest.param(
            {"topic.creation.single.include": "x{1,3}"},
            "topic.creation.single.include",
            ("'x{1,3}'", "split at its comma"),
            id="comma-split",
        ),
        pytest.param(
            {"topic.creation.single.no.such.setting": "1"},
            "topic.creation.single.no.such.setting",
            ("no.such.setting='1'", "group 'single'", "Unknown topic config name: no.such.setting"),
            id="setting-the-broker-refuses",
        ),
        pytest.param(
            {"topic.creation.wide.include": "events-.*, (a", "topic.creation.wide.exclude": None},
            "topic.creation.wide.include",
            ("'(a'", "group 'wide'"),
            id="invalid-entry-after-valid",
        ),
    ],
)
async def test_each_mistake_is_a_problem_on_its_key_naming_group_and_entry(
    extra: dict[str, str | None], key: str, words: tuple[str, ...]
) -> None:
    config = {k: v for k, v in {**THREE_GROUPS, **extra}.items() if v is not None}
    found = await creation(FakeBroker()).check(subject(config))
    matching = [p for p in found.problems if p.key == key and all(w in p.message for w in words)]
    assert matching, found.problems
    assert not any(p.connect_rule for p in found.problems)  # the sidecar's own: config_checks=warn lets it go


async def test_sink_keys_are_a_warning_and_the_broker_is_not_asked() -> None:
    broker = FakeBroker()
    found = await creation(broker).check(subject({**BASE, "connector.class": SINK, "topics": "t"}))
    assert found.problems == ()
    assert len(found.warnings) == 1 and "sink" in found.warnings[0]
    assert broker.created == []


# what Connect 4.3.1 accepts and runs (SourceConnectorConfig, TopicCreationGroup): never a problem
WARNINGS_ONLY_CASES = [
    pytest.param(
        {"topic.creation.wide.include": None}, "topic.creation.wide.include", ("no include list",), id="no-include"
    ),
    pytest.param(
        {"topic.creation.compacted.include": "(?i)state, other"},
        "topic.creation.compacted.include",
        ("'(?i)state'", "(?i)"),
        id="leaking-flag",
    ),
    pytest.param(
        {"topic.creation.single.include": "state\\..*"},
        "topic.creation.single.include",
        ("never claims", "'compacted'"),
        id="shadowed-group",
    ),
    pytest.param(
        {"topic.creation.stray.partitions": "3"}, "topic.creation.stray.partitions", ("'stray'",), id="not-a-group"
    ),
    pytest.param(
        {"topic.creation.groups": "compacted, compacted.x, wide, single", "topic.creation.compacted.x.include": "y"},
        "topic.creation.compacted.x.include",
        ("'compacted.x'",),
        id="group-prefix",
    ),
]


@pytest.mark.parametrize(("extra", "key", "words"), WARNINGS_ONLY_CASES)
async def test_what_connect_accepts_and_runs_is_a_warning_never_a_problem(
    extra: dict[str, str | None], key: str, words: tuple[str, ...]
) -> None:
    config = {k: v for k, v in {**THREE_GROUPS, **extra}.items() if v is not None}
    found = await creation(FakeBroker()).check(subject(config))
    assert [p for p in found.problems if p.key == key] == []
    assert any(w.startswith(f"{key}: ") and all(word in w for word in words) for w in found.warnings), found.warnings


async def test_keys_while_the_worker_disables_creation_are_a_warning() -> None:
    broker = FakeBroker()
    found = await creation(broker, enabled=False).check(subject({**BASE, "topic.creation.default.partitions": "0"}))
    assert found.problems == ()  # Connect ignores the keys (SourceConnectorConfig without topic creation)
    assert len(found.warnings) == 1 and "topic.creation.enable=false" in found.warnings[0]
    assert broker.created == [] and broker.asked == 0


async def test_what_the_worker_reports_itself_is_left_to_it_and_harmless_findings_are_warnings() -> None:
    config = {**THREE_GROUPS, "topic.creation.groups": "compacted, wide, single, wide, default"}
    found = await creation(FakeBroker()).check(subject(config))
    assert found.problems == ()  # duplicates: SourceConnectorConfig's validator answers in Connect's words
    assert any("'default' always exists" in w for w in found.warnings)


async def test_nothing_without_keys_an_unknown_class_or_when_forced_native() -> None:
    broker = FakeBroker()
    plain = {"name": "c", "connector.class": SOURCE}
    assert (await creation(broker).check(subject(plain))).problems == ()
    unknown = {**BASE, "connector.class": "com.example.Missing", "topic.creation.default.partitions": "0"}
    assert (await creation(broker).check(subject(unknown))).problems == ()
    assert (
        await creation(broker, active=False).check(subject({**BASE, "topic.creation.default.partitions": "0"}))
    ) == (await creation(broker).check(subject(plain)))
    assert broker.created == []


async def test_an_unreachable_broker_leaves_the_rules_and_says_what_was_not_checked() -> None:
    broker = FakeBroker()
    broker.down = True
    config = {
        **THREE_GROUPS,
        "topic.creation.wide.partitions": "0",
        "topic.creation.compacted.replication.factor": "3",
        "topic.creation.single.no.such.setting": "1",
    }
    found = await creation(broker).check(subject(config))
    assert [p.key for p in found.problems] == ["topic.creation.wide.partitions"]
    assert len(found.warnings) == 2 and all("no answer from Kafka" in w for w in found.warnings)
    assert all("could not check" in w for w in found.warnings)


@pytest.mark.parametrize(
    "refusal",
    [
        pytest.param(("TopicAuthorizationFailedError", "Authorization failed."), id="acl"),
        pytest.param(("ClusterAuthorizationFailedError", "Cluster authorization failed."), id="cluster-acl"),
        pytest.param(("PolicyViolationError", "Topic names must start with team-"), id="topic-policy"),
        pytest.param(("RequestTimedOutError", "Timed out waiting for a node assignment."), id="timeout"),
        pytest.param(("NotControllerError", "This is not the correct controller."), id="controller-moving"),
        pytest.param(
            ("InvalidReplicationFactorError", "Unable to replicate the partition 3 time(s): 2 broker(s) registered."),
            id="broker-restarting",
        ),
    ],
)
async def test_a_probe_the_broker_refuses_for_its_own_reasons_is_said_never_refused(refusal: tuple[str, str]) -> None:
    broker = FakeBroker()
    broker.probes_refused = refusal
    found = await creation(broker).check(subject({**THREE_GROUPS, "topic.creation.single.no.such.setting": "1"}))
    assert found.problems == ()
    (warning,) = found.warnings
    assert "could not check the topic settings" in warning and f"{refusal[0]}: {refusal[1]}" in warning
    assert "topic.creation.single.no.such.setting" in warning


async def test_a_broker_that_holds_replicas_but_is_not_live_leaves_replication_factors_unchecked() -> None:
    broker = FakeBroker(live=2)
    broker.absent = frozenset({3})
    found = await creation(broker).check(subject({**THREE_GROUPS, "topic.creation.compacted.replication.factor": "3"}))
    assert found.problems == ()
    (warning,) = found.warnings
    assert "could not check the replication factors" in warning and "broker(s) 3" in warning


async def test_the_brokers_of_the_connectors_admin_overrides_are_asked() -> None:
    internal, own = FakeBroker(live=1), FakeBroker(live=3)
    config = {
        **THREE_GROUPS,
        "topic.creation.compacted.replication.factor": "3",
        "admin.override.bootstrap.servers": "elsewhere:9092",
        "admin.override.sasl.mechanism": "PLAIN",
        "producer.override.bootstrap.servers": "not-for-topics:9092",
    }
    found = await creation(internal, overridden=own).check(subject(config))
    assert found.problems == () and found.warnings == ()  # 3 brokers there: what Connect's task will find
    assert internal.asked == 0 and internal.created == [] and own.asked == 1 and own.created

    few = FakeBroker(live=1)
    found = await creation(FakeBroker(live=3), overridden=few).check(subject(config))
    (problem,) = found.problems
    assert problem.key == "topic.creation.compacted.replication.factor"
    assert "1 live broker(s)" in problem.message
    assert "admin.override.bootstrap.servers=elsewhere:9092" in problem.message


async def test_admin_overrides_the_sidecar_cannot_use_are_said_never_refused() -> None:
    internal = FakeBroker(live=1)
    cannot = TopicAdminError("building the connector's admin client", "admin.override.sasl.mechanism: GSSAPI ...")
    config = {
        **THREE_GROUPS,
        "topic.creation.compacted.replication.factor": "3",
        "topic.creation.single.no.such.setting": "1",
        "admin.override.bootstrap.servers": "elsewhere:9092",
        "admin.override.sasl.mechanism": "GSSAPI",
    }
    found = await creation(internal, overridden=cannot).check(subject(config))
    assert found.problems == ()
    (warning,) = found.warnings
    assert warning.startswith("topic.creation.*: could not check the replication factors and topic settings")
    assert "admin.override.bootstrap.servers=elsewhere:9092" in warning and "GSSAPI" in warning
    assert internal.asked == 0 and internal.created == []  # never the Connect cluster's brokers instead


async def test_settings_refused_only_together_are_named_once_for_the_group() -> None:
    broker = FakeBroker()
    original = broker.try_create

    async def together_refused(topics: Sequence[NewTopic]) -> list[CreationOutcome]:
        outcomes = await original(topics)
        return [
            CreationOutcome(t.name, "InvalidConfigurationError", "min > max", None, None, {})
            if len(t.configs) > 1
            else o
            for t, o in zip(topics, outcomes, strict=True)
        ]

    broker.try_create = together_refused  # type: ignore[method-assign]
    config = {**THREE_GROUPS, "topic.creation.compacted.min.compaction.lag.ms": "10"}
    found = await creation(broker).check(subject(config))
    assert [p.key for p in found.problems] == ["topic.creation.compacted.cleanup.policy"]
    assert "refused together" in found.problems[0].message and "min > max" in found.problems[0].message


# -- through the seam: refused with Connect's 400, or warnings with config_checks=warn -------------------
def workers() -> FakeWorkers:
    fake = FakeWorkers("3.4.1")
    validation = {"name": SOURCE, "error_count": 0, "groups": [], "configs": []}
    fake.answers[("PUT", validate_path(SOURCE))] = (200, orjson.dumps(validation))
    return fake


@pytest.mark.parametrize("enforce", [True, False], ids=["enforce", "warn"])
async def test_a_create_with_a_mistake_is_refused_unless_warn_only(enforce: bool) -> None:
    configs = ConnectorConfigs(workers(), [creation(FakeBroker())], enforce=enforce)
    outcome = await configs.create("c", {**THREE_GROUPS, "topic.creation.compacted.replication.factor": "3"})
    if enforce:
        assert isinstance(outcome, Refusal) and isinstance(outcome.error, BadRequestError)
        assert outcome.error.message.startswith(
            "Connector configuration is invalid and contains the following 1 error(s):\n"
            "replication factor 3 of group 'compacted' is larger than the 1 live broker(s)"
        )
    else:
        assert isinstance(outcome, Forward)
        assert outcome.warnings[0].startswith("topic.creation.compacted.replication.factor: replication factor 3")


@pytest.mark.parametrize(("extra", "key", "words"), WARNINGS_ONLY_CASES)
async def test_a_create_connect_accepts_goes_through_with_its_warning_in_enforce_mode(
    extra: dict[str, str | None], key: str, words: tuple[str, ...]
) -> None:
    fake = workers()
    configs = ConnectorConfigs(fake, [creation(FakeBroker())], enforce=True)
    config = {k: v for k, v in {**THREE_GROUPS, **extra}.items() if v is not None}
    outcome = await configs.create("c", config)
    assert isinstance(outcome, Forward), outcome
    assert any(w.startswith(f"{key}: ") and all(word in w for word in words) for w in outcome.warnings)
    validated = await configs.validate(validate_path(SOURCE), config)
    assert isinstance(validated, Forward) and validated.warnings == outcome.warnings  # the worker's own answer


# -- the preview ------------------------------------------------------------------------------------------
async def test_the_preview_says_which_group_claims_each_topic_and_what_the_broker_creates() -> None:
    broker = FakeBroker(live=3)
    broker.existing["events-b"] = ExistingTopic("events-b", 3, 1, {"cleanup.policy": "delete", "retention.ms": "1"})
    topics = ["state.x", "CONFIG-a", "events-a", "events-internal-1", "audit", "other", "events-b", "state.x"]
    preview = await creation(broker).preview(THREE_GROUPS, topics, "c")
    assert preview.creates_topics and preview.connector == "c" and preview.problems == ()
    plans = {p.topic: p for p in preview.topics}
    assert list(plans) == topics[:-1]  # each topic once, in the order asked
    assert {t: p.group for t, p in plans.items()} == {
        "state.x": "compacted",
        "CONFIG-a": "compacted",
        "events-a": "wide",
        "events-internal-1": "single",  # excluded by wide, claimed by the next group
        "audit": "single",
        "other": "default",
        "events-b": "wide",
    }
    compacted = plans["state.x"]
    assert compacted.requested is not None and compacted.requested.partitions == 1
    assert compacted.created_with is not None
    assert (compacted.created_with.partitions, compacted.created_with.replication_factor) == (1, 1)
    assert compacted.created_with.configs["cleanup.policy"] == "compact"
    audit = plans["audit"]
    assert audit.created_with is not None and audit.created_with.partitions == 1  # -1: the broker's default
    assert audit.created_with.configs["retention.ms"] == "60000"
    assert plans["other"].created_with is not None and plans["other"].created_with.partitions == 2
    existing = plans["events-b"]
    assert existing.existing is not None and existing.differences == (
        Difference("partitions", 6, 3),
        Difference("retention.ms", "604800000", "1"),
    )
    asked = {t.name for t in broker.created}
    assert "events-b" not in asked and "state.x" in asked  # an existing topic is tried under another name


async def test_the_preview_of_a_replication_factor_the_broker_refuses_says_why() -> None:
    preview = await creation(FakeBroker(live=1)).preview(
        {**BASE, "topic.creation.default.replication.factor": "3"}, ["t"]
    )
    (plan,) = preview.topics
    assert plan.created_with is None and plan.refused is not None
    assert plan.refused.startswith("InvalidReplicationFactorError")
    assert [p.key for p in preview.problems] == []  # no live broker count in the preview's own checks


@pytest.mark.parametrize(
    ("config", "enabled", "reason"),
    [
        pytest.param({**BASE, "connector.class": SINK}, True, "a sink connector", id="sink"),
        pytest.param(BASE, False, "topic.creation.enable=false", id="worker-disabled"),
        pytest.param({"connector.class": SOURCE}, True, "no topic.creation.* keys", id="no-keys"),
    ],
)
async def test_the_preview_says_when_connect_creates_no_topics(
    config: dict[str, str], enabled: bool, reason: str
) -> None:
    broker = FakeBroker()
    broker.existing["t"] = ExistingTopic("t", 1, 1, {})
    preview = await creation(broker, enabled=enabled).preview(config, ["t", "u"])
    assert not preview.creates_topics and reason in preview.reason
    assert [(p.group, p.existing is not None) for p in preview.topics] == [(None, True), (None, False)]


async def test_the_preview_asks_the_brokers_of_the_admin_overrides() -> None:
    internal, own = FakeBroker(live=1), FakeBroker(live=3)
    own.existing["t"] = ExistingTopic("t", 3, 3, {})
    config = {**BASE, "topic.creation.default.replication.factor": "3", "admin.override.bootstrap.servers": "b:1"}
    preview = await creation(internal, overridden=own).preview(config, ["t", "u"])
    plans = {p.topic: p for p in preview.topics}
    assert plans["t"].existing is not None and plans["u"].created_with is not None
    assert plans["u"].created_with.replication_factor == 3 and internal.created == []
    cannot = TopicAdminError("building the connector's admin client", "admin.override.sasl.mechanism: GSSAPI")
    with pytest.raises(BadRequestError, match="GSSAPI"):
        await creation(internal, overridden=cannot).preview(config, ["t"])


async def test_no_preview_of_a_config_connect_fails() -> None:
    with pytest.raises(BadRequestError, match=r"topic\.creation\.default\.replication\.factor"):
        await creation(FakeBroker()).preview({**BASE, "topic.creation.default.replication.factor": "0"}, ["t"])
