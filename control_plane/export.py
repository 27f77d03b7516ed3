"""``control-plane export``: a snapshot of the Connect cluster's three internal topics, for offline
analysis (the Spark jobs' ``--snapshot``), and of the config history the sidecars keep in their own topic
(``codecs.config_history``: its ``config-history-`` and ``config-author-`` records, where the topic exists).

Every record from the beginning of each topic up to the end offsets seen at start, read as the worker
reads them (:class:`~control_plane.storage.log_reader.TopicTail`), one row per record: ``topic``,
``partition``, ``offset``, ``timestamp`` (ms since the epoch), ``key``, ``value`` (null for a
tombstone). JSON lines carry ``key`` and ``value`` in base64, so the bytes stay exact (the worker looks
source offsets up by their exact key bytes); Parquet carries them as binary and needs ``pyarrow``
(``pip install 'control-plane[spark]'``).

Secrets do not leave in a snapshot: in the config topic's connector and task configs, the values of secret
keys are masked (``rules.secrets``, the ``secret_key_patterns`` setting; config provider references stay),
and the session key (which signs the workers' internal requests) is emptied. The history's records keep
their secrets as ``[hidden]`` and say only which versions of a connector's secret hold the same value:
each mark (a digest under ``HISTORY_SECRET_KEY``, or of an earlier key) becomes ``value-1``, ``value-2``...
per connector and key, in the order of the versions (``rules.config_diff.redacted``), so that no digest a
reader could test a guess against leaves. Those records are written again as a worker (or a sidecar) writes
them; every other record keeps its exact bytes.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .codecs.config import ConnectorConfig, SessionKey, TaskConfig, decode_config, encode_config
from .codecs.config_history import AUTHOR_PREFIX, ENTRY_PREFIX, HistoryEntry, decode_entry, encode_entry
from .kafka_config import client_kwargs
from .rules.config_diff import redacted
from .rules.secrets import SecretRule
from .settings import Settings
from .storage.errors import ReadTimeout
from .storage.log_reader import LogRecord, TopicTail
from .storage.topic_admin import TopicAdmin, TopicAdminError

if TYPE_CHECKING:  # pyarrow is optional (the spark extra): imported where a Parquet snapshot is made
    import pyarrow as pa

FORMATS = ("jsonl", "parquet")


class ExportError(RuntimeError):
    """The snapshot could not be taken; the message says why."""


def format_for(path: Path, requested: str | None) -> str:
    if requested:
        return requested
    return "parquet" if path.suffix == ".parquet" else "jsonl"


async def read_topics(
    settings: Settings, timeout_s: float, on_progress: Callable[[str, int], None] | None = None
) -> list[LogRecord]:
    topics = [settings.config_storage_topic, settings.status_storage_topic, settings.offset_storage_topic]
    if not all(topics):
        raise ExportError(
            "the internal topic names are unknown: pass --worker-properties or set "
            "CONTROL_PLANE_CONFIG_STORAGE_TOPIC, CONTROL_PLANE_STATUS_STORAGE_TOPIC and "
            "CONTROL_PLANE_OFFSET_STORAGE_TOPIC"
        )
    history = settings.sidecars_topic_name
    if await _exists(settings, history, timeout_s):
        topics.append(history)
    records: list[LogRecord] = []

    def keep(record: LogRecord) -> None:
        if record.topic != history or (record.key or b"").startswith(HISTORY_KEYS):
            records.append(record)

    for topic in topics:
        assert topic is not None
        tail = TopicTail(topic, client_kwargs(settings), lambda record: keep(LogRecord.of(record)))
        await tail.start()
        try:
            async with asyncio.timeout(timeout_s):
                await tail.caught_up.wait()
        except TimeoutError:
            reason = tail.error or "no progress"
            raise ExportError(
                f"could not read {topic} from {settings.bootstrap_servers} within {timeout_s:g}s: {reason}"
            ) from None
        except ReadTimeout as err:
            raise ExportError(str(err)) from None
        finally:
            await tail.stop()
        if on_progress:
            on_progress(topic, tail.records_read)
    return records


HISTORY_KEYS = (ENTRY_PREFIX.encode(), AUTHOR_PREFIX.encode())  # of the sidecars' topic, only the history


async def _exists(settings: Settings, topic: str, timeout_s: float) -> bool:
    try:
        described = await TopicAdmin(client_kwargs(settings), int(timeout_s * 1000)).describe([topic])
    except TopicAdminError as err:
        raise ExportError(f"could not look for the sidecars' topic {topic}: {err}") from None
    return described.get(topic) is not None


def masked(
    records: list[LogRecord], config_topic: str | None, rule: SecretRule, history_topic: str | None = None
) -> list[LogRecord]:
    """The records with the config topic's secrets masked and the history's marks of secrets redacted (see
    the module's docstring)."""
    history = _history_redacted(records, history_topic)
    out = []
    for i, record in enumerate(records):
        if i in history:
            if (kept := history[i]) is not None:
                out.append(kept)
            continue
        if record.topic == config_topic and record.value is not None:
            decoded = decode_config(record.key, record.value)
            changed: ConnectorConfig | TaskConfig | SessionKey | None = None
            if isinstance(decoded, ConnectorConfig | TaskConfig):
                properties = rule.mask_strings(decoded.properties)
                if properties != dict(decoded.properties):
                    changed = dataclasses.replace(decoded, properties=properties)
            elif isinstance(decoded, SessionKey):
                changed = dataclasses.replace(decoded, key="")
            if changed is not None:
                record = dataclasses.replace(record, value=encode_config(changed)[1])
        out.append(record)
    return out


def _history_redacted(records: list[LogRecord], history_topic: str | None) -> dict[int, LogRecord | None]:
    """By index, the history entries whose marks of secrets are redacted, written again; None for an entry
    that does not read as one (left out: it might hold a digest)."""
    entries: dict[int, HistoryEntry | None] = {}
    for i, r in enumerate(records):
        if r.topic == history_topic and r.value is not None and (r.key or b"").startswith(ENTRY_PREFIX.encode()):
            decoded = decode_entry(r.key, r.value)
            entries[i] = decoded if isinstance(decoded, HistoryEntry) else None
    ordered = sorted((e for e in entries.values() if e is not None), key=lambda e: (e.connector, e.offset))
    marks = redacted((e.connector, key, mark) for e in ordered for key, mark in sorted(e.secrets.items()))
    out: dict[int, LogRecord | None] = {}
    for i, entry in entries.items():
        if entry is None or not entry.secrets:
            out[i] = None if entry is None else records[i]
            continue
        secrets = {key: marks[(entry.connector, key, mark)] for key, mark in entry.secrets.items()}
        out[i] = dataclasses.replace(records[i], value=encode_entry(dataclasses.replace(entry, secrets=secrets))[1])
    return out


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def write_jsonl(records: list[LogRecord], path: Path) -> None:
    with path.open("w", encoding="utf-8") as out:
        for r in records:
            row = {
                "topic": r.topic,
                "partition": r.partition,
                "offset": r.offset,
                "timestamp": r.timestamp,
                "key": _b64(r.key),
                "value": _b64(r.value),
            }
            out.write(json.dumps(row, separators=(",", ":")) + "\n")


def parquet_schema() -> pa.Schema:
    """The columns of a Parquet snapshot (the Spark jobs read it; bench/spark_jobs.py writes big ones)."""
    import pyarrow as pa

    columns: list[tuple[str, pa.DataType]] = [  # typed: mixed DataTypes would be list[object]
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("timestamp", pa.int64()),
        ("key", pa.binary()),
        ("value", pa.binary()),
    ]
    return pa.schema(columns)


def write_parquet(records: list[LogRecord], path: Path) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ExportError(
            "Parquet needs pyarrow: pip install 'control-plane[spark]', or export --format jsonl"
        ) from None
    schema = parquet_schema()
    columns = {
        "topic": [r.topic for r in records],
        "partition": [r.partition for r in records],
        "offset": [r.offset for r in records],
        "timestamp": [r.timestamp for r in records],
        "key": [r.key for r in records],
        "value": [r.value for r in records],
    }
    pq.write_table(pa.table(columns, schema=schema), path)


def export(
    settings: Settings, out: Path, fmt: str, timeout_s: float, on_progress: Callable[[str, int], None] | None = None
) -> int:
    """Write the snapshot; returns the number of records."""
    records = asyncio.run(read_topics(settings, timeout_s, on_progress))
    rule = SecretRule(settings.secret_key_patterns)
    records = masked(records, settings.config_storage_topic, rule, settings.sidecars_topic_name)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    (write_parquet if fmt == "parquet" else write_jsonl)(records, tmp)
    tmp.replace(out)
    return len(records)
