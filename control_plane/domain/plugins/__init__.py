"""The workers' plugins.

- ``feature``: ``Plugins``, the one entry: plugin listings (KIP-769), a plugin config by version (KIP-891)
  and in 4.2's shape, the sidecar's report of what each plugin key resolves to;
- ``catalog``: ``PluginCatalog``, the one loader of the workers' plugin list (``ports.PluginTypes``);
- ``versions``: ``PluginVersions``, KIP-891 on every version: the pins checked (a ``ConfigCheck`` of
  ``configs``), the versions in statuses (``ports.StatusVersions``, for ``reads``);
- ``workers``: ``WorkerCatalogs``, what each worker of the cluster has installed: this sidecar's own from its
  catalog, the others' from the sidecars' topic;
- ``pins``: ``PinHealth``, the connectors' pins that do not hold on some worker now;
- ``listings``: ``PluginListings``, KIP-769's answers composed of what older workers serve.
"""

from .catalog import InstalledPlugin, PluginCatalog, PluginList
from .feature import Plugins, PluginVersionReport
from .listings import UNDEFINED_VERSION, ListedPlugin, PathConverters, PluginListings
from .pins import PinHealth, PinHealthReport, PinNotHolding
from .versions import PluginVersions
from .workers import KnownWorker, WorkerCatalogs

__all__ = [
    "UNDEFINED_VERSION",
    "InstalledPlugin",
    "KnownWorker",
    "ListedPlugin",
    "PathConverters",
    "PinHealth",
    "PinHealthReport",
    "PinNotHolding",
    "PluginCatalog",
    "PluginList",
    "PluginListings",
    "PluginVersionReport",
    "PluginVersions",
    "Plugins",
    "WorkerCatalogs",
]
