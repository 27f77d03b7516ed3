"""The workload: clients that send random operations through random sidecars to a small pool of
connectors, each request recorded (``history.Op``); and a watcher that polls the worker for what runs.

The connectors are FileStream sources reading ``/dev/null`` (they run, produce nothing, commit no offset of
their own), so their registers change only by the workload's writes. A failing FileStream sink (its file in
a folder that does not exist: its task fails at start) is left to the sidecars' auto-restart; the workload
never touches it.

Besides single requests, a client sends bulk actions (``POST /_sidecar/bulk``: stop, pause or resume of a
few named connectors) and applies (a plan of new configs for a few connectors, ``POST /_sidecar/plan``,
then ``POST /_sidecar/apply`` through the same sidecar). Each is recorded as one operation per connector,
with the whole request's invocation and answer and that connector's own result: a bulk action's item, an
apply's step applied, failed or not tried."""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from .checker import CONFIG, CONFIG_TOKEN, OFFSET, PATCH_KEY, TARGET_STATE
from .history import Clock, History, Observation, Op, Outcome, outcome_of

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
FILE = "/dev/null"
POOL = 4
# how often each kind is drawn
WEIGHTS = {
    "put_config": 3,
    "patch_config": 3,
    "stop": 2,
    "pause": 1,
    "resume": 3,
    "alter_offsets": 2,
    "create": 1,
    "restart": 1,
    "bulk": 2,
    "apply": 1,
}
BULK_STATES = {"stop": "STOPPED", "pause": "PAUSED", "resume": "RUNNING"}


@dataclass(frozen=True)
class Sent:
    """A request's invocation and answer (``answered``/``status`` None: no answer; ``sent`` False: never sent)."""

    invoked: float
    answered: float | None
    status: int | None
    sent: bool
    text: str
    json: Any


THINK_S = (0.0, 0.3)  # a client's pause between two requests: the pace of the workload, not a wait
WATCH_S = 0.5


class Workload:
    def __init__(
        self,
        run: str,
        worker_url: str,
        sidecar_urls: list[str],
        history: History,
        clock: Clock,
        timeout_s: float,
        budget_s: float,
    ) -> None:
        """``budget_s``: the sidecars' request budget, an apply's deadline (so that it answers within it too)."""
        self.run = run
        self.worker_url = worker_url
        self.sidecar_urls = sidecar_urls
        self.history = history
        self.clock = clock
        self.timeout_s = timeout_s
        self.budget_s = budget_s
        self.connectors = [f"{run}-{i}" for i in range(POOL)]
        self.failing = [f"{run}-failing"]
        self.existing: set[str] = set()  # the connectors whose creation was acknowledged
        self._ids = itertools.count(1)

    def config(self, token: str) -> dict[str, str]:
        return {"connector.class": SOURCE, "tasks.max": "1", "file": FILE, "topic": self.run, CONFIG_TOKEN: token}

    async def set_up(self) -> None:
        """The pool, created running, and the failing sink: straight to the worker, before any fault."""
        async with httpx.AsyncClient(base_url=self.worker_url, timeout=60) as worker:
            for name in self.connectors:
                token = f"setup-{name}"
                await self._record(
                    worker, -1, "create", name, "POST", "/connectors", {"name": name, "config": self.config(token)},
                    {CONFIG: token, TARGET_STATE: "RUNNING"},
                )  # fmt: skip
            for name in self.failing:
                sink = {"connector.class": SINK, "tasks.max": "1", "file": "/nonexistent/out", "topics": self.run}
                created = await worker.post("/connectors", json={"name": name, "config": sink})
                assert created.status_code == 201, created.text
        failed = [o for o in self.history.ops if o.status != 201]
        assert not failed, failed

    async def client(self, index: int, seed: int, until: float) -> None:
        rng = random.Random(seed * 1000 + index)
        kinds, weights = list(WEIGHTS), list(WEIGHTS.values())
        limits = httpx.Limits(max_keepalive_connections=0)  # a connection per request: none left to a killed sidecar
        clients = [httpx.AsyncClient(base_url=u, timeout=self.timeout_s, limits=limits) for u in self.sidecar_urls]
        try:
            while self.clock.now() < until:
                sidecar = rng.randrange(len(clients))
                await self.send(clients[sidecar], sidecar, rng.choices(kinds, weights)[0], rng)
                await asyncio.sleep(rng.uniform(*THINK_S))
        finally:
            for c in clients:
                await c.aclose()

    async def send(self, client: httpx.AsyncClient, sidecar: int, kind: str, rng: random.Random) -> None:
        op = f"{next(self._ids)}"
        name = rng.choice(self.connectors)
        path = f"/connectors/{name}"
        body: dict[str, Any]
        if kind == "put_config":
            await self._record(client, sidecar, kind, name, "PUT", f"{path}/config", self.config(op), {CONFIG: op}, op)
        elif kind == "patch_config":
            body = {CONFIG_TOKEN: op, PATCH_KEY + op: op}
            await self._record(client, sidecar, kind, name, "PATCH", f"{path}/config", body, {CONFIG: op}, op)
        elif kind in ("stop", "pause", "resume"):
            state = {"stop": "STOPPED", "pause": "PAUSED", "resume": "RUNNING"}[kind]
            await self._record(client, sidecar, kind, name, "PUT", f"{path}/{kind}", None, {TARGET_STATE: state}, op)
        elif kind == "alter_offsets":
            body = {"offsets": [{"partition": {"filename": FILE}, "offset": {"position": int(op)}}]}
            await self._record(client, sidecar, kind, name, "PATCH", f"{path}/offsets", body, {OFFSET: op}, op)
        elif kind == "restart":
            await self._record(client, sidecar, kind, name, "POST", f"{path}/restart?includeTasks=true", None, {}, op)
        elif kind == "bulk":
            await self._bulk(client, sidecar, op, rng)
        elif kind == "apply":
            await self._apply(client, sidecar, op, rng)
        else:  # create, a new connector held from the start
            name = f"{self.run}-new-{op}"
            state = rng.choice(["STOPPED", "PAUSED"])
            self.connectors.append(name)
            body = {"name": name, "config": self.config(op), "initial_state": state}
            await self._record(
                client, sidecar, kind, name, "POST", "/connectors", body, {CONFIG: op, TARGET_STATE: state}, op
            )

    async def _record(
        self,
        client: httpx.AsyncClient,
        sidecar: int,
        kind: str,
        connector: str,
        method: str,
        path: str,
        body: Any,
        writes: Mapping[str, str],
        op: str | None = None,
    ) -> None:
        absent = connector not in self.existing  # when sent: a PUT of its config may create it
        whole = await self._send(client, method, path, body)
        outcome = outcome_of(whole.status, sent=whole.sent)
        if kind == "put_config" and (whole.status == 201 or (absent and outcome is Outcome.UNKNOWN)):
            # it created the connector, or may have: started, as a create is (Connect's default target state)
            writes = {**writes, TARGET_STATE: "RUNNING"}
        if kind in ("create", "put_config") and outcome is Outcome.OK:
            self.existing.add(connector)
        op_id = op or f"setup-{connector}"
        self._add(whole, kind, connector, sidecar, method, path, op_id, writes, whole.status, outcome)

    async def _bulk(self, client: httpx.AsyncClient, sidecar: int, op: str, rng: random.Random) -> None:
        action = rng.choice(list(BULK_STATES))
        names = rng.sample(self.connectors, min(len(self.connectors), rng.randint(1, 3)))
        body = {"action": action, "selector": {"names": names}}
        whole = await self._send(client, "POST", "/_sidecar/bulk", body)
        items = {i["name"]: i for i in whole.json.get("connectors", [])} if whole.status == 200 else {}
        for name in names:
            item = items.get(name)
            status = item.get("status") if item is not None else whole.status
            self._add(
                whole, f"bulk_{action}", name, sidecar, "POST", "/_sidecar/bulk", op,
                {TARGET_STATE: BULK_STATES[action]}, status, outcome_of(status, sent=whole.sent),
            )  # fmt: skip

    async def _apply(self, client: httpx.AsyncClient, sidecar: int, op: str, rng: random.Random) -> None:
        """A plan of new configs for a few connectors, applied through the sidecar that made it (without a
        shared history key, a plan's fingerprint is its sidecar's own). A plan refused writes nothing and is
        not recorded."""
        names = rng.sample(self.connectors, min(len(self.connectors), rng.randint(1, 2)))
        documents = [{"source": f"{n}.json", "document": {"name": n, "config": self.config(op)}} for n in names]
        planned = await self._send(client, "POST", "/_sidecar/plan", {"documents": documents, "prune": False})
        if planned.status != 200:
            return
        # a step that creates its connector starts it too (Connect's default target state)
        creates = {c["name"] for c in planned.json["connectors"] if c["action"] == "create"}
        options = {"concurrency": 2, "deadline_s": self.budget_s, "continue_on_error": rng.random() < 0.5}
        whole = await self._send(client, "POST", "/_sidecar/apply", {**planned.json, **options})
        by_name: dict[str, tuple[int | None, Outcome]] = {}
        if whole.status is not None and isinstance(whole.json, dict):
            for step in whole.json.get("applied", []):
                by_name[step["name"]] = (200, Outcome.OK)
            for step in whole.json.get("failed", []):
                by_name[step["name"]] = (step["error_code"], outcome_of(step["error_code"]))
            for step in whole.json.get("not_tried", []):
                by_name[step["name"]] = (whole.status, Outcome.FAIL)
        for name in names:
            status, outcome = by_name.get(name, (whole.status, outcome_of(whole.status, sent=whole.sent)))
            writes = {CONFIG: op, TARGET_STATE: "RUNNING"} if name in creates else {CONFIG: op}
            self._add(whole, "apply", name, sidecar, "POST", "/_sidecar/apply", op, writes, status, outcome)
            if outcome is Outcome.OK:
                self.existing.add(name)

    async def _send(self, client: httpx.AsyncClient, method: str, path: str, body: Any) -> Sent:
        invoked = self.clock.now()
        try:
            response = await client.request(method, path, json=body)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            return Sent(invoked, None, None, False, repr(exc), {})
        except httpx.HTTPError as exc:
            return Sent(invoked, None, None, True, f"{exc!r} after {self.clock.now() - invoked:.2f}s", {})
        try:
            parsed = response.json()
        except ValueError:
            parsed = {}
        return Sent(invoked, self.clock.now(), response.status_code, True, response.text[:300], parsed)

    def _add(
        self,
        whole: Sent,
        kind: str,
        connector: str,
        sidecar: int,
        method: str,
        path: str,
        op: str,
        writes: Mapping[str, str],
        status: int | None,
        outcome: Outcome,
    ) -> None:
        """One connector's operation of a request that acts on several: the request's times, its own result."""
        self.history.ops.append(
            Op(op, kind, connector, sidecar, method, path, whole.invoked, whole.answered, status, outcome, writes,
               whole.text)
        )  # fmt: skip

    async def watch(self) -> None:
        """Until cancelled: every connector's state as the worker tells it (``?expand=status``)."""
        async with httpx.AsyncClient(base_url=self.worker_url, timeout=2) as worker:
            while True:
                try:
                    answer = await worker.get("/connectors", params={"expand": "status"})
                except httpx.HTTPError:
                    answer = None  # stalled: nothing seen
                if answer is not None and answer.status_code == 200:
                    at = self.clock.now()
                    for name, shown in answer.json().items():
                        self.history.observations.append(observed(at, name, shown["status"]))
                await asyncio.sleep(WATCH_S)


def observed(at: float, name: str, status: Mapping[str, Any]) -> Observation:
    states = [status["connector"]["state"], *(t["state"] for t in status.get("tasks", []))]
    return Observation(at, name, "RUNNING" in states, "worker", "/".join(states))
