"""Access control and audit: credentials, the audit log, and how they are built from the settings. Who may
do what is decided by the pure ``rules.access``; ``rest.steps.access`` enforces it on every request."""

from .audit import AuditLog, AuditSink
from .credentials import Credentials, CredentialsError, hash_password, hash_token
from .setup import Access, build_access, build_credentials, listens_beyond_loopback

__all__ = [
    "Access",
    "AuditLog",
    "AuditSink",
    "Credentials",
    "CredentialsError",
    "build_access",
    "build_credentials",
    "hash_password",
    "hash_token",
    "listens_beyond_loopback",
]
