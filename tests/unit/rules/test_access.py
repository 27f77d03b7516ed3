"""The pure rules of access control: requests classified into actions, what each role may do, connector
patterns, listings filtered, and secrets masked."""

from __future__ import annotations

import pytest

from control_plane.rules.access import (
    ALLOWED,
    Action,
    Listing,
    Principal,
    Reach,
    Role,
    classify,
    filter_listing,
    segments,
)
from control_plane.rules.secrets import DEFAULT_SECRET_RULE, MASK, SecretRule, is_reference


@pytest.mark.parametrize(
    ("method", "path", "action", "connector"),
    [
        pytest.param("GET", "/healthz", Action.PROBE, None, id="healthz"),
        pytest.param("HEAD", "/readyz", Action.PROBE, None, id="readyz"),
        pytest.param("GET", "/metrics", Action.READ, None, id="metrics"),
        pytest.param("GET", "/", Action.READ, None, id="root"),
        pytest.param("GET", "/connectors", Action.READ, None, id="list"),
        pytest.param("GET", "/connectors/", Action.READ, None, id="list-slash"),
        pytest.param("GET", "/connectors/c", Action.READ, "c", id="info"),
        pytest.param("HEAD", "/connectors/c/config", Action.READ, "c", id="head-config"),
        pytest.param("GET", "/connectors/c/tasks/0/status", Action.READ, "c", id="task-status"),
        pytest.param("GET", "/connectors/c/tasks-config", Action.READ, "c", id="tasks-config"),
        pytest.param("GET", "/connectors/c/offsets", Action.READ, "c", id="offsets-read"),
        pytest.param("PUT", "/connectors/c/pause", Action.OPERATE, "c", id="pause"),
        pytest.param("PUT", "/connectors/c/resume", Action.OPERATE, "c", id="resume"),
        pytest.param("PUT", "/connectors/c/stop", Action.OPERATE, "c", id="stop"),
        pytest.param("POST", "/connectors/c/restart", Action.OPERATE, "c", id="restart"),
        pytest.param("POST", "/connectors/c/tasks/1/restart", Action.OPERATE, "c", id="task-restart"),
        pytest.param("PUT", "/connectors/c/topics/reset", Action.OPERATE, "c", id="topics-reset"),
        pytest.param("POST", "/connectors", Action.ADMIN, None, id="create"),
        pytest.param("DELETE", "/connectors/c", Action.ADMIN, "c", id="delete"),
        pytest.param("PUT", "/connectors/c/config", Action.ADMIN, "c", id="config-put"),
        pytest.param("PATCH", "/connectors/c/config", Action.ADMIN, "c", id="config-patch"),
        pytest.param("PATCH", "/connectors/c/offsets", Action.ADMIN, "c", id="offsets-alter"),
        pytest.param("DELETE", "/connectors/c/offsets", Action.ADMIN, "c", id="offsets-reset"),
        pytest.param("PUT", "/admin/loggers/org.apache", Action.ADMIN, None, id="logger-put"),
        pytest.param("GET", "/admin/loggers/org.apache", Action.READ, None, id="logger-get"),
        pytest.param("PUT", "/connector-plugins/P/config/validate", Action.ADMIN, None, id="validate"),
        pytest.param("POST", "/connectors/c/tasks", Action.ADMIN, "c", id="internal-task-configs"),
        pytest.param("PUT", "/connectors/c/fence", Action.ADMIN, "c", id="internal-fence"),
        pytest.param("PURGE", "/connectors/c", Action.ADMIN, "c", id="unknown-method"),
        pytest.param("PROPFIND", "/", Action.ADMIN, None, id="unknown-method-root"),
        pytest.param("OPTIONS", "/connectors", Action.ADMIN, None, id="options"),
        pytest.param("GET", "/unknown", Action.ADMIN, None, id="unknown-read"),
        pytest.param("HEAD", "/connectors/c/pause", Action.ADMIN, "c", id="head-on-an-operation"),
        pytest.param("PUT", "/connectors/c/restart", Action.ADMIN, "c", id="restart-with-put"),
        pytest.param("PUT", "/connectors/c;x=1/pause", Action.OPERATE, "c", id="matrix-parameters"),
        pytest.param("PUT", "/connectors/a/../b/pause", Action.OPERATE, "b", id="dot-segments-resolved"),
        pytest.param("GET", "/connectors/caf%C3%A9/status", Action.READ, "café", id="utf-8-name"),
        pytest.param("GET", "/connectors/a%3Bb/status", Action.READ, "a;b", id="encoded-semicolon"),
        pytest.param("GET", "/_sidecar/connectors/c/topics", Action.READ, "c", id="sidecar-connector"),
        pytest.param("POST", "/_sidecar/topic-creation/preview", Action.ADMIN, None, id="sidecar-preview"),
        pytest.param("GET", "/_sidecar/connectors/c/history/12", Action.READ, "c", id="history-read"),
        pytest.param("POST", "/_sidecar/connectors/c/history/12/rollback", Action.ADMIN, "c", id="rollback"),
    ],
)
def test_requests_are_classified_as_the_worker_reads_the_path(
    method: str, path: str, action: Action, connector: str | None
) -> None:
    classified = classify(method, path)
    assert (classified.action, classified.connector) == (action, connector)


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/connectors/x%2F..%2F..", id="encoded-slash-and-dots"),
        pytest.param("/connectors/x/%2e%2e/%2e%2e/admin/loggers", id="encoded-dot-segments"),
        pytest.param("/connectors/x/..;a/pause", id="dot-segment-with-parameter"),
        pytest.param("/connectors//pause", id="empty-segment"),
        pytest.param("/connectors/a%5Cb/pause", id="encoded-backslash"),
        pytest.param("/../connectors/c/pause", id="above-the-root"),
        pytest.param("connectors/c/pause", id="not-origin-form"),
        pytest.param("/connectors/%FF/pause", id="not-utf-8"),
    ],
)
@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_ambiguous_paths_need_admin_and_reach_every_connector(path: str, method: str) -> None:
    classified = classify(method, path)
    assert classified.ambiguous and classified.action is Action.ADMIN and classified.reach is Reach.CLUSTER


def test_bytes_that_are_not_utf_8_are_ambiguous() -> None:
    assert classify("GET", b"/connectors/\xff").ambiguous


def test_segments_decode_each_segment_after_splitting() -> None:
    assert segments("/connectors/a%20b/config/") == ["connectors", "a b", "config"]
    assert segments("/") == []


def test_roles_nest() -> None:
    assert ALLOWED[Role.VIEWER] < ALLOWED[Role.OPERATOR] < ALLOWED[Role.ADMIN]
    assert Action.OPERATE not in ALLOWED[Role.VIEWER] and Action.ADMIN not in ALLOWED[Role.OPERATOR]


def test_reaches() -> None:
    assert classify("GET", "/connectors").listing is Listing.CONNECTORS
    assert classify("GET", "/_sidecar/topics/t/connectors").listing is Listing.TOPIC_CONNECTORS
    assert classify("GET", "/metrics").reach is Reach.CLUSTER
    assert classify("GET", "/_sidecar/status-writes").reach is Reach.CLUSTER
    assert classify("GET", "/connector-plugins").reach is Reach.NONE
    assert classify("POST", "/connectors").reach is Reach.CREATE
    assert classify("PUT", "/connectors/c/config").creates
    assert not classify("PUT", "/connectors/c/pause").creates
    configs = ["/connectors/c", "/connectors/c/config", "/connectors/c/tasks", "/connectors/c/tasks-config"]
    assert all(classify("GET", path).configs for path in configs)
    assert not classify("GET", "/connectors/c/status").configs


def test_patterns_limit_what_a_principal_sees() -> None:
    team = Principal("team", Role.OPERATOR, ("team-a-*", "shared"))
    assert team.sees("team-a-1") and team.sees("shared")
    assert not team.sees("team-b-1") and not team.sees("Shared") and not team.sees("team-a-1/../x")
    assert Principal("all", Role.VIEWER).sees("anything")


def test_listings_are_filtered() -> None:
    team = Principal("team", Role.VIEWER, ("a*",))
    assert filter_listing(Listing.CONNECTORS, ["a1", "b1", "a2"], team) == ["a1", "a2"]
    expanded: dict[str, object] = {"a1": {"status": {}}, "b1": {"status": {}}}
    assert filter_listing(Listing.CONNECTORS, expanded, team) == {"a1": {"status": {}}}
    usage = {"topic": "t", "connectors": ["a1", "b1"], "earlier_configs": [{"connector": "b2"}, {"connector": "a3"}]}
    assert filter_listing(Listing.TOPIC_CONNECTORS, usage, team) == {
        "topic": "t",
        "connectors": ["a1"],
        "earlier_configs": [{"connector": "a3"}],
    }
    assert filter_listing(Listing.CONNECTORS, {"error_code": 500}, team) == {}


@pytest.mark.parametrize(
    "key",
    [
        "connection.password",
        "ssl.key.password",
        "sasl.jaas.config",
        "producer.override.sasl.jaas.config",
        "aws.secret.access.key",
        "api.key",
        "ssl.keystore.key",
        "auth.token",
        "oauth.client.secret",
        "basic.auth.user.info",
        "value.converter.basic.auth.user.info",
        "gcp.credentials.json",
        "Connection.PASSWORD",
    ],
)
def test_secret_keys(key: str) -> None:
    assert DEFAULT_SECRET_RULE.is_secret(key)


@pytest.mark.parametrize(
    "key", ["connector.class", "topics", "key.converter", "tasks.max", "connection.url", "token.endpoint.url"]
)
def test_keys_that_are_not_secret(key: str) -> None:
    assert not DEFAULT_SECRET_RULE.is_secret(key)


def test_config_provider_references_stay_visible() -> None:
    assert is_reference("${file:/etc/secrets.properties:db.password}")
    assert is_reference(" ${vault:secret/db:password} ${env:X} ")
    assert not is_reference("s3cr3t")
    assert not is_reference("prefix-${file:/x:y}")  # a literal part may be the secret itself
    config = {
        "connection.password": "${file:/etc/secrets.properties:db.password}",
        "ssl.key.password": "hunter2",
        "sasl.jaas.config": 'PlainLoginModule required username="u" password="p";',
        "topics": "t",
        "api.key": None,
    }
    assert DEFAULT_SECRET_RULE.mask(config) == {
        "connection.password": "${file:/etc/secrets.properties:db.password}",
        "ssl.key.password": MASK,
        "sasl.jaas.config": f'PlainLoginModule required username="u" password="{MASK}";',
        "topics": "t",
        "api.key": None,
    }


def test_masked_deep_in_any_shape_of_answer() -> None:
    tasks = [{"id": {"connector": "c", "task": 0}, "config": {"db.password": "p", "task.class": "T"}}]
    assert DEFAULT_SECRET_RULE.mask_deep(tasks) == [
        {"id": {"connector": "c", "task": 0}, "config": {"db.password": MASK, "task.class": "T"}}
    ]
    expanded = {"my-token": {"info": {"name": "my-token", "config": {"token": "t"}}}}
    assert DEFAULT_SECRET_RULE.mask_deep(expanded) == {
        "my-token": {"info": {"name": "my-token", "config": {"token": MASK}}}
    }


def test_patterns_are_configurable() -> None:
    rule = SecretRule(("^custom\\.",))
    assert rule.is_secret("custom.thing") and not rule.is_secret("db.password")
    assert SecretRule(()).mask({"password": "p"}) == {"password": "p"}


@pytest.mark.parametrize(
    ("jaas", "shown"),
    [
        pytest.param(
            'o.a.k.PlainLoginModule required username="u" password="p";',
            f'o.a.k.PlainLoginModule required username="u" password="{MASK}";',
            id="plain",
        ),
        pytest.param(
            'M required username="u" password="${file:/etc/s.properties:pw}";',
            'M required username="u" password="${file:/etc/s.properties:pw}";',
            id="reference-kept",
        ),
        pytest.param(
            'A required password=p; B optional clientSecret="a b" scope="x";',
            f'A required password="{MASK}"; B optional clientSecret="{MASK}" scope="x";',
            id="bare-values-and-two-modules",
        ),
        pytest.param('M required password="a\\"b";', f'M required password="{MASK}";', id="escaped-quote"),
        pytest.param("not jaas password=p", MASK, id="unreadable-masked-whole"),
        pytest.param('M required password="p"', MASK, id="no-semicolon-masked-whole"),
    ],
)
def test_jaas_configs_are_masked_option_by_option(jaas: str, shown: str) -> None:
    assert DEFAULT_SECRET_RULE.mask({"sasl.jaas.config": jaas}) == {"sasl.jaas.config": shown}
