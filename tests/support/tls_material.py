"""TLS material for tests: a CA and certificates made with ``cryptography``, key and trust stores made
by the JDK's own ``keytool`` (JKS and PKCS12, as an operator makes them for a Connect worker)."""

from __future__ import annotations

import datetime
import ipaddress
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import (
    BestAvailableEncryption,
    Encoding,
    NoEncryption,
    PrivateFormat,
)
from cryptography.x509.oid import NameOID

STORE_PASSWORD = "store-secret"
KEY_PASSWORD = "key-secret"
TRUST_PASSWORD = "trust-secret"


def certificate(
    cn: str, issuer: tuple[ec.EllipticCurvePrivateKey, x509.Certificate] | None = None, *, ca: bool = False
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A P-256 key and its certificate for ``cn`` (also valid for localhost and 127.0.0.1), signed by
    ``issuer`` or by itself."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    signer_key, issuer_name = (issuer[0], issuer[1].subject) if issuer else (key, name)
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        sans = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return key, builder.sign(signer_key, hashes.SHA256())


def cert_pem(*certs: x509.Certificate) -> str:
    return "".join(c.public_bytes(Encoding.PEM).decode() for c in certs)


def key_pem(key: ec.EllipticCurvePrivateKey, password: str | None = None) -> str:
    encryption = BestAvailableEncryption(password.encode()) if password else NoEncryption()
    return key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, encryption).decode()


def keytool(*args: str) -> None:
    done = subprocess.run(["keytool", *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"keytool {' '.join(args)}:\n{done.stdout}\n{done.stderr}"


@dataclass(frozen=True)
class Material:
    """Everything under one directory: a CA, a server certificate it signed, and the client's stores."""

    home: Path
    ca: tuple[ec.EllipticCurvePrivateKey, x509.Certificate]
    server: tuple[ec.EllipticCurvePrivateKey, x509.Certificate]
    client_cert: x509.Certificate  # the keytool-made key's certificate (self-signed)

    def path(self, name: str) -> str:
        return str(self.home / name)


def make_material(home: Path) -> Material:
    """ca.pem, server.pem/server-key.pem; trust.jks and trust.p12 (the CA, password TRUST_PASSWORD);
    client.jks (key password KEY_PASSWORD, store password STORE_PASSWORD) and client.p12 (the same key,
    STORE_PASSWORD), client.pem (its certificate); client-key.pem and client-key-encrypted.pem (KEY_PASSWORD)
    with client-chain.pem, a PEM key and chain signed by the CA, and client-both.pem (that key and chain in one)."""
    home.mkdir(parents=True, exist_ok=True)
    ca = certificate("test-ca", ca=True)
    server = certificate("broker", ca)
    (home / "ca.pem").write_text(cert_pem(ca[1]))
    (home / "server.pem").write_text(cert_pem(server[1], ca[1]))
    (home / "server-key.pem").write_text(key_pem(server[0]))
    pem_client = certificate("pem-client", ca)
    (home / "client-key.pem").write_text(key_pem(pem_client[0]))
    (home / "client-key-encrypted.pem").write_text(key_pem(pem_client[0], KEY_PASSWORD))
    (home / "client-chain.pem").write_text(cert_pem(pem_client[1], ca[1]))
    (home / "client-both.pem").write_text(key_pem(pem_client[0]) + cert_pem(pem_client[1], ca[1]))
    for store_type, name in (("JKS", "trust.jks"), ("PKCS12", "trust.p12")):
        keytool(
            *("-importcert", "-noprompt", "-alias", "ca", "-file", str(home / "ca.pem"), "-storetype", store_type),
            *("-keystore", str(home / name), "-storepass", TRUST_PASSWORD),
        )
    keytool(
        *("-genkeypair", "-alias", "client", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2"),
        *("-dname", "CN=keytool-client", "-storetype", "JKS", "-keystore", str(home / "client.jks")),
        *("-storepass", STORE_PASSWORD, "-keypass", KEY_PASSWORD),
    )
    keytool(
        *("-importkeystore", "-noprompt", "-srckeystore", str(home / "client.jks"), "-srcstoretype", "JKS"),
        *("-srcstorepass", STORE_PASSWORD, "-srckeypass", KEY_PASSWORD, "-srcalias", "client"),
        *("-destkeystore", str(home / "client.p12"), "-deststoretype", "PKCS12"),
        *("-deststorepass", STORE_PASSWORD, "-destkeypass", STORE_PASSWORD),
    )
    keytool(
        *("-exportcert", "-rfc", "-alias", "client", "-keystore", str(home / "client.jks")),
        *("-storepass", STORE_PASSWORD, "-file", str(home / "client.pem")),
    )
    client_cert = x509.load_pem_x509_certificate((home / "client.pem").read_bytes())
    return Material(home, ca, server, client_cert)
