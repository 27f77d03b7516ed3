"""Plan and apply (domain/plan/, plan_cli.py): the shapes of files, no false drift (numbers, key order, the
name the worker adds, secrets compared under a key, provider references as written), prune only when asked, a stale
plan refused, an apply that stops at the first failure saying what was made, and the terminal rendering."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest
import respx

from control_plane.cli import main as control_plane
from control_plane.domain.errors import BadRequestError, ConflictError, WorkerRefused
from control_plane.domain.plan import Planner, config_digest, desired_of, steps_of
from control_plane.plan_cli import documents_of, render_apply, render_plan
from control_plane.plan_files import FileError
from control_plane.plan_progress import done_steps
from control_plane.rest.resources.plan import applied_json, applied_response, options_of, plan_json
from control_plane.rules.config_diff import SecretDigests
from control_plane.rules.config_values import read_json

DIGESTS = SecretDigests(b"k")
STORED = {
    "name": "orders",
    "connector.class": "FileStreamSource",
    "tasks.max": "2",
    "batch.ratio": "1.5",
    "enabled": "true",
    "db.password": "s3cret",
    "ssl.key.password": "${file:/etc/s.properties:pw}",
}


def test_every_shape_of_a_file_and_the_worker_s_strings() -> None:
    flat = {"name": " orders ", "connector.class": "FileStreamSource", "tasks.max": 2}
    nested = {"name": "orders", "config": {"connector.class": "FileStreamSource", "tasks.max": 2}}
    for document in (flat, nested, [nested]):
        (desired,) = desired_of(document, "f.yaml")
        assert desired.name == "orders"
        assert desired.config == {"name": "orders", "connector.class": "FileStreamSource", "tasks.max": "2"}
    with pytest.raises(BadRequestError, match=r"f\.yaml"):
        desired_of({"config": {}}, "f.yaml")
    with pytest.raises(BadRequestError, match="another connector"):
        desired_of({"name": "a", "config": {"name": "b"}}, "f.yaml")
    with pytest.raises(BadRequestError, match="More than one"):
        steps_of(desired_of([nested, nested], "f"), {}, DIGESTS, prune=False)


def test_no_false_drift_after_apply() -> None:
    file = {
        "name": "orders",
        "config": {  # another order, numbers and booleans as YAML reads them
            "ssl.key.password": "${file:/etc/s.properties:pw}",
            "enabled": True,
            "batch.ratio": 1.5,
            "db.password": "s3cret",
            "tasks.max": 2,
            "connector.class": "FileStreamSource",
        },
    }
    (step,) = steps_of(desired_of(file, "f"), {"orders": STORED}, DIGESTS, prune=False)
    assert (step.action, step.changes, step.config) == ("unchanged", (), None)


def test_changes_secrets_by_digest_and_prune_only_when_asked() -> None:
    file = {"name": "orders", "config": {**STORED, "db.password": "rotated", "tasks.max": "3"}}
    current = {"orders": STORED, "legacy": {"name": "legacy", "connector.class": "X"}}
    steps = steps_of(desired_of(file, "f"), current, DIGESTS, prune=False)
    assert [(s.name, s.action) for s in steps] == [("orders", "update")]
    assert [c.as_json() for c in steps[0].changes] == [
        {"name": "db.password", "op": "changed", "before": "[hidden]", "after": "[hidden]", "secret": True},
        {"name": "tasks.max", "op": "changed", "before": "2", "after": "3"},
    ]
    pruned = steps_of(desired_of(file, "f"), current, DIGESTS, prune=True)
    assert [(s.name, s.action) for s in pruned] == [("orders", "update"), ("legacy", "delete")]
    created = steps_of(desired_of({"name": "new", "config": {"a": "1"}}, "f"), {}, DIGESTS, prune=False)
    assert [(s.action, s.seen) for s in created] == [("create", None)]


class Cluster:
    def __init__(self, configs: dict[str, dict[str, str | None]], digests: SecretDigests = DIGESTS) -> None:
        self.configs = configs
        self.digests = digests
        self.writes: list[tuple[str, str]] = []
        self.refuse: str | None = None
        self.refused = WorkerRefused(400, "Connector configuration is invalid")

    async def current(self) -> Mapping[str, Mapping[str, str | None]]:
        return {k: dict(v) for k, v in self.configs.items()}

    async def validate(self, name: str, config: dict[str, str | None]) -> list[str]:
        return ['Missing required configuration "file"'] if config.get("file") == "" else []

    async def write(self, name: str, config: dict[str, str | None], seen: str | None) -> None:
        assert config_digest(self.configs.get(name), self.digests) == seen  # holds only on what the plan saw
        if name == self.refuse:
            raise self.refused
        self.configs[name] = dict(config)
        self.writes.append(("write", name))

    async def delete(self, name: str, seen: str) -> None:
        del self.configs[name]
        self.writes.append(("delete", name))

    def planner(self) -> Planner:
        return Planner(self.current, self.digests, self.validate, self.write, self.delete)


async def test_a_plan_carries_no_digest_a_reader_could_test_a_secret_against() -> None:
    """``seen`` and the fingerprint are keyed: without the sidecar's key, a guess of the password in a
    config cannot be checked against them; a plan made under another key is refused, nothing applied."""
    cluster = Cluster({"orders": dict(STORED)})
    files: list[tuple[Any, str]] = [({"name": "orders", "config": {**STORED, "tasks.max": 4}}, "a.yaml")]
    plan = plan_json(await cluster.planner().plan(files, prune=False))
    (step,) = plan["connectors"]
    unkeyed = hashlib.sha256(orjson.dumps(STORED, option=orjson.OPT_SORT_KEYS)).hexdigest()
    assert unkeyed not in str(plan) and step["seen"] != unkeyed and step["seen"].startswith("hmac-sha256:")
    assert step["seen"] == config_digest(STORED, DIGESTS) != config_digest(STORED, SecretDigests(b"other"))
    assert "s3cret" not in str(step["changes"])
    other = Cluster(cluster.configs, SecretDigests(b"other"))
    with pytest.raises(ConflictError, match="changed since the plan"):
        await other.planner().apply(plan)
    assert other.writes == []
    assert applied_json(await cluster.planner().apply(plan))["applied"] == [{"name": "orders", "action": "update"}]


async def test_apply_does_the_plan_and_a_stale_plan_is_refused() -> None:
    cluster = Cluster({"orders": dict(STORED), "legacy": {"name": "legacy", "connector.class": "X"}})
    files: list[tuple[Any, str]] = [
        ({"name": "orders", "config": {**STORED, "tasks.max": 4}}, "a.yaml"),
        ({"name": "new", "config": {"connector.class": "X"}}, "b.yaml"),
    ]
    plan = plan_json(await cluster.planner().plan(files, prune=True))
    assert plan["summary"] == {"create": 1, "update": 1, "delete": 1, "unchanged": 0}
    stale = plan_json(await cluster.planner().plan(files, prune=True))
    assert applied_json(await cluster.planner().apply(plan))["applied"] == [
        {"name": "new", "action": "create"},
        {"name": "orders", "action": "update"},
        {"name": "legacy", "action": "delete"},
    ]
    assert cluster.writes == [("write", "new"), ("write", "orders"), ("delete", "legacy")]
    assert (plan_json(await cluster.planner().plan(files, prune=True)))["summary"][
        "unchanged"
    ] == 2  # nothing left to do
    with pytest.raises(ConflictError, match="changed since the plan"):
        await cluster.planner().apply(stale)
    no_config = {"name": "a", "action": "create"}  # a create without its config
    bad_errors = {"name": "a", "action": "unchanged", "errors": [3]}
    for bad in (
        {"connectors": "no"},
        {"fingerprint": "f", "connectors": [no_config]},
        {"fingerprint": "f", "connectors": [bad_errors]},
    ):
        with pytest.raises(BadRequestError):
            await cluster.planner().apply(bad)


async def test_an_apply_that_fails_says_what_was_made_and_invalid_plans_are_refused() -> None:
    cluster = Cluster({})
    files: list[tuple[Any, str]] = [({"name": n, "config": {"connector.class": "X"}}, "f") for n in ("a", "b", "c")]
    plan = plan_json(await cluster.planner().plan(files, prune=False))
    cluster.refuse = "b"
    stopped = await cluster.planner().apply(plan, concurrency=1)  # stops starting steps at the failure
    assert (stopped.steps, stopped.not_tried) == ((("a", "create"),), (("c", "create"),))
    (failure,) = stopped.failed
    assert (failure.name, failure.attempts, failure.error) == ("b", 1, cluster.refused)
    body = applied_json(stopped)
    assert body["failed"] == [
        {
            "name": "b",
            "action": "create",
            "error_code": 400,
            "message": "Connector configuration is invalid",
            "attempts": 1,
        }
    ]
    assert body["not_tried"] == [{"name": "c", "action": "create"}] and not stopped.complete
    cluster.configs.clear()
    carried_on = await cluster.planner().apply(plan, concurrency=1, continue_on_error=True)
    assert (carried_on.steps, [f.name for f in carried_on.failed], carried_on.not_tried) == (
        (("a", "create"), ("c", "create")),
        ["b"],
        (),
    )
    twice = {**plan, "connectors": plan["connectors"] + plan["connectors"][:1]}
    with pytest.raises(BadRequestError, match="once"):
        await cluster.planner().apply(twice)
    bad = [({"name": "d", "config": {"connector.class": "X", "file": ""}}, "f")]
    invalid = plan_json(await cluster.planner().plan(bad, prune=False))
    assert invalid["connectors"][0]["errors"] == ['Missing required configuration "file"']
    with pytest.raises(BadRequestError, match="invalid"):
        await cluster.planner().apply(invalid)


def test_files_of_a_folder_and_the_rendering(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("name: a\nconfig:\n  tasks.max: 1\n---\nname: b\nconfig: {x: y}\n")
    (tmp_path / "c.json").write_text('[{"name": "c", "config": {}}]')
    (tmp_path / "notes.txt").write_text("not a connector")
    found = documents_of(tmp_path)
    assert [d["source"].rsplit("/", 1)[1] for d in found] == ["a.yaml", "a.yaml", "c.json"]
    plan = {
        "summary": {"create": 1, "update": 1, "delete": 0, "unchanged": 1},
        "connectors": [
            {"name": "a", "action": "create", "changes": [{"name": "x", "op": "added", "after": "1"}]},
            {"name": "b", "action": "update", "changes": [{"name": "x", "op": "changed", "before": "1", "after": "2"}]},
            {"name": "c", "action": "unchanged", "changes": []},
        ],
    }
    assert render_plan(plan).splitlines() == [
        "+ a (create)",
        "    + x = 1",
        "~ b (update)",
        "    ~ x: 1 -> 2",
        "= 1 unchanged: c",  # the unchanged ones on one line, whatever their number
        "Plan: 1 to create, 1 to update, 0 to delete, 1 unchanged.",
    ]
    assert "\033[32m+ a (create)\033[0m" in render_plan(plan, colour=True)
    assert render_apply({"applied": [{"name": "a", "action": "create"}]}) == "+ a (created)\nApplied: 1 change(s)."
    failed = {"name": "b", "action": "update", "error_code": 400, "message": "bad"}
    partly = {"applied": [], "failed": [failed], "not_tried": [{"name": "c", "action": "delete"}]}
    assert render_apply(partly).splitlines() == [
        "! b (update failed: 400 bad)",
        "Not tried: 1: c",
        "Applied: 0 change(s); 1 failed; 1 not tried.",
    ]


def test_the_cli_says_what_the_sidecar_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan_file = tmp_path / "plan.json"
    plan_file.write_text('{"fingerprint": "f", "connectors": []}')
    with respx.mock:
        respx.post("http://sidecar:8084/_sidecar/apply").respond(
            409, json={"error_code": 409, "message": "The cluster changed since the plan was made"}
        )
        code = control_plane(["apply", str(plan_file), "--url", "http://sidecar:8084", "--token", "t"])
    assert code == 1
    assert capsys.readouterr().err == "control-plane apply: 409: The cluster changed since the plan was made\n"
    assert control_plane(["plan", "-f", str(tmp_path / "missing"), "--url", "http://sidecar:8084"]) == 2


EXACT = {  # the text of each value, as it must reach the worker
    "pin.version": "3.10",
    "flag.on": "on",
    "flag.off": "off",
    "file.mode": "0755",
    "ratio": "1.50",
    "tiny": "1e-7",
}


def test_a_file_s_scalars_are_its_text_yaml_and_json(tmp_path: Path) -> None:
    """What a typed reading would change (3.10 to 3.1, on to true, 0755 to 493, 1.50 to 1.5, 1e-7 refused)
    reaches the plan as the file writes it, and compares equal with the worker's strings."""
    (tmp_path / "a.yaml").write_text(
        "name: a\nconfig:\n  pin.version: 3.10\n  flag.on: on\n  flag.off: off\n  file.mode: 0755\n"
        "  ratio: 1.50\n  tiny: 1e-7\n"
    )
    (tmp_path / "b.json").write_text(
        '{"name": "b", "config": {"pin.version": 3.10, "flag.on": "on", "flag.off": "off", "file.mode": "0755",'
        ' "ratio": 1.50, "tiny": 1e-7}}'
    )
    found = documents_of(tmp_path)
    assert [d["document"]["config"] for d in found] == [EXACT, EXACT]
    desired = [d for item in found for d in desired_of(item["document"], item["source"])]
    stored = {name: {**EXACT, "name": name} for name in ("a", "b")}
    assert [(s.name, s.action) for s in steps_of(desired, stored, DIGESTS, prune=False)] == [
        ("a", "unchanged"),
        ("b", "unchanged"),
    ]


def test_yaml_scalars_as_written_quoted_null_merge_and_tags(tmp_path: Path) -> None:
    (tmp_path / "a.yml").write_text(
        "base: &base\n  tasks.max: 01\n  on: yes\n"
        "name: a\n"
        "config:\n  <<: *base\n  quoted: '3.10'\n  escaped: \"a\\tb\"\n  block: |\n    x\n"
        "  when: 2026-12-07\n  tagged: !!int 0x1F\n  big: 1_000\n  gone: null\n  tilde: ~\n  empty:\n"
        "  text: NULL-ish\n  inf: .inf\n"
    )
    ((document,),) = [[d["document"] for d in documents_of(tmp_path)]]
    assert document["base"] == {"tasks.max": "01", "on": "yes"}
    assert document["config"] == {
        "tasks.max": "01",
        "on": "yes",
        "quoted": "3.10",
        "escaped": "a\tb",
        "block": "x\n",
        "when": "2026-12-07",
        "tagged": "0x1F",
        "big": "1_000",
        "gone": None,
        "tilde": None,
        "empty": None,
        "text": "NULL-ish",
        "inf": ".inf",
    }


def test_a_json_file_keeps_jackson_s_text_and_refuses_what_jackson_refuses(tmp_path: Path) -> None:
    file = tmp_path / "c.json"
    file.write_text(
        '[{"name": "c", "config": {"a": -0, "b": 1E+3, "c": true, "d": null, "e": 10000000000000000000000}}]'
    )
    ((document,),) = [[d["document"] for d in documents_of(file)]]
    assert document == [
        {"name": "c", "config": {"a": "-0", "b": "1E+3", "c": True, "d": None, "e": "10000000000000000000000"}}
    ]
    (desired,) = desired_of(document, "c.json")
    assert desired.config == {
        "a": "-0",
        "b": "1E+3",
        "c": "true",
        "d": None,
        "e": "10000000000000000000000",
        "name": "c",
    }
    file.write_text('{"name": "c", "config": {"a": NaN}}')
    with pytest.raises(FileError, match=r"c\.json"):
        documents_of(file)


def test_the_cli_sends_the_options_and_exits_1_when_a_step_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan_file = tmp_path / "plan.json"
    plan_file.write_text('{"fingerprint": "f", "connectors": []}')
    failed = {"name": "b", "action": "create", "error_code": 400, "message": "bad", "attempts": 1}
    partly = {"error_code": 400, "message": "Applied 1 of 2", "applied": [{"name": "a", "action": "create"}]}
    with respx.mock:
        route = respx.post("http://sidecar:8084/_sidecar/apply").respond(
            400, json={**partly, "failed": [failed], "not_tried": []}
        )
        args = ["apply", str(plan_file), "--url", "http://sidecar:8084", "--concurrency", "16", "--deadline-s", "90"]
        code = control_plane([*args, "--continue-on-error"])
    assert code == 1
    sent = json.loads(route.calls.last.request.content)
    assert (sent["concurrency"], sent["deadline_s"], sent["continue_on_error"]) == (16, 90.0, True)
    assert capsys.readouterr().out.splitlines() == [
        "+ a (created)",
        "! b (create failed: 400 bad)",
        "Applied: 1 change(s); 1 failed; 0 not tried.",
    ]


async def test_the_http_answer_of_an_apply_that_did_not_finish() -> None:
    cluster = Cluster({})
    files: list[tuple[Any, str]] = [({"name": n, "config": {"connector.class": "X"}}, "f") for n in ("a", "b", "c")]
    plan = plan_json(await cluster.planner().plan(files, prune=False))
    cluster.refuse = "b"
    answer = applied_response(await cluster.planner().apply(plan, concurrency=1))
    body = json.loads(bytes(answer.body))
    assert answer.status_code == 400 and body["error_code"] == 400
    assert body["message"] == (
        "Applied 1 of 3 step(s); 1 failed (first: create of b: Connector configuration is invalid); 1 not tried"
    )
    assert [d["name"] for d in body["applied"]] == ["a"] and [d["name"] for d in body["not_tried"]] == ["c"]
    cluster.configs.clear()
    cluster.refuse = None
    done = applied_response(await cluster.planner().apply(plan))
    assert done.status_code == 200 and json.loads(bytes(done.body))["failed"] == []
    read, _ = read_json(b'{"concurrency": 16, "deadline_s": 1.5}')  # numbers as the handler reads them
    assert options_of(read) == (16, 1.5, False)
    for bad in ({"concurrency": 0}, {"concurrency": True}, {"deadline_s": "soon"}, {"continue_on_error": "yes"}):
        with pytest.raises(BadRequestError):
            options_of({**plan, **bad})
    assert options_of({**plan, "concurrency": 4, "deadline_s": 30}) == (4, 30.0, False)


def test_the_progress_counts_the_steps_the_cluster_shows_done() -> None:
    steps: list[dict[str, Any]] = [
        {"name": "a", "action": "create", "config": {"name": "a", "x": "1"}},
        {"name": "b", "action": "update", "config": {"name": "b", "x": "2"}},
        {"name": "c", "action": "delete"},
    ]
    listed = {"a": {"info": {"config": {"name": "a", "x": "1"}}}, "b": {"info": {"config": {"name": "b", "x": "1"}}}}
    assert done_steps(steps, listed) == 2  # a created, b not yet updated, c gone
    assert done_steps(steps, {**listed, "c": {"info": {"config": {}}}}) == 1
