"""Imported at the start of a sidecar process that a test starts with this folder on ``PYTHONPATH`` (``site``
imports ``sitecustomize``), to hold one write where the test kills the process: with ``SIDECAR_TEST_HOLD_KEY``
set, the write of the record with that key (to any of the sidecar's topics) never goes out, and
``SIDECAR_TEST_HELD_FILE`` is created once it is held. The records before it in the same request are written
as usual. Nothing changes in a process started without it."""

from __future__ import annotations

import os

_KEY = os.environ.get("SIDECAR_TEST_HOLD_KEY")

if _KEY:
    import asyncio
    from pathlib import Path
    from typing import Any

    from control_plane.storage import kafka_writes

    _held_key = _KEY.encode()
    _write = kafka_writes.KafkaWrites.write

    async def _held(self: kafka_writes.KafkaWrites, *args: Any, **kwargs: Any) -> int:
        record = args[3]  # (kind, producer, topic, record, timeout_s)
        if record[0] == _held_key:
            Path(os.environ["SIDECAR_TEST_HELD_FILE"]).touch()
            await asyncio.Event().wait()  # until the test kills the process
        return await _write(self, *args, **kwargs)

    kafka_writes.KafkaWrites.write = _held  # type: ignore[method-assign]
