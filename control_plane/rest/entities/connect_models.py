"""The request and response entities of Connect's REST API (the newest release the sidecar provides), as
typed models for the sidecar's OpenAPI document (``rest.routing.openapi``). Field names, enums and omissions mirror
Connect's ``runtime/rest/entities`` (ServerInfo, ConnectorInfo, CreateConnectorRequest, ConnectorStateInfo,
TaskInfo, ConfigInfos, PluginInfo, ConnectorOffsets, LoggerLevel, ErrorMessage, ...) and ``rest.entities.render``;
the fuzzer (tests/integration/test_sidecar_openapi_fuzz.py) checks the answers against them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel
from pydantic.config import JsonDict

ConnectorType = Literal["source", "sink", "unknown"]
TargetState = Literal["RUNNING", "PAUSED", "STOPPED"]


class ErrorMessage(BaseModel):
    """Every error, the sidecar's own included (Connect's ``ErrorMessage``): the HTTP status and a message."""

    error_code: int
    message: str | None


class ServerInfo(BaseModel):
    """``GET /``: the version advertised is the newest release whose API the sidecar provides there."""

    version: str
    commit: str
    kafka_cluster_id: str | None


class ConnectorTaskId(BaseModel):
    connector: str
    task: int


class ConnectorInfo(BaseModel):
    name: str
    config: dict[str, str]
    tasks: list[ConnectorTaskId]
    type: ConnectorType | None = None


EXAMPLE_CONFIG: JsonDict = {
    "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
    "tasks.max": "1",
    "file": "/tmp/connect-input.txt",
    "topic": "connect-input",
}


class CreateConnectorRequest(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"name": "file-source", "config": EXAMPLE_CONFIG, "initial_state": "PAUSED"}]}
    )

    name: str
    config: dict[str, str]
    initial_state: TargetState | None = Field(default=None, description="KIP-980; on every version")


class ConnectorState(BaseModel):
    state: str
    worker_id: str | None
    trace: str | None = Field(default=None, description="only when the connector failed")
    version: str | None = Field(default=None, description="KIP-891: the plugin version (4.1+ workers' records)")


class TaskState(ConnectorState):
    id: int


class ConnectorStateInfo(BaseModel):
    name: str
    connector: ConnectorState
    tasks: list[TaskState]
    type: ConnectorType | None = None


class ExpandedConnectorInfo(BaseModel):
    status: ConnectorStateInfo | None = None
    info: ConnectorInfo | None = None


class ConnectorListingInfo(RootModel[list[str] | dict[str, ExpandedConnectorInfo]]):
    """``GET /connectors``: the names, or with ``expand=status`` / ``expand=info`` each connector's entries."""


class TaskInfo(BaseModel):
    id: ConnectorTaskId
    config: dict[str, str]


class TaskConfigs(RootModel[list[TaskInfo]]):
    """``GET /connectors/{c}/tasks``."""


class TopicList(BaseModel):
    topics: list[str]


class ActiveTopics(RootModel[dict[str, TopicList]]):
    """KIP-558: ``{"<connector>": {"topics": [...]}}``."""


class ConfigKeyInfo(BaseModel):
    name: str
    type: str
    required: bool
    default_value: str | None
    importance: str | None
    documentation: str | None
    group: str | None
    order_in_group: int
    width: str | None
    display_name: str | None
    dependents: list[str]


class ConfigValueInfo(BaseModel):
    name: str
    value: str | None
    recommended_values: list[str]
    errors: list[str]
    visible: bool


class ConfigInfo(BaseModel):
    definition: ConfigKeyInfo | None = None
    value: ConfigValueInfo


class ConfigInfos(BaseModel):
    """``PUT .../config/validate``: every key's definition and value with its errors."""

    name: str
    error_count: int
    groups: list[str]
    configs: list[ConfigInfo]


class PluginInfo(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    class_: str = Field(alias="class")
    type: str
    version: str | None = None


class PluginListInfo(RootModel[list[PluginInfo]]):
    """``GET /connector-plugins``."""


class ConfigKeyInfos(RootModel[list[ConfigKeyInfo]]):
    """``GET /connector-plugins/{p}/config``: the plugin's configuration definition."""


class ConnectorOffset(BaseModel):
    partition: dict[str, Any]
    offset: dict[str, Any] | None


class ConnectorOffsets(BaseModel):
    """KIP-875: the body of ``PATCH .../offsets`` and the answer of ``GET .../offsets``."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"offsets": [{"partition": {"filename": EXAMPLE_CONFIG["file"]}, "offset": {"position": 0}}]},
                {"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 5}}]},
            ]
        }
    )

    offsets: list[ConnectorOffset]


class Message(BaseModel):
    """The answer of an offsets change (Connect's ``Message``)."""

    message: str


class LoggerLevel(BaseModel):
    level: str
    last_modified: int | None = Field(description="KIP-976: epoch milliseconds of the last change, null if none")


class LoggerLevels(RootModel[dict[str, LoggerLevel]]):
    """``GET /admin/loggers``: every logger with a level set."""


class LevelRequest(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"level": "DEBUG"}]})

    level: str


class ChangedLoggers(RootModel[list[str]]):
    """``PUT /admin/loggers/{logger}``: the loggers whose level changed (no body for ``scope=cluster``)."""


class WorkerStatus(BaseModel):
    """KIP-1017: ``GET /health``."""

    status: str
    message: str
    worker_status: dict[str, Any] | None = None


class ConnectorConfigInfo(RootModel[dict[str, str]]):
    """A connector's configuration: the body of ``PUT .../config`` and ``PUT .../validate``."""

    model_config = ConfigDict(json_schema_extra={"examples": [EXAMPLE_CONFIG]})


class ConfigPatch(RootModel[dict[str, str | None]]):
    """The body of ``PATCH .../config`` (KIP-477): the keys to set, null for a key to remove."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"tasks.max": "2", "batch.size": None}]})
