# The two commands: `make run` (a broker, a Connect worker and the sidecar, in the foreground) and
# `make test` (the whole suite, both lanes, against a real stack it starts and stops). See README.md.
SHELL := /bin/bash
# The venv's Python: the oldest that pyproject.toml's requires-python admits (`make unit-pythons` runs the unit
# lane on the others).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STACK := $(PY) deploy/local/stack.py
INSTALLED := $(VENV)/.installed
PYTEST_ARGS ?=

# $(call with_stack,CMD): runs CMD with the stack that `make stack-up` started, or with one started for
# it and stopped after (whatever CMD's outcome; CMD's exit status is kept).
with_stack = started=0; \
	if ! $(STACK) status >/dev/null 2>&1; then $(STACK) up || exit 1; started=1; fi; \
	trap '[ $$started = 1 ] && $(STACK) down' EXIT; \
	$(1)

.PHONY: install tools jars openapi api-doc run stack-up stack-down stack-status check test unit unit-pythons integration chaos bench bench-view manifests spark-archive spark-package spark-submit spark-connect clean

tools:
	@bash deploy/local/ensure-tools.sh
	@bash deploy/monitoring/ensure-promtool.sh

# --no-compile: a module is compiled when first imported, and most of PySpark's never are (a third less time
# for a venv made afresh, as CI makes them, from pip's cache).
$(INSTALLED): pyproject.toml
	@bash deploy/local/ensure-tools.sh
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --no-compile -e '.[test,spark,check]'
	@touch $@

# promtool checked on every install (a `command -v` when present): the tests of deploy/monitoring/ need it
install: $(INSTALLED)
	@bash deploy/monitoring/ensure-promtool.sh

jars: install
	$(PY) deploy/local/jars.py

# Connect's own OpenAPI description per Connect version of the stack, generated from its connect-runtime jar
# as Kafka's build does (deploy/openapi/): .stack/openapi/connect-<version>.json, cached.
openapi: install
	$(PY) deploy/openapi/build.py

# The sidecar's own OpenAPI document (every endpoint it serves, generated from its route table and models;
# also served at GET /_sidecar/openapi.json): written to $(API_DOC).
API_DOC ?= .stack/openapi/sidecar.json
api-doc: install
	@mkdir -p $(dir $(API_DOC))
	$(PY) -m control_plane openapi --out $(API_DOC)

run: install
	@$(STACK) run

stack-up: install
	@$(STACK) up

stack-down:
	@if [ -x $(PY) ]; then $(STACK) down; else echo "stack was not running"; fi

stack-status: install
	@$(STACK) status

# The style gate: ruff format --check, ruff check, mypy --strict, lint-imports (see scripts/check).
check: install
	@VENV=$(VENV) scripts/check

# The local Spark driver JVM's class archive (spark_jobs/class_archive.py): built once per JDK, PySpark and builder,
# in ~/.cache/spark-jobs (SPARK_JOBS_CACHE_DIR); a local job's JVM maps it instead of loading Spark's
# classes from its jars. A no-op when it is there. Not built (it says why): the jobs run without it, and
# the targets that ask for it go on (tests/unit/spark_jobs/test_class_archive.py then builds one itself and fails).
spark-archive: install
	@$(PY) -m spark_jobs.build_class_archive || echo "spark-archive: not built; the Spark jobs run without it"

# The tests run in two lanes, split by what a test starts (its markers, pyproject.toml):
# - the unit lane, `make unit`: everything that runs in the test process (no JVM, no stack), in minutes;
# - the integration lane, `make integration`: everything that starts a JVM: the tests against the stack
#   (integration), the Spark jobs' tests on a local SparkSession (spark) and the Java oracles (java).
#   It starts the stack as `make test` does when none runs.
# One marker expression and its negation: every test runs in exactly one lane. `make test` runs both,
# the unit lane first (a failure there stops it); PYTEST_ARGS goes to both.
INTEGRATION_LANE := integration or spark or java
UNIT_LANE := not ($(INTEGRATION_LANE))
# $(call lane,MARKERS): pytest on the tests with MARKERS. When PYTEST_ARGS narrows the run (a path, -k), a
# lane may hold none of the tests it chose: pytest's "no tests ran" (exit 5) is then not a failure.
lane = $(PY) -m pytest -m "$(1)" $(PYTEST_ARGS) || { rc=$$?; [ $$rc = 5 ] && [ -n "$(strip $(PYTEST_ARGS))" ] || exit $$rc; }

test: install
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory integration

unit: install
	@$(call lane,$(UNIT_LANE))

# The unit lane on the other Pythons that requires-python admits (`make unit` runs it on the oldest, the venv's),
# each in a venv of its own, .venv-X.Y, installed as `make install` installs .venv (every extra: each dependency
# shown to install on that Python), from the interpreter deploy/local/ensure-python.sh finds, or installs where
# the machine has none. CI runs it on the newest; `make unit-pythons UNIT_PYTHONS="3.12 3.13"` for more.
UNIT_PYTHONS ?= 3.13
unit-pythons:
	@for v in $(UNIT_PYTHONS); do \
		py=$$(bash deploy/local/ensure-python.sh $$v) || exit $$?; \
		echo "unit lane on Python $$v ($$py), in .venv-$$v"; \
		$(MAKE) --no-print-directory unit VENV=.venv-$$v PYTHON=$$py || exit $$?; \
	done

# The class archive is built while the stack starts (each takes a minute or two on a fresh machine, most
# of it one JVM's start and warm-up): the lane waits for both. Every release's jars are resolved first
# (`jars`: a no-op when cached), so that no test resolves a release's jars while another reads them.
integration: install jars
	@$(MAKE) --no-print-directory spark-archive & archive=$$!; \
	$(call with_stack,wait $$archive; $(call lane,$(INTEGRATION_LANE)))

# The fault campaign's long form (tests/chaos/, docs/chaos.md): per Connect release (the newest and the old one),
# a broker, a worker and three sidecars of its own under a workload and a fault injector for CHAOS_DURATION_S,
# then the checker; a summary per release on stdout, the histories under bench/results/chaos/. Exit 1 on a
# violation. Its short form runs in the integration lane (tests/integration/test_fault_campaign.py).
CHAOS_DURATION_S ?= 600
CHAOS_SEED ?= 1
chaos: jars
	$(PY) -m tests.chaos --duration-s $(CHAOS_DURATION_S) --seed $(CHAOS_SEED) $(ARGS)

# The benchmark suite (bench/suite.py): a table on stdout, JSON under bench/results/. Options with ARGS,
# e.g. `make bench ARGS=--quick` or `make bench ARGS=--full` (2,000 connectors).
bench: install spark-archive
	@bash bench/ensure-wrk.sh
	@$(call with_stack,$(PY) bench/suite.py $(ARGS))

bench-view: install
	@bash bench/ensure-wrk.sh
	@$(call with_stack,$(PY) bench/view_scale.py $(ARGS))

# The Spark jobs against the local stack (started here if none runs, then left running); pass options
# with ARGS, e.g. `make offsets-report ARGS="--as-of 2026-01-01T00:00:00Z"`. See docs/spark-jobs/.
ARGS ?=

offsets-report: install spark-archive
	@$(STACK) status >/dev/null 2>&1 || $(STACK) up
	$(PY) -m spark_jobs.offsets_reconcile $(ARGS)

topic-audit: install spark-archive
	@$(STACK) status >/dev/null 2>&1 || $(STACK) up
	$(PY) -m spark_jobs.topic_audit $(ARGS)

# Synthetic history into a snapshot, then both jobs on it in local mode: records/s and peak memory.
bench-spark: install spark-archive
	$(PY) bench/spark_jobs.py $(ARGS)

# The Kubernetes manifests (deploy/kubernetes/) as `kubectl kustomize` renders them: the sidecar in each
# worker pod, or VARIANT=overlays/standalone for the sidecar as its own Deployment.
VARIANT ?= base
manifests:
	@command -v kubectl >/dev/null || { echo "make manifests: kubectl is missing (its kustomize renders them)" >&2; exit 2; }
	@kubectl kustomize deploy/kubernetes/$(VARIANT)

# The jobs on a Spark cluster with spark-submit: the zip of the two packages (--py-files) and the entry
# file under dist/spark, then the command, e.g.
#   make spark-submit MASTER=spark://host:7077 JOB=offsets-reconcile ARGS="--worker-properties w.properties"
MASTER ?= local[2]
JOB ?= offsets-reconcile
spark-package: install
	$(PY) -m spark_jobs.submit package --out dist/spark

spark-submit: install
	$(PY) -m spark_jobs.submit run --master $(MASTER) $(JOB) $(ARGS)

# A Spark Connect server from the installed PySpark, in the foreground, for the jobs' --remote
# sc://127.0.0.1:15002 (ARGS: --port, --host, --master, --driver-memory, --conf).
spark-connect: install spark-archive
	$(PY) -m spark_jobs.connect_server $(ARGS)

clean: stack-down
	rm -rf .stack $(VENV) .venv-*
