"""The certificate reloader (listener_tls): loads the files again only when they changed; a pair that
does not load is logged, the old certificate kept, and tried again at the next check."""

from __future__ import annotations

import datetime
import ssl
from pathlib import Path

import structlog
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from control_plane.listener_tls import CertificateReloader


def self_signed(common_name: str) -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def test_reload_only_on_change_and_keep_the_old_pair_on_a_bad_one(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    first_cert, first_key = self_signed("one")
    cert.write_bytes(first_cert)
    key.write_bytes(first_key)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    reloader = CertificateReloader(context, str(cert), str(key), interval_s=1)
    assert reloader.check() is False  # nothing changed

    second_cert, second_key = self_signed("two")
    cert.write_bytes(second_cert)  # the key not yet replaced: the pair does not match
    with structlog.testing.capture_logs() as logs:
        assert reloader.check() is False
    assert [line["event"] for line in logs] == ["TLS certificate not reloaded; the previous one is still served"]

    key.write_bytes(second_key)
    with structlog.testing.capture_logs() as logs:
        assert reloader.check() is True
    assert logs[0]["event"] == "TLS certificate reloaded"
    assert reloader.reloads == 1
    assert reloader.check() is False


def test_a_missing_file_keeps_the_old_pair(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    pem, key_pem = self_signed("one")
    cert.write_bytes(pem)
    key.write_bytes(key_pem)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    reloader = CertificateReloader(context, str(cert), str(key))
    key.unlink()
    assert reloader.check() is False
    key.write_bytes(key_pem)
    assert reloader.check() is True
