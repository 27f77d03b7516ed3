"""Which connector config values are secrets, and the config with them masked. Pure; the sidecar (its
logs, audit log, exports and the config answers it gives a viewer) and the Spark jobs mask with this rule.

Connect knows a secret only by its ``ConfigDef`` type (``Type.PASSWORD``: ``ssl.key.password``,
``sasl.jaas.config``, ``ssl.keystore.key``, a JDBC ``connection.password``...), which the sidecar does not
have for every plugin; it shows such a value as ``Password.HIDDEN`` (``[hidden]``, clients'
``common.config.types.Password``). The sidecar decides from the key's name instead: a key is secret when
one of ``DEFAULT_SECRET_PATTERNS`` (case-insensitive regular expressions, searched in the key) matches it.
A value made only of config provider references (``${file:/path:key}``, ``ConfigTransformer.DEFAULT_PATTERN``)
holds no secret and stays visible: it says where the secret is, not what it is. A JAAS config
(``sasl.jaas.config``) is masked option by option (``password="[hidden]"``, a reference kept), or whole
when it does not read as one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

MASK = "[hidden]"  # Connect's Password.HIDDEN

# Searched (re.search, case-insensitive) in the whole key name.
DEFAULT_SECRET_PATTERNS: tuple[str, ...] = (
    r"password",  # ssl.key.password, connection.password, *.password
    r"passwd",
    r"passphrase",
    r"secret",  # aws.secret.access.key, *.client.secret, secret.*
    r"credentials?",  # gcp.credentials.json, *.credentials
    r"token$",  # *.token, auth.token, *.access.token
    r"key$",  # ssl.keystore.key (a PEM private key), api.key, *.private.key
    r"(^|\.)sasl\.jaas\.config$",  # holds passwords inline
    r"(^|\.)basic\.auth\.user\.info$",  # schema registry's user:password
)

# ConfigTransformer.DEFAULT_PATTERN: ${provider:[path:]key}
_REFERENCE = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")

# A JAAS configuration (clients' JaasConfig: ``<LoginModule> <flag> [<option>=<value> ...];`` once or more),
# read whole or not at all; option values quoted or bare.
_JAAS_KEY = re.compile(r"(^|\.)sasl\.jaas\.config$", re.IGNORECASE)
_JAAS_OPTION = r'[\w.\-]+\s*=\s*(?:"(?:[^"\\]|\\.)*"|[^\s";=]+)'
_JAAS = re.compile(rf"(?:\s*[\w.$]+\s+(?:required|requisite|sufficient|optional)(?:\s+{_JAAS_OPTION})*\s*;)+\s*")
_JAAS_VALUE = re.compile(r'([\w.\-]+)(\s*=\s*)("(?:[^"\\]|\\.)*"|[^\s";=]+)')


def is_reference(value: str) -> bool:
    """Whether ``value`` is made only of config provider references (and whitespace)."""
    return bool(_REFERENCE.search(value)) and not _REFERENCE.sub("", value).strip()


@dataclass(frozen=True)
class SecretRule:
    """The patterns of secret key names; ``DEFAULT_SECRET_RULE`` has Connect's usual ones."""

    patterns: tuple[str, ...] = DEFAULT_SECRET_PATTERNS
    _compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        joined = "|".join(f"(?:{p})" for p in self.patterns) or r"(?!)"
        object.__setattr__(self, "_compiled", re.compile(joined, re.IGNORECASE))

    def is_secret(self, key: str) -> bool:
        return self._compiled.search(key) is not None

    def masked_value(self, key: str, value: object) -> object:
        if isinstance(value, str) and self.is_secret(key) and not is_reference(value):
            return self._jaas(value) if _JAAS_KEY.search(key) else MASK
        return value

    def _jaas(self, value: str) -> str:
        """A JAAS config with the values of its secret options masked (references kept, the login module
        and the other options shown); masked whole when it does not read as JAAS."""
        if _JAAS.fullmatch(value) is None:
            return MASK

        def option(match: re.Match[str]) -> str:
            name, equals, quoted = match.groups()
            bare = quoted[1:-1] if quoted.startswith('"') else quoted
            if not self.is_secret(name) or is_reference(bare):
                return match.group(0)
            return f'{name}{equals}"{MASK}"'

        return _JAAS_VALUE.sub(option, value)

    def mask(self, config: Mapping[str, object]) -> dict[str, object]:
        """The config with the value of every secret key replaced by ``[hidden]`` (nulls and provider
        references kept)."""
        return {key: self.masked_value(key, value) for key, value in config.items()}

    def mask_strings(self, config: Mapping[str, str | None]) -> dict[str, str | None]:
        """``mask`` typed for a config of strings (the config topic's records)."""
        return {
            k: MASK if v is not None and self.is_secret(k) and not is_reference(v) else v for k, v in config.items()
        }

    def mask_deep(self, data: object) -> object:
        """Every mapping in ``data`` (nested in lists and mappings) masked: a log line's or an answer's
        fields, whatever shape carries the config."""
        if isinstance(data, Mapping):
            return {k: self.mask_deep(self.masked_value(k, v)) if isinstance(k, str) else v for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.mask_deep(item) for item in data]
        return data


def secret_rule(patterns: Iterable[str] | None = None) -> SecretRule:
    return DEFAULT_SECRET_RULE if patterns is None else SecretRule(tuple(patterns))


DEFAULT_SECRET_RULE = SecretRule()

__all__ = ["DEFAULT_SECRET_PATTERNS", "DEFAULT_SECRET_RULE", "MASK", "SecretRule", "is_reference", "secret_rule"]
