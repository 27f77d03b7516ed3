"""The SparkSession of a job: local mode (``local[2]``) by default, any cluster with ``--master``, the
one ``spark-submit`` started (its ``--master``, ``--packages`` and ``--py-files``), or a Spark Connect
server's with ``--remote sc://host:15002`` (or ``SPARK_REMOTE``, as Spark's own clients read it; see
docs/spark-jobs/).

- Spark's Kafka source comes from Maven Central as ``org.apache.spark:spark-sql-kafka-0-10_<scala>:<spark>``,
  both versions read from the installed PySpark, and only when a job reads Kafka. Ivy keeps the
  downloads in ``~/.ivy2`` (``SPARK_JOBS_IVY_DIR`` to move it), so a second run downloads nothing; the
  jars it resolved are listed in the cache directory (:func:`kafka_jars_file`), and a later local start
  takes them as they are while every one is there, without resolving again (about 1 s of each start).
- Quiet: the JVM's own output (Ivy's resolution report, Spark's log) goes to a log file, not the
  terminal; the jobs print their own progress. On a failed start the error quotes the log's tail.
- The Python workers run this interpreter (``PYSPARK_PYTHON``), which has the codecs installed; on a
  cluster master the two packages the workers need (``control_plane``, ``spark_jobs``) are shipped as a zip.
- Spark Connect: the server is a Spark application of its own, started with its own settings (its
  master, memory, JVM options, log, and the Kafka source in its ``--packages``: :mod:`.connect_server`
  starts one from the installed PySpark). A job sends its SQL settings with the session and the two
  packages as a Python artifact (``addArtifacts(..., pyfile=True)``); what only a driver of its own can
  do (the JVM's options and class archive, its log file, resolving the Kafka source) is the server's.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

from pyspark import SparkConf, SparkContext
from pyspark.java_gateway import launch_gateway
from pyspark.sql import SparkSession

from .class_archive import archive_option, cache_dir

DEFAULT_MASTER = "local[2]"
DEFAULT_DRIVER_MEMORY = "1g"
# a local batch job's JVM: the parallel collector (throughput, no concurrent marking beside two busy
# cores); below SHORT_JOB_RECORDS records also the client compiler only: there C2's compiling costs more CPU
# than its faster code saves (most of such a run is planning and compiling a few dozen small queries);
# above, the tasks' own CPU dominates and C2 pays, but not on the code of C1_ONLY (HotSpot's compiler
# directives, LOCAL_JAVA_OPTIONS' {directives}), and C2 inlines less deep than its defaults (15 levels,
# 2,500 bytes of compiled callee): its compiling took a third of the job's CPU, and Spark's deep call
# chains cost it more than their inlining saved; C2 takes a method only at three times HotSpot's tier-4
# thresholds (TIER4_OPTIONS): the per-record code, run millions of times, still gets there; much of the
# code a query runs a few thousand times does not (C2's compiling 25.5 -> 18.0 CPU s at 10 M records);
# and (HEAP_OPTIONS) its whole heap from the start, with room for Spark's classes' metadata: no
# collections only to grow them (a full one at 3 s for the metaspace; a short job gains nothing from it
# and keeps less memory). Measured with `make bench-spark` (docs/benchmarks.md);
# --conf spark.driver.extraJavaOptions=... replaces them.
TIER4_OPTIONS = (  # HotSpot's defaults times three: 5,000, 600, 15,000 and 40,000
    " -XX:Tier4InvocationThreshold=15000 -XX:Tier4MinInvocationThreshold=1800"
    " -XX:Tier4CompileThreshold=45000 -XX:Tier4BackEdgeThreshold=120000"
)
LOCAL_JAVA_OPTIONS = (
    "-XX:+UseParallelGC -XX:MaxInlineLevel=9 -XX:InlineSmallCode=1500"
    " -XX:+UnlockDiagnosticVMOptions -XX:CompilerDirectivesFile={directives}" + TIER4_OPTIONS
)
SHORT_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseParallelGC"
HEAP_OPTIONS = " -Xms{memory} -XX:MetaspaceSize=256m"  # {memory}: the driver's, as Spark gives it to -Xmx
SHORT_JOB_RECORDS = 2_000_000
# code a job runs per query, stage or task, never per record (planning, compiling the generated code,
# serializing tasks and closures): C1's code only. C2 spent about 10 of its 26 CPU seconds on these in a
# 10 M record offsets-reconcile, more than their faster code saved
C1_ONLY = (
    "org/codehaus/*.*",  # Janino, which compiles the generated code
    "org/apache/xbean/*.*",  # ASM: Spark's closure cleaner
    "java/io/ObjectInputStream*.*",  # tasks and closures, serialized
    "java/io/ObjectOutputStream*.*",
    "java/io/ObjectStreamClass*.*",
    "org/antlr/*.*",  # SQL text parsed
    "jdk/internal/org/objectweb/*.*",  # the JDK's ASM: lambdas' classes
    "org/apache/spark/sql/catalyst/trees/*.*",  # the planner
    "org/apache/spark/sql/catalyst/plans/*.*",
    "org/apache/spark/sql/catalyst/analysis/*.*",
    "org/apache/spark/sql/catalyst/optimizer/*.*",
    "org/apache/spark/sql/catalyst/rules/*.*",
    "org/apache/spark/sql/execution/ExplainUtils*.*",
    "scala/reflect/*.*",
)
ROOT = Path(__file__).resolve().parents[1]
DATAFRAME_DEBUGGING = "spark.python.sql.dataFrameDebugging.enabled"
REMOTE_ENV = "SPARK_REMOTE"  # Spark Connect's URL, as PySpark's own builder reads it


class SessionError(RuntimeError):
    """Spark did not start; the message says why (with the tail of the JVM's log)."""


def spark_version() -> str:
    import pyspark

    return pyspark.__version__


def scala_version() -> str:
    """The Scala binary version PySpark was built with, from its bundled ``spark-core_<scala>`` jar."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    for jar in jars.glob("spark-core_*.jar"):
        return jar.name.removeprefix("spark-core_").split("-", 1)[0]
    raise SessionError(f"cannot tell PySpark's Scala version: no spark-core jar in {jars}")


def kafka_package() -> str:
    return f"org.apache.spark:spark-sql-kafka-0-10_{scala_version()}:{spark_version()}"


def ivy_dir() -> str:
    return os.environ.get("SPARK_JOBS_IVY_DIR") or str(Path.home() / ".ivy2")


def kafka_jars_file() -> Path:
    """Where the jars Ivy resolved for :func:`kafka_package` into :func:`ivy_dir` are listed (``spark.jars``
    as Spark's submit set it: one URL a line), named by the two."""
    digest = hashlib.sha256(json.dumps([kafka_package(), ivy_dir()]).encode()).hexdigest()[:16]
    return cache_dir() / f"kafka-jars-{digest}.txt"


def resolved_kafka_jars() -> list[str] | None:
    """The Kafka source's jars as an earlier start resolved them (:func:`remember_kafka_jars`), when every
    one of them is still there; None otherwise (Ivy resolves the package again)."""
    try:
        jars = kafka_jars_file().read_text().split()
    except OSError:
        return None
    if not jars or not all(Path(url2pathname(urlparse(jar).path)).is_file() for jar in jars):
        return None
    return jars


def remember_kafka_jars(conf: SparkConf) -> None:
    """List the jars Spark's submit resolved for the Kafka source (its ``spark.jars``), for the next start."""
    jars = (conf.get("spark.jars") or "").split(",")
    if not any(jars):
        return
    path = kafka_jars_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}")
        partial.write_text("".join(f"{jar}\n" for jar in jars if jar))
        partial.replace(path)
    except OSError:
        pass  # not listed: the next start resolves the package again


def is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[")


def remote_url(remote: str | None, master: str | None) -> str | None:
    """The Spark Connect server's URL of a job: ``--remote``, else ``SPARK_REMOTE`` unless ``--master`` is
    given (a master is a Spark of the job's own); None: a classic session. Raise ``SessionError`` for
    both ``--remote`` and ``--master``, or a URL that is not ``sc://``."""
    if remote is not None and master is not None:
        raise SessionError("--remote and --master exclude each other: a Spark Connect server has its own master")
    url = remote if remote is not None else (None if master is not None else os.environ.get(REMOTE_ENV) or None)
    if url is not None and not url.startswith("sc://"):
        raise SessionError(f"not a Spark Connect URL: {url!r} (sc://host:port, e.g. sc://localhost:15002)")
    return url


def submitted() -> bool:
    """Whether this driver was started by ``spark-submit`` (its JVM is already up, with its settings)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


@dataclass(frozen=True)
class SessionOptions:
    master: str | None = DEFAULT_MASTER  # None: spark-submit's --master, else local[2]
    app_name: str = "control-plane-job"
    driver_memory: str = DEFAULT_DRIVER_MEMORY
    kafka: bool = False  # add Spark's Kafka source
    log_file: Path | None = None  # where the JVM's output goes; None: the terminal
    conf: dict[str, str] = field(default_factory=dict)  # any further --conf key=value
    records: int | None = None  # the records the job will read, when known before Spark starts
    remote: str | None = None  # a Spark Connect server's sc:// URL (remote_url): the session is the server's


def lists_kafka_jars(options: SessionOptions, conf: SparkConf) -> bool:
    """Whether a start of ``conf`` has Ivy resolve the Kafka source and nothing else into ``spark.jars``, so
    that its ``spark.jars`` are the source's jars, to list (:func:`remember_kafka_jars`): a start of this
    process's own (not spark-submit's), with no ``spark.jars`` of the caller's own."""
    return (
        options.kafka
        and not submitted()
        and "spark.jars" not in options.conf
        and conf.get("spark.jars.packages") == kafka_package()
    )


def local_threads(master: str) -> int:
    """The worker threads of a local master: ``local`` 1, ``local[N]`` N, ``local[*]`` the machine's CPUs."""
    inside = master.partition("[")[2].partition("]")[0].split(",")[0].strip()
    if inside in ("", "*"):
        return (os.cpu_count() or 1) if inside == "*" else 1
    return int(inside) if inside.isdigit() else 1


def shuffle_partitions(master: str) -> int:
    """Two shuffle partitions a local core: each Spark job's tasks run on few cores; more tasks only add
    their fixed cost (adaptive execution merges small ones further)."""
    return max(2, 2 * local_threads(master))


def java_options(records: int | None, memory: str | None = None, archive: bool = True) -> str:
    """The local driver JVM's options for a job of ``records`` records (unknown: a short job) in a heap
    of ``memory`` (None: the JVM sizes it as it grows); ``archive``: with the class archive of this JDK
    and PySpark where it was built (:mod:`.class_archive`)."""
    if records is None or records < SHORT_JOB_RECORDS:
        options = SHORT_JAVA_OPTIONS
    else:
        options = LOCAL_JAVA_OPTIONS.format(directives=compiler_directives())
        options += HEAP_OPTIONS.format(memory=memory) if memory else ""
    return options + (archive_option() if archive else "")


def compiler_directives() -> Path:
    """HotSpot's compiler directives file of :data:`C1_ONLY` (written once, in the temporary directory)."""
    text = json.dumps([{"match": list(C1_ONLY), "c2": {"Exclude": True}}], indent=1)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    path = Path(tempfile.gettempdir()) / f"spark-jobs-{os.getuid()}-c1-only-{digest}.json"
    if not path.is_file():
        partial = path.with_name(f"{path.name}.{os.getpid()}")
        partial.write_text(text)
        partial.replace(path)
    return path


def spark_conf(options: SessionOptions) -> SparkConf:
    conf = SparkConf()  # under spark-submit: its settings (--master, --packages, --conf) already
    master = options.master or conf.get("spark.master", DEFAULT_MASTER) or DEFAULT_MASTER
    conf.setMaster(master).setAppName(options.app_name)
    if not submitted():  # spark-submit started the driver's JVM with its own --driver-memory
        conf.set("spark.driver.memory", options.driver_memory)
    conf.set("spark.sql.session.timeZone", "UTC")
    conf.set("spark.ui.enabled", "false")
    conf.set("spark.ui.showConsoleProgress", "false")
    # small input splits: a decoded partition is cached whole, and must fit a small driver's memory
    conf.set("spark.sql.files.maxPartitionBytes", "8m")
    # a kept frame's batches as they are: the jobs keep records on local disk, where encoding each column
    # of each batch (dictionaries, run lengths) cost more CPU than the smaller files saved
    conf.set("spark.sql.inMemoryColumnarStorage.compressed", "false")
    # PySpark's DataFrame debugging (on by default) hands the JVM each DataFrame and Column call's Python
    # call site, for the query context of an error message: about five py4j round trips and a walk of the
    # Python stack a call, half of a job's py4j calls. A job reports a failure's root cause
    # (job.spark_reason), never that context
    conf.set(DATAFRAME_DEBUGGING, "false")
    if is_local(master):
        conf.set("spark.pyspark.python", sys.executable)
        conf.set("spark.pyspark.driver.python", sys.executable)
        conf.set("spark.driver.host", "127.0.0.1")
        conf.set("spark.driver.bindAddress", "127.0.0.1")
        conf.set("spark.sql.shuffle.partitions", str(shuffle_partitions(master)))
        if not submitted():  # spark-submit started the JVM with its own options
            conf.set("spark.driver.extraJavaOptions", java_options(options.records, options.driver_memory))
    if options.kafka and not submitted():  # spark-submit: its --packages (the JVM is up: too late here)
        jars = None if "spark.jars" in options.conf else resolved_kafka_jars()  # --conf spark.jars: Ivy adds
        if jars:
            conf.set("spark.jars", ",".join(jars))
        else:
            conf.set("spark.jars.packages", kafka_package())
            conf.set("spark.jars.ivy", ivy_dir())
    for key, value in options.conf.items():
        conf.set(key, value)
    return conf


def _log_tail(path: Path | None, lines: int = 25) -> str:
    if path is None or not path.exists():
        return ""
    tail = path.read_text(errors="replace").splitlines()[-lines:]
    return "\n".join(tail)


def package_code(target: Path) -> Path:
    """Zip the two packages the Python workers import (``control_plane``, ``spark_jobs``): what
    ``spark-submit --py-files`` takes (``make spark-package``)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for package in ("control_plane", "spark_jobs"):
            for path in sorted((ROOT / package).rglob("*.py")):
                archive.write(path, path.relative_to(ROOT))
    return target


def _ship_code(spark: SparkSession) -> None:
    """Hand the packages to the cluster's executors, unless they run from a zip already (--py-files)."""
    if not (ROOT / "spark_jobs").is_dir():
        return
    target = package_code(Path(tempfile.mkdtemp(prefix="spark-jobs-")) / "control_plane_jobs.zip")
    spark.sparkContext.addPyFile(str(target))


def session_settings(options: SessionOptions) -> dict[str, str]:
    """What a job sets on its session on a Spark Connect server: the SQL settings of :func:`spark_conf` (the
    server's own settings stay as its operator gave them) and every ``--conf`` (a static one is ignored
    by the server, as PySpark's builder ignores it)."""
    conf = spark_conf(SessionOptions(master="spark://remote", conf=options.conf))
    return {k: v for k, v in conf.getAll() if k.startswith("spark.sql.") or k in options.conf}


def connect_session(options: SessionOptions) -> SparkSession:
    """A session on the Spark Connect server at ``options.remote`` (the two packages its Python workers
    import follow when a plan needs them: :func:`code_for_workers`); ``SessionError`` when the server does
    not answer."""
    assert options.remote is not None
    try:
        settings: dict[str, bool | float | int | str | None] = {**session_settings(options)}
        builder = SparkSession.builder.remote(options.remote).appName(options.app_name)
        spark = builder.config(map=settings).getOrCreate()
        spark.version  # noqa: B018 - the first call that reaches the server
    except Exception as err:  # noqa: BLE001 - gRPC's and PySpark's errors alike: the server is not there
        first = (str(err).strip() or repr(err)).splitlines()[0][:400]
        raise SessionError(f"Spark Connect at {options.remote} did not answer: {first}") from None
    return spark


_code_sent: set[str] = set()  # the Spark Connect sessions (by id) that have the packages as an artifact


def code_for_workers(spark: SparkSession) -> None:
    """Before a plan that runs Python workers (``mapInArrow``): on a Spark Connect session, the two packages
    they import added as a Python artifact, once a session. A run that starts no Python worker (a small
    one: the driver's codecs, :mod:`.transforms.driver_codec`) neither zips nor uploads them."""
    if not is_connect(spark) or not (ROOT / "spark_jobs").is_dir():  # not when the job runs from such a zip
        return
    session_id = str(getattr(spark, "session_id", ""))
    if session_id in _code_sent:
        return
    with tempfile.TemporaryDirectory(prefix="spark-jobs-") as folder:  # uploaded by addArtifacts' return
        archive = package_code(Path(folder) / "control_plane_jobs.zip")
        spark.addArtifacts(str(archive), pyfile=True)
    _code_sent.add(session_id)


def is_connect(spark: SparkSession) -> bool:
    """Whether ``spark`` is a Spark Connect session (no SparkContext in this process)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def describe(spark: SparkSession, options: SessionOptions) -> str:
    """Where a session runs, for the job's progress: its master, or the Spark Connect server's URL."""
    return f"Spark Connect {options.remote or 'server'}" if is_connect(spark) else str(spark.sparkContext.master)


def existing_session() -> SparkSession | None:
    """The process's running session, from any thread (``getActiveSession`` only sees this thread's)."""
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if SparkContext._active_spark_context is not None:
        return SparkSession.builder.getOrCreate()
    return None


def build_session(options: SessionOptions) -> SparkSession:
    """Start (or reuse, within one process) the SparkSession; raise ``SessionError`` if it cannot start."""
    if options.remote is not None:
        active = existing_session()
        return active if active is not None and is_connect(active) else connect_session(options)
    # a classic session chosen over SPARK_REMOTE (--master): spark-submit would read it too, and refuse both
    os.environ.pop(REMOTE_ENV, None)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if options.master is not None and is_local(options.master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    active = existing_session()
    if active is not None:
        return active
    if submitted():
        SparkContext._ensure_initialized()  # the JVM spark-submit started: SparkConf() reads its settings
    conf = spark_conf(options)
    master = conf.get("spark.master", DEFAULT_MASTER) or DEFAULT_MASTER
    log = None
    try:
        if options.log_file is not None:
            options.log_file.parent.mkdir(parents=True, exist_ok=True)
            log = options.log_file.open("ab")
            gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
            context = SparkContext(conf=conf, gateway=gateway)
        else:
            context = SparkContext(conf=conf)
    except Exception as err:  # noqa: BLE001 - the JVM's reason is in its log, not in the Python error
        tail = _log_tail(options.log_file)
        where = f"\n--- the last lines of {options.log_file} ---\n{tail}" if tail else ""
        raise SessionError(f"Spark did not start ({master}): {err}{where}") from None
    finally:
        if log is not None:
            log.close()  # the JVM keeps its own descriptor
    context.setLogLevel("ERROR")
    if lists_kafka_jars(options, conf):
        remember_kafka_jars(context.getConf())
    spark = SparkSession(context)
    if not is_local(master):
        _ship_code(spark)
    return spark
