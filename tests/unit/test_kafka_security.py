"""Kafka client security from the worker's properties file: every store type and SASL mechanism the
sidecar supports works (a real TLS handshake on loopback, a real token endpoint), and everything else
stops the start with a message naming the property as the operator wrote it."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from control_plane.kafka_config import client_kwargs, connector_admin_kwargs
from control_plane.kafka_security import KafkaSecurityError
from control_plane.kafka_security.jaas import JaasError, client_login_entry, parse_jaas_config
from control_plane.settings import Settings, SettingsError, load_settings
from control_plane.storage.oauth_token import OAuthTokenProvider
from tests.support.tls_material import KEY_PASSWORD, STORE_PASSWORD, TRUST_PASSWORD, Material, make_material

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
OAUTH_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
WHERE = "(in the worker properties file)"


@pytest.fixture(scope="module")
def material(tmp_path_factory: pytest.TempPathFactory) -> Material:
    return make_material(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def worker(tmp_path: Path) -> Any:
    """``worker(props)``: load_settings on a worker properties file holding ``props`` (escaped as
    java.util.Properties wants)."""

    def load(props: dict[str, str]) -> Settings:
        lines = [f"{k}={v.replace(chr(92), chr(92) * 2).replace(chr(10), chr(92) + 'n')}" for k, v in props.items()]
        path = tmp_path / "worker.properties"
        path.write_text("bootstrap.servers=127.0.0.1:9\n" + "\n".join(lines) + "\n")
        return load_settings(worker_properties=str(path))

    return load


# -- JaasConfig's own syntax


@pytest.mark.parametrize(
    ("text", "password"),
    [
        pytest.param(f'{PLAIN} required username="alice" password="a-secret";', "a-secret", id="double-quotes"),
        pytest.param(f"{PLAIN} required username='alice' password='a-secret';", "a-secret", id="single-quotes"),
        pytest.param(f"{PLAIN} required username=alice password=a-secret;", "a-secret", id="unquoted-words"),
        pytest.param(
            f'{PLAIN} required // a comment\n username="alice" /* another */ password="a-secret" ;',
            "a-secret",
            id="comments",
        ),
        pytest.param(
            f'{SCRAM} REQUIRED username="alice" password="q\\"u\\\\o\\te\\101\\x";', 'q"u\\o\teAx', id="escapes"
        ),
        pytest.param(
            f'{SCRAM} optional username="alice" password="p=w;d" tokenauth="false";', "p=w;d", id="punctuation"
        ),
    ],
)
def test_jaas_values_as_kafka_reads_them(text: str, password: str) -> None:
    entry = client_login_entry(text)
    assert (entry.options["username"], entry.options["password"]) == ("alice", password)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(f'{PLAIN} required username="a" password="b"', "not terminated by semi-colon", id="no-semicolon"),
        pytest.param(
            f'{PLAIN} required username="a" password=1234;', "Value not specified for key 'password'", id="num"
        ),
        pytest.param(f'{PLAIN} mandatory username="a";', "Invalid login module control flag 'mandatory'", id="flag"),
        pytest.param(f"{PLAIN};", "Login module control flag is not available", id="no-flag"),
        pytest.param("  ", "Login module not specified", id="empty"),
        pytest.param(f"{PLAIN} required; {SCRAM} required;", "contains 2 login modules, should be 1", id="two"),
    ],
)
def test_jaas_refusals_are_kafkas(text: str, message: str) -> None:
    with pytest.raises(JaasError, match=message):
        client_login_entry(text)


def test_jaas_secrets_are_not_in_the_repr() -> None:
    assert "a-secret" not in repr(parse_jaas_config(f'{PLAIN} required username="alice" password="a-secret";'))


# -- stores that work: a real handshake with a loopback server that wants the client's certificate


async def _handshake(material: Material, settings: Settings) -> str:
    """The subject the server saw of the client's certificate ("" without one)."""
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(material.path("server.pem"), material.path("server-key.pem"))
    server_context.verify_mode = ssl.CERT_OPTIONAL
    server_context.load_verify_locations(cafile=material.path("ca.pem"))
    server_context.load_verify_locations(cafile=material.path("client.pem"))

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peercert") or {}
        subject = dict(item[0] for item in peer.get("subject", ()))
        writer.write(subject.get("commonName", "-").encode() + b"\n")
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=server_context)
    port = server.sockets[0].getsockname()[1]
    try:
        context = client_kwargs(settings)["ssl_context"]
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
        seen = (await reader.readline()).decode().strip()
        writer.close()
        await writer.wait_closed()
        return seen
    finally:
        server.close()
        await server.wait_closed()


STORES = [
    pytest.param(
        {"ssl.truststore.location": "trust.jks", "ssl.truststore.password": TRUST_PASSWORD}, "-", id="jks-trust"
    ),
    pytest.param({"ssl.truststore.location": "trust.jks"}, "-", id="jks-trust-no-password"),
    pytest.param(
        {
            "ssl.truststore.type": "PKCS12",
            "ssl.truststore.location": "trust.p12",
            "ssl.truststore.password": TRUST_PASSWORD,
        },
        "-",
        id="pkcs12-trust",
    ),
    pytest.param(
        {"ssl.truststore.location": "trust.p12", "ssl.truststore.password": TRUST_PASSWORD},
        "-",
        id="jks-type-pkcs12-file",
    ),
    pytest.param({"ssl.truststore.type": "PEM", "ssl.truststore.location": "ca.pem"}, "-", id="pem-trust-file"),
    pytest.param({"ssl.truststore.type": "PEM", "ssl.truststore.certificates": "@ca.pem"}, "-", id="pem-trust-inline"),
    pytest.param(
        {
            "ssl.keystore.location": "client.jks",
            "ssl.keystore.password": STORE_PASSWORD,
            "ssl.key.password": KEY_PASSWORD,
        },
        "keytool-client",
        id="jks-keystore",
    ),
    pytest.param(
        {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": "client.p12", "ssl.keystore.password": STORE_PASSWORD},
        "keytool-client",
        id="pkcs12-keystore",
    ),
    pytest.param(
        {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.key": "@client-key.pem",
            "ssl.keystore.certificate.chain": "@client-chain.pem",
        },
        "pem-client",
        id="pem-key-inline",
    ),
    pytest.param(
        {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.key": "@client-key-encrypted.pem",
            "ssl.key.password": KEY_PASSWORD,
            "ssl.keystore.certificate.chain": "@client-chain.pem",
        },
        "pem-client",
        id="pem-encrypted-key-inline",
    ),
    pytest.param(
        {"ssl.keystore.type": "PEM", "ssl.keystore.location": "client-both.pem"}, "pem-client", id="pem-key-file"
    ),
]


def _resolve(material: Material, props: dict[str, str]) -> dict[str, str]:
    """File names made absolute, ``@name`` replaced by the file's text; the CA trusted when no trust store is set."""
    resolved = {k: (Path(material.path(v[1:])).read_text() if v.startswith("@") else v) for k, v in props.items()}
    for key in ("ssl.truststore.location", "ssl.keystore.location"):
        if key in resolved:
            resolved[key] = material.path(resolved[key])
    if not any(k.startswith("ssl.truststore") for k in resolved):
        resolved.update({"ssl.truststore.type": "PEM", "ssl.truststore.location": material.path("ca.pem")})
    return {"security.protocol": "SSL", **resolved}


@pytest.mark.parametrize(("props", "client"), STORES)
async def test_supported_stores_make_a_working_tls_context(
    material: Material, worker: Any, props: dict[str, str], client: str
) -> None:
    assert await _handshake(material, worker(_resolve(material, props))) == client


def test_the_system_cas_without_a_trust_store(worker: Any) -> None:
    context = client_kwargs(worker({"security.protocol": "SSL"}))["ssl_context"]
    assert context.check_hostname and context.verify_mode == ssl.CERT_REQUIRED


def test_inline_pem_as_a_properties_file_continues_it(material: Material, tmp_path: Path) -> None:
    """The Kafka documentation's form: one certificate over continued lines, whitespace inside."""
    lines = Path(material.path("ca.pem")).read_text().strip().splitlines()
    path = tmp_path / "worker.properties"
    path.write_text(
        "security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.certificates=" + " \\\n  ".join(lines) + "\n"
    )
    context = client_kwargs(load_settings(worker_properties=str(path)))["ssl_context"]
    assert [c["subject"] for c in context.get_ca_certs()] == [((("commonName", "test-ca"),),)]


@pytest.mark.parametrize(
    ("props", "minimum", "maximum", "hostname"),
    [
        pytest.param({}, ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3, True, id="defaults"),
        pytest.param(
            {"ssl.protocol": "TLSv1.2"}, ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2, True, id="protocol-1.2"
        ),
        pytest.param(
            {"ssl.enabled.protocols": "TLSv1.3"}, ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_3, True, id="only-1.3"
        ),
        pytest.param(
            {"ssl.enabled.protocols": "TLSv1.1,TLSv1.2"},
            ssl.TLSVersion.TLSv1_2,
            ssl.TLSVersion.TLSv1_2,
            True,
            id="old-ignored",
        ),
        pytest.param(
            {"ssl.endpoint.identification.algorithm": ""},
            ssl.TLSVersion.TLSv1_2,
            ssl.TLSVersion.TLSv1_3,
            False,
            id="no-host",
        ),
    ],
)
def test_protocols_and_host_name_check(
    worker: Any, props: dict[str, str], minimum: ssl.TLSVersion, maximum: ssl.TLSVersion, hostname: bool
) -> None:
    context = client_kwargs(worker({"security.protocol": "SSL", **props}))["ssl_context"]
    assert (context.minimum_version, context.maximum_version, context.check_hostname) == (minimum, maximum, hostname)
    assert context.verify_mode == ssl.CERT_REQUIRED


# -- SASL


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_plain_and_scram_credentials(worker: Any, mechanism: str) -> None:
    module = PLAIN if mechanism == "PLAIN" else SCRAM
    jaas = f'{module} required username="connect" password="p\\"w;d";'
    kwargs = client_kwargs(
        worker({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism, "sasl.jaas.config": jaas})
    )
    assert kwargs["security_protocol"] == "SASL_PLAINTEXT"
    assert (kwargs["sasl_mechanism"], kwargs["sasl_plain_username"], kwargs["sasl_plain_password"]) == (
        mechanism,
        "connect",
        'p"w;d',
    )


def _jwt(exp: float) -> str:
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    return f"{part({'alg': 'none'})}.{part({'sub': 'connect', 'exp': exp})}.sig"


@pytest.fixture
def token_endpoint() -> Iterator[tuple[str, list[tuple[dict[str, str], str]]]]:
    """An OAuth token endpoint on loopback; yields its URL and the requests it got (headers, body)."""
    seen: list[tuple[dict[str, str], str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"])).decode()
            seen.append((dict(self.headers), body))
            answer = json.dumps({"access_token": _jwt(time.time() + 3600), "token_type": "bearer"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/token", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _oauth(url: str, **extra: str) -> dict[str, str]:
    return {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.login.callback.handler.class": OAUTH_HANDLER,
        "sasl.oauthbearer.token.endpoint.url": url,
        "sasl.jaas.config": f'{OAUTH} required clientId="connect" clientSecret="c-secret" scope="kafka" '
        'extension_tenant="t1";',
        **extra,
    }


async def test_oauthbearer_client_credentials_from_the_token_endpoint(worker: Any, token_endpoint: Any) -> None:
    url, seen = token_endpoint
    kwargs = client_kwargs(worker(_oauth(url)))
    provider = kwargs["sasl_oauth_token_provider"]
    assert isinstance(provider, OAuthTokenProvider)
    assert kwargs["sasl_mechanism"] == "OAUTHBEARER"
    assert seen == []  # nothing fetched before a connection wants it
    first = await provider.token()
    assert await provider.token() == first  # kept until most of its lifetime passed
    assert len(seen) == 1
    headers, body = seen[0]
    assert body == "grant_type=client_credentials&scope=kafka"
    assert headers["Authorization"] == "Basic " + base64.b64encode(b"connect:c-secret").decode()
    assert provider.extensions() == {"tenant": "t1"}
    assert "c-secret" not in repr(provider.__dict__)


async def test_oauthbearer_configs_win_over_jaas_options(worker: Any, token_endpoint: Any) -> None:
    url, seen = token_endpoint
    props = _oauth(
        url,
        **{
            "sasl.oauthbearer.client.credentials.client.id": "id 2",
            "sasl.oauthbearer.client.credentials.client.secret": "s&2",
            "sasl.oauthbearer.scope": "a b",
            "sasl.oauthbearer.header.urlencode": "true",
        },
    )
    await client_kwargs(worker(props))["sasl_oauth_token_provider"].token()
    headers, body = seen[0]
    assert body == "grant_type=client_credentials&scope=a+b"
    assert headers["Authorization"] == "Basic " + base64.b64encode(b"id+2:s%262").decode()


async def test_oauthbearer_token_from_a_file_url(worker: Any, tmp_path: Path) -> None:
    token = _jwt(time.time() + 600)
    (tmp_path / "token.jwt").write_text(token + "\n")
    provider = client_kwargs(worker(_oauth((tmp_path / "token.jwt").as_uri())))["sasl_oauth_token_provider"]
    assert await provider.token() == token


# -- refusals: the start stops, naming the key


def _props(material: Material, kind: str) -> dict[str, str]:
    m = material.path
    jks_trust = {"security.protocol": "SSL", "ssl.truststore.location": m("trust.jks")}
    sasl = {**jks_trust, "security.protocol": "SASL_SSL"}
    cases: dict[str, dict[str, str]] = {
        "keystore-bcfks": {**jks_trust, "ssl.keystore.type": "BCFKS", "ssl.keystore.location": m("client.jks")},
        "truststore-pkcs11": {"security.protocol": "SSL", "ssl.truststore.type": "PKCS11"},
        "truststore-jks-wrong-password": {**jks_trust, "ssl.truststore.password": "wrong-password"},
        "truststore-pkcs12-wrong-password": {
            "security.protocol": "SSL",
            "ssl.truststore.type": "PKCS12",
            "ssl.truststore.location": m("trust.p12"),
            "ssl.truststore.password": "wrong-password",
        },
        "keystore-jks-wrong-password": {
            **jks_trust,
            "ssl.keystore.location": m("client.jks"),
            "ssl.keystore.password": "wrong-password",
        },
        "key-jks-wrong-password": {
            **jks_trust,
            "ssl.keystore.location": m("client.jks"),
            "ssl.keystore.password": STORE_PASSWORD,
            "ssl.key.password": "wrong-password",
        },
        "key-jks-no-key-password": {
            **jks_trust,
            "ssl.keystore.location": m("client.jks"),
            "ssl.keystore.password": STORE_PASSWORD,
        },
        "keystore-no-password": {**jks_trust, "ssl.keystore.location": m("client.jks")},
        "truststore-missing-file": {"security.protocol": "SSL", "ssl.truststore.location": m("nowhere.jks")},
        "truststore-not-a-store": {"security.protocol": "SSL", "ssl.truststore.location": m("ca.pem")},
        "pem-key-encrypted-no-password": {
            **jks_trust,
            "ssl.keystore.type": "PEM",
            "ssl.keystore.key": Path(m("client-key-encrypted.pem")).read_text(),
            "ssl.keystore.certificate.chain": Path(m("client-chain.pem")).read_text(),
        },
        "pem-key-wrong-password": {
            **jks_trust,
            "ssl.keystore.type": "PEM",
            "ssl.keystore.key": Path(m("client-key-encrypted.pem")).read_text(),
            "ssl.key.password": "wrong-password",
            "ssl.keystore.certificate.chain": Path(m("client-chain.pem")).read_text(),
        },
        "pem-key-not-its-chain": {
            **jks_trust,
            "ssl.keystore.type": "PEM",
            "ssl.keystore.key": Path(m("server-key.pem")).read_text(),
            "ssl.keystore.certificate.chain": Path(m("client-chain.pem")).read_text(),
        },
        "pem-key-without-chain": {
            **jks_trust,
            "ssl.keystore.type": "PEM",
            "ssl.keystore.key": Path(m("client-key.pem")).read_text(),
        },
        "pem-keystore-with-store-password": {
            **jks_trust,
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": m("client-key.pem"),
            "ssl.keystore.password": "x",
        },
        "truststore-certificates-not-pem-type": {
            "security.protocol": "SSL",
            "ssl.truststore.certificates": Path(m("ca.pem")).read_text(),
        },
        "truststore-location-and-certificates": {
            "security.protocol": "SSL",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": m("ca.pem"),
            "ssl.truststore.certificates": Path(m("ca.pem")).read_text(),
        },
        "cipher-suites": {**jks_trust, "ssl.cipher.suites": "TLS_AES_128_GCM_SHA256"},
        "ssl-provider": {**jks_trust, "ssl.provider": "BCJSSE"},
        "engine-factory": {**jks_trust, "ssl.engine.factory.class": "com.example.MyEngineFactory"},
        "protocol-tlsv1.1": {**jks_trust, "ssl.protocol": "TLSv1.1"},
        "enabled-protocols-none-left": {**jks_trust, "ssl.enabled.protocols": "TLSv1.1"},
        "enabled-protocols-unknown": {**jks_trust, "ssl.enabled.protocols": "DTLSv1.2"},
        "endpoint-identification-ldaps": {**jks_trust, "ssl.endpoint.identification.algorithm": "LDAPS"},
        "security-protocol-unknown": {"security.protocol": "TLS"},
        "sasl-mechanism-default-gssapi": {**sasl, "sasl.jaas.config": f'{PLAIN} required username="a" password="b";'},
        "sasl-gssapi": {**sasl, "sasl.mechanism": "GSSAPI"},
        "sasl-aws-msk-iam": {**sasl, "sasl.mechanism": "AWS_MSK_IAM"},
        "sasl-no-jaas": {**sasl, "sasl.mechanism": "PLAIN"},
        "sasl-jaas-malformed": {
            **sasl,
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": f'{PLAIN} required username="a"',
        },
        "sasl-jaas-other-module": {
            **sasl,
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": "com.example.Login required;",
        },
        "sasl-scram-tokenauth": {
            **sasl,
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": f'{SCRAM} required username="a" password="b" tokenauth="true";',
        },
        "sasl-no-password": {**sasl, "sasl.mechanism": "PLAIN", "sasl.jaas.config": f'{PLAIN} required username="a";'},
        "sasl-client-callback-handler": {
            **sasl,
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": f'{PLAIN} required username="a" password="b";',
            "sasl.client.callback.handler.class": "com.example.Handler",
        },
        "oauth-unsecured-default": {
            **sasl,
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": f"{OAUTH} required;",
        },
        "oauth-no-token-endpoint": {
            **_oauth(""),
            **jks_trust,
            "security.protocol": "SASL_SSL",
        },
        "oauth-client-assertion": {**_oauth("https://idp.example/token"), **jks_trust, "security.protocol": "SASL_SSL"}
        | {"sasl.oauthbearer.assertion.file": "/etc/kafka/assertion.jwt"},
        "oauth-no-client-id": {
            **_oauth("https://idp.example/token"),
            **jks_trust,
            "security.protocol": "SASL_SSL",
            "sasl.jaas.config": f'{OAUTH} required clientSecret="c-secret";',
        },
        "oauth-endpoint-truststore-wrong-password": {
            **_oauth("https://idp.example/token"),
            **jks_trust,
            "security.protocol": "SASL_SSL",
            "sasl.jaas.config": f'{OAUTH} required clientId="c" clientSecret="c-secret" '
            f'ssl.truststore.location="{m("trust.jks")}" ssl.truststore.password="wrong-password";',
        },
    }
    return cases[kind]


REFUSALS = [
    ("keystore-bcfks", "ssl.keystore.type {w}: BCFKS is not supported by the sidecar; use JKS, PKCS12 or PEM"),
    ("truststore-pkcs11", "ssl.truststore.type {w}: PKCS11 is not supported by the sidecar; use JKS, PKCS12 or PEM"),
    (
        "truststore-jks-wrong-password",
        "ssl.truststore.password {w}: wrong password for the trust store {m}/trust.jks (its integrity check failed)",
    ),
    (
        "truststore-pkcs12-wrong-password",
        "ssl.truststore.password {w}: wrong password for the PKCS12 trust store {m}/trust.p12 (or the file is damaged)",
    ),
    (
        "keystore-jks-wrong-password",
        "ssl.keystore.password {w}: wrong password for the key store {m}/client.jks (its integrity check failed)",
    ),
    ("key-jks-wrong-password", "ssl.key.password {w}: wrong password for the private key 'client' in {m}/client.jks"),
    (
        "key-jks-no-key-password",
        "ssl.keystore.password {w}: wrong password for the private key 'client' in {m}/client.jks",
    ),
    ("keystore-no-password", "ssl.keystore.password {w}: is needed with ssl.keystore.location"),
    ("truststore-missing-file", "ssl.truststore.location {w}: cannot read {m}/nowhere.jks: No such file or directory"),
    ("truststore-not-a-store", "ssl.truststore.location {w}: {m}/ca.pem is not a JKS, JCEKS or PKCS12 trust store"),
    ("pem-key-encrypted-no-password", "ssl.key.password {w}: is needed: the key is encrypted (ssl.keystore.key)"),
    ("pem-key-wrong-password", "ssl.key.password {w}: wrong password for the key in ssl.keystore.key"),
    (
        "pem-key-not-its-chain",
        "ssl.keystore.key {w}: the private key and the certificate chain do not go together (KEY_VALUES_MISMATCH)",
    ),
    ("pem-key-without-chain", "ssl.keystore.certificate.chain {w}: is needed with ssl.keystore.key"),
    (
        "pem-keystore-with-store-password",
        "ssl.keystore.password {w}: cannot be specified with PEM format, only ssl.key.password may be specified",
    ),
    (
        "truststore-certificates-not-pem-type",
        "ssl.truststore.certificates {w}: can be specified only for PEM, but ssl.truststore.type is JKS",
    ),
    (
        "truststore-location-and-certificates",
        "ssl.truststore.certificates {w}: both ssl.truststore.location and ssl.truststore.certificates are specified",
    ),
    (
        "cipher-suites",
        "ssl.cipher.suites {w}: a cipher suite list (Java's names) is not supported by the sidecar; "
        "remove it to use the defaults",
    ),
    ("ssl-provider", "ssl.provider {w}: a JCA security provider is not supported by the sidecar"),
    ("engine-factory", "ssl.engine.factory.class {w}: com.example.MyEngineFactory is not supported by the sidecar"),
    ("protocol-tlsv1.1", "ssl.protocol {w}: TLSv1.1 is not supported by the sidecar; use TLSv1.3, TLSv1.2 or TLS"),
    (
        "enabled-protocols-none-left",
        "ssl.enabled.protocols {w}: no version left to use with ssl.protocol=TLSv1.3 "
        "(TLSv1.1 and older are disabled in Java 17)",
    ),
    (
        "enabled-protocols-unknown",
        "ssl.enabled.protocols {w}: DTLSv1.2 is not supported by the sidecar; use TLSv1.2 and/or TLSv1.3",
    ),
    (
        "endpoint-identification-ldaps",
        "ssl.endpoint.identification.algorithm {w}: LDAPS is not supported by the sidecar; use https or an empty value",
    ),
    (
        "security-protocol-unknown",
        "security.protocol {w}: TLS is not a security protocol; use PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL",
    ),
    (
        "sasl-mechanism-default-gssapi",
        "sasl.mechanism {w}: not set: Kafka's default is GSSAPI (Kerberos), which the sidecar does not support; "
        "use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER",
    ),
    (
        "sasl-gssapi",
        "sasl.mechanism {w}: GSSAPI is not supported by the sidecar; "
        "use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER",
    ),
    (
        "sasl-aws-msk-iam",
        "sasl.mechanism {w}: AWS_MSK_IAM is not supported by the sidecar; "
        "use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER",
    ),
    (
        "sasl-no-jaas",
        "sasl.jaas.config {w}: not set: the sidecar reads the credentials from the worker's sasl.jaas.config only "
        "(not from a JAAS file given to the worker's JVM by java.security.auth.login.config)",
    ),
    ("sasl-jaas-malformed", "sasl.jaas.config {w}: JAAS config entry not terminated by semi-colon"),
    (
        "sasl-jaas-other-module",
        f"sasl.jaas.config {{w}}: login module com.example.Login is not supported by the sidecar with PLAIN; "
        f"use {PLAIN} or {SCRAM}",
    ),
    (
        "sasl-scram-tokenauth",
        "sasl.jaas.config {w}: delegation tokens (tokenauth=true) are not supported by the sidecar",
    ),
    ("sasl-no-password", "sasl.jaas.config {w}: the password option is missing"),
    (
        "sasl-client-callback-handler",
        "sasl.client.callback.handler.class {w}: com.example.Handler (a Java class) is not supported by the sidecar",
    ),
    (
        "oauth-unsecured-default",
        "sasl.login.callback.handler.class {w}: not set: Kafka's default for OAUTHBEARER is the unsecured token "
        f"handler (OAuthBearerUnsecuredLoginCallbackHandler), which the sidecar does not support; use {OAUTH_HANDLER}",
    ),
    (
        "oauth-no-token-endpoint",
        "sasl.oauthbearer.token.endpoint.url {w}: not set (the sidecar needs a token endpoint)",
    ),
    (
        "oauth-client-assertion",
        "sasl.oauthbearer.assertion.file {w}: client assertions (the jwt-bearer grant) are not supported by the "
        "sidecar; use a client secret",
    ),
    (
        "oauth-no-client-id",
        "sasl.oauthbearer.client.credentials.client.id {w}: not set (nor clientId in sasl.jaas.config)",
    ),
    (
        "oauth-endpoint-truststore-wrong-password",
        "ssl.truststore.password in sasl.jaas.config {w}: wrong password for the trust store {m}/trust.jks "
        "(its integrity check failed)",
    ),
]


@pytest.mark.parametrize(("kind", "message"), [pytest.param(k, msg, id=k) for k, msg in REFUSALS])
def test_unsupported_or_wrong_settings_stop_the_start(material: Material, worker: Any, kind: str, message: str) -> None:
    with pytest.raises(SettingsError) as caught:
        worker(_props(material, kind))
    assert str(caught.value) == message.format(w=WHERE, m=material.home)
    for secret in ("wrong-password", "c-secret", STORE_PASSWORD, KEY_PASSWORD, TRUST_PASSWORD):
        assert secret not in str(caught.value)


def test_the_message_says_where_the_properties_came_from(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "CONTROL_PLANE_KAFKA_CLIENT_PROPERTIES", '{"security.protocol": "SSL", "ssl.keystore.type": "BKS"}'
    )
    with pytest.raises(SettingsError, match=r"^ssl\.keystore\.type \(in CONTROL_PLANE_KAFKA_CLIENT_PROPERTIES\): BKS"):
        load_settings()
    with pytest.raises(SettingsError, match=r"^security\.protocol \(in the kafka_client_properties setting\)"):
        load_settings(kafka_client_properties={"security.protocol": "QUIC"})


def test_without_tls_or_sasl_their_properties_are_not_read(worker: Any) -> None:
    kwargs = client_kwargs(worker({"ssl.keystore.type": "BCFKS", "sasl.mechanism": "GSSAPI"}))
    assert kwargs == {"bootstrap_servers": "127.0.0.1:9", "security_protocol": "PLAINTEXT"}


# -- a connector's admin client (admin.override.*, Worker.adminConfigs)


def test_a_connector_admin_client_has_its_overrides_on_the_workers_settings(worker: Any) -> None:
    jaas = f'{PLAIN} required username="connect" password="w";'
    settings = worker({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": jaas})
    assert connector_admin_kwargs(settings, {}) == client_kwargs(settings)
    other = f'{PLAIN} required username="bob" password="b";'
    kwargs = connector_admin_kwargs(
        settings, {"bootstrap.servers": " b1:9092, b2:9092 ", "sasl.jaas.config": other, "client.id": "x"}
    )
    assert kwargs["bootstrap_servers"] == ["b1:9092", "b2:9092"]
    assert (kwargs["sasl_mechanism"], kwargs["sasl_plain_username"], kwargs["sasl_plain_password"]) == (
        "PLAIN",
        "bob",
        "b",
    )
    assert connector_admin_kwargs(settings, {"security.protocol": "PLAINTEXT"})["security_protocol"] == "PLAINTEXT"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        pytest.param(
            {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI"},
            "admin.override.sasl.mechanism: ",
            id="unsupported-mechanism",
        ),
        pytest.param(
            {"bootstrap.servers": "${file:/etc/kafka/admin.properties:servers}"},
            "admin.override.bootstrap.servers: a config provider reference, which only the worker resolves",
            id="config-provider",
        ),
        pytest.param(
            {"security.protocol": "SASL_PLAINTEXT", "sasl.jaas.config": "${vault:kafka:jaas}"},
            "admin.override.sasl.jaas.config: a config provider reference",
            id="config-provider-secret",
        ),
    ],
)
def test_a_connector_admin_client_the_sidecar_cannot_build_names_the_override(
    worker: Any, overrides: dict[str, str], message: str
) -> None:
    with pytest.raises(KafkaSecurityError) as raised:
        connector_admin_kwargs(worker({}), overrides)
    assert str(raised.value).startswith(message)
