"""Validate answers in 4.4.0's shape: values given as config provider references shown as given, their
recommended values dropped and their errors replaced by one generic message."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from control_plane.domain.capabilities import Capabilities, Feature
from control_plane.domain.configs import Configs, ConnectorConfigs
from control_plane.domain.configs.unresolved import VARIABLE, generic_error, shown_as_given
from control_plane.domain.outcomes import Answer, Forward
from control_plane.modes import FeatureMode
from control_plane.upstream import UpstreamResponse
from tests.support.fakes import FakeWorkers, configs_feature, read_rule

SECRET_REF = "${file:/etc/secrets.properties:password}"


def infos(**values: Any) -> dict[str, Any]:
    return {
        "name": "org.example.Source",
        "error_count": 0,
        "groups": ["Common"],
        "configs": [
            {"definition": {"name": k}, "value": {"name": k, "value": v, "recommended_values": [], "errors": []}}
            for k, v in values.items()
        ],
    }


@pytest.mark.parametrize(
    "text",
    ["${file:/a:b}", "${vault:b}", "x-${env:HOME}-y", "${a:b:c}"],
)
def test_references_as_connect_finds_them(text: str) -> None:
    assert VARIABLE.search(text)


@pytest.mark.parametrize("text", ["${}", "$file:a:b", "${noprovider}", "plain"])
def test_no_reference(text: str) -> None:
    assert not VARIABLE.search(text)


def test_resolved_values_shown_as_given() -> None:
    config = {"password": SECRET_REF, "topic": "t", "prefix": "a-${env:USER}"}
    answer = infos(password="hunter2", topic="t", prefix="a-me", other=None)
    shown = shown_as_given(answer, config)
    values = {c["value"]["name"]: c["value"]["value"] for c in shown["configs"]}
    assert values == {"password": SECRET_REF, "topic": "t", "prefix": "a-${env:USER}", "other": None}
    assert shown["error_count"] == 0 and shown["groups"] == ["Common"]
    assert shown_as_given(answer, {"topic": "t"}) is answer  # nothing given as a reference: unchanged


def test_errors_of_a_resolved_value_become_one_generic_message() -> None:
    """What 4.4.0 answers (``AbstractHerder.redactResolvedValues``): the worker's errors quote the resolved
    value; through the sidecar one generic error instead, no recommended values, the errors counted again."""
    answer = infos(**{"tasks.max": None, "key.converter": None, "file": "${unknown:a:b}", "name": None})
    quoted = ["Invalid value abc for configuration tasks.max: Not a number of type INT", "Value must be non-null"]
    answer["configs"][0]["value"]["errors"] = quoted
    answer["configs"][1]["value"] |= {"errors": ["Class s3cret could not be found."], "recommended_values": ["x"]}
    answer["configs"][3]["value"]["errors"] = ['Missing required configuration "name" which has no default value.']
    answer["error_count"] = 4
    config = {"tasks.max": "${file:/s:tasks}", "key.converter": "${file:/s:pw}", "file": "${unknown:a:b}"}
    shown = {c["value"]["name"]: c["value"] for c in shown_as_given(answer, config)["configs"]}
    assert shown["tasks.max"] == {
        "name": "tasks.max",
        "value": "${file:/s:tasks}",
        "recommended_values": [],
        "errors": [generic_error("tasks.max")],
    }
    assert shown["key.converter"]["errors"] == [
        "Invalid value for configuration 'key.converter': the value resolved from the config provider reference "
        "failed validation"
    ]
    assert shown["key.converter"]["recommended_values"] == []
    assert shown["file"]["value"] == "${unknown:a:b}"  # not resolved by the worker: as the worker answered it
    assert shown_as_given(answer, config)["error_count"] == 3


async def configs_for(version: str, modes: dict[Feature, FeatureMode] | None = None) -> Configs:
    workers = FakeWorkers(version)
    capabilities = Capabilities(workers, modes or {}, refresh_s=60, first_detection_wait_s=0.1)
    assert await capabilities.refresh()
    return configs_feature(read_rule(capabilities, workers), ConnectorConfigs(workers, checks=()))


@pytest.mark.parametrize("version", ["4.3.1", "3.4.1", "2.8.2"])
async def test_every_worker_before_4_4_answers_in_the_newest_shape(version: str) -> None:
    configs = await configs_for(version)
    config = {"password": SECRET_REF}
    forwarded = await configs.in_newest_shape(Forward(), config)
    assert isinstance(forwarded, Forward) and forwarded.rewrite is not None
    worker = UpstreamResponse(200, [], orjson.dumps(infos(password="hunter2")), "http://w1:8083")
    shown = orjson.loads((await forwarded.rewrite(worker)).body)
    assert shown["configs"][0]["value"]["value"] == SECRET_REF
    answered = await configs.in_newest_shape(Answer(infos(password="hunter2")), config)
    assert isinstance(answered, Answer) and answered.value["configs"][0]["value"]["value"] == SECRET_REF


async def test_native_keeps_the_workers_answer() -> None:
    configs = await configs_for("4.3.1", {Feature.VALIDATE_UNRESOLVED: FeatureMode.NATIVE})
    outcome = await configs.in_newest_shape(Forward(), {"password": SECRET_REF})
    assert outcome == Forward()


async def test_a_4_4_worker_does_it_itself() -> None:
    configs = await configs_for("4.4.0")
    assert await configs.in_newest_shape(Forward(), {"password": SECRET_REF}) == Forward()
