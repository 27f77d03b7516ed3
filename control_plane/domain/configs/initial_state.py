"""``initial_state`` on ``POST /connectors`` (KIP-980, Connect 3.7) on workers without it.

Connect 3.7+ reads ``initial_state`` (``rest.entities.CreateConnectorRequest.InitialState``: RUNNING,
PAUSED or STOPPED, any case) and writes the target state to the config topic before the connector's
configuration, in one batch (``KafkaConfigBackingStore.putConnectorConfig`` with a target state), so the
connector never runs before it is paused or stopped. Older workers refuse the field (Jackson's 500
"Unrecognized field"). Here the sidecar does what 3.7 does, in the same order:

1. a value Jackson cannot read is refused with 4.3.1's 500 and Jackson's message (``jackson_error``);
2. the configuration goes through the sidecar's checks and the worker's validation; a connector that
   exists already, or a configuration the worker would refuse, goes to the worker without the field, and
   nothing is written (the worker's own 409 or 400);
3. the target state is written to the config topic (``{"state":"PAUSED"}``, or the two-field STOPPED
   that older workers read as PAUSED) and read back; a worker before 3.5 keeps a target state that
   precedes the configuration (``KafkaConfigBackingStore.processConnectorConfigRecord`` only defaults a
   connector without one to STARTED), and a paused connector generates no tasks;
4. the create goes to the worker without the field; its answer (201 with the ConnectorInfo) is the
   client's. If it does not create the connector, the target state is removed again (a tombstone), so a
   later create of that name starts as asked. If its answer never comes (the worker stalled, the
   connection broke), the create may still land: the target state stays, and the connector's writes stay
   held (``cluster.writes``), until the worker can no longer make it; only then is the target state of a
   connector that was not created removed.

A validation that did not answer (step 2) is no verdict: the create takes the way of steps 3 and 4, which
holds whether the configuration is valid or not (the worker refuses an invalid one, and the target state
is removed).

RUNNING is the default on every version: the create goes to the worker without the field.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from ...codecs import TargetState, Tombstone, json_wire
from ...codecs.config import ConfigKey, ConfigKind
from ...storage.config_writer import ConfigWriteFailed
from ...storage.errors import ReadTimeout
from ...upstream import UpstreamRequest, UpstreamResponse
from ..cluster.forward_route import ForwardRoute
from ..cluster.outcome import unknown_outcome
from ..cluster.writes import ConnectorWrites
from ..connect_api import JSON_HEADERS, Config
from ..errors import OperationFailed, ViewNotReady
from ..jackson import chain, location, members
from ..outcomes import Refusal, Relay
from ..ports import ConfigLog, ViewSnapshot
from .connector_configs import ConnectorConfigs

log = structlog.get_logger(__name__)

FIELD = "initial_state"
STATES = ("RUNNING", "PAUSED", "STOPPED")
TARGET = {"RUNNING": "STARTED", "PAUSED": "PAUSED", "STOPPED": "STOPPED"}
ENUM = "org.apache.kafka.connect.runtime.rest.entities.CreateConnectorRequest$InitialState"
CHAIN = chain("org.apache.kafka.connect.runtime.rest.entities.CreateConnectorRequest", FIELD)
VIEW_NEEDED = (
    "Creating a connector PAUSED or STOPPED on this Connect version needs the sidecar's view of the internal "
    "topics, which is {why}"
)


@dataclass(frozen=True)
class InitialState:
    state: str  # RUNNING, PAUSED or STOPPED


@dataclass(frozen=True)
class Unreadable:
    message: str  # Jackson's, as Connect 4.3.1 answers it (500)


def _value_offset(body: bytes) -> int | None:
    """The byte offset of the top-level ``initial_state`` value (the last, as Jackson reads duplicates)."""
    offsets = [offset for key, offset, _ in members(body) if key == FIELD]
    return offsets[-1] if offsets else None


def _scalar_text(value: Any, body: bytes, offset: int) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    # a number: its text as written (Jackson hands the token's text to the String creator)
    end = offset
    while end < len(body) and body[end : end + 1] not in b" \t\r\n,}]":
        end += 1
    return body[offset:end].decode()


def jackson_error(value: Any, body: bytes) -> str | None:
    """Jackson's message for an ``initial_state`` it cannot read (Connect 4.3.1's answer), else None."""
    if value is None:
        return None
    offset = _value_offset(body) or 0
    at = location(body, offset) + CHAIN
    if isinstance(value, dict):
        return f"Cannot deserialize value of type `{ENUM}` from Object value (token `JsonToken.START_OBJECT`){at}"
    if isinstance(value, list):
        return (
            f"Input mismatch reading Enum `{ENUM}`: properties-based `@JsonCreator` ([method {ENUM}#forValue"
            "(java.lang.String)]) expects String Value, got Array value (`JsonToken.START_ARRAY`)" + at
        )
    text = _scalar_text(value, body, offset)
    if text.upper() in STATES:  # InitialState.forValue: valueOf(value.toUpperCase(Locale.ROOT))
        return None
    return (
        f"Cannot construct instance of `{ENUM}`, problem: No enum constant {ENUM.replace('$', '.')}.{text.upper()}{at}"
    )


def read_initial_state(body: Mapping[str, Any], raw: bytes) -> InitialState | Unreadable | None:
    """The create request's ``initial_state``: None when absent or null."""
    value = body.get(FIELD)
    if value is None:
        return None
    error = jackson_error(value, raw)
    if error is not None:
        return Unreadable(error)
    return InitialState(_scalar_text(value, raw, _value_offset(raw) or 0).upper())


class ConnectorCreation:
    """``POST /connectors`` with ``initial_state`` where the workers lack it (see the module docstring)."""

    def __init__(
        self,
        workers: ForwardRoute,
        configs: ConnectorConfigs,
        view: ViewSnapshot | None,
        writer: ConfigLog | None,
        read_back_timeout_s: float,
        writes: ConnectorWrites,
    ) -> None:
        self._workers = workers
        self._configs = configs
        self._view = view
        self._writer = writer
        self._read_back_s = read_back_timeout_s
        self._writes = writes

    async def create(self, body: Mapping[str, Any], config: Config, initial: InitialState) -> Relay | Refusal:
        """``body``: the client's request as read; ``config`` its configuration as Connect reads it."""
        request = {k: v for k, v in body.items() if k != FIELD}
        name = str(body.get("name") or "").strip()
        checked = await self._configs.create(name, config)
        if isinstance(checked, Refusal):
            return checked
        # a validation that did not answer is no verdict: the create then takes the way that holds either way
        if initial.state == "RUNNING" or not name or await self._configs.worker_accepts(name, config) is False:
            return Relay(await self._send(request), checked.warnings)
        view, writer = self._ready()
        failure = f"Failed to create connector {name} {initial.state}"
        async with self._writes.serialized(name):  # absent at the moment its target state is written
            state = await self._writes.read_to_end(f"Failed to create connector {name}: cannot read the config topic")
            if state.connector_config(name) is not None:
                return Relay(await self._send(request), checked.warnings)  # the worker's 409
            target = TargetState.of(name, TARGET[initial.state])
            await self._writes.confirm(name, failure)
            await self._write(writer, target, failure)
            # a create whose answer never came may still land: its target state stays until it cannot
            self._writes.if_unknown(name, lambda: self._undo(name))
            try:
                await view.read_to_end("config", self._read_back_s)
                answer = await self._send(request)
            except BaseException as err:
                if unknown_outcome(err) is None:  # the worker never took the create
                    await self._undo(name)
                raise
            if answer.status != 201:
                await self._undo(name)
        log.info("connector created with an initial state", connector=name, state=initial.state, status=answer.status)
        return Relay(answer, checked.warnings)

    def _ready(self) -> tuple[ViewSnapshot, ConfigLog]:
        if self._view is None or self._writer is None:
            raise ViewNotReady(VIEW_NEEDED.format(why="not configured (no config.storage.topic, status.storage.topic)"))
        if not self._view.ready:
            raise ViewNotReady(VIEW_NEEDED.format(why="still reading the topics"))
        return self._view, self._writer

    async def _send(self, request: Mapping[str, Any]) -> UpstreamResponse:
        return await self._workers.send(
            UpstreamRequest("POST", "/connectors", headers=JSON_HEADERS, body=json_wire.dumps_as_read(request))
        )

    async def _write(self, writer: ConfigLog, record: TargetState, failure: str) -> None:
        try:
            await writer.write((record,))
        except ConfigWriteFailed as err:
            raise OperationFailed(
                f"{failure}: writing its target state to the config topic failed: {err.cause}"
            ) from err

    async def _undo(self, name: str) -> None:
        """The target state of a connector the worker did not create, removed (as a delete removes it)."""
        view, writer = self._ready()
        with contextlib.suppress(ReadTimeout):  # else judged on what the view has read
            await view.read_to_end("config", self._read_back_s)
        if view.state.connector_config(name) is not None:
            return
        try:
            await self._writes.confirm(name, f"Removing the target state of connector {name}")
        except OperationFailed as err:  # another sidecar writes the connector now: its target state is its own
            log.error("the target state of a connector not created stays", connector=name, error=str(err))
            return
        try:
            await writer.write((Tombstone(ConfigKey(ConfigKind.TARGET_STATE, name)),))
        except ConfigWriteFailed as err:
            log.error("the target state of a connector not created stays", connector=name, error=err.cause)


__all__ = ["ConnectorCreation", "InitialState", "Unreadable", "jackson_error", "read_initial_state"]
