"""Where one feature meets another: the callables a feature is given for what another one does (the
``domain-features`` import contract keeps features from importing each other). Plan and apply, and the
config history's rollback, write through the configs feature's config writes (the same checks as a
``PUT``, under the connector's fence), and plan shows the topic-creation and plugin-version previews;
auto-restart's restarts go to the audit log as requests of their own would."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Mapping

from ..access.audit import AuditLog
from ..domain.cluster.writes import ConnectorWrites
from ..domain.configs import ConnectorConfigs
from ..domain.errors import WorkerRefused
from ..domain.history.kept import Current, Rollback
from ..domain.outcomes import Answer, Refusal, Relay
from ..domain.plan import ApplyOptions, Planner, config_digest
from ..domain.plugins import Plugins
from ..domain.topic_creation import CreationPreviews
from ..rules.config_diff import ChangeMarks, SecretDigests, SecretMarks
from ..rules.secrets import SecretRule
from ..settings import Settings

# without HISTORY_SECRET_KEY, plans are fingerprinted under a key of this process's own, never shown
PROCESS_KEY = secrets.token_bytes(32)


def history_marks(settings: Settings, rule: SecretRule) -> SecretMarks:
    """What stands for secret values in the history (``rules.config_diff``): keyed digests under
    ``HISTORY_SECRET_KEY``, else marks of change, no digest."""
    if settings.history_secret_key is None:
        return ChangeMarks(rule)
    return SecretDigests(settings.history_secret_key.get_secret_value().encode(), rule)


def plan_digests(settings: Settings, rule: SecretRule) -> SecretDigests:
    """The key of a plan's fingerprints (and of its secrets compared): one derived from ``HISTORY_SECRET_KEY``,
    the same on every sidecar, never a history digest; else this process's own (a plan is then applied
    through the sidecar that made it, before it restarts)."""
    if settings.history_secret_key is None:
        return SecretDigests(PROCESS_KEY, rule)
    key = settings.history_secret_key.get_secret_value().encode()
    return SecretDigests(hmac.new(key, b"control-plane plan fingerprints", hashlib.sha256).digest(), rule)


def rollback_writes(configs: ConnectorConfigs, writes: ConnectorWrites) -> tuple[Current, Rollback]:
    """What a rollback reads (a connector's config, the config topic read to its end) and how it writes (a
    config write refused with a 409 when the config is no longer the one it read)."""

    async def current(name: str) -> Mapping[str, str | None] | None:
        return (
            await writes.read_to_end(f"Failed to roll back connector {name}: cannot read the config topic")
        ).connector_config(name)

    async def rollback(name: str, config: dict[str, str | None], expected: Mapping[str, str | None]) -> Refusal | Relay:
        return await configs.replace(name, config, lambda now: now == expected, what="the rollback")

    return current, rollback


def planner(
    configs: ConnectorConfigs,
    writes: ConnectorWrites,
    digests: SecretDigests,
    previews: CreationPreviews,
    plugins: Plugins,
    settings: Settings,
) -> Planner:
    """Plan and apply (``domain.plan``): compared with the config topic read to its end, written as config
    writes of the sidecar's own."""

    async def current() -> dict[str, Mapping[str, str | None]]:
        state = await writes.read_to_end("Failed to plan: cannot read the config topic")
        return {name: dict(config) for name, config in state.connector_configs.items()}

    async def write(name: str, config: dict[str, str | None], seen: str | None) -> None:
        done = await configs.replace(name, config, lambda now: config_digest(now, digests) == seen, what="the apply")
        checked(done)

    async def delete(name: str, seen: str) -> None:
        checked(await configs.delete_if(name, lambda now: config_digest(now, digests) == seen, what="the apply"))

    async def topics(name: str, config: dict[str, str | None]) -> object:
        """KIP-158: what the worker would create for the topics the config names (``topic``, ``topics``)."""
        named = [t.strip() for key in ("topic", "topics") for t in (config.get(key) or "").split(",") if t.strip()]
        preview = await previews.preview(config, named, name)
        return preview.value if isinstance(preview, Answer) else None

    async def versions(name: str, config: dict[str, str | None]) -> object:
        report = await plugins.version_report(name, config)
        return report.value if isinstance(report, Answer) else None

    options = ApplyOptions(
        settings.apply_concurrency,
        settings.apply_deadline_s,
        settings.rebalance_retry_initial_backoff_ms / 1000,
        settings.rebalance_retry_max_backoff_ms / 1000,
    )
    return Planner(
        current, digests, configs.validation_errors, write, delete, topics=topics, plugins=versions, options=options
    )


def checked(done: Refusal | Relay) -> None:
    """A write's outcome as an error when it was refused, by the sidecar or the worker."""
    if isinstance(done, Refusal):
        raise done.error
    if done.response.status >= 400:
        raise WorkerRefused.of(done.response.status, done.response.body)


def audited(audit: AuditLog) -> Callable[[str, str, int, float], None]:
    """Auto-restart's restarts in the audit log, as a request of its own would be."""

    def record(connector: str, path: str, status: int, duration_ms: float) -> None:
        audit.record(
            who="auto-restart",
            role=None,
            client=None,
            method="POST",
            path=path,
            query="includeTasks=true&onlyFailed=true",
            connector=connector,
            status=status,
            duration_ms=duration_ms,
            body=None,
            refused=False,
        )

    return record


__all__ = ["audited", "checked", "history_marks", "plan_digests", "planner", "rollback_writes"]
