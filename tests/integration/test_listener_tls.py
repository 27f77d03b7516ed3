"""TLS on a real sidecar process's own listener: the short path of proxied requests and the sidecar's
routes over TLS, a certificate replaced on disk served to new connections without a restart (the open
ones keep theirs), and client certificates required when a client CA is set."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import os
import ssl
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tests.support.sidecar_process import sidecar_process
from tests.support.stack import Stack
from tests.support.waiting import eventually

pytestmark = pytest.mark.timeout(180)


@dataclass(frozen=True)
class Issued:
    cert: bytes  # PEM
    key: bytes  # PEM
    der: bytes


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


class Authority:
    """A certificate authority of the test's own, issuing server and client certificates."""

    def __init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(_name("sidecar test CA"))
            .issuer_name(_name("sidecar test CA"))
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self.key, hashes.SHA256())
        )
        self.pem = self.cert.public_bytes(serialization.Encoding.PEM)

    def issue(self, common_name: str, *, client: bool = False) -> Issued:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .sign(self.key, hashes.SHA256())
        )
        key_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return Issued(
            cert.public_bytes(serialization.Encoding.PEM), key_pem, cert.public_bytes(serialization.Encoding.DER)
        )


def install(issued: Issued, cert: Path, key: Path) -> None:
    """Replace the files as a deployment does (each written aside, then renamed over the old one)."""
    for path, data in ((key, issued.key), (cert, issued.cert)):
        aside = path.with_suffix(".new")
        aside.write_bytes(data)
        os.replace(aside, path)


def trusting(ca: Path, client: tuple[Path, Path] | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(ca))
    if client is not None:
        context.load_cert_chain(str(client[0]), str(client[1]))
    return context


async def served_certificate(url: str, context: ssl.SSLContext) -> bytes:
    """The DER certificate the listener presents to a new connection."""
    host, port = url.removeprefix("https://").split(":")
    _, writer = await asyncio.open_connection(host, int(port), ssl=context)
    try:
        ssl_object = writer.get_extra_info("ssl_object")
        der = ssl_object.getpeercert(binary_form=True)
        assert der is not None
        return bytes(der)
    finally:
        writer.close()


async def test_tls_listener_and_certificate_reload(tmp_path: Path, stack: Stack) -> None:
    authority = Authority()
    ca, cert, key = tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem"
    ca.write_bytes(authority.pem)
    first, second = authority.issue("sidecar-one"), authority.issue("sidecar-two")
    install(first, cert, key)
    env = {
        "CONTROL_PLANE_TLS_CERTFILE": str(cert),
        "CONTROL_PLANE_TLS_KEYFILE": str(key),
        "CONTROL_PLANE_TLS_RELOAD_INTERVAL_S": "0.2",
    }
    context = trusting(ca)
    worker_url = stack.newest.connect_url
    async with sidecar_process(tmp_path, worker_url, env, scheme="https", verify=context) as sidecar:
        async with httpx.AsyncClient(base_url=sidecar.url, verify=context, timeout=30) as client:
            assert await served_certificate(sidecar.url, context) == first.der
            # the short path (a path only the workers answer) and a route of the sidecar, over TLS
            absent = f"tls-absent-{uuid.uuid4().hex[:8]}"
            response = await client.get(f"/connectors/{absent}")
            assert response.status_code == 404 and response.json()["error_code"] == 404
            assert absent in response.json()["message"]
            assert (await client.get("/connectors")).status_code == 200

            install(second, cert, key)
            await eventually(
                lambda: served_certificate(sidecar.url, context),
                lambda der: der == second.der,
                timeout_s=30,
                what="a new connection served the new certificate",
            )
            # the connection opened before keeps working, and new ones work through the short path
            assert (await client.get(f"/connectors/{absent}")).status_code == 404
        async with httpx.AsyncClient(base_url=sidecar.url, verify=context, timeout=30) as fresh:
            assert (await fresh.get(f"/connectors/{absent}")).status_code == 404
        assert "TLS certificate reloaded" in sidecar.log.read_text()


async def test_a_client_ca_requires_client_certificates(tmp_path: Path, stack: Stack) -> None:
    authority = Authority()
    ca, cert, key = tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem"
    ca.write_bytes(authority.pem)
    install(authority.issue("sidecar"), cert, key)
    client_cert, client_key = tmp_path / "client.pem", tmp_path / "client-key.pem"
    install(authority.issue("operator", client=True), client_cert, client_key)
    env = {
        "CONTROL_PLANE_TLS_CERTFILE": str(cert),
        "CONTROL_PLANE_TLS_KEYFILE": str(key),
        "CONTROL_PLANE_TLS_CLIENT_CA_FILE": str(ca),
    }
    with_cert = trusting(ca, (client_cert, client_key))
    async with sidecar_process(tmp_path, stack.newest.connect_url, env, scheme="https", verify=with_cert) as sidecar:
        async with httpx.AsyncClient(verify=with_cert, timeout=30) as client:
            assert (await client.get(sidecar.url + "/connectors")).status_code == 200
        async with httpx.AsyncClient(verify=trusting(ca), timeout=30) as client:
            with pytest.raises(httpx.TransportError):
                await client.get(sidecar.url + "/connectors")
