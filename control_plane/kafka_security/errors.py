"""The one error of the Kafka client security settings: which key, and what is wrong with it."""

from __future__ import annotations

from collections.abc import Callable

# How a property's name is shown: itself for the worker's own properties, with where it sits for the
# ssl.* options inside sasl.jaas.config (the token endpoint's TLS, as Kafka's JaasOptionsUtils reads them).
Label = Callable[[str], str]


def as_written(key: str) -> str:
    return key


class KafkaSecurityError(ValueError):
    """A Kafka client security setting the sidecar cannot use; never carries a secret's value."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key = key
        self.problem = problem
