"""The local stack: a KRaft broker, Kafka Connect workers and a sidecar in front of each.

Everything runs on loopback from jars that Maven resolves (see ``jars.py``); ports are free ports
chosen at start. Commands:

    python deploy/local/stack.py up     # test stack in the background: broker, Connect 4.3.1, 3.4.1 and
                                        # 2.8.2, a sidecar in front of each; writes .stack/env
    python deploy/local/stack.py down   # stops only the processes that ``up`` started
    python deploy/local/stack.py run    # broker, Connect 4.3.1 and a sidecar in the foreground; Ctrl-C stops

``.stack/env`` is the one place where tests, benchmarks and scripts find the running stack.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import functools
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jars
import versioned_plugins

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
STACK = Path(os.environ.get("STACK_DIR", ROOT / ".stack"))
ENV_FILE = STACK / "env"
PIDS_FILE = STACK / "pids.json"

NEW_VERSION = jars.NEW_VERSION
OLD_VERSION = jars.OLD_VERSION
OLDEST_VERSION = jars.OLDEST_VERSION
PREVIOUS_VERSION = jars.PREVIOUS_VERSION  # for tests of its own behaviours, on workers of their own


@dataclass(frozen=True)
class ClusterSpec:
    """A Connect cluster of the test stack: its name (``connect-<name>``, ``sidecar-<name>``, its group.id
    and internal topics), its Kafka version and the suffix of its variables in ``.stack/env``."""

    name: str
    version: str
    env_suffix: str


CLUSTERS = (
    ClusterSpec("new", NEW_VERSION, ""),
    ClusterSpec("old", OLD_VERSION, "_OLD"),
    ClusterSpec("oldest", OLDEST_VERSION, "_OLDEST"),
)
START_TIMEOUT_S = float(os.environ.get("STACK_START_TIMEOUT_S", "180"))
JVM_HEAP = os.environ.get("STACK_JVM_HEAP", "512m")
# A mark on every command line this script starts, so that ``down`` kills only those.
MARK = f"-Dcontrol.plane.stack={STACK}"


class StackError(RuntimeError):
    pass


@dataclass
class Proc:
    name: str
    pid: int
    log: str
    url: str = ""
    extra: dict[str, str] = field(default_factory=dict)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def log_tail(path: str | Path, lines: int = 40) -> str:
    try:
        text = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(text[-lines:])


def spawn(name: str, cmd: list[str], log: Path, env: dict[str, str] | None = None) -> Proc:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:  # the child keeps its own descriptor
        proc = subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=ROOT,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
    return Proc(name=name, pid=proc.pid, log=str(log))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child of ours is not alive
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def ours(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return False
    return MARK in cmdline or f"stack_mark={STACK}" in cmdline


def wait_until(proc: Proc, check: Callable[[], bool], what: str, timeout_s: float = START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout_s
    last = ""
    while time.monotonic() < deadline:
        if not alive(proc.pid):
            raise StackError(f"{proc.name} exited before {what}; last lines of {proc.log}:\n{log_tail(proc.log)}")
        try:
            if check():
                return
        except Exception as exc:  # noqa: BLE001 - any failure means "not yet"
            last = repr(exc)
        time.sleep(0.5)
    raise StackError(
        f"{proc.name} did not {what} within {timeout_s:.0f}s ({last}); last lines of {proc.log}:\n{log_tail(proc.log)}"
    )


def http_get(url: str, timeout_s: float = 3.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def broker_answers(bootstrap: str) -> bool:
    """A real metadata round trip: ask the broker for its cluster through the admin API."""
    code = (
        "import asyncio,sys\n"
        "from aiokafka.admin import AIOKafkaAdminClient\n"
        "async def m():\n"
        "    a=AIOKafkaAdminClient(bootstrap_servers=sys.argv[1],request_timeout_ms=3000)\n"
        "    await a.start()\n"
        "    try:\n"
        "        d=await a.describe_cluster()\n"
        "        assert d['brokers'], d\n"
        "    finally:\n"
        "        await a.close()\n"
        "asyncio.run(m())\n"
    )
    res = subprocess.run([sys.executable, "-c", code, bootstrap], capture_output=True, timeout=20)
    return res.returncode == 0


def java_cmd(version: str, main: str, args: list[str], log: Path, extra: list[str] | None = None) -> list[str]:
    lib = jars.resolve(version)
    if int(version.split(".")[0]) < 4:  # Kafka 2.x and 3.x log through log4j 1.x (reload4j here)
        logging_props = [f"-Dlog4j.configuration=file:{HERE / 'log4j.properties'}"]
    else:
        logging_props = [f"-Dlog4j2.configurationFile={HERE / 'log4j2.properties'}"]
    return [
        "java",
        "-Xms64m",
        f"-Xmx{JVM_HEAP}",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-Djava.awt.headless=true",
        f"-Dstack.log.file={log}",
        MARK,
        *logging_props,
        *(extra or []),
        "-cp",
        str(lib.classpath / "*"),
        main,
        *args,
    ]


def write_props(path: Path, props: dict[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def random_cluster_id() -> str:
    """A cluster id as Kafka's Uuid.randomUuid makes one: base64url of 16 random bytes, never starting
    with '-' (StorageTool's command line would read it as an option)."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


def start_broker(
    home: Path = STACK, port: int | None = None, controller_port: int | None = None, format_storage: bool = True
) -> Proc:
    """A KRaft broker with its config, data and log under ``home``; on free ports unless given. A
    restart on the same ports and data passes ``format_storage=False``."""
    port, controller = port or free_port(), controller_port or free_port()
    data = home / "data" / "broker"
    log = home / "logs" / "broker.log"
    props = write_props(
        home / "config" / "broker.properties",
        {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{controller}",
            "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(data),
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "5",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "auto.create.topics.enable": "true",
        },
    )
    if format_storage:
        cluster_id = random_cluster_id()
        fmt = subprocess.run(
            java_cmd(NEW_VERSION, "kafka.tools.StorageTool", ["format", "-t", cluster_id, "-c", str(props)], log),
            capture_output=True,
            text=True,
        )
        if fmt.returncode != 0:
            raise StackError(f"formatting broker storage failed:\n{fmt.stdout}\n{fmt.stderr}\n{log_tail(log)}")
    proc = spawn("broker", java_cmd(NEW_VERSION, "kafka.Kafka", [str(props)], log), log)
    proc.url = f"127.0.0.1:{port}"
    return proc


def test_plugin_paths(version: str) -> list[str]:
    """The ``plugin.path`` entries of the test plugins: the versioned plugins of KIP-891 (one directory per
    version), compiled against this Connect version's ``connect-api`` (cached)."""
    lib = jars.resolve(version)
    return [str(versioned_plugins.build(lib.classpath, lib.classpath.parent / "test-plugins"))]


def quick_discovery(version: str) -> dict[str, str]:
    """Worker properties for a quick start: service-load plugin discovery (KIP-898) on the releases that have
    it (3.6 on), else none. The worker then finds the plugins with a service manifest only (Kafka's own and
    the versioned test plugins) and skips the reflective scan of every class of its plugin path and class
    path, which took most of a start (about 25 s on a loaded 2-core machine)."""
    major, minor = (int(part) for part in version.split(".")[:2])
    return {"plugin.discovery": "service_load"} if (major, minor) >= (3, 6) else {}


def start_connect(
    name: str, version: str, bootstrap: str, cluster: str | None = None, properties: dict[str, str] | None = None
) -> Proc:
    """A Connect worker, its config and log named ``name``, in the Connect cluster ``cluster``: the group.id
    and the prefix of the three internal topics. By default a cluster of its own (``name``); another
    worker's name makes it a second worker of that one's cluster (of another version: a rolling upgrade).
    ``properties``: worker properties over the ones below."""
    port = free_port()
    lib = jars.resolve(version)
    log = STACK / "logs" / f"{name}.log"
    group = cluster or name
    props = write_props(
        STACK / "config" / f"{name}.properties",
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "false",
            "value.converter.schemas.enable": "false",
            "config.storage.topic": f"{group}-configs",
            "offset.storage.topic": f"{group}-offsets",
            "status.storage.topic": f"{group}-status",
            "config.storage.replication.factor": "1",
            "offset.storage.replication.factor": "1",
            "status.storage.replication.factor": "1",
            "offset.flush.interval.ms": "1000",
            "listeners": f"http://127.0.0.1:{port}",
            "rest.advertised.host.name": "127.0.0.1",
            "rest.advertised.port": str(port),
            "plugin.path": ",".join([str(lib.plugins), *test_plugin_paths(version)]),
            "scheduled.rebalance.max.delay.ms": "10000",
            # the default from 3.0 on (KIP-722); 2.8's default, None, refuses every client override
            "connector.client.config.override.policy": "All",
            # KIP-297 (every release of the stack): connectors' configs may name values in files, as operators'
            # do; the sidecar resolves them with the same providers (control_plane/worker_properties.py)
            "config.providers": "file",
            "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
            **(properties or {}),
        },
    )
    proc = spawn(name, java_cmd(version, "org.apache.kafka.connect.cli.ConnectDistributed", [str(props)], log), log)
    proc.url = f"http://127.0.0.1:{port}"
    proc.extra["properties"] = str(props)
    return proc


def connect_ready(url: str) -> bool:
    status, body = http_get(url + "/")
    if status != 200 or b"version" not in body:
        return False
    # GET / answers before the herder has joined its group; /connectors waits for it.
    status, _ = http_get(url + "/connectors")
    return status == 200


def start_sidecar(name: str, worker_properties: str) -> Proc:
    port = free_port()
    log = STACK / "logs" / f"{name}.log"
    cmd = [
        sys.executable,
        "-m",
        "control_plane",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--worker-properties",
        worker_properties,
    ]
    env = {"CONTROL_PLANE_LOG_FORMAT": "json"}
    # the mark goes onto the command line (python ignores unknown -X options), for ``ours``
    cmd = [*cmd[:1], "-X", f"stack_mark={STACK}", *cmd[1:]]
    proc = spawn(name, cmd, log, env)
    proc.url = f"http://127.0.0.1:{port}"
    return proc


def sidecar_ready(url: str) -> bool:
    status, body = http_get(url + "/readyz")
    if status != 200:  # the body says which check fails; it ends up in the timeout message
        raise StackError(f"/readyz answered {status}: {body.decode(errors='replace')[:300]}")
    return True


def stop(procs: list[Proc], timeout_s: float = 30.0) -> None:
    """Stop in reverse order of start: SIGTERM, then SIGKILL after the timeout. Only our own processes."""
    for proc in reversed(procs):
        if not alive(proc.pid) or not ours(proc.pid):
            continue
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        deadline = time.monotonic() + timeout_s
        while alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if alive(proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):  # reap our own children; harmless for another invocation's
            os.waitpid(proc.pid, os.WNOHANG)


def load_pids() -> list[Proc]:
    if not PIDS_FILE.exists():
        return []
    return [Proc(**p) for p in json.loads(PIDS_FILE.read_text())]


def save_pids(procs: list[Proc]) -> None:
    PIDS_FILE.write_text(json.dumps([p.__dict__ for p in procs], indent=1))


def running() -> bool:
    procs = load_pids()
    return bool(procs) and ENV_FILE.exists() and all(alive(p.pid) and ours(p.pid) for p in procs)


def fresh_dirs() -> None:
    import shutil

    for sub in ("data", "config", "logs"):
        shutil.rmtree(STACK / sub, ignore_errors=True)
    STACK.mkdir(parents=True, exist_ok=True)


def start(clusters: tuple[ClusterSpec, ...]) -> tuple[list[Proc], dict[str, str]]:
    """Start the broker and ``clusters`` (a worker and a sidecar each); on any failure stop what was
    started and raise. The workers start together, then the sidecars."""
    procs: list[Proc] = []
    env: dict[str, str] = {}
    try:
        for spec in clusters:
            jars.resolve(spec.version)
        broker = start_broker()
        procs.append(broker)
        save_pids(procs)
        wait_until(broker, lambda: broker_answers(broker.url), "answer metadata requests")
        env["KAFKA_BOOTSTRAP"] = broker.url
        workers = [start_connect(f"connect-{spec.name}", spec.version, broker.url) for spec in clusters]
        procs += workers
        save_pids(procs)
        for worker in workers:
            wait_until(worker, functools.partial(connect_ready, worker.url), "answer GET / and GET /connectors")
        sidecars = [
            start_sidecar(f"sidecar-{spec.name}", w.extra["properties"])
            for spec, w in zip(clusters, workers, strict=True)
        ]
        procs += sidecars
        save_pids(procs)
        for side in sidecars:
            wait_until(side, functools.partial(sidecar_ready, side.url), "become ready")
        for spec, worker, side in zip(clusters, workers, sidecars, strict=True):
            env |= {
                f"CONNECT_URL{spec.env_suffix}": worker.url,
                f"SIDECAR_URL{spec.env_suffix}": side.url,
                f"CONNECT_VERSION{spec.env_suffix}": spec.version,
                f"CONNECT_PROPERTIES{spec.env_suffix}": worker.extra["properties"],
            }
    except BaseException:
        stop(procs)
        PIDS_FILE.unlink(missing_ok=True)
        raise
    env["STACK_LOGS"] = str(STACK / "logs")
    return procs, env


def cmd_up(_: argparse.Namespace) -> int:
    if running():
        print(f"stack already running; see {ENV_FILE}")
        return 0
    cmd_down(None, quiet=True)
    fresh_dirs()
    t0 = time.monotonic()
    procs, env = start(CLUSTERS)
    save_pids(procs)
    ENV_FILE.write_text("".join(f"export {k}={v}\n" for k, v in env.items()))
    print(f"stack up in {time.monotonic() - t0:.0f}s; {ENV_FILE}:")
    print(ENV_FILE.read_text(), end="")
    return 0


def cmd_down(_: argparse.Namespace | None, quiet: bool = False) -> int:
    procs = load_pids()
    stop(procs)
    PIDS_FILE.unlink(missing_ok=True)
    ENV_FILE.unlink(missing_ok=True)
    if not quiet:
        print(f"stopped {len(procs)} processes" if procs else "stack was not running")
    return 0


def cmd_run(_: argparse.Namespace) -> int:
    if running():
        raise StackError(f"the background stack is running (make stack-down first); see {ENV_FILE}")
    fresh_dirs()
    procs, env = start(CLUSTERS[:1])
    print(
        f"Kafka broker   {env['KAFKA_BOOTSTRAP']}\n"
        f"Kafka Connect  {env['CONNECT_URL']}  ({NEW_VERSION})\n"
        f"Sidecar        {env['SIDECAR_URL']}  <- point clients here, e.g. curl {env['SIDECAR_URL']}/connectors\n"
        f"Logs           {env['STACK_LOGS']}\n"
        "Ctrl-C stops all three.",
        flush=True,
    )
    stopping = False

    def on_signal(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        while not stopping:
            dead = [p for p in procs if not alive(p.pid)]
            if dead:
                print(f"{dead[0].name} exited; last lines of {dead[0].log}:\n{log_tail(dead[0].log)}", file=sys.stderr)
                break
            time.sleep(0.5)
    finally:
        print("stopping sidecar, Connect and broker ...", flush=True)
        stop(procs)
        PIDS_FILE.unlink(missing_ok=True)
        print("stopped", flush=True)
    return 0 if stopping else 1


def cmd_status(_: argparse.Namespace) -> int:
    if running():
        print(ENV_FILE.read_text(), end="")
        return 0
    print("stack is not running")
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("up").set_defaults(func=cmd_up)
    sub.add_parser("down").set_defaults(func=cmd_down)
    sub.add_parser("run").set_defaults(func=cmd_run)
    sub.add_parser("status").set_defaults(func=cmd_status)
    sub.add_parser("jars").set_defaults(func=lambda _: jars.main())
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except StackError as err:
        print(f"stack: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
