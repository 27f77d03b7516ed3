"""``control-plane serve``: settings, then logging, then the app on the sidecar's server (httptools, uvloop).
``control-plane export``: a snapshot of the internal topics for the Spark jobs (see :mod:`.export`).
``control-plane openapi``: the sidecar's OpenAPI document (:mod:`.rest.routing.openapi`), to stdout or a file.
``control-plane plan`` and ``apply``: a client of a sidecar's plan and apply (:mod:`.plan_cli`).
``control-plane create-sidecars-topic``: the sidecars' topic created as a sidecar creates it, for clusters
whose sidecars do not create it (``SIDECARS_TOPIC_CREATE=false``, or the worker's
``internal.topics.automatic.creation.enable=false``).
``control-plane bulk``: a client of a sidecar's bulk actions (:mod:`.bulk_cli`).
``control-plane clusters``: several clusters' sidecars at a glance (:mod:`.clusters_cli`)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

from . import bulk_cli, clusters_cli, plan_cli
from .settings import Settings, SettingsError, load_settings

if TYPE_CHECKING:
    from .rest.serving.app import SidecarApp


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="control-plane", description="A control-plane sidecar for Kafka Connect")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve the sidecar in front of a Connect cluster")
    serve.add_argument("--host", help="address to listen on (CONTROL_PLANE_HOST)")
    serve.add_argument("--port", type=int, help="port to listen on (CONTROL_PLANE_PORT)")
    serve.add_argument("--connect-url", action="append", help="a Connect worker URL; repeat for several")
    serve.add_argument("--worker-properties", help="the Connect worker's properties file to learn from")
    serve.add_argument("--log-format", choices=["auto", "json", "console"])
    serve.add_argument("--log-level", choices=["debug", "info", "warning", "error"])
    hashing = sub.add_parser("hash-credential", help="print the hashed credential of a token or password (stdin)")
    hashing.add_argument("kind", choices=["token", "password"])
    snapshot = sub.add_parser("export", help="snapshot the internal topics to JSON lines or Parquet")
    snapshot.add_argument("--worker-properties", help="the Connect worker's properties file to learn from")
    snapshot.add_argument("--bootstrap-servers", help="Kafka bootstrap servers (default: the worker's)")
    snapshot.add_argument("--out", required=True, help="the snapshot file (.jsonl or .parquet)")
    snapshot.add_argument("--format", choices=["jsonl", "parquet"], help="default: from the file name")
    snapshot.add_argument("--timeout-s", type=float, default=60.0, help="how long reading each topic may take")
    plan_cli.add_arguments(sub)
    topic = sub.add_parser("create-sidecars-topic", help="create the sidecars' topic (or check the existing one)")
    topic.add_argument("--worker-properties", help="the Connect worker's properties file to learn from")
    topic.add_argument("--bootstrap-servers", help="Kafka bootstrap servers (default: the worker's)")
    bulk_cli.add_arguments(sub)
    clusters_cli.add_arguments(sub)
    document = sub.add_parser("openapi", help="write the sidecar's OpenAPI document (GET /_sidecar/openapi.json)")
    document.add_argument("--out", help="the file to write (default: stdout)")
    args = parser.parse_args(argv)
    if args.command == "export":
        return _export(args)
    if args.command == "hash-credential":
        return _hash_credential(args.kind)
    if args.command == "openapi":
        return _openapi(args.out)
    if args.command == "create-sidecars-topic":
        return _create_sidecars_topic(args)
    if args.command in ("plan", "apply"):
        return plan_cli.run(args)
    if args.command == "bulk":
        return bulk_cli.run(args)
    if args.command == "clusters":
        return clusters_cli.run(args)

    try:
        settings = load_settings(
            host=args.host,
            port=args.port,
            connect_urls=",".join(args.connect_url) if args.connect_url else None,
            worker_properties=args.worker_properties,
            log_format=args.log_format,
            log_level=args.log_level,
        )
    except SettingsError as err:
        print(f"control-plane: {err}", file=sys.stderr)
        return 2

    from . import logs
    from .access import CredentialsError, build_credentials
    from .rest import create_app

    logs.configure(settings.log_format, settings.log_level, settings.secret_key_patterns)
    try:  # the credentials read once before serving: a bad file stops the start with its line named
        build_credentials(settings)
    except CredentialsError as err:
        print(f"control-plane: {err}", file=sys.stderr)
        return 2
    return _serve(settings, create_app(settings))


def _serve(settings: Settings, app: SidecarApp) -> int:
    """The sidecar's server (``rest.serving.server``) on uvloop, with the sidecar's TLS and graceful shutdown: on
    SIGTERM or SIGINT it stops accepting, lets the requests under way finish for ``shutdown_grace_s`` (then
    cancels them), and runs the lifespan's shutdown (the composition root stops in reverse: pending status
    writes flushed for ``shutdown_flush_timeout_s``) before the process ends."""
    import structlog
    import uvloop

    from .listener_tls import CertificateReloader, server_context
    from .rest.serving.server import serve

    context = None
    reloader = None
    if settings.tls_certfile and settings.tls_keyfile:
        context = server_context(
            settings.tls_certfile,
            settings.tls_keyfile,
            password=settings.tls_keyfile_password,
            client_ca_file=settings.tls_client_ca_file,
        )
        reloader = CertificateReloader(
            context,
            settings.tls_certfile,
            settings.tls_keyfile,
            password=settings.tls_keyfile_password,
            client_ca_file=settings.tls_client_ca_file,
            interval_s=settings.tls_reload_interval_s,
        )

    async def main() -> None:
        watching = asyncio.create_task(reloader.run(), name="tls-reload") if reloader else None
        try:
            await serve(
                app, host=settings.host, port=settings.port, grace_s=settings.shutdown_grace_s, ssl_context=context
            )
        finally:
            if watching is not None:
                watching.cancel()

    try:
        uvloop.run(main())
    except Exception as err:  # noqa: BLE001 - the composition root did not start: said once, with its cause
        structlog.get_logger(__name__).error("startup failed", error=repr(err), exc_info=err)
        return 3
    return 0


def _hash_credential(kind: str) -> int:
    """``control-plane hash-credential token|password``: the secret read from stdin (one line), its hash
    printed for the credentials file (``control_plane.access.credentials``)."""
    from .access import hash_password, hash_token

    secret = sys.stdin.readline().rstrip("\r\n")
    if not secret:
        print("control-plane hash-credential: no secret on stdin", file=sys.stderr)
        return 2
    print(hash_token(secret) if kind == "token" else hash_password(secret))
    return 0


def _export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from . import logs
    from .export import ExportError, export, format_for

    try:
        settings = load_settings(worker_properties=args.worker_properties, bootstrap_servers=args.bootstrap_servers)
        logs.configure(settings.log_format, "error")
        out = Path(args.out)
        count = export(
            settings,
            out,
            format_for(out, args.format),
            args.timeout_s,
            lambda topic, n: print(f"control-plane export: {topic}: {n} record(s)", file=sys.stderr),
        )
    except (SettingsError, ExportError) as err:
        print(f"control-plane export: {err}", file=sys.stderr)
        return 2
    print(f"control-plane export: {count} record(s) written to {out}", file=sys.stderr)
    return 0


def _create_sidecars_topic(args: argparse.Namespace) -> int:
    """The topic created as the sidecar creates it (``SidecarTopic``: one partition, compacted, the replication
    factor's setting, ``min.insync.replicas`` from it), or the existing one checked; exit 0 when usable, 1
    when it exists but cannot be used or the brokers refused, 2 for bad settings."""
    from . import logs
    from .composition.clients import build_kafka_writes
    from .kafka_config import client_kwargs
    from .storage.errors import StorageError
    from .storage.sidecar_topic import SidecarTopic
    from .storage.topic_admin import TopicAdmin

    name = "control-plane create-sidecars-topic"
    try:
        settings = load_settings(worker_properties=args.worker_properties, bootstrap_servers=args.bootstrap_servers)
    except SettingsError as err:
        print(f"{name}: {err}", file=sys.stderr)
        return 2
    logs.configure(settings.log_format, "warning", settings.secret_key_patterns)
    timeout_ms = settings.emulation_request_timeout_ms
    topic = SidecarTopic(
        settings.sidecars_topic_name,
        TopicAdmin(client_kwargs(settings), timeout_ms),
        lambda: None,  # type: ignore[arg-type,return-value]  # never writes
        timeout_ms / 1000,
        build_kafka_writes(settings),
        replication_factor=settings.sidecars_topic_replication_factor,
    )
    try:
        usable, refusal = asyncio.run(topic.create())
    except StorageError as err:
        print(f"{name}: {settings.sidecars_topic_name}: {err}", file=sys.stderr)
        return 1
    if not usable:
        print(
            f"{name}: {refusal or f'{settings.sidecars_topic_name} could not be created (see the log)'}",
            file=sys.stderr,
        )
        return 1
    print(f"{name}: {settings.sidecars_topic_name} is ready", file=sys.stderr)
    return 0


def _openapi(out: str | None) -> int:
    from pathlib import Path

    from .rest.routing.openapi import document_json

    if out is None:
        sys.stdout.buffer.write(document_json())
    else:
        Path(out).write_bytes(document_json())
        print(f"control-plane openapi: written to {out}", file=sys.stderr)
    return 0
