"""Key and trust stores as Kafka's ``DefaultSslEngineFactory`` reads them: JKS (and JCEKS), PKCS12, PEM
files and inline PEM (``ssl.keystore.key``, ``ssl.keystore.certificate.chain``, ``ssl.truststore.certificates``).

Mirrors ``DefaultSslEngineFactory.createKeystore``/``createTruststore`` (which combinations are allowed, and
their messages), ``FileBasedStore`` (the key's password is ``ssl.key.password``, else the store's; a trust
store without a password is read without its integrity check), ``PemStore`` and its ``PemParser``. As the
JDK's ``keystore.type.compat`` does, a JKS or PKCS12 store is read by its content, whichever of the two
it is. As SunJSSE's ``TrustStoreUtil`` does, the certificate of a private key entry in a trust store is
trusted too. Error messages name the key, never a secret.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from pathlib import Path

import jks  # type: ignore[import-untyped]  # pyjks: the JKS and JCEKS formats (cryptography reads neither)
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.serialization import load_der_private_key, pkcs12

from .errors import KafkaSecurityError, Label

STORE_TYPES = ("JKS", "JCEKS", "PKCS12", "PEM")
_JKS_MAGIC = (b"\xfe\xed\xfe\xed", b"\xce\xce\xce\xce")


@dataclass(frozen=True)
class KeyMaterial:
    """The client's own key and certificate chain (``ssl.keystore.*``), for mutual TLS."""

    key: PrivateKeyTypes
    chain: tuple[x509.Certificate, ...]
    source: str  # the property it came from, as shown to the operator

    def __repr__(self) -> str:  # the key is a secret
        return f"KeyMaterial(chain={[c.subject.rfc4514_string() for c in self.chain]})"


def _pem_pattern(name: str) -> re.Pattern[str]:
    """``DefaultSslEngineFactory.PemParser``'s pattern: headers, then base64 with any whitespace."""
    label = name.replace(" ", r"\s+")
    border = r"-+{}\s*.*{}[^-]*-+\s+"
    headers = r"(?:\s*[^\r\n]*:[^\r\n]*[\r\n]+)*"
    return re.compile(border.format("BEGIN", label) + headers + r"([a-zA-Z0-9/+=\s]*)" + border.format("END", label))


_CERTIFICATE = _pem_pattern("CERTIFICATE")
_PRIVATE_KEY = _pem_pattern("PRIVATE KEY")


def _pem_entries(pattern: re.Pattern[str], pem: str) -> list[bytes]:
    return [base64.b64decode(re.sub(r"\s", "", m.group(1))) for m in pattern.finditer(pem + "\n")]


def _certificates(pem: str, key: str, label: Label) -> tuple[x509.Certificate, ...]:
    try:
        certs = tuple(x509.load_der_x509_certificate(der) for der in _pem_entries(_CERTIFICATE, pem))
    except ValueError as err:
        raise KafkaSecurityError(label(key), f"a certificate could not be read ({err})") from None
    if not certs:
        raise KafkaSecurityError(label(key), "no certificate (-----BEGIN CERTIFICATE-----) found")
    return certs


def _pem_key(pem: str, key_password: str | None, key: str, label: Label) -> PrivateKeyTypes:
    entries = _pem_entries(_PRIVATE_KEY, pem)
    if len(entries) != 1:
        found = "no private key" if not entries else f"{len(entries)} private keys"
        raise KafkaSecurityError(label(key), f"expected one private key (-----BEGIN PRIVATE KEY-----), found {found}")
    try:
        return load_der_private_key(entries[0], key_password.encode() if key_password is not None else None)
    except TypeError:  # encrypted without a password, or a password for a key that is not encrypted
        problem = "is set, but the private key is not encrypted" if key_password else "is needed: the key is encrypted"
        raise KafkaSecurityError(label("ssl.key.password"), f"{problem} ({label(key)})") from None
    except ValueError:
        if key_password is not None:
            raise KafkaSecurityError(label("ssl.key.password"), f"wrong password for the key in {label(key)}") from None
        raise KafkaSecurityError(label(key), "not a PKCS#8 private key") from None


def _read(location: str, key: str, label: Label) -> bytes:
    try:
        return Path(location).read_bytes()
    except OSError as err:
        raise KafkaSecurityError(label(key), f"cannot read {location}: {err.strerror}") from None


def _jks(data: bytes, location: str, password: str | None, what: str, label: Label) -> jks.KeyStore:
    try:
        return jks.KeyStore.loads(data, password, try_decrypt_keys=False)
    except jks.KeystoreSignatureException:
        problem = f"wrong password for the {what} {location} (its integrity check failed)"
        raise KafkaSecurityError(label(f"ssl.{what.replace(' ', '')}.password"), problem) from None
    except (jks.KeystoreException, ValueError) as err:
        raise KafkaSecurityError(label(f"ssl.{what.replace(' ', '')}.location"), f"{location}: {err}") from None


def _pkcs12(
    data: bytes, location: str, password: str | None, what: str, label: Label
) -> pkcs12.PKCS12KeyAndCertificates:
    try:
        return pkcs12.load_pkcs12(data, password.encode() if password is not None else None)
    except ValueError:
        if not data.startswith(b"\x30"):
            problem = f"{location} is not a JKS, JCEKS or PKCS12 {what}"
            raise KafkaSecurityError(label(f"ssl.{what.replace(' ', '')}.location"), problem) from None
        problem = f"wrong password for the PKCS12 {what} {location} (or the file is damaged)"
        raise KafkaSecurityError(label(f"ssl.{what.replace(' ', '')}.password"), problem) from None


def _check_type(store_type: str, key: str, label: Label) -> str:
    upper = store_type.strip().upper()
    if upper not in STORE_TYPES:
        raise KafkaSecurityError(label(key), f"{store_type} is not supported by the sidecar; use JKS, PKCS12 or PEM")
    return upper


def trusted_certificates(props: dict[str, str], label: Label) -> tuple[x509.Certificate, ...] | None:
    """The trust anchors of ``ssl.truststore.*``; None when none is configured (the default CAs)."""
    store_type = _check_type(props.get("ssl.truststore.type") or "JKS", "ssl.truststore.type", label)
    location = props.get("ssl.truststore.location") or None
    password = props.get("ssl.truststore.password") or None
    inline = props.get("ssl.truststore.certificates") or None
    if (inline or store_type == "PEM") and password is not None:
        raise KafkaSecurityError(label("ssl.truststore.password"), "cannot be specified for PEM format")
    if inline is not None:
        if store_type != "PEM":
            problem = f"can be specified only for PEM, but ssl.truststore.type is {store_type}"
            raise KafkaSecurityError(label("ssl.truststore.certificates"), problem)
        if location is not None:
            problem = "both ssl.truststore.location and ssl.truststore.certificates are specified"
            raise KafkaSecurityError(label("ssl.truststore.certificates"), problem)
        return _certificates(inline, "ssl.truststore.certificates", label)
    if location is None:
        if password is not None:
            problem = "is specified, but ssl.truststore.location is not"
            raise KafkaSecurityError(label("ssl.truststore.password"), problem)
        return None
    data = _read(location, "ssl.truststore.location", label)
    if store_type == "PEM":
        return _certificates(data.decode(errors="replace"), "ssl.truststore.location", label)
    if data[:4] in _JKS_MAGIC:
        store = _jks(data, location, password, "trust store", label)
        ders = [entry.cert for entry in store.certs.values()]
        ders += [entry.cert_chain[0][1] for entry in store.private_keys.values() if entry.cert_chain]
        certs = tuple(x509.load_der_x509_certificate(der) for der in ders)
    else:
        p12 = _pkcs12(data, location, password, "trust store", label)
        certs = tuple(c.certificate for c in ([p12.cert] if p12.cert else []) + list(p12.additional_certs))
    if not certs:
        raise KafkaSecurityError(label("ssl.truststore.location"), f"the trust store {location} holds no certificate")
    return certs


def key_material(props: dict[str, str], label: Label) -> KeyMaterial | None:
    """The client's key and chain of ``ssl.keystore.*``/``ssl.key.password``; None without a key store."""
    store_type = _check_type(props.get("ssl.keystore.type") or "JKS", "ssl.keystore.type", label)
    location = props.get("ssl.keystore.location") or None
    password = props.get("ssl.keystore.password") or None
    key_password = props.get("ssl.key.password") or None
    inline_key = props.get("ssl.keystore.key") or None
    chain = props.get("ssl.keystore.certificate.chain") or None
    if (inline_key or store_type == "PEM") and password is not None:
        problem = "cannot be specified with PEM format, only ssl.key.password may be specified"
        raise KafkaSecurityError(label("ssl.keystore.password"), problem)
    if inline_key is not None:
        if store_type != "PEM":
            problem = f"can be specified only for PEM, but ssl.keystore.type is {store_type}"
            raise KafkaSecurityError(label("ssl.keystore.key"), problem)
        if chain is None:
            raise KafkaSecurityError(label("ssl.keystore.certificate.chain"), "is needed with ssl.keystore.key")
        if location is not None:
            problem = "both ssl.keystore.location and ssl.keystore.key are specified"
            raise KafkaSecurityError(label("ssl.keystore.key"), problem)
        key = _pem_key(inline_key, key_password, "ssl.keystore.key", label)
        return KeyMaterial(
            key, _certificates(chain, "ssl.keystore.certificate.chain", label), label("ssl.keystore.key")
        )
    if chain is not None:
        raise KafkaSecurityError(label("ssl.keystore.key"), "is needed with ssl.keystore.certificate.chain")
    if location is None:
        if password is not None:
            raise KafkaSecurityError(label("ssl.keystore.password"), "is specified, but ssl.keystore.location is not")
        return None
    data = _read(location, "ssl.keystore.location", label)
    if store_type == "PEM":
        text = data.decode(errors="replace")
        key = _pem_key(text, key_password, "ssl.keystore.location", label)
        return KeyMaterial(key, _certificates(text, "ssl.keystore.location", label), label("ssl.keystore.location"))
    if password is None:
        raise KafkaSecurityError(label("ssl.keystore.password"), "is needed with ssl.keystore.location")
    if data[:4] in _JKS_MAGIC:
        store = _jks(data, location, password, "key store", label)
        password_key = "ssl.key.password" if key_password else "ssl.keystore.password"
        return _jks_key(store, location, key_password or password, label(password_key), label)
    p12 = _pkcs12(data, location, password, "key store", label)
    if p12.key is None or p12.cert is None:
        raise KafkaSecurityError(label("ssl.keystore.location"), f"the key store {location} holds no private key")
    certs = (p12.cert.certificate, *(c.certificate for c in p12.additional_certs))
    return KeyMaterial(p12.key, certs, label("ssl.keystore.location"))


def _jks_key(store: jks.KeyStore, location: str, key_password: str, password_key: str, label: Label) -> KeyMaterial:
    entries = list(store.private_keys.values())
    if len(entries) != 1:
        problem = f"the key store {location} holds {len(entries)} private keys; the sidecar needs exactly one"
        raise KafkaSecurityError(label("ssl.keystore.location"), problem)
    entry = entries[0]
    try:
        entry.decrypt(key_password)
    except jks.DecryptionFailureException:
        problem = f"wrong password for the private key '{entry.alias}' in {location}"
        raise KafkaSecurityError(password_key, problem) from None
    key = load_der_private_key(entry.pkey_pkcs8, None)
    chain = tuple(x509.load_der_x509_certificate(der) for _, der in entry.cert_chain)
    return KeyMaterial(key, chain, label("ssl.keystore.location"))
