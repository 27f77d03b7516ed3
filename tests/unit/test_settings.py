"""Settings: learned from the worker's properties file, overridden by CONTROL_PLANE_* variables and then
by explicit arguments; a bad value stops the start with a message naming the key."""

from __future__ import annotations

from pathlib import Path

import jks  # type: ignore[import-untyped]
import pytest
from cryptography.hazmat.primitives.serialization import Encoding

from control_plane import cli
from control_plane.settings import (
    DEFAULT_CONNECT_URL,
    WORKER_KEYS,
    FeatureMode,
    SettingsError,
    describe,
    load_settings,
)
from tests.support.tls_material import certificate

WORKER_FILE = """\
# connect-distributed.properties of a worker
bootstrap.servers=broker-1:9093,broker-2:9093
group.id=connect-prod
config.storage.topic=prod-configs
offset.storage.topic=prod-offsets
status.storage.topic=prod-status
topic.tracking.enable=false
topic.tracking.allow.reset=false
topic.creation.enable=false
consumer.group.id=ignored-by-connect-but-learned
status.storage.retry.max.retries=9
status.storage.retry.initial.backoff.ms=100
status.storage.retry.max.backoff.ms=5000
status.storage.retry.backoff.multiplier=1.5
status.storage.retry.jitter.factor=0.1
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
    username="connect" password="s3cret";
ssl.truststore.location=TRUSTSTORE
ssl.truststore.password=trust-me
ssl.endpoint.identification.algorithm=
listeners=http://0.0.0.0:18083
key.converter=org.apache.kafka.connect.json.JsonConverter
producer.ssl.truststore.location=/not/for/the/sidecar
plugin.path=/opt/connectors
"""


@pytest.fixture(scope="module")
def truststore(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A real JKS trust store at the worker file's ssl.truststore.location (load_settings reads it)."""
    path = tmp_path_factory.mktemp("tls") / "truststore.jks"
    der = certificate("ca", ca=True)[1].public_bytes(Encoding.DER)
    jks.KeyStore.new("jks", [jks.TrustedCertEntry.new("ca", der)]).save(str(path), "trust-me")
    return str(path)


@pytest.fixture
def worker_file(tmp_path: Path, truststore: str):
    def write(text: str = WORKER_FILE) -> str:
        path = tmp_path / "connect-distributed.properties"
        path.write_text(text.replace("TRUSTSTORE", truststore), encoding="latin-1")
        return str(path)

    return write


def test_defaults_without_a_worker_file() -> None:
    settings = load_settings()
    assert settings.connect_urls == (DEFAULT_CONNECT_URL,)
    assert settings.bootstrap_servers == "localhost:9092"
    assert settings.group_id == "connect-cluster"
    assert settings.config_storage_topic is None
    assert settings.topic_tracking_enable is True
    assert settings.kafka_client_properties == {}
    assert settings.status_storage_retry_max_retries == 5
    assert settings.status_storage_retry_jitter_factor == 0.25
    assert set(settings.feature_modes().values()) == {FeatureMode.AUTO}


def test_learns_from_the_worker_file(worker_file) -> None:
    settings = load_settings(worker_properties=worker_file())
    assert settings.bootstrap_servers == "broker-1:9093,broker-2:9093"
    assert settings.group_id == "connect-prod"
    assert settings.config_storage_topic == "prod-configs"
    assert settings.offset_storage_topic == "prod-offsets"
    assert settings.status_storage_topic == "prod-status"
    assert settings.topic_tracking_enable is False
    assert settings.topic_tracking_allow_reset is False
    assert settings.topic_creation_enable is False
    assert settings.consumer_group_id == "ignored-by-connect-but-learned"
    assert settings.status_storage_retry_max_retries == 9
    assert settings.status_storage_retry_initial_backoff_ms == 100
    assert settings.status_storage_retry_max_backoff_ms == 5000
    assert settings.status_storage_retry_backoff_multiplier == 1.5
    assert settings.status_storage_retry_jitter_factor == 0.1
    assert settings.connect_urls == ("http://127.0.0.1:18083",)
    assert settings.worker_properties == worker_file()


def test_learns_kafka_client_security_only(worker_file, truststore: str) -> None:
    settings = load_settings(worker_properties=worker_file())
    assert settings.kafka_client_properties == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="connect" password="s3cret";',
        "ssl.truststore.location": truststore,
        "ssl.truststore.password": "trust-me",
        "ssl.endpoint.identification.algorithm": "",
    }


def test_every_worker_key_is_a_settings_field() -> None:
    fields = set(type(load_settings()).model_fields)
    assert set(WORKER_KEYS.values()) <= fields


def test_worker_file_from_the_environment(worker_file, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTROL_PLANE_WORKER_PROPERTIES", worker_file())
    settings = load_settings()
    assert settings.group_id == "connect-prod"
    assert settings.connect_urls == ("http://127.0.0.1:18083",)


def test_worker_file_without_listeners_keeps_the_default_url(worker_file) -> None:
    settings = load_settings(worker_properties=worker_file("group.id=g\n"))
    assert settings.connect_urls == (DEFAULT_CONNECT_URL,)
    assert settings.group_id == "g"


def test_the_workers_id_is_the_one_it_advertises_and_else_its_urls(worker_file) -> None:
    """The Kubernetes sidecar layout: the worker on the pod's loopback, advertising the pod's address and the
    sidecar's port: that is its id in the status topic, not the URL the sidecar calls."""
    text = "listeners=http://127.0.0.1:8083\nrest.advertised.port=8084\nrest.advertised.host.name=10.0.0.7\n"
    assert load_settings(worker_properties=worker_file(text)).worker_ids() == {"http://127.0.0.1:8083": "10.0.0.7:8084"}
    several = load_settings(connect_urls="http://a:8083,http://b:8083", worker_id="ignored:1")
    assert several.worker_ids() == {"http://a:8083": "a:8083", "http://b:8083": "b:8083"}


@pytest.mark.parametrize(
    ("env", "value", "field", "expected"),
    [
        pytest.param("CONTROL_PLANE_GROUP_ID", "from-env", "group_id", "from-env", id="group-id"),
        pytest.param("CONTROL_PLANE_BOOTSTRAP_SERVERS", "env:9092", "bootstrap_servers", "env:9092", id="bootstrap"),
        pytest.param(
            "CONTROL_PLANE_STATUS_STORAGE_TOPIC", "env-status", "status_storage_topic", "env-status", id="topic"
        ),
        pytest.param("CONTROL_PLANE_TOPIC_TRACKING_ENABLE", "true", "topic_tracking_enable", True, id="bool"),
        pytest.param(
            "CONTROL_PLANE_STATUS_STORAGE_RETRY_MAX_RETRIES", "0", "status_storage_retry_max_retries", 0, id="int"
        ),
        pytest.param(
            "CONTROL_PLANE_CONNECT_URLS",
            "http://a:8083, http://b:8083/",
            "connect_urls",
            ("http://a:8083", "http://b:8083"),
            id="connect-urls-over-listeners",
        ),
    ],
)
def test_environment_overrides_the_worker_file(
    worker_file, monkeypatch: pytest.MonkeyPatch, env: str, value: str, field: str, expected: object
) -> None:
    monkeypatch.setenv(env, value)
    settings = load_settings(worker_properties=worker_file())
    assert getattr(settings, field) == expected


def test_environment_client_properties_override_the_files_key_by_key(
    worker_file, truststore: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "CONTROL_PLANE_KAFKA_CLIENT_PROPERTIES", '{"security.protocol": "SSL", "ssl.keystore.type": "PEM"}'
    )
    properties = load_settings(worker_properties=worker_file()).kafka_client_properties
    assert properties["security.protocol"] == "SSL"
    assert properties["ssl.keystore.type"] == "PEM"
    assert properties["ssl.truststore.location"] == truststore  # the file's other keys stay


def test_arguments_override_the_environment(worker_file, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTROL_PLANE_CONNECT_URLS", "http://env:8083")
    monkeypatch.setenv("CONTROL_PLANE_PORT", "9000")
    settings = load_settings(worker_properties=worker_file(), connect_urls="http://arg:8083", port=9001, host=None)
    assert settings.connect_urls == ("http://arg:8083",)
    assert settings.port == 9001
    assert settings.host == "127.0.0.1"  # None means "not given"


def test_a_good_environment_value_hides_a_bad_file_value(worker_file, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTROL_PLANE_STATUS_STORAGE_RETRY_JITTER_FACTOR", "0.5")
    settings = load_settings(worker_properties=worker_file("status.storage.retry.jitter.factor=1.5\n"))
    assert settings.status_storage_retry_jitter_factor == 0.5


def test_feature_modes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTROL_PLANE_FEATURE_TOPIC_TRACKING", "emulated")
    monkeypatch.setenv("CONTROL_PLANE_FEATURE_STATUS_STORE_RETRIES", "native")
    modes = load_settings().feature_modes()
    assert modes["topic_tracking"] is FeatureMode.EMULATED
    assert modes["status_store_retries"] is FeatureMode.NATIVE
    assert modes["stop_and_offsets_read"] is FeatureMode.AUTO
    assert set(modes) == {
        "topic_tracking",
        "topic_creation",
        "stop_and_offsets_read",
        "offsets_alter_reset",
        "plugin_versions",
        "status_store_retries",
        "initial_state",
        "logger_cluster_scope",
        "patch_config",
        "health",
        "order_in_group",
        "restart_options",
        "plugin_listing",
        "logger_levels",
        "validate_unresolved",
    }


# -- bad values: SettingsError naming the key as the operator wrote it

BAD_FILE_VALUES = [
    pytest.param(
        "status.storage.retry.jitter.factor=1.5\n",
        ["status.storage.retry.jitter.factor", "CONTROL_PLANE_STATUS_STORAGE_RETRY_JITTER_FACTOR", "1.5"],
        id="jitter-above-1",
    ),
    pytest.param(
        "status.storage.retry.jitter.factor=-0.1\n",
        ["status.storage.retry.jitter.factor", "-0.1"],
        id="jitter-negative",
    ),
    pytest.param(
        "status.storage.retry.backoff.multiplier=0.5\n",
        ["status.storage.retry.backoff.multiplier", "0.5"],
        id="multiplier-below-1",
    ),
    pytest.param(
        "status.storage.retry.max.retries=-1\n", ["status.storage.retry.max.retries", "-1"], id="negative-retries"
    ),
    pytest.param(
        "status.storage.retry.max.retries=many\n", ["status.storage.retry.max.retries", "many"], id="retries-not-int"
    ),
    pytest.param(
        "status.storage.retry.initial.backoff.ms=20000\nstatus.storage.retry.max.backoff.ms=1000\n",
        ["status.storage.retry.initial.backoff.ms", "20000", "status.storage.retry.max.backoff.ms", "1000"],
        id="initial-backoff-above-max",
    ),
    pytest.param(
        "status.storage.retry.initial.backoff.ms=20000\n",
        ["status.storage.retry.initial.backoff.ms", "20000", "status.storage.retry.max.backoff.ms", "10000"],
        id="initial-backoff-above-default-max",
    ),
    pytest.param(
        "status.storage.retry.initial.backoff.ms=-1\n",
        ["status.storage.retry.initial.backoff.ms", "-1"],
        id="initial-backoff-negative",
    ),
    pytest.param(
        "status.storage.retry.max.backoff.ms=-5\n",
        ["status.storage.retry.max.backoff.ms", "-5"],
        id="max-backoff-negative",
    ),
    pytest.param(
        "status.storage.retry.max.retries=2147483648\n",
        ["status.storage.retry.max.retries", "2147483648"],
        id="retries-above-max-int",
    ),
    pytest.param("topic.tracking.enable=maybe\n", ["topic.tracking.enable", "maybe"], id="not-a-boolean"),
]


@pytest.mark.parametrize(("text", "named"), BAD_FILE_VALUES)
def test_bad_file_value_raises_naming_the_key(worker_file, text: str, named: list[str]) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(worker_properties=worker_file(text))
    message = str(caught.value)
    for fragment in named:
        assert fragment in message


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        pytest.param({"connect_urls": "w1:8083"}, ["CONTROL_PLANE_CONNECT_URLS", "w1:8083", "http://"], id="no-scheme"),
        pytest.param(
            {"connect_urls": "http://w1:8083,ftp://w2:21"}, ["CONTROL_PLANE_CONNECT_URLS", "ftp://w2:21"], id="ftp"
        ),
        pytest.param({"connect_urls": " , "}, ["CONTROL_PLANE_CONNECT_URLS", "at least one"], id="empty-list"),
        pytest.param({"port": 70000}, ["CONTROL_PLANE_PORT", "70000"], id="port"),
        pytest.param(
            {"status_write_request_timeout_ms": 0},
            ["CONTROL_PLANE_STATUS_WRITE_REQUEST_TIMEOUT_MS", "0"],
            id="status-write-request-timeout",
        ),
        pytest.param(
            {"rebalance_retry_initial_backoff_ms": 5000, "rebalance_retry_max_backoff_ms": 100},
            ["CONTROL_PLANE_REBALANCE_RETRY_INITIAL_BACKOFF_MS", "CONTROL_PLANE_REBALANCE_RETRY_MAX_BACKOFF_MS"],
            id="rebalance-backoffs",
        ),
        pytest.param(
            {"feature_topic_tracking": "sometimes"}, ["CONTROL_PLANE_FEATURE_TOPIC_TRACKING", "sometimes"], id="feature"
        ),
        pytest.param(
            {"port": -1, "upstream_read_timeout_s": 0},
            ["CONTROL_PLANE_PORT", "CONTROL_PLANE_UPSTREAM_READ_TIMEOUT_S"],
            id="every-bad-key-named",
        ),
    ],
)
def test_bad_argument_raises_naming_the_key(overrides: dict[str, object], named: list[str]) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(**overrides)
    message = str(caught.value)
    for fragment in named:
        assert fragment in message


def test_bad_environment_value_raises_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTROL_PLANE_STATUS_STORAGE_RETRY_JITTER_FACTOR", "2")
    with pytest.raises(SettingsError, match="CONTROL_PLANE_STATUS_STORAGE_RETRY_JITTER_FACTOR"):
        load_settings()


def test_a_variable_of_no_setting_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``CONTROL_PLANE_`` variable that names no setting does not stop the sidecar: it is ignored."""
    monkeypatch.setenv("CONTROL_PLANE_UPSTREAM_TRANSPORT", "httpx")
    assert not hasattr(load_settings(), "upstream_transport")


def test_bad_json_in_the_environment_raises_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTROL_PLANE_KAFKA_CLIENT_PROPERTIES", "{not json")
    with pytest.raises(SettingsError, match="CONTROL_PLANE_KAFKA_CLIENT_PROPERTIES"):
        load_settings()


def test_unreadable_worker_file_raises(tmp_path: Path) -> None:
    missing = tmp_path / "missing.properties"
    with pytest.raises(SettingsError, match=r"cannot read the worker properties file .*missing\.properties"):
        load_settings(worker_properties=str(missing))


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        pytest.param("group.id=connect-prod   \n", "group_id", "connect-prod", id="string"),
        pytest.param("bootstrap.servers=b1:9092,b2:9092 \n", "bootstrap_servers", "b1:9092,b2:9092", id="list"),
        pytest.param("topic.tracking.enable=false \n", "topic_tracking_enable", False, id="boolean"),
        pytest.param("topic.creation.enable=FALSE\n", "topic_creation_enable", False, id="boolean-any-case"),
        pytest.param("status.storage.retry.max.retries=7 \n", "status_storage_retry_max_retries", 7, id="int"),
        pytest.param(
            "status.storage.retry.jitter.factor=0.5 \n", "status_storage_retry_jitter_factor", 0.5, id="double"
        ),
    ],
)
def test_file_values_are_read_as_connect_reads_them(worker_file, text: str, field: str, expected: object) -> None:
    """Connect's ConfigDef.parseType trims every value and reads booleans as true/false in any case; the
    sidecar must see the same group, topics and flags as the worker."""
    assert getattr(load_settings(worker_properties=worker_file(text)), field) == expected


# -- the command line


@pytest.mark.parametrize(("text", "named"), BAD_FILE_VALUES)
def test_cli_exits_2_naming_the_key(
    worker_file, capsys: pytest.CaptureFixture[str], text: str, named: list[str]
) -> None:
    assert cli.main(["serve", "--worker-properties", worker_file(text)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("control-plane: invalid settings: ")
    for fragment in named:
        assert fragment in captured.err


def test_cli_exits_2_on_a_missing_worker_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve", "--worker-properties", str(tmp_path / "nope.properties")]) == 2
    assert "cannot read the worker properties file" in capsys.readouterr().err


def test_cli_exits_2_on_bad_json_in_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CONTROL_PLANE_KAFKA_CLIENT_PROPERTIES", "{not json")
    assert cli.main(["serve"]) == 2
    assert "CONTROL_PLANE_KAFKA_CLIENT_PROPERTIES" in capsys.readouterr().err


def test_cli_exits_2_on_a_bad_environment_value(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CONTROL_PLANE_PORT", "abc")
    assert cli.main(["serve"]) == 2
    assert "CONTROL_PLANE_PORT" in capsys.readouterr().err


def test_cli_exits_2_on_a_bad_connect_url(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve", "--connect-url", "http://w1:8083", "--connect-url", "w2:8083"]) == 2
    assert "CONTROL_PLANE_CONNECT_URLS" in capsys.readouterr().err


# -- what /_sidecar/info shows


def test_describe_hides_client_secrets(worker_file, truststore: str) -> None:
    shown = describe(load_settings(worker_properties=worker_file()))
    assert shown["kafka_client_properties"]["sasl.jaas.config"] == "[hidden]"
    assert shown["kafka_client_properties"]["ssl.truststore.password"] == "[hidden]"
    assert shown["kafka_client_properties"]["ssl.truststore.location"] == truststore
    assert shown["kafka_client_properties"]["security.protocol"] == "SASL_SSL"
    assert "s3cret" not in repr(shown)
    assert "trust-me" not in repr(shown)


@pytest.mark.parametrize(
    "key",
    [
        pytest.param("ssl.key.password", id="ssl-key-password"),
        pytest.param("ssl.keystore.key", id="ssl-keystore-key"),
        pytest.param(
            "sasl.oauthbearer.client.credentials.client.secret",
            id="oauth-client-secret",
        ),
        pytest.param(
            "sasl.oauthbearer.assertion.private.key.passphrase",
            id="oauth-assertion-passphrase",
        ),
    ],
)
def test_describe_hides_every_secret_key(worker_file, key: str) -> None:
    shown = describe(load_settings(worker_properties=worker_file(f"{key}=top-secret\n")))
    assert shown["kafka_client_properties"][key] == "[hidden]"


def test_the_tracking_switches_are_known_from_the_worker_file_or_when_both_are_set(worker_file) -> None:
    assert load_settings(worker_properties=worker_file()).tracking_switches_known
    assert not load_settings(config_storage_topic="c", status_storage_topic="s").tracking_switches_known
    assert not load_settings(topic_tracking_enable=False).tracking_switches_known
    assert load_settings(topic_tracking_enable=True, topic_tracking_allow_reset=False).tracking_switches_known


def test_the_workers_group_is_read_with_the_worker_file_or_bootstrap_servers_set(
    worker_file, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert load_settings(worker_properties=worker_file()).workers_group_known
    assert load_settings(bootstrap_servers="kafka:9092").workers_group_known
    assert not load_settings(group_id="connect-cluster").workers_group_known  # localhost:9092 is only a guess
    monkeypatch.setenv("CONTROL_PLANE_BOOTSTRAP_SERVERS", "kafka:9092")
    assert load_settings().workers_group_known


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        pytest.param({"tls_certfile": "c.pem"}, "CONTROL_PLANE_TLS_KEYFILE", id="cert-without-key"),
        pytest.param({"tls_keyfile": "k.pem"}, "CONTROL_PLANE_TLS_CERTFILE", id="key-without-cert"),
        pytest.param({"tls_client_ca_file": "ca.pem"}, "CONTROL_PLANE_TLS_CLIENT_CA_FILE", id="ca-without-tls"),
        pytest.param({"max_body_bytes": -1}, "CONTROL_PLANE_MAX_BODY_BYTES", id="negative-limit"),
    ],
)
def test_hardening_settings_are_checked(settings: dict[str, object], named: str) -> None:
    with pytest.raises(SettingsError, match=named):
        load_settings(**settings)


def test_the_tls_key_password_is_hidden() -> None:
    shown = describe(load_settings(tls_certfile="c.pem", tls_keyfile="k.pem", tls_keyfile_password="s3cret"))
    assert shown["tls_keyfile_password"] == "[hidden]"
    assert shown["request_budget_s"] == 30.0 and shown["tls_certfile"] == "c.pem"


def test_the_workers_config_providers_are_learned_and_their_parameters_hidden(worker_file) -> None:
    text = (
        "bootstrap.servers=k:9092\nconfig.providers=file,vault\n"
        "config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider\n"
        "config.providers.vault.class=com.example.Vault\nconfig.providers.vault.param.token=s3cret\n"
    )
    settings = load_settings(worker_properties=worker_file(text))
    assert settings.config_providers["config.providers"] == "file,vault"
    assert settings.config_providers["config.providers.vault.param.token"] == "s3cret"
    shown = describe(settings)["config_providers"]
    assert shown["config.providers.vault.param.token"] == "[hidden]"
    assert shown["config.providers.vault.class"] == "com.example.Vault"
