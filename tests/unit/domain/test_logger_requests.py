"""``PUT /admin/loggers/{l}`` bodies read as Connect 4.3.1's LoggingResource reads them (log4j 2), for workers
before 4.0; the messages measured on the 4.3.1 worker of the stack."""

from __future__ import annotations

import pytest

from control_plane.domain.capabilities import Capabilities
from control_plane.domain.errors import BadRequestError, ControlPlaneError, NotFoundError, OperationFailed
from control_plane.domain.newer.logger_requests import level_body, requested_level
from control_plane.domain.outcomes import Forward, Refusal, Relay
from tests.support.fakes import FakeWorkers, newer_api, read_rule


@pytest.mark.parametrize(
    ("body", "level"),
    [
        pytest.param(b'{"level":"DEBUG"}', "DEBUG", id="plain"),
        pytest.param(b'{"level":"debug"}', "DEBUG", id="any-case"),
        pytest.param(b'{"level":" \\tinfo\\n"}', "INFO", id="trimmed-as-java-trims"),
        pytest.param(b'{"level":"\\u0131nfo"}', "INFO", id="dotless-i-in-capitals"),
        pytest.param(b'{"level":"all","x":1}', "ALL", id="other-keys-ignored"),
        pytest.param(b'{"level":"x","level":"warn"}', "WARN", id="the-last-of-a-repeated-key"),
    ],
)
def test_levels_log4j_2_resolves(body: bytes, level: str) -> None:
    assert requested_level(body) == level
    assert level_body(level) == f'{{"level": "{level}"}}'.encode()


@pytest.mark.parametrize(
    ("body", "error", "message"),
    [
        pytest.param(b"{}", BadRequestError, "Desired 'level' parameter was not specified in request.", id="none"),
        pytest.param(b'{"level":null}', BadRequestError, "Desired 'level' parameter", id="null"),
        pytest.param(b'{"level":""}', OperationFailed, "Illegal null or empty Level name.", id="empty"),
        pytest.param(b'{"level":"  "}', NotFoundError, "invalid log level '  '.", id="blanks"),
        pytest.param(b'{"level":"\\u0130NFO"}', NotFoundError, "invalid log level '\u0130NFO'.", id="dotted-I"),
        pytest.param(b'{"level":1e1}', NotFoundError, "invalid log level '1e1'.", id="a-number-as-written"),
        pytest.param(b'{"level":true}', NotFoundError, "invalid log level 'true'.", id="a-boolean"),
        pytest.param(b"", OperationFailed, 'because "levelMap" is null', id="no-body"),
        pytest.param(b"null", OperationFailed, 'because "levelMap" is null', id="a-null-body"),
        pytest.param(b"[]", OperationFailed, "from Array value", id="an-array"),
        pytest.param(b'{"level":{}}', OperationFailed, "(through reference chain", id="an-object-value"),
    ],
)
def test_what_4_3_1_refuses(body: bytes, error: type[ControlPlaneError], message: str) -> None:
    with pytest.raises(error) as refused:
        requested_level(body)
    assert type(refused.value) is error and message in refused.value.message


@pytest.mark.parametrize("version", ["3.4.1", "2.8.2", "3.9.0"])
async def test_old_workers_get_the_level_log4j_2_resolves(version: str) -> None:
    workers = FakeWorkers(version)
    capabilities = Capabilities(workers, {}, refresh_s=60, first_detection_wait_s=0.1)
    assert await capabilities.refresh()
    newer = newer_api(read_rule(capabilities, workers))
    workers.answers[("PUT", "/admin/loggers/a.b?scope=worker")] = (200, b'["a.b"]')
    outcome = await newer.set_logger_level("/admin/loggers/a.b", b'{"level":" debug "}', "worker", "scope=worker")
    assert isinstance(outcome, Relay) and outcome.response.body == b'["a.b"]'
    assert workers.forwarded[-1].body == b'{"level": "DEBUG"}'
    refused = await newer.set_logger_level("/admin/loggers/a.b", b'{"level":""}', None)
    assert isinstance(refused, Refusal) and isinstance(refused.error, OperationFailed)


async def test_4_0_workers_read_the_body_themselves() -> None:
    workers = FakeWorkers("4.0.0")
    capabilities = Capabilities(workers, {}, refresh_s=60, first_detection_wait_s=0.1)
    assert await capabilities.refresh()
    newer = newer_api(read_rule(capabilities, workers))
    assert isinstance(await newer.set_logger_level("/admin/loggers/a", b'{"level":""}', None), Forward)
