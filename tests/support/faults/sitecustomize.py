"""Imported at the start of a sidecar process that a test starts with this folder on ``PYTHONPATH`` (``site``
imports ``sitecustomize``), to hold one write where the test kills the process: with ``SIDECAR_TEST_HOLD_KEY``
set, the write of the record with that key (to any of the sidecar's topics) never goes out, and
``SIDECAR_TEST_HELD_FILE`` is created once it is held. The records before it in the same request (or in the
same batch) are written as usual. Nothing changes in a process started without it."""

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

    _write_all = kafka_writes.KafkaWrites.write_all

    async def _held_in_batch(self: kafka_writes.KafkaWrites, *args: Any, **kwargs: Any) -> list[BaseException | None]:
        kind, producer, topic, records, timeout_s = args  # a batch: the records before the held one written
        keys = [record[0] for record in records]
        if _held_key in keys:
            before = records[: keys.index(_held_key)]
            if before:
                await _write_all(self, kind, producer, topic, before, timeout_s, **kwargs)
            Path(os.environ["SIDECAR_TEST_HELD_FILE"]).touch()
            await asyncio.Event().wait()
        return await _write_all(self, *args, **kwargs)

    kafka_writes.KafkaWrites.write = _held  # type: ignore[method-assign]
    kafka_writes.KafkaWrites.write_all = _held_in_batch  # type: ignore[method-assign]
