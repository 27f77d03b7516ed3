"""The answer of the sidecar and the worker's to the same request, reduced to what must be equal, and the
differences the sidecar is allowed to make (test_openapi_differential.py).

An answer is its status code and its body, normalised: JSON with worker ids, timestamps and Java object
identities masked and every list in a canonical order (a worker's lists come from hash sets); Connect's
error shape is kept as {"error_code", "message"}; a body that is not JSON (Jetty's own HTML error pages) is
reduced to its kind and its title line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import requests

# Jackson's parse errors name the input stream object, e.g. "(org.eclipse.jetty.server.HttpInput@5b2c1e)"
_IDENTITY = re.compile(r"@[0-9a-f]{4,}")
_HTML_TITLE = re.compile(r"<title>(.*?)</title>|<h1>(.*?)</h1>", re.S)
_MASKED_KEYS = {"worker_id": "<worker>", "last_modified": "<time>"}


@dataclass(frozen=True)
class NormalisedAnswer:
    status: int
    body: Any  # normalised JSON, or ("html", title), or ("text", text)

    def kind(self) -> str:
        if isinstance(self.body, dict) and set(self.body) == {"error_code", "message"}:
            return "error"
        if isinstance(self.body, tuple):
            return str(self.body[0])
        return "json"


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _MASKED_KEYS[k] if k in _MASKED_KEYS else _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [_canonical(v) for v in value]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    if isinstance(value, str):
        return _IDENTITY.sub("@<id>", value)
    return value


def normalise(response: requests.Response) -> NormalisedAnswer:
    return normalise_raw(response.status_code, response.content)


def normalise_raw(status: int, content: bytes) -> NormalisedAnswer:
    text = content.decode("utf-8", "replace")
    if not text:
        return NormalisedAnswer(status, None)
    try:
        return NormalisedAnswer(status, _canonical(json.loads(text)))
    except ValueError:
        pass
    title = _HTML_TITLE.search(text)
    if title is not None:
        return NormalisedAnswer(status, ("html", (title.group(1) or title.group(2) or "").strip()))
    return NormalisedAnswer(status, ("text", _IDENTITY.sub("@<id>", text.strip())[:300]))


@dataclass(frozen=True)
class Request:
    """What was sent (to both): method, the operation's path template, the URL as sent and the body."""

    method: str
    template: str
    target: str
    body: bytes | None

    def show(self) -> str:
        body = "" if not self.body else f" body={self.body[:200]!r}"
        return f"{self.method} {self.target}{body}"


@dataclass(frozen=True)
class AnswerDifference:
    request: Request
    sidecar: NormalisedAnswer
    worker: NormalisedAnswer

    def key(self) -> tuple[str, str, int, str, int, str]:
        """The class of a difference: the operation and both answers' status and kind."""
        s, w = self.sidecar, self.worker
        return (self.request.method, self.request.template, s.status, s.kind(), w.status, w.kind())


@dataclass(frozen=True)
class Allowed:
    """A difference the sidecar makes on purpose (or that only a Jetty version explains), with why."""

    versions: frozenset[str]
    method: str  # or "*"
    template: str  # or "*"
    matches: Callable[[AnswerDifference], bool]
    reason: str


@dataclass
class Comparisons:
    """Every request compared, how many per operation, and the differences."""

    sent: list[Request] = field(default_factory=list)
    by_operation: dict[str, int] = field(default_factory=dict)
    differences: list[AnswerDifference] = field(default_factory=list)

    @property
    def compared(self) -> int:
        return len(self.sent)

    def add(self, request: Request, sidecar: NormalisedAnswer, worker: NormalisedAnswer) -> None:
        self.sent.append(request)
        name = f"{request.method} {request.template}"
        self.by_operation[name] = self.by_operation.get(name, 0) + 1
        if sidecar != worker:
            self.differences.append(AnswerDifference(request, sidecar, worker))


def classify(
    version: str, differences: list[AnswerDifference], allowed: list[Allowed]
) -> tuple[dict[str, list[AnswerDifference]], dict[tuple[str, str, int, str, int, str], list[AnswerDifference]]]:
    """(allowed differences by reason, the others by class)."""
    explained: dict[str, list[AnswerDifference]] = {}
    unexplained: dict[tuple[str, str, int, str, int, str], list[AnswerDifference]] = {}
    for diff in differences:
        rule = next(
            (
                a
                for a in allowed
                if version in a.versions
                and a.method in ("*", diff.request.method)
                and a.template in ("*", diff.request.template)
                and a.matches(diff)
            ),
            None,
        )
        if rule is not None:
            explained.setdefault(rule.reason, []).append(diff)
        else:
            unexplained.setdefault(diff.key(), []).append(diff)
    return explained, unexplained


def report(
    explained: dict[str, list[AnswerDifference]],
    unexplained: dict[tuple[str, str, int, str, int, str], list[AnswerDifference]],
) -> str:
    lines = []
    for reason, diffs in explained.items():
        lines.append(f"  allowed x{len(diffs)}: {reason}")
    for key, diffs in sorted(unexplained.items(), key=lambda kv: -len(kv[1])):
        first = diffs[0]
        lines.append(
            f"  DIFFERENT x{len(diffs)} {key}: e.g. {first.request.show()}\n"
            f"      sidecar {first.sidecar.status} {json.dumps(first.sidecar.body, default=str)[:300]}\n"
            f"      worker  {first.worker.status} {json.dumps(first.worker.body, default=str)[:300]}"
        )
    return "\n".join(lines)
