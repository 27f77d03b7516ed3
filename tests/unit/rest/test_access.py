"""Access control enforced on every request (a step of the pipeline, ``rest.steps.access``), whether a route of the
sidecar answers it or it is forwarded to the workers, for every method, known or not, and for raw targets a
client may send (encoded separators and dot segments), sent over a real socket to either server."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
import respx
from aiokafka.errors import KafkaConnectionError, TopicAuthorizationFailedError

from control_plane.access import AuditLog, Credentials, CredentialsError, hash_password, hash_token
from control_plane.access.credentials import parse
from control_plane.rest import create_app
from control_plane.rest.entities.responses import Serialized
from control_plane.rest.request.exchange import Exchange, HttpReply
from control_plane.rest.steps.access import NOT_AUTHENTICATED, _transformed
from control_plane.rules.secrets import DEFAULT_SECRET_RULE, MASK
from control_plane.settings import SettingsError, load_settings
from tests.support.asgi_app import CONNECT_URLS, Running
from tests.support.ports import free_port
from tests.support.raw_http import ScriptedWorker, served
from tests.support.scripted_producer import CountingWritesObserver, make_writes

CREDENTIALS = (
    "token view viewer plain:view-token; token op operator plain:op-token; token adm admin plain:adm-token;"
    "token team operator plain:team-token team-a-*,shared"
)


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


VIEWER, OPERATOR, ADMIN, TEAM = bearer("view-token"), bearer("op-token"), bearer("adm-token"), bearer("team-token")


@pytest.fixture
def with_auth(serve: Callable[..., contextlib.AbstractAsyncContextManager[Running]]) -> Any:
    def start(**overrides: object) -> contextlib.AbstractAsyncContextManager[Running]:
        settings = load_settings(
            connect_urls=CONNECT_URLS, view_enabled=False, auth_enabled=True, auth_credentials=CREDENTIALS, **overrides
        )
        return serve(settings=settings)

    return start


def connect_error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == status
    return str(body["message"])


# -- authentication ------------------------------------------------------------------------------------
async def test_without_credentials_401_in_connects_shape_and_probes_stay_open(with_auth: Any) -> None:
    async with with_auth() as running:
        client = running.client
        for response in (await client.get("/connectors"), await client.get("/connectors", headers=bearer("wrong"))):
            assert connect_error(response, 401) == NOT_AUTHENTICATED
            assert response.headers.get_list("www-authenticate") == [
                'Bearer realm="control-plane"',
                'Basic realm="control-plane", charset="UTF-8"',
            ]
        assert (await client.get("/healthz")).status_code == 200
        assert (await client.get("/readyz")).status_code in (200, 503)
        assert (await client.get("/metrics")).status_code == 401
        assert (await client.get("/metrics", headers=VIEWER)).status_code == 200


async def test_basic_users_with_hashed_passwords(serve: Any, router: respx.MockRouter) -> None:
    router.get(path="/connectors").respond(200, json=[])
    entry = f"user alice viewer {hash_password('pw', iterations=1000)}"
    settings = load_settings(connect_urls=CONNECT_URLS, view_enabled=False, auth_enabled=True, auth_credentials=entry)
    async with serve(settings=settings) as running:
        good = base64.b64encode(b"alice:pw").decode()
        bad = base64.b64encode(b"alice:nope").decode()
        assert (await running.client.get("/connectors", headers={"authorization": f"Basic {good}"})).status_code == 200
        assert (await running.client.get("/connectors", headers={"authorization": f"Basic {bad}"})).status_code == 401
        assert (await running.client.get("/connectors", headers={"authorization": "Basic !!"})).status_code == 401


# -- roles, on both paths ------------------------------------------------------------------------------
async def test_viewer_reads_and_is_refused_every_change(with_auth: Any, router: respx.MockRouter) -> None:
    listing = router.get(path="/connectors").respond(200, json=["c"])
    pause = router.put(path="/connectors/c/pause").respond(202)  # the short path
    restart = router.post(path="/connectors/c/restart").respond(204)  # a route of the sidecar
    delete = router.delete(path="/connectors/c").respond(204)
    async with with_auth() as running:
        client = running.client
        assert (await client.get("/connectors", headers=VIEWER)).json() == ["c"]
        assert listing.called
        for method, path in [
            ("PUT", "/connectors/c/pause"),
            ("POST", "/connectors/c/restart"),
            ("DELETE", "/connectors/c"),
        ]:
            message = connect_error(await client.request(method, path, headers=VIEWER), 403)
            assert message == f"view (viewer) may not {method} {path}"
        assert not (pause.called or restart.called or delete.called)


async def test_operator_operates_but_does_not_administer(with_auth: Any, router: respx.MockRouter) -> None:
    pause = router.put(path="/connectors/c/pause").respond(202)
    delete = router.delete(path="/connectors/c").respond(204)
    logger = router.put(path="/admin/loggers/root").respond(200, json=[])
    async with with_auth() as running:
        client = running.client
        assert (await client.put("/connectors/c/pause", headers=OPERATOR)).status_code == 202
        assert pause.called
        connect_error(await client.delete("/connectors/c", headers=OPERATOR), 403)
        connect_error(await client.put("/admin/loggers/root", json={"level": "DEBUG"}, headers=OPERATOR), 403)
        assert not (delete.called or logger.called)
        assert (await client.delete("/connectors/c", headers=ADMIN)).status_code == 204
        assert delete.called


@pytest.mark.parametrize("method", ["PURGE", "PROPFIND", "TRACE", "OPTIONS"])
async def test_methods_the_sidecar_does_not_know_need_admin(
    with_auth: Any, router: respx.MockRouter, method: str
) -> None:
    route = router.route(method=method, path="/connectors/c").respond(200, json={})
    async with with_auth() as running:
        connect_error(await running.client.request(method, "/connectors/c", headers=OPERATOR), 403)
        assert not route.called
        assert (await running.client.request(method, "/connectors/c", headers=ADMIN)).status_code == 200


# -- connector-name patterns ---------------------------------------------------------------------------
async def test_a_limited_token_sees_only_its_connectors(with_auth: Any, router: respx.MockRouter) -> None:
    status = {"name": "x", "connector": {"state": "RUNNING", "worker_id": "w"}, "tasks": [], "type": "sink"}
    router.get(path="/connectors", params={"expand": "status"}).respond(
        200, json={"team-a-1": {"status": status}, "other": {"status": status}}
    )
    router.get(path="/connectors").respond(200, json=["team-a-1", "other", "shared"])
    hidden_status = router.get(path="/connectors/other/status").respond(200, json=status)
    hidden_pause = router.put(path="/connectors/other/pause").respond(202)
    own_pause = router.put(path="/connectors/team-a-1/pause").respond(202)
    async with with_auth() as running:
        client = running.client
        assert (await client.get("/connectors", headers=TEAM)).json() == ["team-a-1", "shared"]
        assert list((await client.get("/connectors?expand=status", headers=TEAM)).json()) == ["team-a-1"]
        assert (await client.get("/connectors", headers=OPERATOR)).json() == ["team-a-1", "other", "shared"]
        assert (
            connect_error(await client.get("/connectors/other/status", headers=TEAM), 404)
            == "Connector other not found"
        )
        assert (
            connect_error(await client.put("/connectors/other/pause", headers=TEAM), 404) == "Connector other not found"
        )
        assert not (hidden_status.called or hidden_pause.called)
        assert (await client.put("/connectors/team-a-1/pause", headers=TEAM)).status_code == 202
        assert own_pause.called
        # what would create a connector it may not see, and what names every connector: 403
        connect_error(await client.put("/connectors/other/config", json={}, headers=TEAM), 403)
        connect_error(await client.get("/metrics", headers=TEAM), 403)
        connect_error(await client.get("/connectors/x%2F..%2Fother/status", headers=TEAM), 403)


async def test_a_limited_admin_creates_only_names_it_sees(serve: Any, router: respx.MockRouter) -> None:
    create = router.post(path="/connectors").respond(201, json={"name": "team-a-2", "config": {}, "tasks": []})
    entry = "token limited admin plain:t team-a-*"
    settings = load_settings(
        connect_urls=CONNECT_URLS, view_enabled=False, auth_enabled=True, auth_credentials=entry, config_checks="warn"
    )
    async with serve(settings=settings) as running:
        client, token = running.client, bearer("t")
        body: object
        for body in ({"name": "other", "config": {}}, {"name": " other", "config": {}}, [], {"config": {}}):
            connect_error(await client.post("/connectors", json=body, headers=token), 403)
        connect_error(await client.post("/connectors", content=b"{", headers=token), 403)
        assert not create.called
        await client.post("/connectors", json={"name": "team-a-2", "config": {"connector.class": "X"}}, headers=token)
        assert create.called  # reached the worker with the body the gate read


# -- secrets masked below admin ------------------------------------------------------------------------
CONFIG = {"connector.class": "X", "connection.password": "hunter2", "ssl.key.password": "${file:/s.properties:k}"}


async def test_config_answers_are_masked_for_viewers_on_both_paths(with_auth: Any, router: respx.MockRouter) -> None:
    router.get(path="/connectors/c/config").respond(200, json=CONFIG)  # a sidecar route
    tasks = [{"id": {"connector": "c", "task": 0}, "config": CONFIG}]
    router.get(path="/connectors/c/tasks").respond(200, json=tasks)  # the short path
    router.get(path="/connectors/c").respond(200, json={"name": "c", "config": CONFIG, "tasks": [], "type": "sink"})
    masked = {**CONFIG, "connection.password": MASK}
    async with with_auth() as running:
        client = running.client
        answer = await client.get("/connectors/c/config", headers=VIEWER)
        assert answer.json() == masked
        assert int(answer.headers["content-length"]) == len(answer.content)
        assert (await client.get("/connectors/c/tasks", headers=VIEWER)).json()[0]["config"] == masked
        assert (await client.get("/connectors/c", headers=OPERATOR)).json()["config"] == masked
        assert (await client.get("/connectors/c/config", headers=ADMIN)).json() == CONFIG


async def test_an_answer_kept_serialized_is_masked_too() -> None:
    """The view's answers are kept serialized (``rest.entities.responses.Serialized``, a bytes subclass): a viewer's
    answer is masked from it as from any other (``GET /connectors?expand=info`` from the view)."""
    listing = Serialized(json.dumps({"c": {"info": {"name": "c", "config": CONFIG}}}).encode())

    async def then(exchange: Exchange) -> HttpReply:
        return HttpReply(200, [(b"content-length", str(len(listing)).encode())], listing)

    async def unread() -> Any:
        raise AssertionError("not read")

    exchange = Exchange("GET", b"/connectors", b"expand=info", [], unread)
    reply = await _transformed(exchange, DEFAULT_SECRET_RULE.mask_deep, then)
    assert json.loads(reply.body)["c"]["info"]["config"] == {**CONFIG, "connection.password": MASK}
    assert (b"content-length", str(len(reply.body)).encode()) in reply.headers


# -- the audit log ---------------------------------------------------------------------------------------
async def test_every_mutation_is_audited_with_its_result(
    with_auth: Any, router: respx.MockRouter, capsys: pytest.CaptureFixture[str]
) -> None:
    router.put(path="/connectors/c/pause").respond(202)
    router.get(path="/connectors/c/status").respond(200, json={})
    router.put(path="/connectors/c/config").respond(200, json={"name": "c", "config": CONFIG, "tasks": []})
    # a config with a provider reference is validated first on a worker before 4.4 (its refusal as 4.4's)
    no_errors = {"name": "X", "error_count": 0, "groups": [], "configs": []}
    router.put(path="/connector-plugins/X/config/validate").respond(200, json=no_errors)
    async with with_auth(config_checks="warn") as running:
        client = running.client
        await client.get("/connectors/c/status", headers=VIEWER)  # a read: not audited
        await client.put("/connectors/c/pause", headers=VIEWER)
        await client.put("/connectors/c/pause", headers=OPERATOR)
        await client.put("/connectors/c/config", json=CONFIG, headers=ADMIN)
        await client.delete("/connectors/c")
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"audit"' in line]
    seen = [(e["who"], e["method"], e["path"], e["connector"], e["status"], e["refused"]) for e in lines]
    assert seen == [
        ("view", "PUT", "/connectors/c/pause", "c", 403, True),
        ("op", "PUT", "/connectors/c/pause", "c", 202, False),
        ("adm", "PUT", "/connectors/c/config", "c", 200, False),
        ("unauthenticated", "DELETE", "/connectors/c", "c", 401, True),
    ]
    assert lines[2]["body"] == {**CONFIG, "connection.password": MASK}
    assert "hunter2" not in json.dumps(lines)
    assert all(e["duration_ms"] >= 0 and e["timestamp"].endswith("Z") for e in lines)


def test_audit_log_masks_bodies_and_offers_to_its_sink() -> None:
    offered: list[tuple[bytes, bytes]] = []

    class Sink:
        def offer(self, key: bytes, value: bytes) -> bool:
            offered.append((key, value))
            return True

        async def start(self) -> None: ...

        async def stop(self) -> None: ...

    out = io.StringIO()
    audit = AuditLog(DEFAULT_SECRET_RULE, Sink(), out)
    body = json.dumps({"name": "c", "config": {"db.password": "p"}}).encode()
    audit.record(
        who="a", role="admin", client=None, method="POST", path="/connectors", query="",
        connector="c", status=201, duration_ms=1.0, body=body, refused=False,
    )  # fmt: skip
    line = json.loads(out.getvalue())
    assert line["body"] == {"name": "c", "config": {"db.password": MASK}}
    assert offered[0][0] == b"c" and json.loads(offered[0][1])["body"]["config"]["db.password"] == MASK


# -- credentials -----------------------------------------------------------------------------------------
def test_credentials_file_holds_hashes_only(tmp_path: Any) -> None:
    path = tmp_path / "credentials"
    path.write_text("token a viewer plain:x\n")
    with pytest.raises(CredentialsError, match="credentials:1: a file holds hashed credentials only"):
        Credentials(str(path), None)
    path.write_text("# comment\n\ntoken a boss sha256:00\n")
    with pytest.raises(CredentialsError, match="credentials:3: unknown role 'boss'"):
        Credentials(str(path), None)
    with pytest.raises(CredentialsError, match="sha256:<64 hex digits>"):
        parse("token a viewer sha256:00", "env", plain_allowed=True)


async def test_the_credentials_file_is_read_again_when_it_changes(tmp_path: Any) -> None:
    path = tmp_path / "credentials"
    path.write_text(f"token one viewer {hash_token('t1')}\n")
    credentials = Credentials(str(path), None, check_s=0.0)
    assert (
        await credentials.authenticate("Bearer t1") is not None and await credentials.authenticate("Bearer t2") is None
    )
    path.write_text(f"token two admin {hash_token('t2')}  # rotated\n")
    credentials.refresh(now=1e9)
    two = await credentials.authenticate("Bearer t2")
    assert two is not None and two.role == "admin" and await credentials.authenticate("Bearer t1") is None
    path.write_text("garbage\n")  # a broken file keeps the entries read before
    credentials.refresh(now=2e9)
    assert await credentials.authenticate("Bearer t2") is not None and credentials.reload_error is not None


def test_auth_needs_credentials() -> None:
    with pytest.raises(SettingsError, match="AUTH_ENABLED needs"):
        load_settings(auth_enabled=True)
    with pytest.raises(SettingsError, match="SECRET_KEY_PATTERNS"):
        load_settings(secret_key_patterns="(")


def test_secrets_of_the_settings_are_hidden_in_what_the_sidecar_shows() -> None:
    from control_plane.settings import describe

    described = describe(load_settings(auth_enabled=True, auth_credentials="token a admin plain:s3cr3t"))
    assert "s3cr3t" not in json.dumps(described)


# -- raw targets over a real socket, on both servers -----------------------------------------------------
# the sidecar's own (what the cli serves with), and uvicorn through the app's ASGI side
SERVERS = pytest.mark.parametrize("server", ["uvicorn", "sidecar"])


@contextlib.asynccontextmanager
async def sidecar_with_auth(worker: ScriptedWorker, server: str = "sidecar") -> AsyncIterator[int]:
    settings = load_settings(
        connect_urls=f"http://127.0.0.1:{worker.port}",
        view_enabled=False,
        auth_enabled=True,
        auth_credentials=CREDENTIALS,
    )
    async with served(create_app(settings), server) as port:
        yield port


async def send_raw(port: int, line: bytes, token: str | None) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    auth = b"authorization: Bearer " + token.encode() + b"\r\n" if token else b""
    writer.write(line + b"\r\nhost: sidecar\r\nconnection: close\r\n" + auth + b"content-length: 0\r\n\r\n")
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer.split(b"\r\n", 1)[0]


@pytest.mark.parametrize(
    ("line", "token", "status"),
    [
        pytest.param(b"PUT /connectors/x%2F..%2F..%2Fpause HTTP/1.1", "op-token", 403, id="encoded-separators"),
        pytest.param(b"GET /connectors/x%2F..%2F.. HTTP/1.1", "view-token", 403, id="encoded-separators-read"),
        pytest.param(b"PUT /connectors/c/pause/ HTTP/1.1", "view-token", 403, id="trailing-slash"),
        pytest.param(b"PUT //connectors/c/pause HTTP/1.1", "op-token", 403, id="empty-first-segment"),
        pytest.param(b"put /connectors/c/pause HTTP/1.1", "op-token", 400, id="lower-case-method-httptools-refuses"),
        pytest.param(b"PUT /connectors/x/%2e%2e/c/pause HTTP/1.1", "op-token", 403, id="encoded-dot-segment"),
        pytest.param(b"DELETE /connectors/c/pause/.. HTTP/1.1", "op-token", 403, id="dot-segment-to-delete"),
        pytest.param(b"PURGE /connectors/c HTTP/1.1", "view-token", 403, id="unknown-method"),
        pytest.param(b"PUT /connectors/c/pause HTTP/1.1", "view-token", 403, id="short-path"),
        pytest.param(b"POST /connectors/c/restart HTTP/1.1", "view-token", 403, id="sidecar-route"),
        pytest.param(b"PUT /connectors/c/pause HTTP/1.1", None, 401, id="no-token"),
        pytest.param(b"GET /connectors/other/status HTTP/1.1", "team-token", 404, id="hidden-connector"),
        pytest.param(b"GET /connectors/team-a-1%2F..%2Fother/status HTTP/1.1", "team-token", 403, id="hidden-encoded"),
    ],
)
@SERVERS
async def test_refused_raw_targets_never_reach_the_worker(
    line: bytes, token: str | None, status: int, server: str
) -> None:
    async with ScriptedWorker().running() as worker, sidecar_with_auth(worker, server) as port:
        answer = await send_raw(port, line, token)
    assert answer.startswith(b"HTTP/1.1 %d " % status)
    assert worker.lines == []


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(b"PURGE /connectors/c HTTP/1.1", id="unknown-method"),
        pytest.param(b"PUT /connectors/x%2F..%2F..%2Fpause HTTP/1.1", id="encoded-separators"),
    ],
)
async def test_an_admin_sends_them_unchanged(line: bytes) -> None:
    async with ScriptedWorker().running() as worker, sidecar_with_auth(worker) as port:
        answer = await send_raw(port, line, "adm-token")
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert worker.lines == [line]


# -- the audit topic's sink --------------------------------------------------------------------------------
class FlakyProducer:
    """Fails its first ``failures`` sends with ``error`` (a broker that is down: aiokafka's retriable
    connection error), then keeps what it is sent."""

    def __init__(self, failures: int = 0, error: Callable[[], BaseException] = KafkaConnectionError) -> None:
        self.failures, self.sent = failures, list[tuple[str, bytes, bytes | None]]()
        self.error = error
        self.stopped = False

    async def start(self) -> None: ...

    async def send(self, topic: str, key: bytes, value: bytes | None) -> None:
        if self.failures:
            self.failures -= 1
            raise self.error()
        self.sent.append((topic, key, value))

    async def enqueue(self, topic: str, key: bytes, value: bytes | None) -> asyncio.Future[None]:
        return asyncio.ensure_future(self.send(topic, key, value))

    async def stop(self) -> None:
        self.stopped = True


async def test_the_audit_sink_is_bounded_retries_and_flushes_on_stop() -> None:
    from control_plane.storage.audit_sink import KafkaAuditSink

    producer, observer = FlakyProducer(failures=2), CountingWritesObserver()
    sink = KafkaAuditSink("audit", lambda: producer, make_writes(observer=observer), max_queued=3, attempt_timeout_s=1)
    assert [sink.offer(b"k", b"%d" % i) for i in range(5)] == [True, True, True, False, False]  # never waits
    assert sink.dropped == 2
    await sink.start()
    await sink.stop()  # flushed: the failed sends retried, in order
    assert [value for _, _, value in producer.sent] == [b"0", b"1", b"2"]
    assert sink.failures == 0 and producer.stopped  # none given up on
    assert observer.counts == {("attempt", "audit"): 5, ("retry", "audit"): 2, ("acknowledged", "audit"): 3}


async def test_the_audit_sink_gives_up_on_a_record_the_broker_refuses_and_goes_on() -> None:
    from control_plane.storage.audit_sink import KafkaAuditSink

    producer, observer = FlakyProducer(failures=1, error=TopicAuthorizationFailedError), CountingWritesObserver()
    sink = KafkaAuditSink("audit", lambda: producer, make_writes(observer=observer), max_queued=3, attempt_timeout_s=1)
    for i in range(3):
        sink.offer(b"k", b"%d" % i)
    await sink.start()
    await sink.stop()
    assert [value for _, _, value in producer.sent] == [b"1", b"2"]  # not retried: the queue went on
    assert sink.failures == 1
    assert observer.counts == {("attempt", "audit"): 3, ("acknowledged", "audit"): 2, ("failure", "audit"): 1}


async def test_a_broker_that_is_down_never_holds_a_request_back(
    serve: Any, router: respx.MockRouter, capsys: pytest.CaptureFixture[str]
) -> None:
    import time

    router.put(path="/connectors/c/pause").respond(202)
    settings = load_settings(
        connect_urls=CONNECT_URLS,
        view_enabled=False,
        bootstrap_servers=f"127.0.0.1:{free_port()}",  # nothing listens there
        audit_topic="audit",
        audit_queue_max=2,
        emulation_request_timeout_ms=300,
    )
    started = time.perf_counter()
    async with serve(settings=settings) as running:
        for _ in range(5):
            assert (await running.client.put("/connectors/c/pause")).status_code == 202
        answered = time.perf_counter() - started
        sink = running.runtime.access.audit.sink
        assert sink is not None
    assert sink.dropped >= 2  # the queue holds 2: the others were dropped, not waited for
    stopped = time.perf_counter() - started
    assert answered < 2.0 and stopped < 5.0, (answered, stopped)  # the stop's flush is bounded too
    assert len([line for line in capsys.readouterr().out.splitlines() if '"audit"' in line]) == 5


async def test_a_running_sidecar_reads_the_changed_credentials_file(
    serve: Any, router: respx.MockRouter, tmp_path: Any
) -> None:
    router.get(path="/connectors").respond(200, json=[])
    path = tmp_path / "credentials"
    path.write_text(f"token old viewer {hash_token('old')}\n")
    settings = load_settings(
        connect_urls=CONNECT_URLS,
        view_enabled=False,
        auth_enabled=True,
        auth_credentials_file=str(path),
        auth_file_check_s=0.01,
    )
    async with serve(settings=settings) as running:
        client = running.client
        assert (await client.get("/connectors", headers=bearer("old"))).status_code == 200
        assert (await client.get("/connectors", headers=bearer("new"))).status_code == 401
        path.write_text(f"token new viewer {hash_token('new')}\n")
        for _ in range(200):  # the file is checked at most every 10 ms
            if (await client.get("/connectors", headers=bearer("new"))).status_code == 200:
                break
            await asyncio.sleep(0.01)
        assert (await client.get("/connectors", headers=bearer("new"))).status_code == 200
        assert (await client.get("/connectors", headers=bearer("old"))).status_code == 401
