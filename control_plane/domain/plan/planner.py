"""Plan and apply, the comparing and the carrying out: a plan compares the documents' connectors with the
config topic read to its end (``steps``), with each create or update the worker's own validation errors and
what it would create and run (KIP-158's preview, KIP-891's versions); an apply carries out the plan's steps
in order and stops at the first that fails, saying which were made.

- **Fingerprint**: keyed (``digests``: the sidecar's key, never in the plan); ``apply`` refuses a plan
  whose fingerprint is no longer the cluster's (409), or was made under another key, and each
  write is made at the moment the config topic, read to its end, still holds what the plan saw for that
  connector (the connector's fence, ``cluster.writes``): two operators cannot overwrite each other.
- A step is an ordinary config write (``ConnectorConfigs``: the same checks as a ``PUT``) or a delete,
  reached through the callables the planner is given (met at composition).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...rules.config_diff import SecretDigests
from ...rules.config_values import Config, config_map
from ..errors import BadRequestError, ConflictError, ControlPlaneError, WorkerRefused
from .steps import ACTIONS, ANY, Plan, PlanStep, config_digest, desired_of, fingerprint_of, steps_of

Validate = Callable[[str, Config], Awaitable[list[str]]]  # the worker's validation errors of a config
Inspect = Callable[[str, Config], Awaitable[Any]]  # a preview of a config (None: none to show)
Write = Callable[[str, Config, str | None], Awaitable[Any]]  # name, config, the digest it must still have
Delete = Callable[[str, str], Awaitable[Any]]
CONCURRENT = 8  # the connectors a plan checks at once (the worker's validation, the previews)


@dataclass(frozen=True)
class Applied:
    """What an apply made: each step's connector and action, in order, and the plan's fingerprint."""

    steps: tuple[tuple[str, str], ...]
    fingerprint: str


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
        return Plan(fingerprint_of({s.name: s.seen for s in checked}, self._digests), prune, list(checked))

    async def _checked(self, step: PlanStep, slots: asyncio.Semaphore) -> PlanStep:
        """A create or update with the worker's validation errors and what it would create and run."""
        if step.config is None:
            return step
        async with slots:
            errors = await self._validate(step.name, step.config)
            topics = await self._topics(step.name, step.config) if self._topics is not None else None
            plugins = await self._plugins(step.name, step.config) if self._plugins is not None else None
        return replace(step, errors=tuple(errors), topics=topics, plugins=plugins)

    async def apply(self, plan: Any) -> Applied:
        steps, fingerprint = _steps_of_plan(plan)
        if any(s.errors for s in steps):
            raise BadRequestError("The plan has connectors the worker finds invalid: fix them and plan again")
        current = await self._current()
        now = {s.name: config_digest(current.get(s.name), self._digests) for s in steps}
        if fingerprint_of(now, self._digests) != fingerprint:
            changed = sorted(s.name for s in steps if now[s.name] != s.seen)
            raise ConflictError(
                f"The cluster changed since the plan was made ({', '.join(changed) or 'its connectors'}): "
                "nothing was applied; make a new plan"
            )
        done: list[tuple[str, str]] = []
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
            done.append((step.name, step.action))
        return Applied(tuple(done), fingerprint)


def _partly(err: ControlPlaneError, done: list[tuple[str, str]], step: PlanStep, left: list[str]) -> ControlPlaneError:
    """The error of the step that failed, its message saying what was applied and what was not (its
    status the step's own: the worker's 400 for an invalid config, a 409 for a connector changed since)."""
    message = (
        f"Applied: {', '.join(name for name, _ in done) or 'nothing'}. {step.action.capitalize()} of connector "
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
        steps.append(PlanStep(item["name"], item["action"], config, seen, (), None, errors))
    return steps, plan["fingerprint"]


__all__ = ["Applied", "Delete", "Inspect", "Planner", "Validate", "Write"]
