"""Plan and apply: the connectors a cluster should run, described in files (the shapes ``kcctl apply`` and
``PUT /connectors/{c}/config`` take), compared with what the cluster runs, and a plan carried out exactly.

- **Plan**: per connector ``create``, ``update``, ``unchanged``, or ``delete`` (only with ``prune``: a
  connector no file names; never implied by omission otherwise, as ``kubectl apply --prune``), the
  key-level diff (``rules.config_diff``: secrets as ``[hidden]``, changed or not by digest), and for a
  create or update the worker's own validation errors.
- **No false drift**: both sides are compared as the worker stores them (the config topic, read to its
  end): every value the string Jackson makes of it (``rules.config_values``: ``1``, ``1.5``, ``true``), the
  ``name`` key the worker adds, key order ignored; provider references compared as written, as the worker
  stores them; secrets compared by value (digests in what is shown).
- **Fingerprint**: a digest of what the plan compared, each named connector's config as the cluster had
  it (or its absence). ``apply`` refuses a plan whose fingerprint is no longer the cluster's (409), and each
  write is made at the moment the config topic, read to its end, still holds what the plan saw for that
  connector (the connector's fence, ``connector_writes``): two operators cannot overwrite each other.
- **Apply** carries out the plan's steps in order and stops at the first that fails, saying which were
  made; a step is an ordinary config write (``ConnectorConfigs``: the same checks as a ``PUT``) or a delete.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import orjson

from ..rules.config_diff import SecretDigests, diff
from ..rules.config_values import Config, config_map
from .errors import BadRequestError, ConflictError, ControlPlaneError, WorkerRefused

ACTIONS = ("create", "update", "delete", "unchanged")
ANY = re.compile(".*", re.DOTALL)


@dataclass(frozen=True)
class Desired:
    name: str
    config: Config  # as the worker stores it: strings, and its name
    source: str  # the file (or request item) it came from


def desired_of(document: Any, source: str) -> list[Desired]:
    """The connectors of one document: ``{"name": n, "config": {...}}`` (kcctl apply's and ``POST
    /connectors``'s shape), a flat config with its ``name`` (``PUT /connectors/{c}/config``'s), or a list of
    either; 400 naming ``source`` for anything else."""
    items = document if isinstance(document, list) else [document]
    found = []
    for item in items:
        if not isinstance(item, dict):
            raise BadRequestError(f"{source}: a connector must be an object with a name and a config")
        nested = item.get("config")
        body: dict[str, Any] = nested if isinstance(nested, dict) else item
        config = config_map(body)
        name = item.get("name", body.get("name"))
        if not isinstance(name, str) or not name.strip() or config is None:
            raise BadRequestError(f"{source}: a connector needs a name and a config of strings, numbers or booleans")
        name = name.strip()  # ConnectorsResource.createConnector trims it
        if body is not item and config.get("name", name) != name:  # ConnectorsResource's own check
            raise BadRequestError(f"{source}: connector {name}'s config names another connector ({config['name']})")
        found.append(Desired(name, {**config, "name": name}, source))  # the worker adds its name
    return found


def config_digest(config: Mapping[str, str | None] | None) -> str | None:
    """A digest of one connector's config as the cluster holds it (None: there is none)."""
    if config is None:
        return None
    return hashlib.sha256(orjson.dumps(dict(config), option=orjson.OPT_SORT_KEYS)).hexdigest()


def fingerprint_of(seen: Mapping[str, str | None]) -> str:
    """The plan's fingerprint: every connector it compared, with the digest of the config it saw."""
    return hashlib.sha256(orjson.dumps(dict(seen), option=orjson.OPT_SORT_KEYS)).hexdigest()


@dataclass(frozen=True)
class PlanStep:
    name: str
    action: str
    config: Config | None  # what a create or update writes
    seen: str | None  # the digest of the config the plan compared with (None: absent)
    changes: list[dict[str, object]]
    source: str | None = None
    errors: tuple[str, ...] = ()
    topics: Any = None  # KIP-158: what the worker would create for a create or update (CreationPreview)
    plugins: Any = None  # KIP-891: the version each plugin key resolves to (PluginVersionReport)

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"name": self.name, "action": self.action, "changes": self.changes, "seen": self.seen}
        if self.config is not None:
            body["config"] = self.config
        if self.source is not None:
            body["source"] = self.source
        if self.errors:
            body["errors"] = list(self.errors)
        return body


def steps_of(
    desired: Sequence[Desired],
    current: Mapping[str, Mapping[str, str | None]],
    digests: SecretDigests,
    *,
    prune: bool,
    prune_matching: re.Pattern[str] = ANY,
) -> list[PlanStep]:
    """What the cluster needs to become ``desired``, connector by connector (sorted by name); with
    ``prune``, the deletion of every connector no document names whose whole name ``prune_matching`` matches."""
    counts = Counter(d.name for d in desired)
    names = set(counts)
    twice = sorted(n for n, seen in counts.items() if seen > 1)
    if twice:
        raise BadRequestError(f"More than one file describes connector(s) {', '.join(twice)}")
    steps = []
    for want in sorted(desired, key=lambda d: d.name):
        have = current.get(want.name)
        before = digests.stored(want.name, have) if have is not None else None
        changes = [c.as_json() for c in diff(before, digests.stored(want.name, want.config))]
        action = "create" if have is None else "update" if changes else "unchanged"
        config = want.config if action != "unchanged" else None
        steps.append(PlanStep(want.name, action, config, config_digest(have), changes, want.source))
    if prune:
        for name in sorted(n for n in set(current) - names if prune_matching.fullmatch(n)):
            changes = [c.as_json() for c in diff(digests.stored(name, current[name]), None)]
            steps.append(PlanStep(name, "delete", None, config_digest(current[name]), changes))
    return steps


Validate = Callable[[str, Config], Awaitable[list[str]]]  # the worker's validation errors of a config
Inspect = Callable[[str, Config], Awaitable[Any]]  # a preview of a config (None: none to show)
Write = Callable[[str, Config, str | None], Awaitable[Any]]  # name, config, the digest it must still have
Delete = Callable[[str, str], Awaitable[Any]]
CONCURRENT = 8  # the connectors a plan checks at once (the worker's validation, the previews)


@dataclass(frozen=True)
class Plan:
    fingerprint: str
    prune: bool
    steps: list[PlanStep]

    def summary(self) -> dict[str, int]:
        return {a: sum(s.action == a for s in self.steps) for a in ACTIONS}


class Planner:
    def __init__(
        self,
        current: Callable[[], Awaitable[Mapping[str, Mapping[str, str | None]]]],
        digests: SecretDigests,
        validate: Validate,
        write: Write,
        delete: Delete,
        *,
        topics: Inspect | None = None,
        plugins: Inspect | None = None,
    ) -> None:
        self._current = current  # every connector's config, the config topic read to its end
        self._digests = digests
        self._validate = validate
        self._write = write
        self._delete = delete
        self._topics = topics
        self._plugins = plugins

    async def plan(
        self, documents: Sequence[tuple[Any, str]], *, prune: bool, prune_matching: re.Pattern[str] = ANY
    ) -> Plan:
        desired = [d for document, source in documents for d in desired_of(document, source)]
        current = await self._current()
        steps = steps_of(desired, current, self._digests, prune=prune, prune_matching=prune_matching)
        slots = asyncio.Semaphore(CONCURRENT)
        checked = await asyncio.gather(*(self._checked(step, slots) for step in steps))
        return Plan(fingerprint_of({s.name: s.seen for s in checked}), prune, list(checked))

    async def _checked(self, step: PlanStep, slots: asyncio.Semaphore) -> PlanStep:
        """A create or update with the worker's validation errors and what it would create and run."""
        if step.config is None:
            return step
        async with slots:
            errors = await self._validate(step.name, step.config)
            topics = await self._topics(step.name, step.config) if self._topics is not None else None
            plugins = await self._plugins(step.name, step.config) if self._plugins is not None else None
        return replace(step, errors=tuple(errors), topics=topics, plugins=plugins)

    async def apply(self, plan: Any) -> dict[str, Any]:
        steps, fingerprint = _steps_of_plan(plan)
        if any(s.errors for s in steps):
            raise BadRequestError("The plan has connectors the worker finds invalid: fix them and plan again")
        current = await self._current()
        now = {s.name: config_digest(current.get(s.name)) for s in steps}
        if fingerprint_of(now) != fingerprint:
            changed = sorted(s.name for s in steps if now[s.name] != s.seen)
            raise ConflictError(
                f"The cluster changed since the plan was made ({', '.join(changed) or 'its connectors'}): "
                "nothing was applied; make a new plan"
            )
        done: list[dict[str, Any]] = []
        for step in steps:
            if step.action == "unchanged":
                continue
            try:
                if step.action == "delete":
                    await self._delete(step.name, step.seen or "")
                else:
                    assert step.config is not None
                    await self._write(step.name, step.config, step.seen)
            except ControlPlaneError as err:
                left = [s.name for s in steps[steps.index(step) + 1 :] if s.action != "unchanged"]
                raise _partly(err, done, step, left) from err
            done.append({"name": step.name, "action": step.action})
        return {"applied": done, "fingerprint": fingerprint}


def _partly(err: ControlPlaneError, done: list[dict[str, Any]], step: PlanStep, left: list[str]) -> ControlPlaneError:
    """The error of the step that failed, its message saying what was applied and what was not (its
    status the step's own: the worker's 400 for an invalid config, a 409 for a connector changed since)."""
    message = (
        f"Applied: {', '.join(d['name'] for d in done) or 'nothing'}. {step.action.capitalize()} of connector "
        f"{step.name} failed: {err.message}. Not applied: {', '.join(left) or 'nothing'}."
    )
    if isinstance(err, WorkerRefused):
        return WorkerRefused(err.status, message)
    return type(err)(message)


def _steps_of_plan(plan: Any) -> tuple[list[PlanStep], str]:
    bad = BadRequestError("The body must be a plan as POST /_sidecar/plan answers it")
    if not isinstance(plan, dict) or not isinstance(plan.get("fingerprint"), str):
        raise bad
    items = plan.get("connectors")
    if not isinstance(items, list):
        raise bad
    steps = []
    for item in items:
        if not isinstance(item, dict) or item.get("action") not in ACTIONS or not isinstance(item.get("name"), str):
            raise bad
        config = config_map(item["config"]) if "config" in item else None
        seen = item.get("seen")
        if (item["action"] in ("create", "update") and config is None) or not (seen is None or isinstance(seen, str)):
            raise bad
        errors = item.get("errors") or []
        if not isinstance(errors, list) or not all(isinstance(e, str) for e in errors):
            raise bad
        errors = tuple(errors)
        steps.append(PlanStep(item["name"], item["action"], config, seen, [], None, errors))
    return steps, plan["fingerprint"]


__all__ = [
    "ACTIONS",
    "Desired",
    "Plan",
    "PlanStep",
    "Planner",
    "config_digest",
    "desired_of",
    "fingerprint_of",
    "steps_of",
]
