"""Versioned plugins (KIP-891): the pure rules (plugin keys, Connect's aliases, how a pin resolves) and the
check on its way to a worker, on a 4.3.1 worker (only what 4.3.1 gets wrong) and a 3.4.1 one (emulated)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from control_plane.domain.capabilities import Capabilities
from control_plane.domain.config_checks import ConfigSubject, RequestKind
from control_plane.domain.configs.connector_configs import ConnectorConfigs
from control_plane.domain.connect_api import validate_path
from control_plane.domain.errors import BadRequestError
from control_plane.domain.outcomes import Answer, Forward, Refusal
from control_plane.domain.plugins.catalog import PluginCatalog
from control_plane.domain.plugins.versions import PluginVersions, add_versions_json
from control_plane.rules.plugin_versions import PinOutcome, connect_aliases, plugin_keys, resolve
from tests.support.fakes import FakeWorkers

CONNECTOR = "org.example.versioned.VersionedSourceConnector"
CONVERTER = "org.example.versioned.VersionedConverter"
INSTALLED = ["1.0.0", "1.1.0", "2.0.0"]


def not_found(range_: str, plugin: str = CONNECTOR) -> str:
    return (
        f"Plugin {plugin} not found that matches the version range {range_}, available versions: [1.0.0, 1.1.0, 2.0.0]"
    )


def listing(*, converter_versions: bool) -> bytes:
    plugins: list[dict[str, Any]] = [{"class": CONNECTOR, "type": "source", "version": v} for v in INSTALLED]
    if converter_versions:
        plugins += [{"class": CONVERTER, "type": "converter", "version": v} for v in INSTALLED]
    else:  # before 4.1: once, without a version
        plugins.append({"class": CONVERTER, "type": "converter"})
    return orjson.dumps(plugins)


# -- the pure rules --------------------------------------------------------------------------------------


def test_plugin_keys_follow_connectors_config_and_the_alias_lists() -> None:
    keys = plugin_keys(
        {
            "connector.class": " Thing ",
            "value.converter": CONVERTER,
            "value.converter.plugin.version": "1.0",
            "key.converter.plugin.version": "2.0",  # no key.converter in the config: not a plugin of it
            "transforms": " a , b",
            "transforms.a.type": "X",
            "transforms.a.plugin.version": "[1,2)",
            "predicates": "",
        }
    )
    assert [(k.class_key, k.version_key, k.plugin, k.spec) for k in keys] == [
        ("connector.class", "connector.plugin.version", "Thing", None),
        ("value.converter", "value.converter.plugin.version", CONVERTER, "1.0"),
        ("transforms.a.type", "transforms.a.plugin.version", "X", "[1,2)"),
    ]


def test_aliases_are_simple_and_pruned_names_unless_two_classes_claim_them() -> None:
    aliases = connect_aliases(
        [
            (CONNECTOR, "source"),
            (CONVERTER, "converter"),
            ("a.Flatten$Key", "transformation"),
            ("b.Cast$Key", "transformation"),
        ]
    )
    assert aliases["VersionedSource"] == aliases["VersionedSourceConnector"] == CONNECTOR
    assert aliases["Versioned"] == CONVERTER
    assert "Key" not in aliases  # both nested classes are "Key"


@pytest.mark.parametrize(
    ("spec", "side_by_side", "outcome", "selected", "runs"),
    [
        pytest.param(None, True, PinOutcome.LATEST, "2.0.0", "2.0.0", id="no-pin"),
        pytest.param("latest", False, PinOutcome.LATEST, "2.0.0", "2.0.0", id="latest"),
        pytest.param("1.1", True, PinOutcome.RESOLVED, "1.1.0", "1.1.0", id="bare-is-exact-and-1.1==1.1.0"),
        pytest.param("1.0.0,2.0.0", True, PinOutcome.RESOLVED, "2.0.0", "2.0.0", id="unbracketed-is-inclusive"),
        pytest.param("[1.0,2.0)", True, PinOutcome.RESOLVED, "1.1.0", "1.1.0", id="range-side-by-side"),
        pytest.param("[1.0,2.0)", False, PinOutcome.OLDER_ONLY, "1.1.0", "2.0.0", id="range-newest-only"),
        pytest.param("[2.0,)", False, PinOutcome.RESOLVED, "2.0.0", "2.0.0", id="newest-satisfies"),
        pytest.param("[3.0,)", True, PinOutcome.UNSATISFIABLE, None, None, id="unsatisfiable"),
        pytest.param("[1.0", True, PinOutcome.UNPARSEABLE, None, None, id="unparseable"),
    ],
)
def test_a_pin_resolves_as_connect_loads_it(
    spec: str | None, side_by_side: bool, outcome: PinOutcome, selected: str | None, runs: str | None
) -> None:
    (key,) = plugin_keys({"connector.class": CONNECTOR, "connector.plugin.version": spec})
    r = resolve(key, CONNECTOR, INSTALLED, side_by_side=side_by_side)
    assert (r.outcome, r.selected, r.runs) == (outcome, selected, runs)
    if outcome is PinOutcome.UNSATISFIABLE:
        assert r.error == not_found("[3.0,)")
    if outcome is PinOutcome.UNPARSEABLE:
        assert r.error == "Unbounded range: [1.0"


def test_unreported_versions_cannot_be_checked_and_unknown_plugins_are_the_workers_business() -> None:
    (key,) = plugin_keys({"connector.class": "X", "connector.plugin.version": "1.0"})
    assert resolve(key, CONVERTER, [None], side_by_side=False).outcome is PinOutcome.VERSIONS_UNKNOWN
    assert resolve(key, None, [], side_by_side=False).outcome is PinOutcome.NOT_INSTALLED


# -- the check -------------------------------------------------------------------------------------------


async def versions_on(version: str) -> tuple[PluginVersions, FakeWorkers]:
    workers = FakeWorkers(version)
    workers.answers[("GET", "/connector-plugins")] = (200, listing(converter_versions=version >= "4.1"))
    capabilities = Capabilities(workers, {}, refresh_s=60, first_detection_wait_s=0.1)
    assert await capabilities.refresh()
    return PluginVersions(capabilities, PluginCatalog(workers, refresh_s=60)), workers


def subject(pins: dict[str, str], kind: RequestKind = RequestKind.CREATE) -> ConfigSubject:
    return ConfigSubject(kind, "c", {"name": "c", "connector.class": CONNECTOR, **pins})


async def test_nothing_pinned_needs_no_plugin_list() -> None:
    versions, workers = await versions_on("3.4.1")
    result = await versions.check(subject({}))
    assert not result.problems and result.refusal is None
    assert not workers.forwarded


async def test_on_4_3_1_only_an_unsatisfiable_connector_pin_is_the_sidecars_and_hidden() -> None:
    versions, _ = await versions_on("4.3.1")
    result = await versions.check(subject({"connector.plugin.version": "[3.0,)"}))
    assert [(p.key, p.message, p.recommended, p.connect_rule) for p in result.problems] == [
        ("connector.class", not_found("[3.0,)"), None, True),
        ("connector.plugin.version", not_found("[3.0,)"), tuple(INSTALLED), True),
    ]
    assert result.hidden_from_worker == {"connector.plugin.version"}
    # converters and older versions: 4.3.1 answers them right itself
    for pins in (
        {"value.converter": CONVERTER, "value.converter.plugin.version": "[3.0,)"},
        {"connector.plugin.version": "1.0.0"},
    ):
        found = await versions.check(subject(pins))
        assert not found.problems and not found.hidden_from_worker


async def test_on_4_4_0_an_unsatisfiable_connector_pin_is_the_workers_own() -> None:
    """KAFKA-20751 is fixed in 4.4.0: the worker answers the pin right every time, the sidecar adds nothing."""
    versions, _ = await versions_on("4.4.0")
    result = await versions.check(subject({"connector.plugin.version": "[3.0,)"}))
    assert not result.problems and not result.hidden_from_worker and result.refusal is None


async def test_on_4_3_1_a_connector_pin_that_is_no_range_is_a_400_on_validate_only() -> None:
    versions, _ = await versions_on("4.3.1")
    validate = await versions.check(subject({"connector.plugin.version": "[1.0"}, RequestKind.VALIDATE))
    assert isinstance(validate.refusal, BadRequestError) and str(validate.refusal) == "Unbounded range: [1.0"
    create = await versions.check(subject({"connector.plugin.version": "[1.0"}))
    assert create.refusal is None  # 4.3.1 answers the create's 400 itself


async def test_on_3_4_1_pins_are_checked_against_what_the_worker_runs() -> None:
    versions, _ = await versions_on("3.4.1")
    assert not (await versions.check(subject({"connector.plugin.version": "[2.0,)"}))).problems
    unsatisfiable = await versions.check(subject({"connector.plugin.version": "[3.0,)"}))
    assert [p.connect_rule for p in unsatisfiable.problems] == [True, True]
    older = await versions.check(subject({"connector.plugin.version": "1.0.0"}))
    (problem,) = older.problems
    assert (problem.key, problem.recommended, problem.connect_rule) == ("connector.plugin.version", ("2.0.0",), False)
    assert "always loads the newest installed version, 2.0.0" in problem.message
    unparseable = await versions.check(subject({"connector.plugin.version": "[1.0"}))
    assert str(unparseable.refusal) == "Unbounded range: [1.0"
    converter = await versions.check(subject({"value.converter": CONVERTER, "value.converter.plugin.version": "1.0.0"}))
    (unchecked,) = converter.problems
    assert unchecked.key == "value.converter.plugin.version" and not unchecked.connect_rule
    bad_converter = await versions.check(
        subject({"value.converter": CONVERTER, "value.converter.plugin.version": "[3"})
    )
    assert [(p.key, p.message) for p in bad_converter.problems] == [
        ("value.converter.plugin.version", "Unbounded range: [3")
    ]


async def test_through_the_seam_a_refused_create_names_every_error_and_validate_shows_the_pin() -> None:
    versions, workers = await versions_on("4.3.1")
    infos = {
        "name": CONNECTOR,
        "error_count": 0,
        "groups": ["Common"],
        "configs": [
            {
                "definition": {"name": "connector.class"},
                "value": {"name": "connector.class", "value": CONNECTOR, "errors": []},
            },
            {
                "definition": {"name": "connector.plugin.version"},
                "value": {"name": "connector.plugin.version", "value": "2.0.0", "errors": []},
            },
        ],
    }
    workers.answers[("PUT", validate_path(CONNECTOR))] = (200, orjson.dumps(infos))
    configs = ConnectorConfigs(workers, (versions,))
    refused = await configs.create("c", {"connector.class": CONNECTOR, "connector.plugin.version": "[3.0,)"})
    assert isinstance(refused, Refusal)
    assert str(refused.error).startswith(
        f"Connector configuration is invalid and contains the following 2 error(s):\n{not_found('[3.0,)')}\n"
    )
    sent = [r for r in workers.forwarded if r.method == "PUT"][-1]
    assert "connector.plugin.version" not in orjson.loads(sent.body)  # hidden: 4.3.1 would NPE
    validated = await configs.validate(
        validate_path(CONNECTOR), {"connector.class": CONNECTOR, "connector.plugin.version": "[3.0,)"}
    )
    assert isinstance(validated, Answer)
    version = validated.value["configs"][1]["value"]
    assert (version["value"], version["recommended_values"]) == ("[3.0,)", INSTALLED)
    assert isinstance(
        await configs.create("c", {"connector.class": CONNECTOR, "connector.plugin.version": "1.0.0"}), Forward
    )


async def test_the_config_of_a_version_on_3_4_1() -> None:
    versions, _ = await versions_on("3.4.1")
    bad = await versions.plugin_config("VersionedSource", "[1.0")
    assert isinstance(bad, Refusal) and str(bad.error) == "Invalid version specification: [1.0"
    none = await versions.plugin_config(CONNECTOR, "[5.0,)")
    assert isinstance(none, Refusal) and str(none.error) == not_found("[5.0,)")
    assert isinstance(await versions.plugin_config(CONNECTOR, "2.0.0"), Forward)
    assert isinstance(await versions.plugin_config(CONNECTOR, "1.0.0"), Refusal)
    assert isinstance(await versions.plugin_config("NoSuchPlugin", "1.0.0"), Forward)  # the worker's 404


def test_statuses_get_versions_in_connects_field_order_and_null_when_unassigned() -> None:
    status = {
        "name": "c",
        "connector": {"state": "RUNNING", "worker_id": "w"},
        "tasks": [
            {"id": 0, "state": "FAILED", "worker_id": "w", "trace": "boom"},
            {"id": 1, "state": "UNASSIGNED", "worker_id": "w"},
            {"id": 2, "state": "RUNNING", "worker_id": "v"},
            {"id": 3, "state": "RUNNING", "worker_id": "unknown"},
        ],
        "type": "source",
    }
    versions = {"w": "2.0.0", "v": "1.1.0"}
    shown = add_versions_json(status, lambda worker: versions.get(worker or ""))  # each worker's own version
    assert shown["connector"] == {"state": "RUNNING", "worker_id": "w", "version": "2.0.0"}
    assert list(shown["tasks"][0]) == ["id", "state", "worker_id", "version", "trace"]
    assert shown["tasks"][1]["version"] is None
    assert [t["version"] for t in shown["tasks"][2:]] == ["1.1.0", None]  # a worker's plugins unknown: never guessed


def test_the_report_routes_have_templates_that_do_not_grow_with_names() -> None:
    from control_plane.rest.routing.router import route_template

    assert (
        route_template("/_sidecar/connectors/abc/plugin-versions") == "/_sidecar/connectors/{connector}/plugin-versions"
    )
    assert route_template("/_sidecar/plugin-versions") == "/_sidecar/plugin-versions"
    assert route_template(f"/connector-plugins/{CONNECTOR}/config") == "/connector-plugins/{pluginName}/config"
