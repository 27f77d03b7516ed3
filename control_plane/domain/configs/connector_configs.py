"""Connector configurations on their way to the workers: validate, create, update and PATCH.

Every configuration a client sends goes through the checks of the sidecar (``config_checks``) first.
When none finds anything, the client's request goes to a worker unchanged, so the worker answers as it
always does. When a check finds a problem, the sidecar asks a worker to validate the configuration
(``PUT /connector-plugins/{class}/config/validate``, as ``AbstractHerder.validateConnectorConfig`` does
before every write) and adds its problems to the worker's own answer:

- validate answers that merged validation (200), as a worker that knew the rule would;
- create, update and PATCH are refused with the 400 a worker gives for an invalid configuration
  (``AbstractHerder.maybeAddConfigErrors``: every error, the worker's and the sidecar's, in order), unless
  every problem is a check of the sidecar's own and the operator chose ``config_checks=warn``: then the
  request goes through, with the problems as warnings.

Whatever the sidecar cannot judge (a body a worker would refuse, a worker whose validation does not answer
200) goes to the worker unchanged, so a bad request gets the worker's own answer.

PATCH on workers without it (before 3.8, KIP-477) is done here: the patch applied to the worker's current
configuration (``ConnectUtils.patchConfig``), checked, and PUT. Connect's leader does this atomically in its
tick loop; the sidecar serializes its own writes per connector, and makes the PUT at the moment the config
topic, read to its end, still holds the configuration patched (``cluster.writes``): when it no longer
does, another client changed it meanwhile, and the PATCH starts again from the new one (a few times, then
a 409). A change written by another client between that check and the worker's write is not seen
(docs/features/newer-api.md).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping, Sequence

import orjson

from ...upstream import UpstreamError, UpstreamRequest, UpstreamResponse
from ...view import ClusterView
from ..cluster.writes import ConnectorWrites
from ..config_checks import CheckResult, ConfigCheck, ConfigSubject, RequestKind, combine
from ..config_infos import VALIDATE_ENDPOINT_HINT, ConfigInfos, add_problems, error_count, invalid_config_message
from ..connect_api import JSON_HEADERS, Config, config_path, validate_path
from ..errors import BadRequestError, ConflictError, NotFoundError, OperationFailed
from ..outcomes import SIDECAR, Answer, Forward, Refusal, Relay
from ..ports import ViewSnapshot, Workers
from .unresolved import has_references, shown_as_given

# ConnectUtils.patchConfig on no entity (an empty body or ``null``): 4.3.1's NullPointerException, 500
NO_PATCH = 'Cannot invoke "java.util.Map.forEach(java.util.function.BiConsumer)" because "patch" is null'
PATCH_ATTEMPTS = 3  # an emulated PATCH raced by other changes this often is refused (409)


def patched(config: Config, patch: Config) -> dict[str, str | None]:
    """ConnectUtils.patchConfig: a null value removes the key, any other sets it."""
    result = dict(config)
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = value
    return result


class ConnectorConfigs:
    def __init__(
        self,
        workers: Workers,
        checks: Sequence[ConfigCheck],
        *,
        enforce: bool = True,
        view: ViewSnapshot | None = None,
        writes: ConnectorWrites | None = None,
    ) -> None:
        self._workers = workers
        self._checks = tuple(checks)
        self._enforce = enforce
        self._view = view
        self._writes = writes

    async def _run_checks(self, subject: ConfigSubject) -> CheckResult:
        if not self._checks:
            return CheckResult()
        return combine(list(await asyncio.gather(*(c.check(subject) for c in self._checks))))

    async def _worker_validation(self, path: str, config: Config, hidden: frozenset[str]) -> ConfigInfos | None:
        """The worker's validation of ``config`` without the ``hidden`` keys; None unless it answers 200."""
        body = orjson.dumps({k: v for k, v in config.items() if k not in hidden})
        try:
            answer = await self._workers.forward(UpstreamRequest("PUT", path, headers=JSON_HEADERS, body=body))
        except UpstreamError:
            return None
        if answer.status != 200:
            return None
        infos = answer.json()
        return infos if isinstance(infos, dict) else None

    # -- PUT /connector-plugins/{p}/config/validate ------------------------------------------------
    async def validate(self, path: str, config: Config) -> Answer[ConfigInfos] | Refusal | Forward[ConfigInfos]:
        """``path``: the validate path as the client sent it."""
        name = config.get("name")
        found = await self._run_checks(ConfigSubject(RequestKind.VALIDATE, name, config))
        if found.refusal is not None:
            return Refusal(found.refusal, SIDECAR)
        if not found.problems and not found.hidden_from_worker:
            return Forward(warnings=found.warnings)
        infos = await self._worker_validation(path, config, found.hidden_from_worker)
        if infos is None:
            return Forward(warnings=found.warnings)
        merged = add_problems(infos, found.problems, config, shown=found.hidden_from_worker)
        return Answer(merged, warnings=found.warnings)

    # -- POST /connectors, PUT and PATCH /connectors/{c}/config -----------------------------------
    async def create(self, name: str | None, config: Config, *, redact: bool = False) -> Refusal | Forward[None]:
        """ConnectorsResource.createConnector: the name trimmed, an absent one empty. ``redact``: a refusal
        shows config provider references as 4.4 does (``unresolved``), where the worker would quote them."""
        return await self._write(RequestKind.CREATE, (name or "").strip(), config, redact=redact)

    async def update(self, name: str, config: Config, *, redact: bool = False) -> Refusal | Forward[None]:
        return await self._write(RequestKind.UPDATE, name, config, redact=redact)

    async def worker_accepts(self, name: str, config: Config) -> bool | None:
        """Whether the worker's validation finds no error in ``config`` (named ``name``): None when it is not
        known (the worker did not answer, or failed: not a verdict on the config)."""
        connector_class = config.get("connector.class")
        if not connector_class:
            return False
        body = orjson.dumps({**config, "name": name})
        try:
            answer = await self._workers.forward(
                UpstreamRequest("PUT", validate_path(connector_class), headers=JSON_HEADERS, body=body)
            )
        except UpstreamError:
            return None
        infos = answer.json() if answer.status == 200 else None
        if answer.status >= 500 or (answer.status == 200 and not isinstance(infos, dict)):
            return None
        return isinstance(infos, dict) and infos.get("error_count") == 0

    async def patch(
        self, name: str, patch: Config | None, *, emulate: bool = False, redact: bool = False
    ) -> Refusal | Forward[None] | Relay:
        """DistributedHerder.patchConnectorConfig: the patch applied to the config the worker has now
        (``patch`` None: no entity); ``emulate``: the workers lack PATCH (before 3.8), the sidecar does it."""
        if emulate:
            if self._writes is None:
                return await self._patch_here(name, patch, redact)
            async with self._writes.serialized(name):
                return await self._patch_here(name, patch, redact)
        if not (self._checks or redact) or not patch:
            return Forward()  # an empty patch changes nothing there is to check
        try:
            answer = await self._workers.forward(UpstreamRequest("GET", config_path(name), headers=JSON_HEADERS))
        except UpstreamError:
            return Forward()
        current = answer.json() if answer.status == 200 else None
        if not isinstance(current, dict):
            return Forward()  # the worker answers the PATCH itself (a 404, say)
        return await self._write(RequestKind.PATCH, name, patched(current, patch), redact=redact)

    async def _patch_here(self, name: str, patch: Config | None, redact: bool = False) -> Refusal | Relay:
        for _ in range(PATCH_ATTEMPTS):
            current = await self._current_config(name)
            if current is None:
                return Refusal(NotFoundError(f"Connector {name} not found"), SIDECAR)  # patchConnectorConfig
            if patch is None:  # the connector first, then ConnectUtils.patchConfig (DistributedHerder)
                return Refusal(OperationFailed(NO_PATCH), SIDECAR)
            if isinstance(current, UpstreamResponse):
                return Relay(current)
            config = patched(current, patch)
            checked = await self._write(RequestKind.PATCH, name, config, redact=redact)
            if isinstance(checked, Refusal):
                return checked
            put = UpstreamRequest("PUT", config_path(name), headers=JSON_HEADERS, body=orjson.dumps(config))
            try:
                return Relay(await self._put_if_unchanged(name, current, put), checked.warnings)
            except _Changed:
                continue
        return Refusal(
            ConflictError(
                f"Connector {name}'s configuration was changed by other requests while it was being patched "
                f"({PATCH_ATTEMPTS} times); it was not patched"
            ),
            SIDECAR,
        )

    async def replace(
        self, name: str, config: Config, holds: Callable[[Mapping[str, str | None] | None], bool], *, what: str
    ) -> Refusal | Relay:
        """A PUT of ``config`` made by the sidecar (a rollback, an apply): the same checks as a client's PUT,
        then the PUT at the moment the config topic, read to its end, still holds a config for which ``holds``
        (409 otherwise: someone changed the connector since ``config`` was made from it)."""
        async with self._serialized(name):
            checked = await self._write(RequestKind.UPDATE, name, dict(config))
            if isinstance(checked, Refusal):
                return checked
            put = UpstreamRequest("PUT", config_path(name), headers=JSON_HEADERS, body=orjson.dumps(config))
            try:
                return Relay(await self._made_if(name, holds, put, what), checked.warnings)
            except _Changed:
                return Refusal(ConflictError(self._changed(name, what)), SIDECAR)

    async def delete_if(
        self, name: str, holds: Callable[[Mapping[str, str | None] | None], bool], *, what: str
    ) -> Refusal | Relay:
        """A DELETE of the connector made by the sidecar (an apply's prune), at the moment the config topic
        still holds a config for which ``holds``."""
        delete = UpstreamRequest("DELETE", config_path(name).rsplit("/", 1)[0], headers=JSON_HEADERS)
        async with self._serialized(name):
            try:
                return Relay(await self._made_if(name, holds, delete, what))
            except _Changed:
                return Refusal(ConflictError(self._changed(name, what)), SIDECAR)

    @staticmethod
    def _changed(name: str, what: str) -> str:
        return f"Connector {name}'s configuration was changed by another request; {what} was not made"

    async def _made_if(
        self, name: str, holds: Callable[[Mapping[str, str | None] | None], bool], request: UpstreamRequest, what: str
    ) -> UpstreamResponse:
        if self._writes is None or self._view is None or not self._view.ready:
            raise OperationFailed(f"{what.capitalize()} needs the sidecar's view of the config topic")
        return await self._checked(name, holds, request, f"Failed to write connector {name}")

    async def _checked(
        self,
        name: str,
        holds: Callable[[Mapping[str, str | None] | None], bool],
        request: UpstreamRequest,
        failure: str,
    ) -> UpstreamResponse:
        """``request``, at the moment the config topic read to its end holds a config of ``name`` for which
        ``holds`` (``_Changed`` otherwise): the one precondition step of the writes made here."""
        assert self._writes is not None

        def unchanged(state: ClusterView) -> None:
            if not holds(state.connector_config(name)):
                raise _Changed

        return await self._writes.checked(
            name, unchanged, lambda: self._workers.forward(request), failure=f"{failure}: cannot read the config topic"
        )

    async def validation_errors(self, name: str, config: Config) -> list[str]:
        """What a PUT of ``config`` would be refused for: the sidecar's checks and the worker's own
        validation (every error, as ``AbstractHerder.maybeAddConfigErrors`` lists them); [] when none."""
        checked = await self._write(RequestKind.UPDATE, name, dict(config))
        if isinstance(checked, Refusal):
            message = str(checked.error)
            if not message.startswith("Connector configuration is invalid"):
                return [message]
            return [line for line in message.removesuffix(VALIDATE_ENDPOINT_HINT).splitlines()[1:] if line]
        connector_class = config.get("connector.class")
        if not connector_class:
            return ['Missing required configuration "connector.class" which has no default value.']
        infos = await self._worker_validation(validate_path(connector_class), dict(config), frozenset())
        if infos is None:
            return []
        return [str(e) for entry in infos.get("configs", []) for e in (entry.get("value") or {}).get("errors") or ()]

    def _serialized(self, name: str) -> contextlib.AbstractAsyncContextManager[str | None]:
        return self._writes.serialized(name) if self._writes is not None else contextlib.nullcontext()

    async def _current_config(self, name: str) -> Mapping[str, str | None] | UpstreamResponse | None:
        """The config a PATCH applies to (None: no such connector): as the leader's herder has it, the config
        topic read to its end (DistributedHerder.patchConnectorConfig reads its config snapshot), where the
        sidecar has a view; else the worker's ``GET /connectors/{c}/config`` (its answer when not a config)."""
        if self._writes is not None and self._view is not None and self._view.ready:
            failure = f"Failed to patch connector {name}: cannot read the config topic"
            return (await self._writes.read_to_end(failure)).connector_config(name)
        answer = await self._workers.forward(UpstreamRequest("GET", config_path(name), headers=JSON_HEADERS))
        if answer.status == 404:
            return None
        current = answer.json() if answer.status == 200 else None
        return current if isinstance(current, dict) else answer

    async def _put_if_unchanged(
        self, name: str, current: Mapping[str, object], put: UpstreamRequest
    ) -> UpstreamResponse:
        """The PUT, at the moment the config topic read to its end still holds ``current`` (``_Changed``
        otherwise); without a view that is not known, and the PUT goes as Connect's own PUT would."""
        if self._writes is None or self._view is None or not self._view.ready:
            return await self._workers.forward(put)
        return await self._checked(name, lambda now: now == current, put, f"Failed to patch connector {name}")

    async def _write(
        self, kind: RequestKind, name: str, config: Config, *, redact: bool = False
    ) -> Refusal | Forward[None]:
        """``redact``: a configuration with config provider references is validated here first, and refused
        with its errors as 4.4 shows them (``unresolved``): an older worker's refusal quotes resolved values."""
        included = config.get("name")
        if included is not None and included != name:
            return Forward()  # ConnectorsResource.checkAndPutConnectorConfigName: the worker's 400
        config = {**config, "name": name}
        found = await self._run_checks(ConfigSubject(kind, name, config))
        if found.refusal is not None:
            return Refusal(found.refusal, SIDECAR)
        refusing = [p for p in found.problems if p.connect_rule or self._enforce]
        warned = tuple(f"{p.key}: {p.message}" for p in found.problems if p not in refusing)
        connector_class = config.get("connector.class")
        redact = redact and has_references(config)
        if not (refusing or redact) or not connector_class:
            return Forward(warnings=found.warnings + warned)
        infos = await self._worker_validation(validate_path(connector_class), config, found.hidden_from_worker)
        if infos is None:
            return Forward(warnings=found.warnings + warned)
        merged = add_problems(infos, refusing, config, shown=found.hidden_from_worker)
        if redact:
            merged = shown_as_given(merged, config)
            if not refusing and not error_count(merged):
                return Forward(warnings=found.warnings + warned)
        return Refusal(BadRequestError(invalid_config_message(merged)), SIDECAR)


class _Changed(Exception):
    """The configuration a PATCH was applied to is no longer the connector's."""


__all__ = ["ConnectorConfigs", "patched"]
