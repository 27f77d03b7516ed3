"""Secrets masked in the sidecar's own outputs besides its answers: the log, exports, Spark's decoded configs,
and the start (the warning without authentication, the credentials checked by ``serve``)."""

from __future__ import annotations

import io
import sys

import pyarrow as pa
import pytest
import structlog

from control_plane import logs
from control_plane.access import build_access, listens_beyond_loopback
from control_plane.cli import main
from control_plane.codecs.config import ConnectorConfig, SessionKey, TaskConfig, decode_config, encode_config
from control_plane.codecs.config_history import HistoryEntry, decode_entry, encode_entry
from control_plane.export import masked
from control_plane.rules.config_diff import SecretDigests
from control_plane.rules.secrets import DEFAULT_SECRET_RULE, MASK
from control_plane.settings import load_settings
from control_plane.storage.log_reader import LogRecord
from spark_jobs.transforms.decode import _config_rows

SECRET_CONFIG = {"connector.class": "X", "connection.password": "hunter2", "api.key": "${env:API_KEY}"}


def test_log_lines_carry_configs_masked() -> None:
    processor = logs.masking(DEFAULT_SECRET_RULE)
    event = processor(None, "info", {"event": "e", "config": dict(SECRET_CONFIG), "key": "connector-c"})
    assert event["config"] == {**SECRET_CONFIG, "connection.password": MASK}
    assert event["key"] == "connector-c"  # plain fields are not configs


def test_exports_mask_the_config_topics_secrets_and_keep_other_bytes() -> None:
    def config(record: ConnectorConfig | TaskConfig | SessionKey, offset: int) -> LogRecord:
        key, value = encode_config(record)
        return LogRecord("configs", 0, offset, 0, key, value)

    records = [
        config(ConnectorConfig("c", SECRET_CONFIG), 0),
        config(TaskConfig("c", 0, SECRET_CONFIG), 1),
        config(ConnectorConfig("d", {"topics": "t"}), 2),
        config(SessionKey("c2VjcmV0", "HmacSHA256", 1), 3),
        LogRecord("offsets", 0, 0, 0, b'["c",{}]', b'{"password":"offsets are kept"}'),
    ]
    out = masked(records, "configs", DEFAULT_SECRET_RULE)
    connector = decode_config(out[0].key, out[0].value)
    assert isinstance(connector, ConnectorConfig) and connector.properties["connection.password"] == MASK
    assert connector.properties["api.key"] == "${env:API_KEY}"
    decoded_task = decode_config(out[1].key, out[1].value)
    assert isinstance(decoded_task, TaskConfig) and decoded_task.properties["connection.password"] == MASK
    assert out[2] is records[2] and out[4] is records[4]  # nothing secret: the exact bytes
    decoded_session = decode_config(out[3].key, out[3].value)
    assert isinstance(decoded_session, SessionKey) and decoded_session.key == ""
    assert [r.key for r in out] == [r.key for r in records]


def test_exports_carry_no_digest_of_a_history_s_secrets_only_whether_they_changed() -> None:
    digests = SecretDigests(b"connect-group:connect-cluster")  # a key a reader could know, or guess

    def entry(offset: int, connector: str, password: str) -> LogRecord:
        stored = digests.stored(connector, {"connection.password": password, "topic": "t"})
        value = HistoryEntry(offset, connector, 0, "updated", stored.config, None, "s0", stored.secrets)
        key, body = encode_entry(value)
        return LogRecord("sidecars", 0, offset, 0, key, body)

    records = [
        entry(3, "c", "hunter2"),
        entry(1, "c", "first"),
        entry(5, "c", "hunter2"),
        entry(4, "d", "hunter2"),
        LogRecord("sidecars", 0, 6, 0, b"config-history-6-c", b'{"secrets": {"p": "hmac-sha256:00"}}'),
        LogRecord("sidecars", 0, 7, 0, b"config-author-5-c", b'{"who": "alice", "sidecar": "s0"}'),
    ]
    out = masked(records, "configs", DEFAULT_SECRET_RULE, "sidecars")
    assert b"hmac" not in b"".join(r.value or b"" for r in out)
    decoded = [decode_entry(r.key, r.value) for r in out[:4]]
    assert [e.secrets for e in decoded if isinstance(e, HistoryEntry)] == [
        {"connection.password": "value-2"},  # the same value as version 5, another than version 1's
        {"connection.password": "value-1"},
        {"connection.password": "value-2"},
        {"connection.password": "value-1"},  # another connector's: says nothing of c's
    ]
    assert all(isinstance(e, HistoryEntry) and e.config == {"connection.password": MASK, "topic": "t"} for e in decoded)
    assert [r.key for r in out[4:]] == [b"config-author-5-c"]  # an entry that does not read as one is left out


def test_spark_decodes_configs_masked() -> None:
    key, value = encode_config(ConnectorConfig("c", SECRET_CONFIG))
    batch = pa.RecordBatch.from_pydict(
        {"kafka_partition": [0], "kafka_offset": [0], "timestamp": [0], "key": [key], "value": [value]}
    )
    (properties,) = _config_rows(batch)["properties"]
    assert properties == {**SECRET_CONFIG, "connection.password": MASK}


def test_a_loud_warning_without_authentication_beyond_loopback() -> None:
    assert not listens_beyond_loopback("127.0.0.1") and not listens_beyond_loopback("::1")
    assert not listens_beyond_loopback("localhost")
    assert listens_beyond_loopback("0.0.0.0") and listens_beyond_loopback("::") and listens_beyond_loopback("sidecar")
    with structlog.testing.capture_logs() as captured:
        build_access(load_settings(host="0.0.0.0"), audit_out=io.StringIO())
        build_access(load_settings(host="127.0.0.1"), audit_out=io.StringIO())
    warnings = [e for e in captured if e["log_level"] == "warning"]
    assert len(warnings) == 1 and "AUTHENTICATION IS OFF" in warnings[0]["event"]


def test_hash_credential(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("tok\n"))
    assert main(["hash-credential", "token"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("sha256:") and len(line) == 71


def test_serve_stops_on_a_bad_credentials_file(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "creds"
    path.write_text("token a viewer plain:x\n")
    env = {"CONTROL_PLANE_AUTH_ENABLED": "true", "CONTROL_PLANE_AUTH_CREDENTIALS_FILE": str(path)}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        try:
            assert main(["serve", "--log-format", "json"]) == 2
        finally:
            structlog.reset_defaults()  # serve configured logging for the process
    assert "hashed credentials only" in capsys.readouterr().err
