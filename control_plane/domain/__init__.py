"""The domain: the herder the HTTP handlers call, and the features it holds, each deciding per request
whether the workers do it natively or the sidecar emulates it. Never imports Starlette or the settings.

The spine, the top-level modules and ``cluster``, is what every feature shares:

- ``herder``: ``Herder``, one facade per feature (``herder.offsets.stop(name)``), and its own ``forward``;
- ``capabilities``: ``Capabilities``, per feature native or emulated, from the oldest live worker's
  ``version`` (``cluster.versions``: the given workers' and every member's of the workers' group) and the
  settings;
- ``read_rule``: ``ReadRule``, who answers a read (the view or a worker) and how fresh its answer is;
- ``outcomes``: what a feature answers (``Answer``, ``Refusal``, ``Forward``, ``Accepted``, ``Done``, ...);
- ``ports``: the interfaces the features depend on, met by ``storage``, ``upstream``, ``view`` and
  ``cluster``, and by features for one another;
- ``errors``: the domain's exception tree (``rest.errors`` renders it as Connect does);
- ``liveness``: ``WorkerProbe``, whether any worker answers now; the view's plugin types;
- ``config_checks``: the seam of the checks a configuration goes through on its way to a worker;
- ``config_infos``, ``definitions``: Connect's ``ConfigInfos`` and ``ConfigKeyInfo``, with the sidecar's
  problems added, in 4.2's shape;
- ``connect_api``: a configuration as Connect's REST API carries it, the paths the features compose;
- ``jackson``: Jackson's messages for request bodies Connect cannot read;
- ``api_version``: the version ``GET /`` advertises;
- ``cluster``: being one sidecar of many in front of one Connect cluster (as Connect's
  ``runtime/distributed``): the workers' group and versions (``membership``, ``versions``), the sidecars'
  presence, each connector's fence and the writes made under it (``fence``, ``writes``), the one sidecar
  that acts for all (``acting``), where a forwarded request goes (``forward_route``).

One package per feature, each with one facade (its ``feature`` module), where the feature's decision is.
Connect's own features:

- ``reads`` (``Reads``): who answers connector and task reads, the view or a worker; statuses with the
  plugin versions where the workers lack them (KIP-891, 4.1); the dashboards' states; the sidecar's own
  endpoints (readiness, capabilities, info, status writes);
- ``offsets`` (``StopAndOffsets``): who stops a connector (KIP-875, 3.5) and who reads (3.5), alters and
  resets (3.6) its offsets; a resume of a connector stopped after it had failed;
- ``topics`` (``Topics``): who answers and resets a connector's active topics (KIP-558, 2.5); which
  connectors use a topic;
- ``topic_creation`` (``CreationPreviews``): the sidecar's own on every version, which group, with which
  settings, creates a topic (KIP-158);
- ``plugins`` (``Plugins``): who lists the plugins and describes their configs (KIP-769, 3.2), by version
  (KIP-891, 4.1) and in 4.2's shape; what each plugin key of a configuration resolves to;
- ``configs`` (``Configs``): validate, create, update and PATCH, the sidecar's checks first;
  ``initial_state`` (KIP-980, 3.7), PATCH (KIP-477, 3.8), validate answers in the newest shape (4.2, 4.4);
- ``newer`` (``NewerApi``): restart options (KIP-745, 3.0), loggers (KIP-976, 3.7; log4j 2's levels,
  4.0), ``GET /health`` (KIP-1017, 3.9), the version ``GET /`` shows.

The sidecar's own, for operators, built on the cluster's parts (each answers its own refusal where this
sidecar lacks what it needs: the view, the sidecars' topic):

- ``auto_restart`` (``AutoRestart``): failed connectors and tasks restarted with a backoff, by one sidecar;
- ``history`` (``ConfigHistory``): every config's versions, key-level diffs, rollback;
- ``lag`` (``Lags``): sinks' consumer lag, sources' freshness;
- ``plan`` (``PlanAndApply``): a folder of connector configs planned against the cluster and applied.

The features import each other only through the spine (the ``domain-features`` import contract); what one
offers another reaches it through a port, wired in ``control_plane.composition``: the version checks of
``plugins`` and the rules of ``topic_creation`` are ``ConfigCheck``s that ``configs`` runs, the plugin
versions in statuses are the ``StatusVersions`` of ``reads``, the plugin list the ``PluginTypes`` of
``liveness``, ``newer``'s restarts the ``InstanceRestarts`` of ``auto_restart``, ``offsets``' sink groups the
``SinkGroupOf`` of ``lag``; ``plan`` and ``history`` write through ``configs``' config writes.
"""
