"""Send the raw requests of ``tests/support/http_cases.py`` to the real workers of a running stack and to a sidecar
built from this checkout in front of each (served in this process), and print what each answered:

    STACK_DIR=/work/stack-shared .venv/bin/python scripts/http_probe.py [--only ID ...]

Columns: the 4.3.1 worker, the 3.4.1 worker, the sidecar in front of 4.3.1, in front of 3.4.1 (status,
Content-Type, the start of the body); ``*`` marks a sidecar answer that differs from the 4.3.1 worker's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from control_plane.rest import create_app  # noqa: E402
from control_plane.rest.serving.server import HttpServer  # noqa: E402
from control_plane.settings import load_settings  # noqa: E402
from tests.support.http_cases import CASES, Case  # noqa: E402
from tests.support.stack import load_stack  # noqa: E402


async def send(port: int, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer


def summary(answer: bytes) -> tuple[str, str, bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = lines[0].split(" ", 2)[1] if " " in lines[0] else lines[0]
    content_type = next((h.split(":", 1)[1].strip() for h in lines[1:] if h.lower().startswith("content-type:")), "-")
    return status, content_type, body


@contextlib.asynccontextmanager
async def sidecar(properties: str) -> AsyncIterator[int]:
    app = create_app(load_settings(worker_properties=properties))
    async with app.lifespan():
        server = HttpServer(app)
        await server.start("127.0.0.1", 0)
        try:
            for _ in range(600):  # ready: its view read to the end
                ready = await send(server.port, b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                if b" 200 " in ready[:20]:
                    break
                await asyncio.sleep(0.1)
            yield server.port
        finally:
            await server.stop(grace_s=5)


async def main(only: list[str]) -> None:
    stack = load_stack()
    new, old = stack.clusters["new"], stack.clusters["old"]
    ports = [int(c.connect_url.rsplit(":", 1)[1]) for c in (new, old)]
    async with sidecar(new.properties) as via_new, sidecar(old.properties) as via_old:
        ports += [via_new, via_old]
        cases: list[Case] = [c for c in CASES if not only or c.id in only]
        print("case | worker 4.3.1 | worker 3.4.1 | sidecar 4.3.1 | sidecar 3.4.1")
        for case in cases:
            answers = [summary(await send(port, case.request())) for port in ports]
            cells = []
            for i, (status, content_type, body) in enumerate(answers):
                mark = "*" if i >= 2 and (status, content_type, body) != answers[0] else ""
                cells.append(f"{mark}{status} {content_type} {body[:70]!r}")
            print(f"{case.id} | " + " | ".join(cells))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", nargs="*", default=[])
    asyncio.run(main(parser.parse_args().only))
