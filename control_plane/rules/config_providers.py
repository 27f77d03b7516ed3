"""Config provider references (``${provider:path:key}``, KIP-297) in a connector's configuration, resolved
as the worker resolves them before its rules read a value (WorkerConfigTransformer, ConfigTransformer),
with the providers the worker's properties configure (``config.providers``, ``config.providers.<name>
.class``, ``config.providers.<name>.param.<key>``) that the sidecar can run itself. Pure but for reading
the provider's files; the sidecar and the Spark jobs both resolve with it.

What the worker does (ConfigTransformer.transform), and so the resolver:

- a reference to a provider the worker does not configure, or to a key its provider does not have, stays
  in the value as written: that literal text is what the worker's connector gets too;
- ``FileConfigProvider`` (every version): ``path`` is a properties file, ``key`` one of its keys
  (read as ``java.util.Properties.load`` reads);
- ``DirectoryConfigProvider`` (2.7+): ``path`` is a directory, ``key`` the name of a regular file in it,
  whose whole content (UTF-8) is the value;
- ``EnvVarConfigProvider`` (3.5+): the worker's environment variables, its ``allowlist.pattern``;
- from 3.8 (KIP-993) the file and directory providers' ``allowed.paths``: a path outside them is not read
  (the reference stays).

What the sidecar cannot resolve is *unresolved*, with the reason, never a silent literal: a provider
class it cannot run (any but the three above), a file or directory it cannot read (the worker's, not
mounted in the sidecar's container), and environment variables, which are the worker's process's, not
the sidecar's, unless the caller hands the worker's environment in (``environ``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..codecs.java_properties import parse_properties

VARIABLE = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")  # ConfigTransformer.DEFAULT_PATTERN
PROVIDERS_KEY = "config.providers"  # WorkerConfig / AbstractConfig.CONFIG_PROVIDERS_CONFIG
FILE = "org.apache.kafka.common.config.provider.FileConfigProvider"
DIRECTORY = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
ENV = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
ALLOWED_PATHS = "allowed.paths"  # FileConfigProvider.ALLOWED_PATHS_CONFIG (KIP-993)
ALLOWLIST_PATTERN = "allowlist.pattern"  # EnvVarConfigProvider.ALLOWLIST_PATTERN_CONFIG


@dataclass(frozen=True)
class Provider:
    name: str
    class_name: str
    params: Mapping[str, str]


@dataclass(frozen=True)
class Resolved:
    """A configuration as the worker's connector would get it, and the keys whose value the sidecar could
    not resolve (key -> why, naming the reference)."""

    values: Mapping[str, str | None]
    unresolved: Mapping[str, str] = field(default_factory=dict)

    def why(self, *keys: str) -> str | None:
        """Why the first of ``keys`` that is unresolved is, or None when all of them are known."""
        return next((f"{key}: {self.unresolved[key]}" for key in keys if key in self.unresolved), None)


class _Unresolvable(Exception):
    pass


@dataclass(frozen=True)
class ConfigProviders:
    """The worker's config providers; ``environ``: the worker's environment variables, when known."""

    providers: Mapping[str, Provider] = field(default_factory=dict)
    environ: Mapping[str, str] | None = None

    @classmethod
    def from_worker(cls, properties: Mapping[str, str], environ: Mapping[str, str] | None = None) -> ConfigProviders:
        """From the worker's properties (only the ``config.providers`` keys are read)."""
        names = [n.strip() for n in (properties.get(PROVIDERS_KEY) or "").split(",") if n.strip()]
        providers = {}
        for name in names:
            prefix = f"{PROVIDERS_KEY}.{name}."
            class_name = (properties.get(f"{prefix}class") or "").strip()
            params = {
                k.removeprefix(f"{prefix}param."): v for k, v in properties.items() if k.startswith(f"{prefix}param.")
            }
            providers[name] = Provider(name, class_name, params)
        return cls(providers, environ)

    def resolve(self, config: Mapping[str, str | None]) -> Resolved:
        """Every value with its references replaced as the worker replaces them."""
        values: dict[str, str | None] = {}
        unresolved: dict[str, str] = {}
        for key, value in config.items():
            try:
                values[key] = None if value is None else self._replace(value)
            except _Unresolvable as err:
                values[key] = value
                unresolved[key] = str(err)
        return Resolved(values, unresolved)

    def _replace(self, value: str) -> str:
        def one(match: re.Match[str]) -> str:
            name, path, key = match.group(1), match.group(3) or "", match.group(4)
            provider = self.providers.get(name)
            if provider is None:
                return match.group(0)  # the worker keeps it as written
            found = self._lookup(provider, path, key, match.group(0))
            return match.group(0) if found is None else found

        return VARIABLE.sub(one, value)

    def _lookup(self, provider: Provider, path: str, key: str, reference: str) -> str | None:
        if provider.class_name == FILE:
            if not path or not _allowed(provider, path):
                return None
            try:
                text = Path(path).read_text(encoding="utf-8")
            except OSError as err:
                raise _Unresolvable(f"{reference}: the file {path} is not readable here ({err.strerror})") from err
            return parse_properties(text).get(key)
        if provider.class_name == DIRECTORY:
            if not path or not _allowed(provider, path):
                return None
            directory = Path(path)
            if not directory.is_dir():
                if not directory.parent.exists() or not os.access(directory.parent, os.R_OK):
                    raise _Unresolvable(f"{reference}: the directory {path} is not readable here")
                return None  # DirectoryConfigProvider: "not a directory", nothing found
            target = directory / key
            if not target.is_file():
                return None
            try:
                return target.read_bytes().decode("utf-8", "replace")
            except OSError as err:
                raise _Unresolvable(f"{reference}: the file {target} is not readable here ({err.strerror})") from err
        if provider.class_name == ENV:
            if self.environ is None:
                raise _Unresolvable(
                    f"{reference}: environment variables are the worker process's, which the sidecar does not see"
                )
            if path:
                return None  # the worker fails the connector: "Path is not supported for EnvVarConfigProvider"
            pattern = provider.params.get(ALLOWLIST_PATTERN)
            if pattern is not None and re.fullmatch(pattern, key) is None:
                return None
            return self.environ.get(key)
        raise _Unresolvable(
            f"{reference}: the worker's config provider {provider.name} ({provider.class_name or 'no class'}) "
            "is not one the sidecar can run (file, directory, env)"
        )


def _allowed(provider: Provider, path: str) -> bool:
    """AllowedPaths.parseUntrustedPath: with ``allowed.paths``, only paths under one of them are read."""
    allowed = [p.strip() for p in (provider.params.get(ALLOWED_PATHS) or "").split(",") if p.strip()]
    if not allowed:
        return True
    normal = Path(os.path.normpath(path))
    return any(normal.is_relative_to(Path(os.path.normpath(a))) for a in allowed)


def references(value: str | None) -> list[str]:
    """The provider references in ``value``, as written."""
    return [m.group(0) for m in VARIABLE.finditer(value or "")]


__all__ = ["VARIABLE", "ConfigProviders", "Provider", "Resolved", "references"]
