"""Which passed-through requests the view answers when no worker did (``rest.steps.unanswered``), matched as
Jersey matches the paths, and how the answer is rendered and marked."""

from __future__ import annotations

from typing import Any, cast

import orjson
import pytest

from control_plane.domain.herder import Herder
from control_plane.domain.outcomes import Answer, Provenance, Source
from control_plane.rest.request.exchange import Exchange
from control_plane.rest.steps.unanswered import known_better, unanswered
from control_plane.view import ConnectorInfoView

STALE = Provenance(Source.VIEW, True, 1.5)
FRESH = Provenance(Source.VIEW, False, None)


class ViewHerder:
    """The two herder calls ``unanswered`` makes, recording the connector names they were given."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    @property
    def reads(self) -> ViewHerder:  # the herder's reads feature: these calls are its own
        return self

    def unanswered_info(self, name: str) -> Answer[ConnectorInfoView]:
        self.asked.append(("info", name))
        return Answer(ConnectorInfoView(name, {"name": name}, (0,), "source"), STALE)

    def unanswered_task_configs(self, name: str) -> Answer[Any]:
        self.asked.append(("tasks", name))
        return Answer(((0, {"task.class": "T"}), (1, None)), STALE)


class StoppedHerder:
    """The herder calls ``known_better`` makes: the sidecar stopped ``stopped`` (the view answers it)."""

    def __init__(self, *, may: bool, stopped: str = "c") -> None:
        self.may, self.stopped = may, stopped
        self.asked: list[tuple[str, str]] = []

    @property
    def reads(self) -> StoppedHerder:  # the herder's reads feature: these calls are its own
        return self

    def may_know_better(self) -> bool:
        return self.may

    def stopped_info(self, name: str) -> Answer[ConnectorInfoView] | None:
        self.asked.append(("info", name))
        return Answer(ConnectorInfoView(name, {"name": name}, (), "sink"), FRESH) if name == self.stopped else None

    def stopped_task_configs(self, name: str) -> Answer[Any] | None:
        self.asked.append(("tasks", name))
        return Answer((), FRESH) if name == self.stopped else None


async def _unread() -> Any:
    raise AssertionError("the body is not read")


def scope(method: str, raw: bytes) -> Exchange:
    """A request for ``raw`` (the name the view's lookups are asked with is read from it)."""
    return Exchange(method, raw, b"", [], _unread)


@pytest.mark.parametrize(
    ("raw", "asked"),
    [
        (b"/connectors/a%2Fb", ("info", "a/b")),
        (b"/connectors/c/", ("info", "c")),
        (b"/connectors/c;x=1", ("info", "c")),
        (b"/connectors/c/tasks", ("tasks", "c")),
        (b"/connectors/c/tasks/", ("tasks", "c")),
    ],
)
def test_the_connector_and_its_task_configs_are_answered_from_the_view(raw: bytes, asked: tuple[str, str]) -> None:
    herder = ViewHerder()
    response = unanswered(cast(Herder, herder), scope("GET", raw))
    assert response is not None and response.status_code == 200
    assert herder.asked == [asked]
    assert response.headers["x-sidecar-source"] == "view" and response.headers["x-sidecar-stale"] == "true"
    body = orjson.loads(response.body)
    if asked[0] == "info":
        assert body == {
            "name": asked[1],
            "config": {"name": asked[1]},
            "tasks": [{"connector": asked[1], "task": 0}],
            "type": "source",
        }
    else:
        assert body == [
            {"id": {"connector": "c", "task": 0}, "config": {"task.class": "T"}},
            {"id": {"connector": "c", "task": 1}, "config": None},
        ]


@pytest.mark.parametrize(
    ("method", "raw"),
    [
        ("HEAD", b"/connectors/c"),
        ("DELETE", b"/connectors/c"),
        ("GET", b"/connectors"),
        ("GET", b"/connectors/c/tasks/0"),
        ("GET", b"/connectors/c/tasks-config"),
        ("GET", b"/connector-plugins"),
    ],
)
def test_every_other_request_has_no_view_answer(method: str, raw: bytes) -> None:
    herder = ViewHerder()
    assert unanswered(cast(Herder, herder), scope(method, raw)) is None and herder.asked == []


def test_a_connector_the_sidecar_stopped_is_answered_from_the_view_as_the_newest_worker_would() -> None:
    herder = StoppedHerder(may=True)
    info = known_better(cast(Herder, herder), scope("GET", b"/connectors/c"))
    tasks = known_better(cast(Herder, herder), scope("GET", b"/connectors/c/tasks"))
    assert info is not None and tasks is not None and info.status_code == tasks.status_code == 200
    assert orjson.loads(info.body) == {"name": "c", "config": {"name": "c"}, "tasks": [], "type": "sink"}
    assert orjson.loads(tasks.body) == []
    assert info.headers["x-sidecar-source"] == "view" and "x-sidecar-stale" not in info.headers
    assert known_better(cast(Herder, herder), scope("GET", b"/connectors/other")) is None  # the worker answers
    assert known_better(cast(Herder, herder), scope("DELETE", b"/connectors/c")) is None


def test_where_the_view_cannot_know_better_the_path_is_not_even_read() -> None:
    herder = StoppedHerder(may=False)
    assert known_better(cast(Herder, herder), scope("GET", b"/connectors/c")) is None and herder.asked == []


@pytest.mark.parametrize(
    ("header", "status", "body"),
    [
        pytest.param(
            (b"content-type", b"text/plain"),
            415,
            b'{"error_code":415,"message":"HTTP 415 Unsupported Media Type"}',
            id="415",
        ),
        pytest.param(
            (b"accept", b"text/html"), 406, b'{"error_code":406,"message":"HTTP 406 Not Acceptable"}', id="406"
        ),
        pytest.param((b"accept", b"application/json;q=abc"), 400, b"", id="bad-accept"),
    ],
)
@pytest.mark.parametrize("raw", [b"/connectors/c", b"/connectors/c/tasks"])
def test_the_views_answers_are_refused_as_the_newest_workers_negotiation_refuses_them(
    raw: bytes, header: tuple[bytes, bytes], status: int, body: bytes
) -> None:
    """ConnectorsResource @Consumes and @Produces application/json (Connect 4.3.1's 415 and 406, measured):
    the view composes no 200 the worker would not give, whether it answers a stopped connector or for no
    worker."""
    request = Exchange("GET", raw, b"", [header], _unread)
    for answer in (
        known_better(cast(Herder, StoppedHerder(may=True)), request),
        unanswered(cast(Herder, ViewHerder()), request),
    ):
        assert answer is not None and (answer.status_code, answer.body) == (status, body)
    fine = Exchange("GET", raw, b"", [(b"content-type", b"application/json"), (b"accept", b"*/*")], _unread)
    answer = known_better(cast(Herder, StoppedHerder(may=True)), fine)
    assert answer is not None and answer.status_code == 200
