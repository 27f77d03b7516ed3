"""The sidecar's own Kafka clients reach a broker through SASL_SSL with SCRAM-SHA-512, configured the way
a Connect worker is (its properties file): with a JKS and with a PKCS12 trust store made by keytool; a
wrong trust store password stops the start, a wrong SCRAM password fails the request, both naming why.

The broker is one of this module's own (KRaft, loopback, free ports; the stack's broker is not touched),
started from the same jars and script as the stack's (deploy/local/stack.py): a PLAINTEXT listener for the
test's setup and a SASL_SSL listener for the sidecar's clients, its SCRAM users written at format time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from control_plane.composition import build_kafka_writes, build_view
from control_plane.kafka_config import client_kwargs
from control_plane.settings import Settings, SettingsError, load_settings
from control_plane.storage.consumer_groups import ConsumerGroups
from control_plane.storage.errors import GroupOperationError
from control_plane.storage.record_producer import AiokafkaRecordProducer
from control_plane.storage.sidecar_topic import SidecarTopic
from control_plane.storage.topic_admin import TopicAdmin
from tests.support.deploy_local import local_stack
from tests.support.tls_material import keytool

USER, PASSWORD = "connect", "connect-scram-secret"
STORE_PASSWORD = "broker-store-secret"
TRUST_PASSWORD = "client-trust-secret"
CONFIG_TOPIC, STATUS_TOPIC = "secure-connect-configs", "secure-connect-status"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"


@dataclass
class SecureBroker:
    home: Path
    plaintext: str  # the test's own setup
    sasl_ssl: str  # the sidecar's clients
    pid: int


def _tls_stores(home: Path) -> None:
    """broker.p12 (a self-signed key for 127.0.0.1/localhost) and the clients' trust.jks and trust.p12."""
    keytool(
        *("-genkeypair", "-alias", "broker", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2"),
        *("-dname", "CN=broker", "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-storetype", "PKCS12"),
        *("-keystore", str(home / "broker.p12"), "-storepass", STORE_PASSWORD),
    )
    keytool(
        *("-exportcert", "-rfc", "-alias", "broker", "-keystore", str(home / "broker.p12")),
        *("-storepass", STORE_PASSWORD, "-file", str(home / "broker.pem")),
    )
    for store_type, name in (("JKS", "trust.jks"), ("PKCS12", "trust.p12")):
        keytool(
            *("-importcert", "-noprompt", "-alias", "broker", "-file", str(home / "broker.pem")),
            *("-storetype", store_type, "-keystore", str(home / name), "-storepass", TRUST_PASSWORD),
        )


def start_secure_broker(home: Path) -> SecureBroker:
    _tls_stores(home)
    plain, secure, controller = local_stack.free_port(), local_stack.free_port(), local_stack.free_port()
    log = home / "logs" / "broker.log"
    props = local_stack.write_props(
        home / "config" / "broker.properties",
        {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{controller}",
            "listeners": f"PLAINTEXT://127.0.0.1:{plain},SASL_SSL://127.0.0.1:{secure},CONTROLLER://127.0.0.1:{controller}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{plain},SASL_SSL://127.0.0.1:{secure}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT",
            "sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": f"{SCRAM} required;",
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(home / "broker.p12"),
            "ssl.keystore.password": STORE_PASSWORD,
            "log.dirs": str(home / "data"),
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
        },
    )
    scram = f"SCRAM-SHA-512=[name={USER},password={PASSWORD}]"
    args = ["format", "-t", local_stack.random_cluster_id(), "-c", str(props), "--add-scram", scram]
    fmt = subprocess.run(
        local_stack.java_cmd(local_stack.NEW_VERSION, "kafka.tools.StorageTool", args, log),
        capture_output=True,
        text=True,
    )
    assert fmt.returncode == 0, f"formatting failed:\n{fmt.stdout}\n{fmt.stderr}"
    with warnings.catch_warnings():  # start_broker's way: the broker outlives its Popen object
        warnings.simplefilter("ignore", ResourceWarning)
        proc = local_stack.spawn(
            "secure-broker", local_stack.java_cmd(local_stack.NEW_VERSION, "kafka.Kafka", [str(props)], log), log
        )
    broker = SecureBroker(home, f"127.0.0.1:{plain}", f"127.0.0.1:{secure}", proc.pid)
    local_stack.wait_until(proc, lambda: local_stack.broker_answers(broker.plaintext), "answer metadata requests", 90)
    return broker


def stop_secure_broker(broker: SecureBroker) -> None:
    os.killpg(broker.pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while local_stack.alive(broker.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if local_stack.alive(broker.pid):
        os.killpg(broker.pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(broker.pid, 0)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureBroker]:
    running = start_secure_broker(tmp_path_factory.mktemp("secure-broker"))
    try:
        yield running
    finally:
        stop_secure_broker(running)


@pytest.fixture(scope="module")
async def topics(broker: SecureBroker) -> None:
    """The internal topics, with one connector's config in the config topic (set up over PLAINTEXT)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=broker.plaintext)
    await admin.start()
    try:
        await admin.create_topics(
            [
                NewTopic(CONFIG_TOPIC, 1, 1, topic_configs={"cleanup.policy": "compact"}),
                NewTopic(STATUS_TOPIC, 5, 1, topic_configs={"cleanup.policy": "compact"}),
            ]
        )
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=broker.plaintext)
    await producer.start()
    try:
        config = {"properties": {"connector.class": "FileStreamSource", "topic": "t", "file": "/dev/null"}}
        await producer.send_and_wait(CONFIG_TOPIC, json.dumps(config).encode(), key=b"connector-secure-source")
    finally:
        await producer.stop()


def _worker_file(broker: SecureBroker, tmp_path: Path, **props: str) -> str:
    values = {
        "bootstrap.servers": broker.sasl_ssl,
        "group.id": "secure-connect",
        "config.storage.topic": CONFIG_TOPIC,
        "status.storage.topic": STATUS_TOPIC,
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": f'{SCRAM} required username="{USER}" password="{PASSWORD}";',
        **props,
    }
    path = tmp_path / "connect-distributed.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    return str(path)


TRUST_STORES = [
    pytest.param({"ssl.truststore.location": "trust.jks", "ssl.truststore.password": TRUST_PASSWORD}, id="jks"),
    pytest.param(
        {
            "ssl.truststore.type": "PKCS12",
            "ssl.truststore.location": "trust.p12",
            "ssl.truststore.password": TRUST_PASSWORD,
        },
        id="pkcs12",
    ),
]


def _settings(broker: SecureBroker, tmp_path: Path, store: dict[str, str], **extra: str) -> Settings:
    props = {**store, "ssl.truststore.location": str(broker.home / store["ssl.truststore.location"]), **extra}
    return load_settings(worker_properties=_worker_file(broker, tmp_path, **props))


@pytest.mark.parametrize("store", TRUST_STORES)
async def test_the_view_and_the_admin_reads_connect_through_sasl_ssl(
    broker: SecureBroker, topics: None, tmp_path: Path, store: dict[str, str]
) -> None:
    settings = _settings(broker, tmp_path, store)
    counts = await ConsumerGroups(client_kwargs(settings), 10000).partition_counts([STATUS_TOPIC, CONFIG_TOPIC])
    assert counts == {STATUS_TOPIC: 5, CONFIG_TOPIC: 1}
    view = build_view(settings)
    assert view is not None
    # the sidecars' own topic, created through the same listener, as a sidecar does at start
    kafka = client_kwargs(settings)
    sidecars = SidecarTopic(
        settings.sidecars_topic_name,
        TopicAdmin(kafka, 10000),
        lambda: AiokafkaRecordProducer(kafka, 10000),
        20,
        build_kafka_writes(settings),
        replication_factor=-1,
    )
    await sidecars.ensure()
    await view.start()
    try:
        async with asyncio.timeout(60):  # caught up with what the topics held at the start
            await asyncio.gather(*(tail.caught_up.wait() for tail in view.tails.values()))
        assert view.ready
        assert view.state.connectors() == ("secure-source",)
        assert view.tail_error("config") is None and view.tail_error("status") is None
    finally:
        await view.stop()


def test_a_wrong_trust_store_password_stops_the_start(broker: SecureBroker, tmp_path: Path) -> None:
    store = {"ssl.truststore.location": "trust.jks", "ssl.truststore.password": "not-the-password"}
    with pytest.raises(SettingsError) as caught:
        _settings(broker, tmp_path, store)
    assert str(caught.value) == (
        "ssl.truststore.password (in the worker properties file): wrong password for the trust store "
        f"{broker.home / 'trust.jks'} (its integrity check failed)"
    )


async def test_a_wrong_scram_password_fails_the_request_naming_authentication(
    broker: SecureBroker, topics: None, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = {"ssl.truststore.location": "trust.p12", "ssl.truststore.password": TRUST_PASSWORD}
    jaas = f'{SCRAM} required username="{USER}" password="not-the-password";'
    settings = _settings(broker, tmp_path, store, **{"sasl.jaas.config": jaas})
    with pytest.raises(GroupOperationError) as caught:
        await ConsumerGroups(client_kwargs(settings), 5000).partition_counts([STATUS_TOPIC])
    # aiokafka's bootstrap keeps only "Unable to bootstrap" in the error; the cause is in its log
    assert "Unable to bootstrap" in str(caught.value)
    causes = [r.getMessage() for r in caplog.records if r.name.startswith("aiokafka")]
    assert any("SaslAuthenticationFailed" in c and "invalid credentials" in c for c in causes), causes
    assert not any("not-the-password" in c for c in causes)
