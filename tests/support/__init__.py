"""What the tests (and the benchmarks, bench/) share, one concept a module; test modules import from here,
never from another test module or a conftest.

The local stack: ``paths`` (the checkout), ``stack`` (the running stack, from ``.stack/env``),
``deploy_local`` (deploy/local/stack.py as a module), ``broker`` (a broker of a test's own),
``stack_cache`` (the jars the stack resolved), ``ports`` (free loopback ports), ``waiting`` (polling with a
deadline).
A sidecar under test: ``harness`` (served in the test process over loopback HTTP), ``sidecar_process``
(``python -m control_plane serve`` as its own process, and a scripted worker to put behind it),
``asgi_app`` (the app over respx workers, driven through ASGI).
Kafka and Connect: ``kafka_topics`` (a topic read to its end, records produced), ``connect_answers`` (a
connector's states; the sidecar's answer against the worker's), ``differential`` and ``parity`` (answers
normalised and compared), ``http_cases`` (raw requests and Connect's answers to them).
The domain on fakes: ``fakes`` (its ports), ``fake_cluster`` (a herder on them), ``scripted_producer``
(the status writer's producer).
Spark: ``spark_fixtures`` (the one local SparkSession), ``spark_records`` and ``tricky_records`` (raw
internal-topic records), ``spark_cluster`` (a standalone Spark cluster).
Files and tools: ``tls_material`` (certificates and Java stores), ``monitoring`` (deploy/monitoring/'s
queries and promtool), ``kubernetes`` (deploy/kubernetes/ as ``kubectl kustomize`` renders it).
"""
