"""A Connect worker's version as ``GET /`` reports it, compared by release."""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Version:
    parts: tuple[int, int, int]
    text: str = field(compare=False, default="")

    @classmethod
    def parse(cls, text: str) -> Version | None:
        """``4.3.1``, ``3.7.0-SNAPSHOT`` -> the numeric release; None if there is none.

        Confluent Platform builds (``7.6.0-ccs``, ``7.4.1-ce``) report the platform's version: they
        are read as the Apache Kafka release they ship (CP 7.6 is Kafka 3.6, CP 8.1 is Kafka 4.1).
        """
        match = re.match(r"\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?(-c[ce]s?\b)?", text or "")
        if not match:
            return None
        major, minor, patch = (int(g) if g else 0 for g in match.groups()[:3])
        if match.group(4):
            major, minor = _kafka_of_confluent(major, minor)
        return cls((major, minor, patch), text.strip())

    @classmethod
    def of(cls, text: str) -> Version:
        version = cls.parse(text)
        if version is None:
            raise ValueError(f"not a version: {text!r}")
        return version

    def __str__(self) -> str:
        return self.text or ".".join(map(str, self.parts))


def _kafka_of_confluent(major: int, minor: int) -> tuple[int, int]:
    """Confluent Platform major.minor -> the Apache Kafka major.minor it is built on."""
    if major >= 7:  # CP 7.x ships Kafka 3.x, CP 8.x Kafka 4.x
        return major - 4, minor
    if major == 6:  # CP 6.0, 6.1, 6.2 ship Kafka 2.6, 2.7, 2.8
        return 2, 6 + minor
    if major == 5:  # CP 5.0 ... 5.5 ship Kafka 2.0 ... 2.5
        return 2, minor
    return major, minor


__all__ = ["Version"]
