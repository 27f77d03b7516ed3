"""TLS on the sidecar's own listener, with the certificate reloaded without a restart.

The server's ``ssl.SSLContext`` is made once (``server_context``, from the settings' files); every new connection
gets an ``SSLObject`` of that context, so loading a new certificate chain into the same context serves it
to every connection made after, while the connections already open keep theirs. ``CertificateReloader``
checks the files every ``interval_s`` (their inode, size and modification time) and, when they changed,
loads them again; a pair that does not load (a key that does not match the certificate, a file half
written) is logged and tried again at the next check, the old certificate served meanwhile. A client CA
file that changed is loaded again too: certificates it adds are trusted at once; one removed from it
stays trusted until a restart (OpenSSL's store only grows).

Connect's own listener (``listeners=https://...`` with ``listeners.https.ssl.*``) reads its key store once,
at start: a new certificate needs a worker restart there.
"""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import Sequence

import structlog

log = structlog.get_logger(__name__)

Signature = tuple[tuple[int, int, int] | None, ...]


def signature(paths: Sequence[str]) -> Signature:
    """What says a file changed: inode, size and modification time of each (None: missing)."""
    marks: list[tuple[int, int, int] | None] = []
    for path in paths:
        try:
            stat = os.stat(path)
        except OSError:
            marks.append(None)
            continue
        marks.append((stat.st_ino, stat.st_size, stat.st_mtime_ns))
    return tuple(marks)


def server_context(
    certfile: str, keyfile: str, *, password: str | None = None, client_ca_file: str | None = None
) -> ssl.SSLContext:
    """The listener's TLS context: the certificate chain and key; with a client CA file, clients must present
    a certificate it signed."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certfile, keyfile, password)
    if client_ca_file:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cafile=client_ca_file)
    return context


class CertificateReloader:
    def __init__(
        self,
        context: ssl.SSLContext,
        certfile: str,
        keyfile: str,
        *,
        password: str | None = None,
        client_ca_file: str | None = None,
        interval_s: float = 10.0,
    ) -> None:
        self.context = context
        self.certfile = certfile
        self.keyfile = keyfile
        self.password = password
        self.client_ca_file = client_ca_file
        self.interval_s = interval_s
        self.reloads = 0
        self._loaded = signature(self._paths())

    def _paths(self) -> list[str]:
        return [self.certfile, self.keyfile, *([self.client_ca_file] if self.client_ca_file else [])]

    def check(self) -> bool:
        """Load the files again when they changed since the last load; True when they were loaded."""
        now = signature(self._paths())
        if now == self._loaded:
            return False
        try:
            self.context.load_cert_chain(self.certfile, self.keyfile, self.password)
            if self.client_ca_file:
                self.context.load_verify_locations(cafile=self.client_ca_file)
        except (OSError, ssl.SSLError) as err:
            log.warning("TLS certificate not reloaded; the previous one is still served", error=str(err))
            return False
        self._loaded = now
        self.reloads += 1
        log.info("TLS certificate reloaded", certfile=self.certfile)
        return True

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            self.check()


__all__ = ["CertificateReloader", "server_context", "signature"]
