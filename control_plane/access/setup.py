"""The sidecar's access control as the composition root builds it from the settings."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import TextIO

import structlog

from ..rules.secrets import SecretRule
from ..settings import Settings
from .audit import AuditLog, AuditSink
from .credentials import Credentials

log = structlog.get_logger("control_plane.access")


@dataclass(frozen=True)
class Access:
    """``credentials`` None: authentication is off and every request is an anonymous admin."""

    credentials: Credentials | None
    secrets: SecretRule
    audit: AuditLog
    realm: str = "control-plane"


def listens_beyond_loopback(host: str) -> bool:
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return True  # a host name: whatever it resolves to


def build_credentials(settings: Settings) -> Credentials | None:
    """The credentials with authentication on (None: off); raises ``CredentialsError``."""
    if not settings.auth_enabled:
        return None
    env = settings.auth_credentials.get_secret_value() if settings.auth_credentials else None
    return Credentials(settings.auth_credentials_file, env, check_s=settings.auth_file_check_s)


def build_access(settings: Settings, sink: AuditSink | None = None, audit_out: TextIO | None = None) -> Access:
    """Raises ``CredentialsError`` when the credentials cannot be read."""
    secrets = SecretRule(settings.secret_key_patterns)
    credentials = build_credentials(settings)
    if credentials is not None:
        log.info("authentication on", credentials_file=settings.auth_credentials_file)
        if credentials.empty:
            log.warning("authentication on without any credentials: every request but the probes gets 401")
    elif listens_beyond_loopback(settings.host):
        log.warning(
            "AUTHENTICATION IS OFF: the sidecar listens beyond loopback and anyone who reaches it may change "
            "or delete every connector; set CONTROL_PLANE_AUTH_ENABLED and credentials",
            host=settings.host,
            port=settings.port,
        )
    return Access(credentials, secrets, AuditLog(secrets, sink, audit_out), settings.auth_realm)


__all__ = ["Access", "build_access", "build_credentials", "listens_beyond_loopback"]
