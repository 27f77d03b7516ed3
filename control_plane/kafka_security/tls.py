"""The TLS side of a Kafka client (``SslConfigs``) as one ``ssl.SSLContext``.

Mirrors ``DefaultSslEngineFactory``: ``ssl.protocol`` (default TLSv1.3) is the newest version the context
speaks, ``ssl.enabled.protocols`` (default TLSv1.2,TLSv1.3; empty: the JDK's defaults) the versions it
may use, ``ssl.endpoint.identification.algorithm`` (default https; empty: no host name check, the chain
is still verified). As Java's PKIX trust manager does, every certificate of the trust store is an anchor
(an intermediate or a self-signed server certificate too). Without a trust store, the system's CAs are
trusted (the JDK's cacerts for the worker). ``ssl.keymanager.algorithm``, ``ssl.trustmanager.algorithm``
and ``ssl.secure.random.implementation`` name JDK internals and change nothing here.
"""

from __future__ import annotations

import os
import secrets
import ssl
import tempfile
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, Encoding, PrivateFormat

from .errors import KafkaSecurityError, Label, as_written
from .stores import KeyMaterial, key_material, trusted_certificates

_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_PROTOCOLS = {**_VERSIONS, "TLS": ssl.TLSVersion.TLSv1_3}  # SSLContext.getInstance("TLS"): all versions
# versions the JDK 17 disables itself (jdk.tls.disabledAlgorithms): listed, but never used by the worker
_DISABLED_BY_THE_JDK = ("SSLv2Hello", "SSLv3", "TLSv1", "TLSv1.1")
_ENGINE_FACTORIES = (
    "org.apache.kafka.common.security.ssl.DefaultSslEngineFactory",
    "org.apache.kafka.common.security.ssl.CommonNameLoggingSslEngineFactory",
)


@dataclass(frozen=True)
class TlsSettings:
    trusted: tuple[x509.Certificate, ...] | None  # None: the system's default CAs
    key: KeyMaterial | None
    minimum: ssl.TLSVersion
    maximum: ssl.TLSVersion
    check_hostname: bool


def _versions(props: dict[str, str], label: Label) -> tuple[ssl.TLSVersion, ssl.TLSVersion]:
    protocol = (props.get("ssl.protocol") or "TLSv1.3").strip()
    if protocol not in _PROTOCOLS:
        problem = f"{protocol} is not supported by the sidecar; use TLSv1.3, TLSv1.2 or TLS"
        raise KafkaSecurityError(label("ssl.protocol"), problem)
    names = [p.strip() for p in props.get("ssl.enabled.protocols", "TLSv1.2,TLSv1.3").split(",") if p.strip()]
    unknown = [n for n in names if n not in _VERSIONS and n not in _DISABLED_BY_THE_JDK]
    if unknown:
        problem = f"{', '.join(unknown)} is not supported by the sidecar; use TLSv1.2 and/or TLSv1.3"
        raise KafkaSecurityError(label("ssl.enabled.protocols"), problem)
    enabled = [_VERSIONS[n] for n in names if n in _VERSIONS] if names else list(_VERSIONS.values())
    maximum = min(max(enabled, default=_PROTOCOLS[protocol]), _PROTOCOLS[protocol])
    if not enabled or min(enabled) > maximum:
        problem = f"no version left to use with ssl.protocol={protocol} (TLSv1.1 and older are disabled in Java 17)"
        raise KafkaSecurityError(label("ssl.enabled.protocols"), problem)
    return min(enabled), maximum


def tls_settings(props: dict[str, str], label: Label = as_written) -> TlsSettings:
    """Read and check the ``ssl.*`` properties (stores included); raise ``KafkaSecurityError``."""
    if (props.get("ssl.cipher.suites") or "").strip():
        problem = "a cipher suite list (Java's names) is not supported by the sidecar; remove it to use the defaults"
        raise KafkaSecurityError(label("ssl.cipher.suites"), problem)
    if (props.get("ssl.provider") or "").strip():
        raise KafkaSecurityError(label("ssl.provider"), "a JCA security provider is not supported by the sidecar")
    factory = (props.get("ssl.engine.factory.class") or "").strip()
    if factory and factory not in _ENGINE_FACTORIES:
        raise KafkaSecurityError(label("ssl.engine.factory.class"), f"{factory} is not supported by the sidecar")
    algorithm = props.get("ssl.endpoint.identification.algorithm", "https").strip()
    if algorithm.lower() not in ("https", ""):
        problem = f"{algorithm} is not supported by the sidecar; use https or an empty value"
        raise KafkaSecurityError(label("ssl.endpoint.identification.algorithm"), problem)
    minimum, maximum = _versions(props, label)
    return TlsSettings(
        trusted=trusted_certificates(props, label),
        key=key_material(props, label),
        minimum=minimum,
        maximum=maximum,
        check_hostname=algorithm != "",
    )


def ssl_context(tls: TlsSettings) -> ssl.SSLContext:
    """A client context; the key goes through a private temporary file (Python's ``ssl`` reads keys
    from files only), encrypted with a one-time password, and is deleted at once."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version, context.maximum_version = tls.minimum, tls.maximum
    if tls.trusted is None:
        context.load_default_certs()
    else:
        context.load_verify_locations(cadata="".join(c.public_bytes(Encoding.PEM).decode() for c in tls.trusted))
        context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    context.check_hostname = tls.check_hostname
    if tls.key is not None:
        _load_key(context, tls.key)
    return context


def _load_key(context: ssl.SSLContext, material: KeyMaterial) -> None:
    password = secrets.token_urlsafe(32)
    pem = material.key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, BestAvailableEncryption(password.encode()))
    pem += b"".join(cert.public_bytes(Encoding.PEM) for cert in material.chain)
    with tempfile.TemporaryDirectory(prefix="control-plane-tls-") as directory:  # mode 0700
        path = os.path.join(directory, "client.pem")
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as file:
            file.write(pem)
        try:
            context.load_cert_chain(path, password=password)
        except ssl.SSLError as err:
            problem = f"the private key and the certificate chain do not go together ({err.reason})"
            raise KafkaSecurityError(material.source, problem) from None
