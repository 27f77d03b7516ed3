"""``control-plane serve``: settings, then logging, then the app on uvicorn (httptools, uvloop).
``control-plane export``: a snapshot of the internal topics for the Spark jobs (see :mod:`.export`)."""

from __future__ import annotations

import argparse
import sys

from .settings import SettingsError, load_settings


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
    snapshot = sub.add_parser("export", help="snapshot the internal topics to JSON lines or Parquet")
    snapshot.add_argument("--worker-properties", help="the Connect worker's properties file to learn from")
    snapshot.add_argument("--bootstrap-servers", help="Kafka bootstrap servers (default: the worker's)")
    snapshot.add_argument("--out", required=True, help="the snapshot file (.jsonl or .parquet)")
    snapshot.add_argument("--format", choices=["jsonl", "parquet"], help="default: from the file name")
    snapshot.add_argument("--timeout-s", type=float, default=60.0, help="how long reading each topic may take")
    args = parser.parse_args(argv)
    if args.command == "export":
        return _export(args)

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

    import uvicorn

    from . import logs
    from .rest import create_app
    from .rest.server import protocol

    logs.configure(settings.log_format, settings.log_level)
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        loop="uvloop",
        http=protocol(),  # httptools, with the pass-through served below ASGI (rest.server)
        access_log=False,
        log_config=None,
        log_level=settings.log_level,
        timeout_graceful_shutdown=10,
        server_header=False,
        date_header=False,
    )
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
