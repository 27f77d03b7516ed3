"""Configurations on their way to a worker: the sidecar's checks, merged into the worker's own validation
(ConfigInfos), and the 400 of an invalid create or update as AbstractHerder.maybeAddConfigErrors words it."""

from __future__ import annotations

import orjson
import pytest

from control_plane.domain.config_checks import CheckResult, ConfigSubject, RequestKind
from control_plane.domain.config_infos import ConfigProblem, add_problems, error_count, invalid_config_message
from control_plane.domain.configs.connector_configs import ConnectorConfigs, patched
from control_plane.domain.connect_api import validate_path
from control_plane.domain.errors import BadRequestError
from control_plane.domain.outcomes import Answer, Forward, Refusal, Relay
from tests.support.fakes import FakeWorkers

CLASS = "org.apache.kafka.connect.file.FileStreamSourceConnector"


def entry(name: str, value: str | None, *errors: str) -> dict[str, object]:
    return {
        "definition": {"name": name, "type": "STRING", "required": False, "order_in_group": 1},
        "value": {"name": name, "value": value, "recommended_values": [], "errors": list(errors), "visible": True},
    }


WORKER_VALIDATION = {
    "name": CLASS,
    "error_count": 1,
    "groups": ["Common"],
    "configs": [entry("name", "c"), entry("connector.class", CLASS), entry("tasks.max", "x", "Invalid value x")],
}


class Pins:
    """A check that finds a problem on ``pin`` and hides it from the worker."""

    def __init__(self, *, connect_rule: bool) -> None:
        self.connect_rule = connect_rule
        self.seen: list[ConfigSubject] = []

    async def check(self, subject: ConfigSubject) -> CheckResult:
        self.seen.append(subject)
        if "pin" not in subject.config:
            return CheckResult(warnings=("looked",))
        problems = (
            ConfigProblem("connector.class", "no such version", connect_rule=self.connect_rule),
            ConfigProblem("pin", "no such version", ("1.0", "2.0"), connect_rule=self.connect_rule),
        )
        return CheckResult(problems, hidden_from_worker=frozenset({"pin"}))


def workers_validating() -> FakeWorkers:
    workers = FakeWorkers("4.3.1")
    workers.answers[("PUT", validate_path(CLASS))] = (200, orjson.dumps(WORKER_VALIDATION))
    workers.answers[("GET", "/connectors/c/config")] = (200, orjson.dumps({"connector.class": CLASS, "name": "c"}))
    return workers


def test_problems_go_on_their_entries_and_unknown_keys_get_one_shaped_like_the_workers() -> None:
    merged = add_problems(
        WORKER_VALIDATION,
        [ConfigProblem("connector.class", "bad"), ConfigProblem("pin", "bad", ("1.0",))],
        {"pin": "[9,)"},
    )
    assert merged["error_count"] == 3 == error_count(merged)
    assert merged["configs"][1]["value"]["errors"] == ["bad"]
    added = merged["configs"][-1]
    assert set(added["definition"]) == {"name", "type", "required", "order_in_group"}
    assert added["value"] == {
        "name": "pin",
        "value": "[9,)",
        "recommended_values": ["1.0"],
        "errors": ["bad"],
        "visible": True,
    }
    assert WORKER_VALIDATION["error_count"] == 1  # not changed in place


def test_the_invalid_config_message_lists_every_error_in_entry_order() -> None:
    merged = add_problems(WORKER_VALIDATION, [ConfigProblem("connector.class", "bad")], {})
    assert invalid_config_message(merged) == (
        "Connector configuration is invalid and contains the following 2 error(s):\nbad\nInvalid value x\n"
        "You can also find the above list of errors at the endpoint "
        "`/connector-plugins/{connectorType}/config/validate`"
    )


def test_patch_removes_null_keys() -> None:
    assert patched({"a": "1", "b": "2"}, {"a": None, "c": "3"}) == {"b": "2", "c": "3"}


async def test_without_problems_the_request_goes_through_unchanged_with_the_checks_warnings() -> None:
    workers = workers_validating()
    configs = ConnectorConfigs(workers, [Pins(connect_rule=True)])
    outcome = await configs.create(" c ", {"connector.class": CLASS})
    assert isinstance(outcome, Forward) and outcome.warnings == ("looked",)
    assert workers.forwarded == []  # the worker validates the forwarded create itself


async def test_validate_answers_the_workers_validation_with_its_problems_without_what_it_fails_on() -> None:
    workers = workers_validating()
    path = validate_path(CLASS)
    outcome = await ConnectorConfigs(workers, [Pins(connect_rule=True)]).validate(
        path, {"connector.class": CLASS, "name": "c", "pin": "[9,)"}
    )
    assert isinstance(outcome, Answer)
    assert outcome.value["error_count"] == 3
    assert orjson.loads(workers.forwarded[0].body) == {"connector.class": CLASS, "name": "c"}


@pytest.mark.parametrize(
    ("kind", "connect_rule", "enforce", "refused"),
    [
        pytest.param(RequestKind.CREATE, True, False, True, id="create-connect-rule-always-refused"),
        pytest.param(RequestKind.UPDATE, False, True, True, id="update-own-check-enforced"),
        pytest.param(RequestKind.PATCH, False, False, False, id="patch-own-check-warn-only"),
    ],
)
async def test_writes_with_problems_are_refused_with_connects_400_unless_warn_only(
    kind: RequestKind, connect_rule: bool, enforce: bool, refused: bool
) -> None:
    workers = workers_validating()
    check = Pins(connect_rule=connect_rule)
    configs = ConnectorConfigs(workers, [check], enforce=enforce)
    config = {"connector.class": CLASS, "pin": "[9,)"}
    outcome: Refusal | Forward[None] | Relay
    if kind is RequestKind.CREATE:
        outcome = await configs.create("c", config)
    elif kind is RequestKind.UPDATE:
        outcome = await configs.update("c", config)
    else:
        outcome = await configs.patch("c", {"pin": "[9,)"})
    assert check.seen[0].kind is kind and check.seen[0].config["name"] == "c"
    if refused:
        assert isinstance(outcome, Refusal) and isinstance(outcome.error, BadRequestError)
        assert outcome.error.message.startswith(
            "Connector configuration is invalid and contains the following 3 error(s):\nno such version\n"
        )
    else:
        assert isinstance(outcome, Forward)
        assert outcome.warnings == ("connector.class: no such version", "pin: no such version")


async def test_a_name_that_does_not_match_and_an_unanswered_validation_go_to_the_worker() -> None:
    workers = FakeWorkers("4.3.1")  # answers 404 to everything
    configs = ConnectorConfigs(workers, [Pins(connect_rule=True)])
    assert isinstance(await configs.update("c", {"name": "d", "pin": "x"}), Forward)
    assert isinstance(await configs.update("c", {"connector.class": CLASS, "pin": "x"}), Forward)
    assert isinstance(await configs.patch("c", {"pin": "x"}), Forward)
